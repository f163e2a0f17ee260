"""Canonical form of query logic and the consistency check the parser applies.

``canonical``/``same_logic`` compare two logics up to and/or argument order and overlap pair order
(overlap is symmetric), which is how parsed text is checked against generated logic.
``check_consistent`` finds conjunctions no clip can satisfy under the judge's semantics.
"""

from __future__ import annotations

import json

from reasonaudio.constraints.logic import (And, Before, Has, Lasts, Node, Not, Or, Overlap,
                                           describe, leaf_labels, to_json)
from reasonaudio.constraints.semantics import duration_bounds
from reasonaudio.errors import QueryParseError


def _canon(node: Node) -> Node:
    if isinstance(node, Overlap):
        a, b = sorted((node.a, node.b))
        return Overlap(a, b)
    if isinstance(node, Lasts):
        return Lasts(node.label, float(node.seconds))
    if isinstance(node, Not):
        return Not(_canon(node.arg))
    if isinstance(node, (And, Or)):
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
    return node


def canonical(node: Node) -> Node:
    """A normal form for comparing logic: and/or flattened, deduplicated and sorted; overlap
    pairs sorted (overlap is symmetric); seconds as floats. Two logics with the same canonical
    form are the same query."""
    return _canon(node)


def same_logic(a: Node, b: Node) -> bool:
    """True when ``a`` and ``b`` differ only in and/or argument order or overlap pair order."""
    return canonical(a) == canonical(b)


def check_consistent(logic: Node, text: str = "") -> None:
    """Raise QueryParseError when the top-level conjunction cannot hold for any clip."""
    where = f" in {text!r}" if text else ""
    args = logic.args if isinstance(logic, And) else (logic,)
    required: set[str] = set()
    excluded: set[str] = set()
    before: dict[str, set[str]] = {}
    overlaps: list[Overlap] = []
    not_rel: list[Node] = []
    lasts: dict[str, list[float]] = {}
    not_lasts: list[Lasts] = []
    for a in args:
        if isinstance(a, (Has, Lasts, Before, Overlap)):
            required.update(leaf_labels(a))
        if isinstance(a, Before):
            before.setdefault(a.a, set()).add(a.b)
        elif isinstance(a, Overlap):
            overlaps.append(a)
        elif isinstance(a, Lasts):
            lasts.setdefault(a.label, []).append(float(a.seconds))
        elif isinstance(a, Not):
            if isinstance(a.arg, Has):
                excluded.add(a.arg.label)
            elif isinstance(a.arg, Lasts):
                not_lasts.append(a.arg)
            else:
                not_rel.append(a.arg)
    both = sorted(required & excluded)
    if both:
        raise QueryParseError(f"contradictory query{where}: {both[0]!r} is both required and "
                              "excluded")

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
