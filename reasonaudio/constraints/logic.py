"""Query logic as data: the AST of docs/benchmark.md and its JSON form.

Nodes are frozen dataclasses so they hash, compare and can be used as dict keys; JSON is the
interchange format in ``queries.jsonl`` and ``bench parse --json``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator, Union

from reasonaudio.errors import LogicError


@dataclass(frozen=True)
class Has:
    label: str


@dataclass(frozen=True)
class Before:
    a: str
    b: str


@dataclass(frozen=True)
class Overlap:
    a: str
    b: str


@dataclass(frozen=True)
class Lasts:
    label: str
    seconds: float


@dataclass(frozen=True)
class Not:
    arg: "Node"


@dataclass(frozen=True)
class And:
    args: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    args: tuple["Node", ...]


Leaf = Union[Has, Before, Overlap, Lasts]
Node = Union[Has, Before, Overlap, Lasts, Not, And, Or]

OPS = ("has", "before", "overlap", "lasts", "not", "and", "or")


def to_json(node: Node) -> dict[str, Any]:
    """The docs/benchmark.md JSON object for ``node`` (keys in a fixed order, so dumps are stable)."""
    if isinstance(node, Has):
        return {"op": "has", "label": node.label}
    if isinstance(node, Before):
        return {"op": "before", "a": node.a, "b": node.b}
    if isinstance(node, Overlap):
        return {"op": "overlap", "a": node.a, "b": node.b}
    if isinstance(node, Lasts):
        seconds = node.seconds
        return {"op": "lasts", "label": node.label,
                "seconds": int(seconds) if float(seconds).is_integer() else seconds}
    if isinstance(node, Not):
        return {"op": "not", "arg": to_json(node.arg)}
    if isinstance(node, And):
        return {"op": "and", "args": [to_json(a) for a in node.args]}
    if isinstance(node, Or):
        return {"op": "or", "args": [to_json(a) for a in node.args]}
    raise TypeError(f"not a logic node: {node!r}")


def _label(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise LogicError(f"{where}: field {key!r} must be a non-empty string, got {value!r}")
    return value


def from_json(obj: Any, where: str = "logic") -> Node:
    """Parse and validate a docs/benchmark.md logic object; errors name the path of the bad field."""
    if not isinstance(obj, dict):
        raise LogicError(f"{where}: expected an object with an 'op' field, got {obj!r}")
    op = obj.get("op")
    if op == "has":
        return Has(_label(obj, "label", where))
    if op in ("before", "overlap"):
        a, b = _label(obj, "a", where), _label(obj, "b", where)
        if a == b:
            raise LogicError(f"{where}: {op} needs two different sounds, got {a!r} twice")
        return Before(a, b) if op == "before" else Overlap(a, b)
    if op == "lasts":
        seconds = obj.get("seconds")
        if (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                or not math.isfinite(seconds) or seconds <= 0):
            raise LogicError(f"{where}: field 'seconds' must be a positive number, got {seconds!r}")
        return Lasts(_label(obj, "label", where), float(seconds))
    if op == "not":
        return Not(from_json(obj.get("arg"), f"{where}.arg"))
    if op in ("and", "or"):
        args = obj.get("args")
        if not isinstance(args, list) or len(args) < 1:
            raise LogicError(f"{where}: field 'args' of {op!r} must be a non-empty list")
        parsed = tuple(from_json(a, f"{where}.args[{i}]") for i, a in enumerate(args))
        return And(parsed) if op == "and" else Or(parsed)
    raise LogicError(f"{where}: unknown op {op!r}; expected one of {', '.join(OPS)}")


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children."""
    yield node
    if isinstance(node, Not):
        yield from walk(node.arg)
    elif isinstance(node, (And, Or)):
        for arg in node.args:
            yield from walk(arg)


def leaves(node: Node) -> Iterator[Leaf]:
    for n in walk(node):
        if isinstance(n, (Has, Before, Overlap, Lasts)):
            yield n


def leaf_labels(leaf: Leaf) -> tuple[str, ...]:
    if isinstance(leaf, (Has, Lasts)):
        return (leaf.label,)
    return (leaf.a, leaf.b)


def labels(node: Node) -> tuple[str, ...]:
    """Every label the logic mentions, positively or negated, in first-mention order."""
    seen: dict[str, None] = {}
    for leaf in leaves(node):
        for label in leaf_labels(leaf):
            seen.setdefault(label, None)
    return tuple(seen)


def conjuncts(node: Node) -> tuple[Node, ...]:
    """The top-level constraints a report checks one by one (the args of a top-level ``and``)."""
    return node.args if isinstance(node, And) else (node,)


def describe(node: Node) -> str:
    """A compact one-line rendering, e.g. ``has(dog) & !has(siren)``, for tables and errors."""
    if isinstance(node, Has):
        return f"has({node.label})"
    if isinstance(node, Before):
        return f"before({node.a}, {node.b})"
    if isinstance(node, Overlap):
        return f"overlap({node.a}, {node.b})"
    if isinstance(node, Lasts):
        return f"lasts({node.label}, {node.seconds:g}s)"
    if isinstance(node, Not):
        return f"!{describe(node.arg)}"
    joiner = " & " if isinstance(node, And) else " | "
    return "(" + joiner.join(describe(a) for a in node.args) + ")"
