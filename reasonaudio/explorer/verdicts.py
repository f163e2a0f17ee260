"""What a query's logic says about one clip's events, in the explorer's words.

For a hit row and each side of a minimal pair: the verdict ("meets the query" / "breaks C2"),
which events belong to a constraint the clip breaks (outlined in its timeline), and the measured
facts each leaf of the logic is about (durations, the gap of an order, the shared time of an
overlap, a count), read with the judge's own semantics (``querylang/semantics.py``: integer
milliseconds, the one overlap threshold and duration tolerance). Events may be true or detected:
anything with ``label``, ``onset`` and ``offset`` in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not, Or,
                                           Overlap, conjuncts, labels)
from reasonaudio.querylang.semantics import (OVERLAP_MIN_MS, EventLike, Occurrences,
                                               duration_tolerance_ms, evaluate, occurrences)

MEETS = "meets the query"
NO_CHECKS = "no constraint checks"


@dataclass(frozen=True)
class Seen:
    """An event as a retriever perceived it (a detected collection's payload)."""

    label: str
    onset: float
    offset: float


def checks(logic: Node | None, events: Sequence[EventLike]) -> tuple[bool, ...]:
    """Whether ``events`` satisfy each top-level constraint (``conjuncts``) of ``logic``."""
    return tuple(evaluate(c, events) for c in conjuncts(logic)) if logic is not None else ()


def broken(marks: Sequence[bool]) -> list[int]:
    """The 1-based numbers of the constraints a clip breaks."""
    return [i for i, ok in enumerate(marks, 1) if not ok]


def verdict(marks: Sequence[bool]) -> str:
    """``meets the query``, ``breaks C2`` or ``breaks C1, C3``; without checks, says so (a free
    text that did not parse), never a false "no"."""
    if not marks:
        return NO_CHECKS
    bad = broken(marks)
    return MEETS if not bad else "breaks " + ", ".join(f"C{i}" for i in bad)


def breaking(logic: Node | None, marks: Sequence[bool]) -> dict[str, list[int]]:
    """label -> numbers of the broken constraints that mention it: the events to outline (a
    negated sound present, both sounds of a reversed order, the sound of a wrong duration)."""
    out: dict[str, list[int]] = {}
    if logic is None:
        return out
    for i, (part, ok) in enumerate(zip(conjuncts(logic), marks), 1):
        if not ok:
            for label in labels(part):
                out.setdefault(label, []).append(i)
    return out


# --- measured facts of each leaf -------------------------------------------------------------------

MEASURE = Interpreter("explorer measurements (explorer.verdicts)")
"""node, occurrences -> (what, measured) lines of its relations, leaves in order (connectives
recurse; ``has`` adds none: every mentioned sound has its own line)."""


def _s(ms: float) -> str:
    return f"{ms / 1000:.2f} s"


def _spans(occ: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"{_s(on)}–{_s(off)} ({_s(off - on)})" for on, off in occ)


@MEASURE.register(Has)
def _has(node: Has, clip: Occurrences) -> list[tuple[str, str]]:
    return []


@MEASURE.register(Lasts)
def _lasts(node: Lasts, clip: Occurrences) -> list[tuple[str, str]]:
    occ = clip.get(node.label, ())
    asked = f"asks {node.seconds:g} s ± {_s(duration_tolerance_ms(node.seconds))}"
    lasts = ", ".join(_s(off - on) for on, off in occ) if occ else "absent"
    return [(f"{node.label} lasts", f"{lasts} ({asked})")]


def _absent(clip: Occurrences, *sounds: str) -> str | None:
    """``absent: x and y`` for the sounds the clip lacks (None when it has them all)."""
    missing = [x for x in sounds if not clip.get(x)]
    return "absent: " + " and ".join(missing) if missing else None


@MEASURE.register(Before)
def _before(node: Before, clip: Occurrences) -> list[tuple[str, str]]:
    what, absent = f"{node.a} → {node.b}", _absent(clip, node.a, node.b)
    if absent:
        return [(what, absent)]
    gap = min(on for on, _ in clip[node.b]) - max(off for _, off in clip[node.a])
    return [(what, f"gap {_s(gap)}" if gap >= 0 else f"{node.b} starts {_s(-gap)} before {node.a} ends")]


@MEASURE.register(Overlap)
def _overlap(node: Overlap, clip: Occurrences) -> list[tuple[str, str]]:
    what, absent = f"{node.a} ∩ {node.b}", _absent(clip, node.a, node.b)
    if absent:
        return [(what, absent)]
    shared = max(min(x[1], y[1]) - max(x[0], y[0]) for x in clip[node.a] for y in clip[node.b])
    need = f"needs ≥ {_s(OVERLAP_MIN_MS)}"
    return [(what, f"overlap {_s(shared)} ({need})" if shared > 0 else f"apart by {_s(-shared)} ({need})")]


@MEASURE.register(Count)
def _count(node: Count, clip: Occurrences) -> list[tuple[str, str]]:
    n = len(clip.get(node.label, ()))
    return [(f"{node.label} count", f"{n} (asks {node.n})")]


@MEASURE.register(Not)
def _not(node: Not, clip: Occurrences) -> list[tuple[str, str]]:
    return MEASURE(node.arg, clip)


@MEASURE.register(And, Or)
def _connective(node: And | Or, clip: Occurrences) -> list[tuple[str, str]]:
    return [line for a in node.args for line in MEASURE(a, clip)]


def measurements(logic: Node | None, events: Iterable[EventLike]) -> list[tuple[str, str]]:
    """(what, measured) over ``events``: each sound ``logic`` mentions (its times and durations, or
    absent), then each relation of its leaves (a gap, a shared time, a duration against the asked
    one, a count), each line once."""
    if logic is None:
        return []
    clip = occurrences(events)
    sounds = [(label, _spans(clip[label]) if clip.get(label) else "absent") for label in labels(logic)]
    return list(dict.fromkeys(sounds + MEASURE(logic, clip)))
