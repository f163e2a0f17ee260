"""Canonical form of query logic and the consistency check the parser applies.

``canonical``/``same_logic`` compare two logics up to and/or argument order and overlap pair order
(overlap is symmetric), which is how parsed text is checked against generated logic.
``check_consistent`` finds conjunctions no clip can satisfy under the judge's semantics.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap, conjuncts, describe, to_json)
from reasonaudio.querylang.semantics import duration_bounds
from reasonaudio.errors import QueryParseError

CANON = Interpreter("canonical form (canonical.canonical)")
"""node -> its canonical form; one handler per node type."""


def _canon(node: Node) -> Node:
    return CANON(node)


@CANON.register(Has, Before, Count)
def _as_is(node: Node) -> Node:
    return node


@CANON.register(Overlap)
def _overlap(node: Overlap) -> Node:
    a, b = sorted((node.a, node.b))
    return Overlap(a, b)


@CANON.register(Lasts)
def _lasts(node: Lasts) -> Node:
    return Lasts(node.label, float(node.seconds))


@CANON.register(Not)
def _not(node: Not) -> Node:
    return Not(_canon(node.arg))


@CANON.register(And, Or)
def _and_or(node: And | Or) -> Node:
    kind = type(node)
    flat: list[Node] = []
    for a in node.args:
        c = _canon(a)
        if isinstance(c, kind):
            flat.extend(c.args)
        else:
            flat.append(c)
    uniq = {json.dumps(to_json(x), sort_keys=True): x for x in flat}
    args = tuple(uniq[k] for k in sorted(uniq))
    return args[0] if len(args) == 1 else kind(args)


def canonical(node: Node) -> Node:
    """A normal form for comparing logic: and/or flattened, deduplicated and sorted; overlap
    pairs sorted (overlap is symmetric); seconds as floats. Two logics with the same canonical
    form are the same query."""
    return _canon(node)


def same_logic(a: Node, b: Node) -> bool:
    """True when ``a`` and ``b`` differ only in and/or argument order or overlap pair order."""
    return canonical(a) == canonical(b)


@dataclass
class _Facts:
    """What the top-level conjuncts of a query state, gathered for the consistency check."""
    required: set[str] = field(default_factory=set)
    excluded: set[str] = field(default_factory=set)
    before: dict[str, set[str]] = field(default_factory=dict)
    overlaps: list[Overlap] = field(default_factory=list)
    not_rel: list[Node] = field(default_factory=list)
    """negated conjuncts other than a negated has or lasts"""
    lasts: dict[str, list[float]] = field(default_factory=dict)
    not_lasts: list[Lasts] = field(default_factory=list)
    counts: dict[str, set[int]] = field(default_factory=dict)
    alternatives: list[Or] = field(default_factory=list)
    """required ``or`` conjuncts (a family of sounds: any of its members)"""


FACTS = Interpreter("consistency facts (canonical.check_consistent)")
"""node, negated, _Facts -> None: records what a top-level conjunct (or the node under its
``not``) states; one handler per node type."""


@FACTS.register(Has)
def _has_facts(node: Has, negated: bool, facts: _Facts) -> None:
    (facts.excluded if negated else facts.required).add(node.label)


@FACTS.register(Lasts)
def _lasts_facts(node: Lasts, negated: bool, facts: _Facts) -> None:
    if negated:
        facts.not_lasts.append(node)
    else:
        facts.required.add(node.label)
        facts.lasts.setdefault(node.label, []).append(float(node.seconds))


@FACTS.register(Count)
def _count_facts(node: Count, negated: bool, facts: _Facts) -> None:
    if negated:
        facts.not_rel.append(node)
    else:
        facts.required.add(node.label)
        facts.counts.setdefault(node.label, set()).add(node.n)


@FACTS.register(Before)
def _before_facts(node: Before, negated: bool, facts: _Facts) -> None:
    if negated:
        facts.not_rel.append(node)
    else:
        facts.required.update(node.leaf_labels())
        facts.before.setdefault(node.a, set()).add(node.b)


@FACTS.register(Overlap)
def _overlap_facts(node: Overlap, negated: bool, facts: _Facts) -> None:
    if negated:
        facts.not_rel.append(node)
    else:
        facts.required.update(node.leaf_labels())
        facts.overlaps.append(node)


@FACTS.register(Not)
def _not_facts(node: Not, negated: bool, facts: _Facts) -> None:
    if negated:
        facts.not_rel.append(node)
    else:
        FACTS(node.arg, True, facts)


@FACTS.register(And, Or)
def _and_or_facts(node: And | Or, negated: bool, facts: _Facts) -> None:
    if negated:  # its negation is compared with the other conjuncts
        facts.not_rel.append(node)
        if isinstance(node, Or):   # not (a or b) = not a and not b: "no birds" excludes each
            for a in node.args:
                FACTS(a, True, facts)
    elif isinstance(node, Or):
        facts.alternatives.append(node)


def _needs_excluded(node: Node, excluded: set[str]) -> bool:
    """Whether ``node`` cannot hold because every way it holds needs an excluded sound."""
    if isinstance(node, (Has, Lasts)):
        return node.label in excluded
    if isinstance(node, Count):
        return node.n > 0 and node.label in excluded
    if isinstance(node, (Before, Overlap)):
        return node.a in excluded or node.b in excluded
    if isinstance(node, And):
        return any(_needs_excluded(a, excluded) for a in node.args)
    if isinstance(node, Or):
        return all(_needs_excluded(a, excluded) for a in node.args)
    return False


def check_consistent(logic: Node, text: str = "") -> None:
    """Raise QueryParseError when the top-level conjunction cannot hold for any clip."""
    where = f" in {text!r}" if text else ""
    args = conjuncts(logic)
    facts = _Facts()
    for a in args:
        FACTS(a, False, facts)
    required, excluded, before = facts.required, facts.excluded, facts.before
    overlaps, not_rel, lasts, not_lasts = facts.overlaps, facts.not_rel, facts.lasts, facts.not_lasts
    both = sorted(required & excluded)
    if both:
        raise QueryParseError(f"contradictory query{where}: {both[0]!r} is both required and "
                              "excluded")
    for alt in facts.alternatives:
        if _needs_excluded(alt, excluded):
            raise QueryParseError(f"contradictory query{where}: {describe(alt)} is required, but "
                                  "every sound it could be is excluded")

    def reach(src: str) -> set[str]:
        seen, todo = set(), [src]
        while todo:
            x = todo.pop()
            for y in before.get(x, ()):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    for a in sorted(before):
        if a in reach(a):
            path = _cycle(before, a)
            raise QueryParseError(f"contradictory query{where}: "
                                  + " before ".join(repr(x) for x in path)
                                  + " is a cycle; a sound cannot come before itself")
    for o in overlaps:
        for x, y in ((o.a, o.b), (o.b, o.a)):
            if y in reach(x):
                raise QueryParseError(f"contradictory query{where}: {x!r} comes before {y!r}, "
                                      "so they cannot overlap")
    canon_args = {_canon(a) for a in args}
    for r in not_rel:
        if _canon(r) in canon_args:
            raise QueryParseError(f"contradictory query{where}: {describe(r)} is both required "
                                  "and excluded")
    for label, values in lasts.items():
        bounds = [duration_bounds(v) for v in values]
        lo, hi = max(b[0] for b in bounds), min(b[1] for b in bounds)
        if lo > hi:
            raise QueryParseError(f"contradictory query{where}: {label!r} cannot last "
                                  + " and ".join(f"{v:g} s" for v in values))
    for label, ns in facts.counts.items():
        if len(ns) > 1:
            raise QueryParseError(f"contradictory query{where}: {label!r} cannot occur "
                                  + " and ".join(f"{n} times" for n in sorted(ns)))
    for nl in not_lasts:
        if float(nl.seconds) in lasts.get(nl.label, []):
            raise QueryParseError(f"contradictory query{where}: {nl.label!r} must and must not "
                                  f"last {nl.seconds:g} s")


def _cycle(before: dict[str, set[str]], start: str) -> list[str]:
    """One shortest cycle through ``start`` in the before-graph, as a path (for the message)."""
    prev: dict[str, str] = {}
    todo = [start]
    while todo:
        x = todo.pop(0)
        for y in sorted(before.get(x, ())):
            if y == start:
                path = [x]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if y not in prev:
                prev[y] = x
                todo.append(y)
    return [start, start]  # pragma: no cover
