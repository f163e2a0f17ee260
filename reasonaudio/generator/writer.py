"""Logic -> query text the parser reads back to the same logic (``same_logic``).

Used by the fuzz test (every accepted string's logic, written back and parsed again, must give
the same logic) and handy for showing a logic as a sentence. Each conjunct becomes one clause;
clauses are joined by full stops, which start a new clause in the query language. Durations
are written with ``repr`` of the float so the number reads back exactly.
"""

from __future__ import annotations

from typing import Optional

from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap, conjuncts)


def _secs(seconds: float) -> str:
    return f"{float(seconds)!r} seconds"


SENTENCE = Interpreter("writer (writer.logic_to_text)")
"""node, negated -> the clause saying it (or its negation), or None when the query language
has no sentence for it; one handler per node type."""


@SENTENCE.register(Has)
def _has(node: Has, negated: bool) -> Optional[str]:
    return f"no {node.label}" if negated else node.label


@SENTENCE.register(Before)
def _before(node: Before, negated: bool) -> Optional[str]:
    return f"{node.a} not before {node.b}" if negated else f"{node.a} before {node.b}"


@SENTENCE.register(Overlap)
def _overlap(node: Overlap, negated: bool) -> Optional[str]:
    return (f"{node.a} and {node.b}, but not at the same time" if negated
            else f"{node.a} while {node.b}")


@SENTENCE.register(Lasts)
def _lasts(node: Lasts, negated: bool) -> Optional[str]:
    # "no x for N seconds" is refused as ambiguous (no x at all?); "no x lasting N" is not
    return (f"no {node.label} lasting {_secs(node.seconds)}" if negated
            else f"{node.label} for {_secs(node.seconds)}")


@SENTENCE.register(Count)
def _count(node: Count, negated: bool) -> Optional[str]:
    return None if negated else f"{node.label} {node.n} times"  # no sentence excludes a count


@SENTENCE.register(Or)
def _or(node: Or, negated: bool) -> Optional[str]:
    sounds = [a.label for a in node.args if isinstance(a, Has)]
    if len(sounds) < len(node.args):  # only an or of sounds has a sentence
        return None
    return "neither " + " nor ".join(sounds) if negated else " or ".join(sounds)


@SENTENCE.register(Not)
def _not(node: Not, negated: bool) -> Optional[str]:
    return None if negated else SENTENCE(node.arg, True)


@SENTENCE.register(And)
def _and(node: And, negated: bool) -> Optional[str]:
    return None  # a top-level and is split into clauses; a nested one has no sentence


def _clause(node: Node) -> str:
    text = SENTENCE(node, False)
    if text is None:
        raise ValueError(f"cannot write {node!r} as query text: the query language has no "
                         "sentence for it")
    return text


def logic_to_text(logic: Node) -> str:
    """A sentence for ``logic`` (an and of leaves, negated leaves and or-of-sounds).

    "a not before b" and "a and b, but not at the same time" say that both sounds occur (the
    parser reads them with both), so a negated order or overlap is written only beside its two
    sounds; without them the query language has no exact sentence for it."""
    parts = conjuncts(logic)
    # a sound is present when a conjunct says so: has, lasts and count name one sound, a positive
    # order or overlap two (the parser drops a has these imply)
    present = {a.label for a in parts if isinstance(a, (Has, Lasts, Count))}
    present |= {x for a in parts if isinstance(a, (Before, Overlap)) for x in (a.a, a.b)}
    for a in parts:
        if isinstance(a, Not) and isinstance(a.arg, (Before, Overlap)) and not {a.arg.a, a.arg.b} <= present:
            raise ValueError(f"cannot write {a!r} as query text without has({a.arg.a}) and "
                             f"has({a.arg.b}): the query language has no sentence for it")
    return ". ".join(_clause(a) for a in parts)
