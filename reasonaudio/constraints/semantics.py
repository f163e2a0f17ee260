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

from typing import Iterable, Mapping, Protocol

from reasonaudio.constraints.logic import And, Before, Has, Lasts, Node, Not, Or, Overlap

OVERLAP_MIN_MS = 500
"""Two events overlap when they share at least this many milliseconds."""

DURATION_TOLERANCE_MIN_MS = 500
DURATION_TOLERANCE_RELATIVE = 0.15


def to_ms(seconds: float) -> int:
    """Seconds (already rounded to ms in metadata) as integer milliseconds."""
    return int(round(seconds * 1000.0))


def duration_tolerance_ms(seconds: float) -> float:
    """``max(0.5 s, 0.15 * N)`` in milliseconds."""
    return max(float(DURATION_TOLERANCE_MIN_MS), DURATION_TOLERANCE_RELATIVE * seconds * 1000.0)


def duration_bounds(seconds: float) -> tuple[float, float]:
    """Closed interval of event durations (seconds) that satisfy ``lasts(x, seconds)``."""
    tol = duration_tolerance_ms(seconds) / 1000.0
    return seconds - tol, seconds + tol


def lasts_ms(dur_ms: int, seconds: float) -> bool:
    # Compared in thousandths of a millisecond so N with fractional ms tolerances stays exact.
    target_us = int(round(seconds * 1_000_000))
    tol_us = int(round(duration_tolerance_ms(seconds) * 1000))
    return abs(dur_ms * 1000 - target_us) <= tol_us


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


def holds(node: Node, clip: Intervals) -> bool:
    """Whether ``node`` holds for a clip given as label -> (onset_ms, offset_ms)."""
    if isinstance(node, Has):
        return node.label in clip
    if isinstance(node, Before):
        a, b = clip.get(node.a), clip.get(node.b)
        return a is not None and b is not None and a[1] <= b[0]
    if isinstance(node, Overlap):
        a, b = clip.get(node.a), clip.get(node.b)
        return (a is not None and b is not None
                and min(a[1], b[1]) - max(a[0], b[0]) >= OVERLAP_MIN_MS)
    if isinstance(node, Lasts):
        a = clip.get(node.label)
        return a is not None and lasts_ms(a[1] - a[0], node.seconds)
    if isinstance(node, Not):
        return not holds(node.arg, clip)
    if isinstance(node, And):
        return all(holds(a, clip) for a in node.args)
    if isinstance(node, Or):
        return any(holds(a, clip) for a in node.args)
    raise TypeError(f"not a logic node: {node!r}")


def evaluate(node: Node, events: Iterable[EventLike]) -> bool:
    """Whether a clip with these events satisfies ``node``."""
    return holds(node, intervals(events))
