"""Query logic as data: the AST of docs/benchmark.md and its JSON form.

Nodes are frozen dataclasses so they hash, compare and can be used as dict keys; JSON is the
interchange format in ``queries.jsonl`` and ``bench parse --json``.

A node class names its JSON op in its class statement (``class Has(Leaf, op="has")``), which
registers it in ``NODE_TYPES``; it reads its own JSON fields (``from_fields``), writes its JSON
object (``to_json``), describes itself (``describe``) and lists its sub-nodes (``children``)
or, for a leaf, its sounds (``leaf_labels``). Every other reading of a tree (the judge's
semantics, the vectorised judge, the soft score, the Qdrant filter, the writer, the canonical
form, the consistency check, family expansion, the logic view) is an :class:`Interpreter`
with one handler per node type, registered in that reading's own module;
``tests/querylang/test_logic_interpreters.py`` fails when one of them lacks a type of ``NODE_TYPES``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, TypeVar

from reasonaudio.errors import LogicError

_BY_OP: dict[str, type["Node"]] = {}
_SEALED = False
_NODE_METHODS = ("from_fields", "to_json", "describe")


class Node:
    """A logic node. Concrete nodes are frozen dataclasses declared with their JSON op name:
    ``@dataclass(frozen=True) class Has(Leaf, op="has")``."""

    op: ClassVar[str]

    def __init_subclass__(cls, op: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if op is None:  # a family of nodes (Leaf, _Pair, ...), not a node of its own
            return
        if _SEALED:
            raise TypeError(f"logic node {cls.__name__}: declare node classes in logic.py, "
                            "above NODE_TYPES")
        if op in _BY_OP:
            raise TypeError(f"logic op {op!r} is declared by {_BY_OP[op].__name__} and {cls.__name__}")
        wanted = _NODE_METHODS + (("leaf_labels",) if issubclass(cls, Leaf) else ())
        lacking = [m for m in wanted
                   if next(k for k in cls.__mro__ if m in vars(k)) in (Node, Leaf)]  # stubs
        if lacking:
            raise TypeError(f"logic node {cls.__name__} lacks {', '.join(lacking)}")
        cls.op = op
        _BY_OP[op] = cls

    @property
    def children(self) -> tuple["Node", ...]:
        """The sub-nodes, in order (none for a leaf)."""
        return ()

    @classmethod
    def from_fields(cls, obj: dict, where: str) -> "Node":
        """The node of a JSON object whose ``op`` is this class's (fields validated)."""
        raise NotImplementedError(cls.__name__)  # every node class overrides it (checked above)

    def to_json(self) -> dict[str, Any]:
        """The docs/benchmark.md JSON object (keys in a fixed order, so dumps are stable)."""
        raise NotImplementedError(type(self).__name__)

    def describe(self) -> str:
        """A compact one-line rendering, e.g. ``has(dog) & !has(siren)``."""
        raise NotImplementedError(type(self).__name__)


class Leaf(Node):
    """A node without sub-nodes: one relation over one or two sounds."""

    def leaf_labels(self) -> tuple[str, ...]:
        """The sounds this leaf names, in order."""
        raise NotImplementedError(type(self).__name__)


def _label(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise LogicError(f"{where}: field {key!r} must be a non-empty string, got {value!r}")
    return value


def _two_labels(obj: dict, where: str) -> tuple[str, str]:
    a, b = _label(obj, "a", where), _label(obj, "b", where)
    if a == b:
        raise LogicError(f"{where}: {obj['op']} needs two different sounds, got {a!r} twice")
    return a, b


def _args(obj: dict, where: str) -> tuple["Node", ...]:
    args = obj.get("args")
    if not isinstance(args, list) or len(args) < 1:
        raise LogicError(f"{where}: field 'args' of {obj['op']!r} must be a non-empty list")
    return tuple(from_json(a, f"{where}.args[{i}]") for i, a in enumerate(args))


@dataclass(frozen=True)
class Has(Leaf, op="has"):
    label: str

    @classmethod
    def from_fields(cls, obj: dict, where: str) -> "Has":
        return cls(_label(obj, "label", where))

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "label": self.label}

    def describe(self) -> str:
        return f"has({self.label})"

    def leaf_labels(self) -> tuple[str, ...]:
        return (self.label,)


@dataclass(frozen=True)
class _Pair(Leaf):
    """A relation of two different sounds (``before``, ``overlap``)."""
    a: str
    b: str

    @classmethod
    def from_fields(cls, obj: dict, where: str) -> "_Pair":
        return cls(*_two_labels(obj, where))

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "a": self.a, "b": self.b}

    def describe(self) -> str:
        return f"{self.op}({self.a}, {self.b})"

    def leaf_labels(self) -> tuple[str, ...]:
        return (self.a, self.b)


@dataclass(frozen=True)
class Before(_Pair, op="before"):
    pass


@dataclass(frozen=True)
class Overlap(_Pair, op="overlap"):
    pass


@dataclass(frozen=True)
class Lasts(Leaf, op="lasts"):
    label: str
    seconds: float

    @classmethod
    def from_fields(cls, obj: dict, where: str) -> "Lasts":
        seconds = obj.get("seconds")
        if (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                or not math.isfinite(seconds) or seconds <= 0):
            raise LogicError(f"{where}: field 'seconds' must be a positive number, got {seconds!r}")
        return cls(_label(obj, "label", where), float(seconds))

    def to_json(self) -> dict[str, Any]:
        seconds = self.seconds
        return {"op": self.op, "label": self.label,
                "seconds": int(seconds) if float(seconds).is_integer() else seconds}

    def describe(self) -> str:
        return f"lasts({self.label}, {self.seconds:g}s)"

    def leaf_labels(self) -> tuple[str, ...]:
        return (self.label,)


@dataclass(frozen=True)
class Count(Leaf, op="count"):
    """Exactly ``n`` occurrences of a sound (occurrences of one label are at least 0.5 s apart)."""
    label: str
    n: int

    @classmethod
    def from_fields(cls, obj: dict, where: str) -> "Count":
        n = obj.get("n")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise LogicError(f"{where}: field 'n' must be a positive integer, got {n!r}")
        return cls(_label(obj, "label", where), n)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "label": self.label, "n": self.n}

    def describe(self) -> str:
        return f"count({self.label}, {self.n})"

    def leaf_labels(self) -> tuple[str, ...]:
        return (self.label,)


@dataclass(frozen=True)
class Not(Node, op="not"):
    arg: Node

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.arg,)

    @classmethod
    def from_fields(cls, obj: dict, where: str) -> "Not":
        return cls(from_json(obj.get("arg"), f"{where}.arg"))

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "arg": self.arg.to_json()}

    def describe(self) -> str:
        return f"!{self.arg.describe()}"


@dataclass(frozen=True)
class _Connective(Node):
    """``and``/``or`` over one or more sub-nodes."""
    args: tuple[Node, ...]
    joiner: ClassVar[str]

    @property
    def children(self) -> tuple[Node, ...]:
        return self.args

    @classmethod
    def from_fields(cls, obj: dict, where: str) -> "_Connective":
        return cls(_args(obj, where))

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "args": [a.to_json() for a in self.args]}

    def describe(self) -> str:
        return "(" + self.joiner.join(a.describe() for a in self.args) + ")"


@dataclass(frozen=True)
class And(_Connective, op="and"):
    joiner = " & "


@dataclass(frozen=True)
class Or(_Connective, op="or"):
    joiner = " | "


NODE_TYPES: tuple[type[Node], ...] = tuple(_BY_OP.values())
"""Every node class, in declaration order: the one list interpreters are checked against."""
OPS: tuple[str, ...] = tuple(_BY_OP)
"""The JSON op names, in the order of ``NODE_TYPES``."""
_SEALED = True


def to_json(node: Node) -> dict[str, Any]:
    """The docs/benchmark.md JSON object for ``node`` (keys in a fixed order, so dumps are stable)."""
    if not isinstance(node, Node):
        raise TypeError(f"not a logic node: {node!r}")
    return node.to_json()


def from_json(obj: object, where: str = "logic") -> Node:
    """Parse and validate a docs/benchmark.md logic object; errors name the path of the bad field."""
    if not isinstance(obj, dict):
        raise LogicError(f"{where}: expected an object with an 'op' field, got {obj!r}")
    op = obj.get("op")
    cls = _BY_OP.get(op) if isinstance(op, str) else None
    if cls is None:
        raise LogicError(f"{where}: unknown op {op!r}; expected one of {', '.join(OPS)}")
    return cls.from_fields(obj, where)


def describe(node: Node) -> str:
    """A compact one-line rendering, e.g. ``has(dog) & !has(siren)``, for tables and errors."""
    return node.describe()


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children."""
    yield node
    for child in node.children:
        yield from walk(child)


def leaves(node: Node) -> Iterator[Leaf]:
    for n in walk(node):
        if isinstance(n, Leaf):
            yield n


def leaf_labels(leaf: Leaf) -> tuple[str, ...]:
    return leaf.leaf_labels()


def labels(node: Node) -> tuple[str, ...]:
    """Every label the logic mentions, positively or negated, in first-mention order."""
    seen: dict[str, None] = {}
    for leaf in leaves(node):
        for label in leaf.leaf_labels():
            seen.setdefault(label, None)
    return tuple(seen)


def conjuncts(node: Node) -> tuple[Node, ...]:
    """The top-level constraints a report checks one by one (the args of a top-level ``and``)."""
    return node.args if isinstance(node, And) else (node,)


F = TypeVar("F", bound=Callable[..., Any])


class Interpreter:
    """One reading of the logic tree: a handler per node type, chosen by the node's exact type.

    The reading's module makes one at module level (``HOLDS = Interpreter("exact semantics")``)
    and registers one handler per node type with ``@HOLDS.register(Has)``; ``HOLDS(node, *args)``
    runs the handler of ``type(node)`` with the node and ``args``. ``missing()`` lists the node
    types without a handler; tests/querylang/test_logic_interpreters.py finds every module that makes an
    interpreter and fails on any with a missing type.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.handlers: dict[type[Node], Callable[..., Any]] = {}

    def register(self, *types: type[Node]) -> Callable[[F], F]:
        """Decorator: the handler of these node types (each type once per interpreter)."""
        def add(handler: F) -> F:
            for t in types:
                if t not in NODE_TYPES:
                    raise TypeError(f"{self.name}: {t!r} is not a logic node type")
                if t in self.handlers:
                    raise TypeError(f"{self.name}: {t.__name__} has two handlers")
                self.handlers[t] = handler
            return handler
        return add

    def __call__(self, node: Node, *args: Any) -> Any:
        handler = self.handlers.get(type(node))
        if handler is None:
            kind = "no handler for" if isinstance(node, Node) else "not a logic node:"
            raise TypeError(f"{self.name}: {kind} {node!r}")
        return handler(node, *args)

    def missing(self) -> tuple[type[Node], ...]:
        """Node types of ``NODE_TYPES`` this interpreter has no handler for."""
        return tuple(t for t in NODE_TYPES if t not in self.handlers)

    def __repr__(self) -> str:
        return f"Interpreter({self.name!r})"
