"""The judge's semantics (docs/benchmark.md), in one place, evaluated clip by clip.

Times in clip metadata are seconds rounded to milliseconds. Every comparison here is done on
integer milliseconds, so the 0.5 s overlap threshold and the duration tolerances are exact and
no floating-point rounding decides relevance.

| op | true when |
|---|---|
| has(x) | the clip has an event labelled x |
| before(x, y) | has x, has y, and offset(x) <= onset(y) (touching counts) |
| overlap(x, y) | has x, has y, and min(offset) - max(onset) >= 0.5 s |
| lasts(x, N) | has x and abs(dur(x) - N) <= max(0.5, 0.15 * N) |
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

from reasonaudio.constraints.logic import And, Before, Has, Interpreter, Lasts, Node, Not, Or, Overlap

OVERLAP_MIN_MS = 500
"""Two events overlap when they share at least this many milliseconds."""

DURATION_TOLERANCE_MIN_MS = 500
DURATION_TOLERANCE_RELATIVE = 0.15
DURATION_TOLERANCE_TEXT = (f"max({DURATION_TOLERANCE_MIN_MS / 1000:g} s, "
                           f"{DURATION_TOLERANCE_RELATIVE * 100:g}%)")
"""The tolerance rule in words, for messages (``max(0.5 s, 15%)``)."""


def to_ms(seconds: float) -> int:
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


def lasts_ms(dur_ms: Any, seconds: float) -> Any:
    """Whether an event of ``dur_ms`` integer milliseconds lasts ``seconds``: an int gives a
    bool, an integer numpy array (the vectorised judge) a boolean mask."""
    # Compared in thousandths of a millisecond so N with fractional ms tolerances stays exact.
    target_us, tol_us = lasts_us(seconds)
    return abs(dur_ms * 1000 - target_us) <= tol_us


def duration_excess_ms(dur_ms: Any, seconds: float) -> Any:
    """How far (ms, float; <= 0 inside) a duration lies outside ``lasts(x, N)``'s tolerance:
    the soft score's graded reading of the same rule."""
    return abs(dur_ms - seconds * 1000.0) - duration_tolerance_ms(seconds)


class EventLike(Protocol):
    label: str
    onset: float
    offset: float


Intervals = Mapping[str, tuple[int, int]]
"""label -> (onset_ms, offset_ms) of a clip's events; a label occurs at most once per clip."""


def intervals(events: Iterable[EventLike]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for e in events:
        if e.label in out:
            raise ValueError(f"label {e.label!r} occurs twice in one clip")
        out[e.label] = (to_ms(e.onset), to_ms(e.offset))
    return out


HOLDS = Interpreter("exact semantics (semantics.holds)")
"""node, clip intervals -> bool; one handler per node type."""


def holds(node: Node, clip: Intervals) -> bool:
    """Whether ``node`` holds for a clip given as label -> (onset_ms, offset_ms)."""
    return HOLDS(node, clip)


@HOLDS.register(Has)
def _has(node: Has, clip: Intervals) -> bool:
    return node.label in clip


@HOLDS.register(Before)
def _before(node: Before, clip: Intervals) -> bool:
    a, b = clip.get(node.a), clip.get(node.b)
    return a is not None and b is not None and a[1] <= b[0]


@HOLDS.register(Overlap)
def _overlap(node: Overlap, clip: Intervals) -> bool:
    a, b = clip.get(node.a), clip.get(node.b)
    return (a is not None and b is not None
            and min(a[1], b[1]) - max(a[0], b[0]) >= OVERLAP_MIN_MS)


@HOLDS.register(Lasts)
def _lasts(node: Lasts, clip: Intervals) -> bool:
    a = clip.get(node.label)
    return a is not None and lasts_ms(a[1] - a[0], node.seconds)


@HOLDS.register(Not)
def _not(node: Not, clip: Intervals) -> bool:
    return not HOLDS(node.arg, clip)


@HOLDS.register(And)
def _and(node: And, clip: Intervals) -> bool:
    return all(HOLDS(a, clip) for a in node.args)


@HOLDS.register(Or)
def _or(node: Or, clip: Intervals) -> bool:
    return any(HOLDS(a, clip) for a in node.args)


def evaluate(node: Node, events: Iterable[EventLike]) -> bool:
    """Whether a clip with these events satisfies ``node``."""
    return holds(node, intervals(events))
