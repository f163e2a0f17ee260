"""Logic -> query text the parser reads back to the same logic (``same_logic``).

Used by the fuzz test (every accepted string's logic, written back and parsed again, must give
the same logic) and handy for showing a logic as a sentence. Each conjunct becomes one clause;
clauses are joined by full stops, which start a new clause in the query language. Durations
are written with ``repr`` of the float so the number reads back exactly.
"""

from __future__ import annotations

from reasonaudio.constraints.logic import Before, Has, Lasts, Node, Not, Or, Overlap, conjuncts


def _secs(seconds: float) -> str:
    return f"{float(seconds)!r} seconds"


def _clause(node: Node) -> str:
    if isinstance(node, Has):
        return node.label
    if isinstance(node, Before):
        return f"{node.a} before {node.b}"
    if isinstance(node, Overlap):
        return f"{node.a} while {node.b}"
    if isinstance(node, Lasts):
        return f"{node.label} for {_secs(node.seconds)}"
    if isinstance(node, Or) and all(isinstance(a, Has) for a in node.args):
        return " or ".join(a.label for a in node.args)  # type: ignore[union-attr]
    if isinstance(node, Not):
        inner = node.arg
        if isinstance(inner, Has):
            return f"no {inner.label}"
        if isinstance(inner, Lasts):
            return f"no {inner.label} for {_secs(inner.seconds)}"
        if isinstance(inner, Before):
            return f"{inner.a} not before {inner.b}"
        if isinstance(inner, Overlap):
            return f"{inner.a} and {inner.b}, but not at the same time"
        if isinstance(inner, Or) and all(isinstance(a, Has) for a in inner.args):
            return "neither " + " nor ".join(a.label for a in inner.args)  # type: ignore[union-attr]
    raise ValueError(f"cannot write {node!r} as query text: the query language has no "
                     "sentence for it")


def logic_to_text(logic: Node) -> str:
    """A sentence for ``logic`` (an and of leaves, negated leaves and or-of-sounds)."""
    return ". ".join(_clause(a) for a in conjuncts(logic))
