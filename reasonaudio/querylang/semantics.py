"""The judge's semantics (docs/benchmark.md), in one place, evaluated clip by clip.

Times in clip metadata are seconds rounded to milliseconds. Every comparison here is done on
integer milliseconds, so the 0.5 s overlap threshold and the duration tolerances are exact and
no floating-point rounding decides relevance.

A label may occur more than once in a clip (occurrences at least 0.5 s apart; only in builds
with the Count task). With one occurrence per label every row reads as it always did:

| op | true when |
|---|---|
| has(x) | the clip has an event labelled x (some occurrence) |
| before(x, y) | has x, has y, and every x ends no later than every y starts: last offset(x) <= first onset(y) (touching counts) |
| overlap(x, y) | has x, has y, and some occurrence of x and some of y share >= 0.5 s |
| lasts(x, N) | has x and every occurrence of x lasts N: abs(dur - N) <= max(0.5, 0.15 * N) |
| count(x, n) | x occurs exactly n times |
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Protocol, Sequence

from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap)
from reasonaudio.types import Milliseconds, MillisecondsLike, Seconds

if TYPE_CHECKING:
    import numpy as np

OVERLAP_MIN_MS = 500
"""Two events overlap when they share at least this many milliseconds."""

DURATION_TOLERANCE_MIN_MS = 500
DURATION_TOLERANCE_RELATIVE = 0.15
DURATION_TOLERANCE_TEXT = (f"max({DURATION_TOLERANCE_MIN_MS / 1000:g} s, "
                           f"{DURATION_TOLERANCE_RELATIVE * 100:g}%)")
"""The tolerance rule in words, for messages (``max(0.5 s, 15%)``)."""


def to_ms(seconds: Seconds) -> Milliseconds:
    """Seconds (already rounded to ms in metadata) as integer milliseconds."""
    return int(round(seconds * 1000.0))


def duration_tolerance_ms(seconds: float) -> float:
    """``max(0.5 s, 0.15 * N)`` in milliseconds: the one duration-tolerance rule; every reader of
    ``lasts`` (exact, judge, filter, soft score, consistency check, views) derives from it."""
    return max(float(DURATION_TOLERANCE_MIN_MS), DURATION_TOLERANCE_RELATIVE * seconds * 1000.0)


def lasts_us(seconds: float) -> tuple[int, int]:
    """``lasts(x, N)``'s target and tolerance in integer microseconds (the exact comparison of
    :func:`lasts_ms`, and the filter's integer-ms bounds, are made from these)."""
    return int(round(seconds * 1_000_000)), int(round(duration_tolerance_ms(seconds) * 1000))


def duration_bounds(seconds: float) -> tuple[float, float]:
    """Closed interval of event durations (seconds) that satisfy ``lasts(x, seconds)``."""
    tol = duration_tolerance_ms(seconds) / 1000.0
    return seconds - tol, seconds + tol


def lasts_ms(dur_ms: MillisecondsLike, seconds: float) -> bool | np.ndarray:
    """Whether an event of ``dur_ms`` integer milliseconds lasts ``seconds``: an int gives a
    bool, an integer numpy array (the vectorised judge) a boolean mask."""
    # Compared in thousandths of a millisecond so N with fractional ms tolerances stays exact.
    target_us, tol_us = lasts_us(seconds)
    return abs(dur_ms * 1000 - target_us) <= tol_us


def duration_excess_ms(dur_ms: MillisecondsLike, seconds: float) -> float | np.ndarray:
    """How far (ms, float; <= 0 inside) a duration lies outside ``lasts(x, N)``'s tolerance:
    the soft score's graded reading of the same rule."""
    return abs(dur_ms - seconds * 1000.0) - duration_tolerance_ms(seconds)


class EventLike(Protocol):
    label: str
    onset: float
    offset: float


Intervals = Mapping[str, tuple[int, int]]
"""label -> (onset_ms, offset_ms) of a clip's events when each label occurs once."""
Occurrences = Mapping[str, tuple[tuple[int, int], ...]]
"""label -> every (onset_ms, offset_ms) of that label in the clip, in onset order."""


def intervals(events: Iterable[EventLike]) -> dict[str, tuple[int, int]]:
    """label -> its one interval; ValueError when a label repeats (use :func:`occurrences`)."""
    out: dict[str, tuple[int, int]] = {}
    for e in events:
        if e.label in out:
            raise ValueError(f"label {e.label!r} occurs twice in one clip")
        out[e.label] = (to_ms(e.onset), to_ms(e.offset))
    return out


def occurrences(events: Iterable[EventLike]) -> dict[str, tuple[tuple[int, int], ...]]:
    """label -> every occurrence's (onset_ms, offset_ms), in onset order (labels in first-event
    order)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for e in events:
        out.setdefault(e.label, []).append((to_ms(e.onset), to_ms(e.offset)))
    return {label: tuple(sorted(occ)) for label, occ in out.items()}


def as_occurrences(clip: Intervals | Occurrences) -> Occurrences:
    """A clip given either way as :data:`Occurrences` (one interval -> a tuple of one)."""
    return {label: (tuple(v) if not v or isinstance(v[0], (tuple, list)) else (tuple(v),))
            for label, v in clip.items()}


# The relations over occurrence lists: the one definition the judge, the payload and the
# consistency rules read (docs/benchmark.md, "Relations").

def before_occ(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> bool:
    """Every occurrence of ``a`` ends no later than every occurrence of ``b`` starts."""
    return bool(a) and bool(b) and max(off for _, off in a) <= min(on for on, _ in b)


def overlap_occ(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> bool:
    """Some occurrence of ``a`` and some of ``b`` share at least ``OVERLAP_MIN_MS``."""
    return any(min(x[1], y[1]) - max(x[0], y[0]) >= OVERLAP_MIN_MS for x in a for y in b)


def lasts_occ(a: Sequence[tuple[int, int]], seconds: float) -> bool:
    """``a`` occurs and every occurrence lasts ``seconds`` within the tolerance."""
    return bool(a) and all(lasts_ms(off - on, seconds) for on, off in a)


HOLDS = Interpreter("exact semantics (semantics.holds)")
"""node, clip occurrences -> bool; one handler per node type."""


def holds(node: Node, clip: Intervals | Occurrences) -> bool:
    """Whether ``node`` holds for a clip given as label -> (onset_ms, offset_ms) or as label ->
    every occurrence's (onset_ms, offset_ms)."""
    return HOLDS(node, as_occurrences(clip))


_NONE: tuple[tuple[int, int], ...] = ()


@HOLDS.register(Has)
def _has(node: Has, clip: Occurrences) -> bool:
    return bool(clip.get(node.label))


@HOLDS.register(Before)
def _before(node: Before, clip: Occurrences) -> bool:
    return before_occ(clip.get(node.a, _NONE), clip.get(node.b, _NONE))


@HOLDS.register(Overlap)
def _overlap(node: Overlap, clip: Occurrences) -> bool:
    return overlap_occ(clip.get(node.a, _NONE), clip.get(node.b, _NONE))


@HOLDS.register(Lasts)
def _lasts(node: Lasts, clip: Occurrences) -> bool:
    return lasts_occ(clip.get(node.label, _NONE), node.seconds)


@HOLDS.register(Count)
def _count(node: Count, clip: Occurrences) -> bool:
    return len(clip.get(node.label, _NONE)) == node.n


@HOLDS.register(Not)
def _not(node: Not, clip: Occurrences) -> bool:
    return not HOLDS(node.arg, clip)


@HOLDS.register(And)
def _and(node: And, clip: Occurrences) -> bool:
    return all(HOLDS(a, clip) for a in node.args)


@HOLDS.register(Or)
def _or(node: Or, clip: Occurrences) -> bool:
    return any(HOLDS(a, clip) for a in node.args)


def evaluate(node: Node, events: Iterable[EventLike]) -> bool:
    """Whether a clip with these events satisfies ``node``."""
    return HOLDS(node, occurrences(events))
