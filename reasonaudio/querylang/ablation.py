"""Logic ablations: a query's logic with one relation family removed, the rest kept exactly.

An :class:`Ablation` names a relation family (``negation``, ``order``, ``overlap``,
``duration``, ``count``) and the node type that carries it. :func:`without` rewrites a logic
tree so that the family says nothing any more while every other constraint stays as it was:

- ``before(x, y)`` / ``overlap(x, y)`` -> ``has(x) & has(y)`` (the sounds stay required, their
  timing is dropped);
- ``lasts(x, N)`` / ``count(x, n)`` -> ``has(x)`` (the sound stays, its length or number goes);
- ``not A`` -> no constraint at all (the excluded sound may be there or not).

"No constraint" is ``None``: an ``and`` drops it (and is ``None`` when nothing is left), an
``or`` with an unconstrained arm is unconstrained. Nested ``and``s are flattened and repeated
conjuncts kept once, so ``before(a, b) & before(a, c)`` without order is
``has(a) & has(b) & has(c)``. A tree without the family comes back unchanged (equal, and
the same object).

The rewrite is an :class:`~reasonaudio.logic.Interpreter` (``WITHOUT``) with one
handler per node type, so ``tests/querylang/test_logic_interpreters.py`` fails when a node type is added
without saying what removing each family does to it. The retrievers ``oracle-without:FAMILY``
(``retrievers/registry.py``) run the rewritten logic exactly as the oracle runs its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonaudio.logic import And, Before, Count, Has, Interpreter, Lasts, Node, Not, Or, Overlap

PREFIX = "oracle-without:"
"""Retriever names ``oracle-without:FAMILY``, one per :data:`ABLATIONS` record."""


@dataclass(frozen=True)
class Ablation:
    """One relation family the oracle can be run without."""

    family: str
    """its name in ``oracle-without:FAMILY``"""
    node: type[Node]
    """the logic node that carries the family"""
    measures: str
    """what the drop from the oracle to this ablation measures (docs/evaluation.md)"""

    @property
    def retriever(self) -> str:
        return PREFIX + self.family


ABLATIONS: tuple[Ablation, ...] = (
    Ablation("negation", Not, "how much the task needs exclusion: the excluded sound is no longer "
             "checked, so a clip holding it can rank first"),
    Ablation("order", Before, "how much the task needs temporal order: before(x, y) only asks "
             "that both sounds are there"),
    Ablation("overlap", Overlap, "how much the task needs simultaneity: overlap(x, y) only asks "
             "that both sounds are there"),
    Ablation("duration", Lasts, "how much the task needs event length: lasts(x, N) only asks that "
             "x is there"),
    Ablation("count", Count, "how much the task needs counting (Count builds): count(x, n) only "
             "asks that x is there"),
)
BY_FAMILY: dict[str, Ablation] = {a.family: a for a in ABLATIONS}

WITHOUT = Interpreter("logic without a relation family (ablation.without)")
"""node, dropped node type -> the node without that family (``None``: no constraint)."""


def without(node: Node, family: str) -> Node | None:
    """``node`` with relation ``family`` removed (module docstring); ``None`` when nothing is
    left to check (every clip qualifies). ``family`` must be one of :data:`BY_FAMILY`."""
    return WITHOUT(node, BY_FAMILY[family].node)


def _conjunction(parts: list[Node]) -> Node | None:
    flat: dict[Node, None] = {}
    for p in parts:
        for q in (p.args if isinstance(p, And) else (p,)):
            flat.setdefault(q, None)
    if not flat:
        return None
    return next(iter(flat)) if len(flat) == 1 else And(tuple(flat))


@WITHOUT.register(Has)
def _has(node: Has, drop: type[Node]) -> Node:
    return node


@WITHOUT.register(Before, Overlap)
def _pair(node: Before | Overlap, drop: type[Node]) -> Node:
    return And((Has(node.a), Has(node.b))) if type(node) is drop else node


@WITHOUT.register(Lasts, Count)
def _one_sound(node: Lasts | Count, drop: type[Node]) -> Node:
    return Has(node.label) if type(node) is drop else node


@WITHOUT.register(Not)
def _not(node: Not, drop: type[Node]) -> Node | None:
    if drop is Not:
        return None
    inner = WITHOUT(node.arg, drop)
    if inner is None:  # only a removed ``not`` leaves nothing, and then this one went first
        raise AssertionError(f"unreachable: {node.describe()} without {drop.op}")
    return node if inner is node.arg else Not(inner)


@WITHOUT.register(And)
def _and(node: And, drop: type[Node]) -> Node | None:
    parts = [WITHOUT(a, drop) for a in node.args]
    if all(p is a for p, a in zip(parts, node.args)):
        return node
    return _conjunction([p for p in parts if p is not None])


@WITHOUT.register(Or)
def _or(node: Or, drop: type[Node]) -> Node | None:
    parts = [WITHOUT(a, drop) for a in node.args]
    if all(p is a for p, a in zip(parts, node.args)):
        return node
    if any(p is None for p in parts):
        return None  # one arm that always holds: the disjunction always holds
    unique = tuple(dict.fromkeys(p for p in parts if p is not None))
    return unique[0] if len(unique) == 1 else Or(unique)
