"""Thresholds and post-processing chosen on a separate calibration build, never the evaluated one.

Two steps, both on the calibration build's clips (their true events are known there):

1. each label's ``on`` threshold maximises the clip-level F1 of "the label's peak track score
   reaches it" vs "the clip holds the label", over a fixed grid; labels with fewer than
   ``min_positives`` clips in the calibration build share one global threshold (the grid value
   with the best pooled F1);
2. ``off_ratio``, ``gap_ms``, ``min_ms`` and ``policy`` maximise the event-based micro F1
   (:mod:`reasonaudio.detect.perception`, sed_eval collars) over a fixed grid; ties go to the
   earlier grid entry, so the choice is deterministic.

The record (:class:`Calibration`) names the calibration build (seed, corpus sha256, a digest of
its clips) and is stored with the detected collection and in every ``bench detect`` output.
:func:`check_separate` refuses a calibration build that is the evaluated one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from reasonaudio.detect.events import POLICIES, DetectParams, detect_label, frame_bounds, detected_clip
from reasonaudio.detect.perception import perception
from reasonaudio.errors import DataError
from reasonaudio.ingest.benchmark import Benchmark
from reasonaudio.ingest.spec import Clip

THRESHOLD_GRID = tuple(round(float(x), 4) for x in np.geomspace(0.01, 0.9, 32))
OFF_RATIOS = (0.5, 0.75, 1.0)
GAPS_MS = (0, 480, 960, 1920)
MIN_MS = (0, 480, 960)


def clip_key(clip: Clip) -> str:
    """What makes a clip the clip it is (its events and length), whatever its id."""
    spec = {"duration": clip.duration, "events": [e.to_json() for e in clip.events]}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def clips_digest(clips: Sequence[Clip]) -> str:
    """sha256 over every (clip id, clip key): names the exact clips a calibration saw."""
    h = hashlib.sha256()
    for c in clips:
        h.update(f"{c.id}\t{clip_key(c)}\n".encode())
    return h.hexdigest()


def check_separate(calibration: Benchmark, evaluated: Benchmark) -> None:
    """DataError unless the calibration build differs from the evaluated one in seed and corpus
    and shares no clip with it (clip ids are positional, ``clip-00000`` in every build, so
    clips are compared by content: :func:`clip_key`)."""
    where = f"calibration build {calibration.root}"
    if calibration.root.resolve() == evaluated.root.resolve():
        raise DataError(f"{where}: is the evaluated benchmark; calibrate on another build "
                        "(bench build --seed N with another seed)")
    if calibration.seed == evaluated.seed:
        raise DataError(f"{where}: has the evaluated benchmark's seed {evaluated.seed}; "
                        "build it with another --seed")
    shared = {clip_key(c) for c in calibration.clips} & {clip_key(c) for c in evaluated.clips}
    if shared:
        raise DataError(f"{where}: shares {len(shared)} clip(s) with the evaluated benchmark")


@dataclass(frozen=True)
class Calibration:
    params: DetectParams
    seed: int
    corpus_sha256: str
    clips: int
    clips_digest: str
    path: str
    objective: dict[str, float] = field(default_factory=dict)
    grid: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "corpus_sha256": self.corpus_sha256, "clips": self.clips,
                "clips_digest": self.clips_digest, "path": self.path, "objective": self.objective,
                "grid": self.grid, "params": self.params.to_json()}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Calibration":
        return cls(DetectParams.from_json(obj["params"]), int(obj["seed"]), str(obj["corpus_sha256"]),
                   int(obj["clips"]), str(obj["clips_digest"]), str(obj.get("path", "")),
                   dict(obj.get("objective") or {}), dict(obj.get("grid") or {}))


def _f1(tp: int, fp: int, fn: int) -> float:
    d = 2 * tp + fp + fn
    return 2 * tp / d if d else 0.0


def label_thresholds(peaks: np.ndarray, present: np.ndarray, labels: Sequence[str],
                     min_positives: int = 2) -> tuple[dict[str, float], float]:
    """(label -> threshold, global threshold) from clip-level peaks (clips, labels) and truth."""
    grid = np.asarray(THRESHOLD_GRID)
    hit = peaks[:, :, None] >= grid[None, None, :]                  # clips, labels, grid
    tp = (hit & present[:, :, None]).sum(axis=0)
    fp = (hit & ~present[:, :, None]).sum(axis=0)
    fn = present.sum(axis=0)[:, None] - tp
    pooled = [_f1(int(tp[:, g].sum()), int(fp[:, g].sum()), int(fn[:, g].sum())) for g in range(len(grid))]
    best_global = float(grid[int(np.argmax(pooled))])
    out: dict[str, float] = {}
    for j, label in enumerate(labels):
        if int(present[:, j].sum()) < min_positives:
            continue
        f1s = [_f1(int(tp[j, g]), int(fp[j, g]), int(fn[j, g])) for g in range(len(grid))]
        best = max(f1s)
        out[label] = float(grid[max(g for g, v in enumerate(f1s) if v == best)])  # ties: stricter
    return out, best_global


def calibrate(bench: Benchmark, tracks: Mapping[str, np.ndarray], labels: Sequence[str], *,
              min_positives: int = 2) -> Calibration:
    """Choose :class:`DetectParams` on ``bench`` (the calibration build) from its clip tracks."""
    clips = [c for c in bench.clips if c.id in tracks]
    if not clips:
        raise DataError(f"calibration build {bench.root}: no clip has frame scores")
    col = {lab: j for j, lab in enumerate(labels)}
    peaks = np.stack([tracks[c.id].max(axis=0) if len(tracks[c.id]) else np.zeros(len(labels))
                      for c in clips])
    present = np.zeros_like(peaks, dtype=bool)
    for i, c in enumerate(clips):
        for e in c.events:
            if e.label in col:
                present[i, col[e.label]] = True
    thresholds, global_on = label_thresholds(peaks, present, labels, min_positives)
    base = DetectParams(on=global_on, thresholds=thresholds)
    # per clip, only the labels that can fire at all are tried in the grid
    bounds = {c.id: frame_bounds(len(tracks[c.id]), round(c.duration * 1000)) for c in clips}
    thr = np.asarray([base.threshold(lab) for lab in labels])
    active = {c.id: np.flatnonzero(peaks[i] >= thr).tolist() for i, c in enumerate(clips)}
    best: tuple[float, DetectParams, dict[str, float]] | None = None
    grid = list(itertools.product(OFF_RATIOS, GAPS_MS, MIN_MS, POLICIES))
    for off_ratio, gap, min_ms, policy in grid:
        params = replace(base, off_ratio=off_ratio, gap_ms=gap, min_ms=min_ms, policy=policy)
        detected = {}
        for c in clips:
            found = [detect_label(tracks[c.id][:, j], bounds[c.id], thr[j], params, labels[j])
                     for j in active[c.id]]
            detected[c.id] = detected_clip(c, [d for d in found if d is not None])
        report = perception(clips, detected, labels)
        total = report.total("events")
        score = {"events_micro_f1": round(total.f1, 6),
                 "events_macro_f1": round(report.macro_f1("events"), 6),
                 "tagging_micro_f1": round(report.total("tagging").f1, 6)}
        if best is None or score["events_micro_f1"] > best[2]["events_micro_f1"]:
            best = (score["events_micro_f1"], params, score)
    assert best is not None
    from reasonaudio.store.ingest import corpus_fingerprint

    return Calibration(best[1], bench.seed, corpus_fingerprint(bench), len(clips), clips_digest(clips),
                       str(bench.root), best[2],
                       {"thresholds": list(THRESHOLD_GRID), "off_ratio": list(OFF_RATIOS),
                        "gap_ms": list(GAPS_MS), "min_ms": list(MIN_MS), "policy": list(POLICIES),
                        "min_positives": min_positives,
                        "objective": "event-based micro F1 (perception collars)"})
