"""Calibration's last step, for detectors that ask for it: tune for the questions, not the events.

Steps 1-2 of :mod:`reasonaudio.detect.calibrate` maximise event-based F1, which prices every
false event as much as every missed one. The benchmark's queries do not: an ``overlap`` query
fails whenever the quieter of two overlapping sounds is missed, and a trained detector, whose
peaks sit near 0 or 1, misses exactly those (masked, so their peaks stay lower) under the strict
thresholds event F1 prefers. This step reads what the calibration build asks:

- a grid of **caps** (every label's ``on`` threshold lowered to at most the cap; 1.0: none) and
  **off ratios** (how far a run may fall under ``on`` and still continue), the map's
  :class:`ChoiceGrid`;
- for each, the calibration clips' events are detected, judged against the calibration build's
  queries (:class:`reasonaudio.querylang.judge.ClipIndex`, the oracle's logic) and scored by the
  build's multiple-choice pairs as ``mc_acc`` scores them, relevance as the score
  (:func:`~reasonaudio.dataset.benchmark.multiple_choice`: 1 when the positive is relevant and
  the hard negative is not, 0.5 when both or neither are, 0 otherwise, a query's pairs averaged);
  the mean per task, then over tasks;
- the first best in grid order wins; the grid starts with steps 1-2's choice unchanged, so the
  step changes nothing unless it answers more pairs.

Only the calibration build is read (its clips, queries and pairs); the evaluated build is never
seen. A calibration build without pairs skips the step (the record says so).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.dataset.benchmark import Choice, multiple_choice
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.detect.events import DetectParams, FrameGrid, detect_in


@dataclass(frozen=True)
class ChoiceGrid:
    """What the step searches: threshold caps (1.0 = none) and off ratios."""

    caps: tuple[float, ...]
    off_ratios: tuple[float, ...]

    def candidates(self, chosen: DetectParams) -> list[tuple[float, float]]:
        """(cap, off ratio) pairs in search order: steps 1-2's choice first, then the grid."""
        return [(1.0, chosen.off_ratio)] + list(itertools.product(self.caps, self.off_ratios))


def capped(params: DetectParams, cap: float, off_ratio: float) -> DetectParams:
    """``params`` with every threshold (and the default ``on``) at most ``cap``."""
    return replace(params, on=min(params.on, cap), off_ratio=off_ratio,
                   thresholds={k: min(v, cap) for k, v in params.thresholds.items()})


def choice_accuracy(bench: BenchmarkView, clips: Sequence[Clip], tracks: Sequence[np.ndarray],
                    labels: Sequence[str], frame_grid: FrameGrid, params: DetectParams) -> float | None:
    """The mean over tasks of the multiple-choice accuracy of ``clips``' detected events
    (``tracks`` in ``clips`` order) on ``bench``'s pairs; None when no pair has both clips."""
    detected = [detect_in(c, t, labels, params, frame_grid) for c, t in zip(clips, tracks)]
    index = ClipIndex(detected)
    row = {c.id: i for i, c in enumerate(clips)}
    queries = {q.id: q for q in bench.queries}
    relevant: dict[str, np.ndarray] = {}

    def scores(pair: Choice) -> tuple[float, float] | None:
        query = queries.get(pair.query_id)
        if query is None or pair.positive not in row or pair.negative not in row:
            return None
        if query.id not in relevant:
            relevant[query.id] = index.relevant(query.logic)
        hit = relevant[query.id]
        return hit[row[pair.positive]], hit[row[pair.negative]]

    per_task: dict[str, list[float]] = defaultdict(list)
    for qid, value in multiple_choice(bench.choices, scores).items():
        per_task[queries[qid].task].append(value)
    if not per_task:
        return None
    return float(np.mean([np.mean(v) for _, v in sorted(per_task.items())]))


def tune_for_choices(bench: BenchmarkView, clips: Sequence[Clip], tracks: Sequence[np.ndarray],
                     labels: Sequence[str], frame_grid: FrameGrid, chosen: DetectParams,
                     grid: ChoiceGrid) -> tuple[DetectParams, dict[str, Any]]:
    """The best (cap, off ratio) for ``bench``'s pairs, and what the record keeps of the step."""
    best: tuple[float, float, float] | None = None
    before: float | None = None
    for cap, off_ratio in grid.candidates(chosen):
        score = choice_accuracy(bench, clips, tracks, labels, frame_grid, capped(chosen, cap, off_ratio))
        if score is None:
            return chosen, {"skipped": "the calibration build has no multiple-choice pairs"}
        if before is None:
            before = score
        if best is None or score > best[0]:
            best = (score, cap, off_ratio)
    assert best is not None and before is not None
    score, cap, off_ratio = best
    return capped(chosen, cap, off_ratio), {
        "threshold_cap": cap, "off_ratio": off_ratio, "choices_mc": round(score, 6),
        "choices_mc_before": round(before, 6), "pairs": len(bench.choices),
        "grid": {"caps": list(grid.caps), "off_ratios": list(grid.off_ratios)}}
