"""Score tracks -> one detected event per label, in integer milliseconds, as a :class:`Clip`.

Per label (its own ``on`` threshold, calibrated; :mod:`reasonaudio.detect.calibrate`):

1. hysteresis: a run of frames with score >= ``on * off_ratio`` is kept when it reaches ``on``
   somewhere (a weak tail of a strong event stays, a weak blip alone does not);
2. runs separated by at most ``gap_ms`` are merged;
3. runs shorter than ``min_ms`` are dropped;
4. one event per label: ``span`` = first onset to last offset of what is left, ``strongest`` =
   the run with the highest peak; the event also says how many times the label was heard
   (``count``: the runs of step 1 that lie at least 0.5 s apart, merged when closer, and at least
   ``min_ms`` long; at least 1), which the payload's ``count`` field holds for a label heard
   twice or more (Count queries);
5. the onset and offset are moved by calibrated shifts (a 0.96 s patch starts hearing an event
   up to a patch before the frame's middle hop reaches it), kept inside the clip.

Frame ``i`` of YAMNet (a 0.96 s patch every 0.48 s) stands for the middle hop of its patch,
``[i*480 + 240, (i+1)*480 + 240)`` ms, except that frame 0 starts at 0 and the last frame ends
at the clip's end, so frames tile the clip exactly (as ``captions.frames_to_segments`` reads them).
The detected clip goes through the project's own payload code (``store.payload.clip_payload``),
so its relations are the judge's relations, computed once, in one place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from reasonaudio.querylang.semantics import to_ms
from reasonaudio.dataset.clip import REPEAT_GAP_MS, Clip, Event
from reasonaudio.types import MillisecondsLike

DETECTED_ATOM = "detected"
POLICIES = ("span", "strongest")


@dataclass(frozen=True)
class FrameGrid:
    """Where a detector's frames lie in time, and the onset/offset shifts calibration tries.

    YAMNet's (:data:`YAMNET_GRID`): frame ``i`` stands for ``[i*480 + 240, (i+1)*480 + 240)`` ms
    (module docstring); a trained detector's (``detect.trained``) frames tile the clip every
    80 ms from 0."""

    hop_ms: int = 480
    lead_ms: int = 240
    onset_shifts_ms: tuple[int, ...] = (-960, -720, -480, -240, 0)
    offset_shifts_ms: tuple[int, ...] = (0, 240, 480, 720, 960)

    def bounds(self, n_frames: int, duration_ms: int) -> np.ndarray:
        return frame_bounds(n_frames, duration_ms, self.hop_ms, self.lead_ms)


YAMNET_GRID = FrameGrid()


@dataclass(frozen=True)
class DetectParams:
    """Post-processing of the score tracks (all calibrated on a separate build)."""

    on: float = 0.3
    """default ``on`` threshold for labels without their own"""
    off_ratio: float = 0.5
    """hysteresis: a run continues while the score stays >= on * off_ratio"""
    gap_ms: int = 1920
    min_ms: int = 960
    policy: str = "span"
    onset_shift_ms: int = 0
    """added to every detected onset (a 0.96 s patch hears an event before its middle hop does)"""
    offset_shift_ms: int = 0
    top_k: int = 0
    """classes per label (zero-shot) or signature size (enrolled); 0 = the label map as given"""
    threshold_beta: float = 1.0
    threshold_min_score: float = 0.0
    """the rule that chose ``thresholds`` (recorded; see ``calibrate.label_thresholds``)"""
    thresholds: Mapping[str, float] = field(default_factory=dict)
    """label -> its own ``on`` threshold"""

    def threshold(self, label: str) -> float:
        return float(self.thresholds.get(label, self.on))

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["thresholds"] = {k: round(float(v), 6) for k, v in sorted(self.thresholds.items())}
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "DetectParams":
        return cls(on=float(obj["on"]), off_ratio=float(obj["off_ratio"]), gap_ms=int(obj["gap_ms"]),
                   min_ms=int(obj["min_ms"]), policy=str(obj["policy"]),
                   onset_shift_ms=int(obj.get("onset_shift_ms", 0)),
                   offset_shift_ms=int(obj.get("offset_shift_ms", 0)), top_k=int(obj.get("top_k", 0)),
                   threshold_beta=float(obj.get("threshold_beta", 1.0)),
                   threshold_min_score=float(obj.get("threshold_min_score", 0.0)),
                   thresholds={str(k): float(v) for k, v in (obj.get("thresholds") or {}).items()})


@dataclass(frozen=True)
class Detected:
    label: str
    onset_ms: int
    offset_ms: int
    confidence: float
    """the peak score inside the event"""
    count: int = 1
    """how many times the label was heard (occurrences at least 0.5 s apart)"""


def frame_bounds(n_frames: int, duration_ms: int, hop_ms: int = 480, lead_ms: int = 240) -> np.ndarray:
    """(n+1,) frame boundaries in ms, tiling ``[0, duration_ms]``."""
    b = np.arange(n_frames + 1, dtype=np.int64) * hop_ms + lead_ms
    b[0] = 0
    b[-1] = max(int(b[-1]), duration_ms) if n_frames else 0
    return np.clip(b, 0, duration_ms)


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True as (first frame, last frame + 1)."""
    padded = np.concatenate(([False], mask, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def detect_label(track: np.ndarray, bounds: np.ndarray, on: float, params: DetectParams,
                 label: str = "") -> Detected | None:
    """One label's event in a clip (or None), see the module docstring."""
    if not len(track) or float(track.max()) < on:
        return None
    return event_of_runs(track, kept_runs(track, on, params.off_ratio), bounds, params, label)


def kept_runs(track: np.ndarray, on: float, off_ratio: float) -> list[tuple[int, int]]:
    """Step 1 (hysteresis): the runs of frames >= ``on * off_ratio`` that reach ``on`` (none
    when the track never does: :func:`detect_label`'s shortcut)."""
    return [(a, b) for a, b in runs(track >= on * off_ratio) if float(track[a:b].max()) >= on]


def event_of_runs(track: np.ndarray, kept: Sequence[tuple[int, int]], bounds: np.ndarray,
                  params: DetectParams, label: str = "") -> Detected | None:
    """Steps 2-5 on the runs step 1 kept (:func:`kept_runs`): merged, filtered, one event."""
    merged: list[list[int]] = []
    for a, b in kept:
        if merged and bounds[a] - bounds[merged[-1][1]] <= params.gap_ms:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    merged = [m for m in merged if bounds[m[1]] - bounds[m[0]] >= max(params.min_ms, 1)]
    if not merged:
        return None
    if params.policy == "strongest":
        a, b = max(merged, key=lambda m: (float(track[m[0]:m[1]].max()), m[1] - m[0], -m[0]))
    else:
        a, b = merged[0][0], merged[-1][1]
    return shifted(Detected(label, int(bounds[a]), int(bounds[b]), float(track[a:b].max()),
                            heard_count(kept, bounds, params.min_ms)),
                   params.onset_shift_ms, params.offset_shift_ms, int(bounds[-1]))


def heard_count(kept: Sequence[tuple[int, int]], bounds: np.ndarray, min_ms: int) -> int:
    """How many times a label was heard: runs (frame index pairs) closer than
    ``REPEAT_GAP_MS`` merged, those shorter than ``min_ms`` dropped; at least 1."""
    groups: list[list[int]] = []
    for a, b in kept:
        if groups and bounds[a] - bounds[groups[-1][1]] < REPEAT_GAP_MS:
            groups[-1][1] = b
        else:
            groups.append([a, b])
    return max(1, sum(bounds[b] - bounds[a] >= max(min_ms, 1) for a, b in groups))


@dataclass(frozen=True)
class RunTable:
    """Step 1's kept runs (:func:`kept_runs`) of many (clip, label) pairs, as arrays in pair
    order: what :func:`events_of_table` reads to take steps 2-4 for every pair at once."""

    pair: np.ndarray
    """(R,) each run's pair, non-decreasing"""
    start_ms: np.ndarray
    end_ms: np.ndarray
    first: np.ndarray
    """(R,) each run's first frame"""
    frames: np.ndarray
    """(R,) each run's length in frames"""
    peak: np.ndarray
    """(R,) each run's highest score"""

    @classmethod
    def of(cls, pairs: Iterable[tuple[np.ndarray, Sequence[tuple[int, int]], np.ndarray]]) -> "RunTable":
        """From (track, kept runs, frame bounds) per pair; a pair's index is its position."""
        rows = [(p, int(bounds[a]), int(bounds[b]), a, b - a, float(track[a:b].max()))
                for p, (track, kept, bounds) in enumerate(pairs) for a, b in kept]
        cols = np.asarray(rows, dtype=np.float64).reshape(-1, 6).T
        ints = cols[:5].astype(np.int64)
        return cls(ints[0], ints[1], ints[2], ints[3], ints[4], cols[5])


def events_of_table(table: RunTable, gap_ms: int, min_ms: int, policy: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps 2-4 of :func:`event_of_runs` for every pair of ``table``: (pairs with an event,
    onset ms, offset ms), unshifted. Only the times: no confidence or count, which the
    calibration's objective does not read. The same rules in arrays (a test compares the two):
    a run joins its predecessor's group when the gap between them is at most ``gap_ms``; a
    group shorter than ``max(min_ms, 1)`` is dropped; ``span`` reaches from the first group left
    to the last, ``strongest`` is the group with the highest peak (then the most frames, then
    the earliest), and a merged group's peak is its runs' (frames between kept runs stay under
    ``on``, which every kept run reaches)."""
    pair, n = table.pair, len(table.pair)
    empty = np.zeros(0, dtype=np.int64)
    if not n:
        return empty, empty, empty
    new = _starts(pair)
    new[1:] |= table.start_ms[1:] - table.end_ms[:-1] > gap_ms
    heads = np.flatnonzero(new)
    tails = np.append(heads[1:], n) - 1
    on, off = table.start_ms[heads], table.end_ms[tails]
    left = np.flatnonzero(off - on >= max(min_ms, 1))
    if not len(left):
        return empty, empty, empty
    owner = pair[heads[left]]
    if policy == "strongest":
        peak = np.maximum.reduceat(table.peak, heads)[left]
        frames = (table.first[tails] + table.frames[tails] - table.first[heads])[left]
        order = np.lexsort((table.first[heads[left]], -frames, -peak, owner))
        chosen = left[order[_starts(owner[order])]]
        return pair[heads[chosen]], on[chosen], off[chosen]
    firsts = _starts(owner)
    lasts = np.append(firsts[1:], True)
    return owner[firsts], on[left[firsts]], off[left[lasts]]


def _starts(keys: np.ndarray) -> np.ndarray:
    """Where each run of equal values in a non-empty ``keys`` starts (a boolean mask)."""
    return np.r_[True, keys[1:] != keys[:-1]]


def shifted(d: Detected, onset_shift_ms: int, offset_shift_ms: int, duration_ms: int) -> Detected:
    """``d`` with its ends moved (:func:`shift_span`); no shift leaves it as it is."""
    if not onset_shift_ms and not offset_shift_ms:
        return d
    on, off = shift_span(d.onset_ms, d.offset_ms, onset_shift_ms, offset_shift_ms, duration_ms)
    return Detected(d.label, int(on), int(off), d.confidence, d.count)


def shift_span(onset_ms: MillisecondsLike, offset_ms: MillisecondsLike, onset_shift_ms: int,
               offset_shift_ms: int, duration_ms: MillisecondsLike
               ) -> tuple[MillisecondsLike, MillisecondsLike]:
    """(onset, offset) moved by the shifts, kept inside the clip and at least 1 ms long: of ints,
    or element-wise of integer arrays (calibration scores every detection and shift at once)."""
    on = np.minimum(np.maximum(0, onset_ms + onset_shift_ms), duration_ms - 1)
    return on, np.maximum(np.minimum(duration_ms, offset_ms + offset_shift_ms), on + 1)


def detect_clip(tracks: np.ndarray, labels: Sequence[str], duration_ms: int,
                params: DetectParams, grid: FrameGrid = YAMNET_GRID) -> list[Detected]:
    """Every label's event in one clip (labels in ``labels`` order)."""
    bounds = grid.bounds(len(tracks), duration_ms)
    out: list[Detected] = []
    if not len(tracks) or not len(labels):
        return out
    lowest = min(params.threshold(label) for label in labels)
    for j in np.flatnonzero(tracks.max(axis=0) >= lowest):
        found = detect_label(tracks[:, j], bounds, params.threshold(labels[j]), params, labels[j])
        if found is not None:
            out.append(found)
    return out


def detected_clip(truth: Clip, found: Sequence[Detected]) -> Clip:
    """A :class:`Clip` of the detected events (same id, duration and rate as the true clip).

    ``mode`` is ``overlap`` when any two events intersect, else ``sequential`` (the corpus
    rule of ``spec.validate_clip``; metadata only, no filter reads it)."""
    events = tuple(Event(d.label, d.onset_ms / 1000.0, d.offset_ms / 1000.0, DETECTED_ATOM, 0.0)
                   for d in sorted(found, key=lambda d: (d.onset_ms, d.label)))
    overlap = any(min(a.offset_ms, b.offset_ms) > max(a.onset_ms, b.onset_ms)
                  for i, a in enumerate(found) for b in found[i + 1:])
    extra: dict[str, Any] = {"confidence": {d.label: round(d.confidence, 4) for d in found}}
    repeats = {d.label: d.count for d in found if d.count > 1}
    if repeats:
        extra["count"] = repeats  # the payload's count field (store.payload.COUNT_FIELD)
    return Clip(truth.id, "overlap" if overlap else "sequential", truth.duration, truth.sample_rate,
                events, extra)


def detect_in(clip: Clip, tracks: np.ndarray, labels: Sequence[str], params: DetectParams,
              grid: FrameGrid = YAMNET_GRID) -> Clip:
    """``clip`` as its score tracks hear it: :func:`detect_clip` over its length, then
    :func:`detected_clip`."""
    return detected_clip(clip, detect_clip(tracks, labels, round(clip.duration * 1000), params, grid))


def track_summary(tracks: np.ndarray, labels: Sequence[str], duration_ms: int,
                  floor: float = 0.02, grid: FrameGrid = YAMNET_GRID) -> dict[str, list[float]]:
    """label -> [peak score, onset ms, offset ms, mean of the 3 best frames] for every label whose
    peak reaches ``floor``; onset and offset bound the contiguous frames around the peak where the
    score stays >= half the peak. The soft score reads them (times: for labels not detected;
    the 3-frame mean: to break ties, since YAMNet's int8 outputs take few distinct values)."""
    out: dict[str, list[float]] = {}
    if not len(tracks):
        return out
    bounds = grid.bounds(len(tracks), duration_ms)
    peaks = tracks.max(axis=0)
    for j in np.flatnonzero(peaks >= floor):
        col = tracks[:, j]
        t = int(np.argmax(col))
        half = col >= 0.5 * col[t]
        a = t
        while a > 0 and half[a - 1]:
            a -= 1
        b = t + 1
        while b < len(col) and half[b]:
            b += 1
        top = np.sort(col)[-3:]
        out[labels[j]] = [round(float(col[t]), 4), int(bounds[a]), int(bounds[b]),
                          round(float(top.mean()), 4)]
    return out


def clip_duration_ms(clip: Clip) -> int:
    return to_ms(clip.duration)
