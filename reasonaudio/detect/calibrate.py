"""Thresholds and post-processing chosen on a separate calibration build, never the evaluated one.

Two steps, both on the calibration build's clips (their true events are known there):

0. ``top_k`` (classes per label, or the enrolled signature's size) among a few choices: steps
   1-2 run for each and the best result wins;
1. each label's ``on`` threshold maximises the clip-level F1 of "the label's peak track score
   reaches it" vs "the clip holds the label", over a fixed grid; labels with fewer than
   ``min_positives`` clips in the calibration build share one global threshold (the grid value
   with the best pooled F1);
2. ``off_ratio``, ``gap_ms``, ``min_ms``, ``policy`` and the onset/offset shifts (the label
   map's ``grid``: YAMNet's coarse frames need larger shifts than a trained detector's)
   maximise the event-based micro F1 (:mod:`reasonaudio.detect.event_metrics`, sed_eval
   collars; tagging F1 breaks ties) over a fixed grid; remaining ties go to the earlier grid
   entry, so the choice is deterministic;
3. for label maps with a ``choice_grid`` (a trained detector's): a cap on every threshold and the
   off ratio, by the calibration build's multiple-choice accuracy
   (:mod:`reasonaudio.detect.calibrate_choices`); YAMNet's maps stop at step 2.

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

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.separation import check_separate as separate_builds
from reasonaudio.dataset.separation import clip_key
from reasonaudio.detect.base import DetectorProtocol
from reasonaudio.detect.calibrate_choices import tune_for_choices
from reasonaudio.detect.events import (POLICIES, Detected, DetectParams, RunTable, events_of_table,
                                      kept_runs, shift_span)
from reasonaudio.detect.event_metrics import matches, spans
from reasonaudio.errors import DataError
from reasonaudio.store.collections import corpus_fingerprint

GRID_VERSION = 4
"""bumped whenever the grid or the objective changes (keys the cached calibration files)"""
THRESHOLD_GRID = tuple(round(float(x), 4) for x in np.geomspace(0.01, 0.99, 32))
THRESHOLD_RULES = ((1.0, 0.0), (0.5, 0.0), (1.0, 0.2))
"""(beta, min score) of a label's clip-level F-beta: plain F1, precision-weighted F0.5, F1 but
labels whose best F1 stays under 0.2 (not heard) get the strictest threshold"""
OFF_RATIOS = (0.25, 0.5, 0.75, 1.0)
GAPS_MS = (0, 960, 1920, 3840)
MIN_MS = (0, 480, 960, 1920)


def clips_digest(clips: Sequence[Clip]) -> str:
    """sha256 over every (clip id, clip key): names the exact clips a calibration saw."""
    h = hashlib.sha256()
    for c in clips:
        h.update(f"{c.id}\t{clip_key(c)}\n".encode())
    return h.hexdigest()


def check_separate(calibration: BenchmarkView, evaluated: BenchmarkView) -> None:
    """DataError unless the calibration build is another build than the evaluated one (other
    folder, other seed, no shared clip: :func:`reasonaudio.dataset.separation.check_separate`)."""
    separate_builds(calibration, evaluated, "calibration build")


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
    choices: dict[str, Any] = field(default_factory=dict)
    """step 3's record (``calibrate_choices.tune_for_choices``); empty for maps without it"""
    event_params: DetectParams | None = None
    """step 2's choice, the event operating point, where step 3 moved ``params`` away from it"""

    def to_json(self) -> dict[str, Any]:
        out = {"seed": self.seed, "corpus_sha256": self.corpus_sha256, "clips": self.clips,
               "clips_digest": self.clips_digest, "path": self.path, "objective": self.objective,
               "grid": self.grid, "params": self.params.to_json()}
        if self.choices:
            out["choices"] = self.choices
        if self.event_params is not None:
            out["event_params"] = self.event_params.to_json()
        return out

    def digest(self) -> str:
        """12 hex of sha256 over the record without ``path``: what the calibration is (its
        build's seed, corpus and clips, the grid and the choice), not where its build lay, so a
        copied or moved build names the same calibration."""
        record = {k: v for k, v in self.to_json().items() if k != "path"}
        return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:12]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Calibration":
        return cls(DetectParams.from_json(obj["params"]), int(obj["seed"]), str(obj["corpus_sha256"]),
                   int(obj["clips"]), str(obj["clips_digest"]), str(obj.get("path", "")),
                   dict(obj.get("objective") or {}), dict(obj.get("grid") or {}),
                   dict(obj.get("choices") or {}),
                   DetectParams.from_json(obj["event_params"]) if obj.get("event_params") else None)


def _f1(tp: int, fp: int, fn: int) -> float:
    d = 2 * tp + fp + fn
    return 2 * tp / d if d else 0.0


def _fbeta(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, beta: float) -> np.ndarray:
    b2 = beta * beta
    d = (1 + b2) * tp + b2 * fn + fp
    return np.where(d > 0, (1 + b2) * tp / np.maximum(d, 1), 0.0)


def label_thresholds(peaks: np.ndarray, present: np.ndarray, labels: Sequence[str],
                     min_positives: int = 2, beta: float = 1.0, min_score: float = 0.0
                     ) -> tuple[dict[str, float], float]:
    """(label -> threshold, global threshold) from clip-level peaks (clips, labels) and truth.

    Each label's threshold maximises its clip-level F-beta (ties: the stricter); a label whose
    best F-beta stays under ``min_score`` is one the tagger does not hear: it gets the strictest
    grid value, so it is rarely detected (labels are rare in clips: claiming one everywhere
    would make every ``not`` false)."""
    grid = np.asarray(THRESHOLD_GRID)
    hit = peaks[:, :, None] >= grid[None, None, :]                  # clips, labels, grid
    tp = (hit & present[:, :, None]).sum(axis=0)
    fp = (hit & ~present[:, :, None]).sum(axis=0)
    fn = present.sum(axis=0)[:, None] - tp
    pooled = _fbeta(tp.sum(axis=0), fp.sum(axis=0), fn.sum(axis=0), beta)
    best_global = float(grid[int(np.argmax(pooled))])
    scores = _fbeta(tp, fp, fn, beta)
    out: dict[str, float] = {}
    for j, label in enumerate(labels):
        if int(present[:, j].sum()) < min_positives:
            continue
        best = float(scores[j].max())
        if best < min_score or best == 0.0:
            out[label] = float(grid[-1])
        else:
            out[label] = float(grid[int(np.flatnonzero(scores[j] == best).max())])  # ties: stricter
    return out, best_global


def micro_scores(truth: Sequence[dict[str, tuple[int, int]]], found: Sequence[list[Detected]],
                 durations: Sequence[int], shifts: Sequence[tuple[int, int]]) -> list[tuple[float, float]]:
    """(event micro F1, tagging micro F1) of the detections moved by each (onset, offset) shift:
    every detection moved as :func:`~reasonaudio.detect.events.shifted` moves it and matched
    (:func:`~reasonaudio.detect.event_metrics.matches`) against the true span of its label, in
    integer arrays, all shifts at once."""
    rows = [(d.onset_ms, d.offset_ms, dur, *ref[d.label])
            for ref, dets, dur in zip(truth, found, durations) for d in dets if d.label in ref]
    return _shifted_scores(sum(len(ref) for ref in truth), sum(len(dets) for dets in found),
                           np.asarray(rows, dtype=np.int64).reshape(-1, 5).T, shifts)


def _shifted_scores(n_true: int, n_found: int, rows: np.ndarray,
                    shifts: Sequence[tuple[int, int]]) -> list[tuple[float, float]]:
    """:func:`micro_scores` from the (onset, offset, clip duration, true onset, true offset)
    columns of the detections whose label the clip holds."""
    on, off, dur, ref_on, ref_off = rows
    tag = _f1(len(on), n_found - len(on), n_true - len(on))
    out = []
    for on_shift, off_shift in shifts:
        a, b = (on, off) if not (on_shift or off_shift) else shift_span(on, off, on_shift, off_shift, dur)
        tp = int(np.count_nonzero(matches((ref_on, ref_off), (a, b))))
        out.append((_f1(tp, n_found - tp, n_true - tp), tag))
    return out


def calibrate(bench: BenchmarkView, probs: Mapping[str, np.ndarray], label_map: DetectorProtocol,
              top_ks: Sequence[int], *, min_positives: int = 2,
              truth: Sequence[Clip] | None = None) -> Calibration:
    """Choose :class:`DetectParams` on ``bench`` (the calibration build) from its clips' frame
    probabilities: ``top_k`` among ``top_ks``, per-label thresholds, then the post-processing
    grid and the onset/offset shifts, by event-based micro F1 (ties: the first in grid order).

    ``truth``: the clips as the audio holds them (``detect.clip_frames.heard_clips``: under
    ``long`` placed in their recordings), default the build's clips. ``probs`` is read once per
    ``top_k`` choice and one choice's score tracks are held at a time."""
    clips = [c for c in (bench.clips if truth is None else truth) if c.id in probs]
    if not clips:
        raise DataError(f"calibration build {bench.root}: no clip has frame scores")
    search = _Search(clips, probs, label_map, min_positives)
    chosen = _choose_thresholds(search, top_ks)
    # stage 2: the post-processing grid for that choice
    grid = list(itertools.product(OFF_RATIOS, GAPS_MS, MIN_MS, POLICIES))
    best = search.search(*chosen, grid)
    assert best is not None
    params, choices = best[1], {}
    if label_map.choice_grid is not None:  # step 3
        params, choices = tune_for_choices(bench, clips, chosen[1], search.labels, search.frame_grid,
                                           params, label_map.choice_grid)
    return Calibration(params, bench.seed, corpus_fingerprint(bench), len(clips), clips_digest(clips),
                       str(bench.root),
                       {"events_micro_f1": round(best[0][0], 6), "tagging_micro_f1": round(best[0][1], 6)},
                       _grid_record(top_ks, label_map, min_positives), choices,
                       best[1] if params != best[1] else None)


class _Search:
    """The calibration build's clips as the search reads them (true spans, durations, which
    labels each holds, frame boundaries from the first tracks made) and the two steps on them."""

    def __init__(self, clips: list[Clip], probs: Mapping[str, np.ndarray], label_map: DetectorProtocol,
                 min_positives: int) -> None:
        self.clips, self.probs, self.label_map, self.min_positives = clips, probs, label_map, min_positives
        self.labels = label_map.labels
        self.frame_grid = label_map.grid
        col = {lab: j for j, lab in enumerate(self.labels)}
        self.truth_spans = [spans(c.events) for c in clips]   # a repeated label: the span of its occurrences
        self.durations = [round(c.duration * 1000) for c in clips]
        self.n_true = sum(len(ref) for ref in self.truth_spans)
        self.bounds: list[np.ndarray] = []  # frame boundaries per clip, from its first tracks
        self.present = np.zeros((len(clips), len(self.labels)), dtype=bool)
        for i, c in enumerate(clips):
            for e in c.events:
                if e.label in col:
                    self.present[i, col[e.label]] = True

    def tracks_for(self, k: int) -> tuple[list, np.ndarray]:
        """Every clip's score tracks with ``k`` classes per label, and each label's peak per clip."""
        lm = self.label_map.truncated(k)
        tracks = [lm.tracks(self.probs[c.id]) for c in self.clips]
        peaks = np.stack([t.max(axis=0) if len(t) else np.zeros(len(self.labels)) for t in tracks])
        if not self.bounds:
            self.bounds.extend(self.frame_grid.bounds(len(t), d) for t, d in zip(tracks, self.durations))
        return tracks, peaks

    def thresholds_for(self, k: int, tracks: list, peaks: np.ndarray, beta: float,
                       min_score: float) -> tuple[DetectParams, list, np.ndarray, list]:
        """Step 1: the labels' thresholds under one rule, and which labels each clip could hold."""
        thresholds, global_on = label_thresholds(peaks, self.present, self.labels, self.min_positives, beta,
                                                 min_score)
        base = DetectParams(on=global_on, thresholds=thresholds, top_k=k, threshold_beta=beta,
                            threshold_min_score=min_score)
        thr = np.asarray([base.threshold(lab) for lab in self.labels])
        active = [np.flatnonzero(peaks[i] >= thr).tolist() for i in range(len(self.clips))]
        return base, tracks, thr, active

    def search(self, base: DetectParams, tracks: list, thr: np.ndarray, active: list,
               grid: Sequence[tuple[float, int, int, str]]) -> tuple[tuple[float, float], DetectParams]:
        """Step 2: the best post-processing in ``grid`` and onset/offset shifts (the first best
        wins). A grid point's events are :func:`~reasonaudio.detect.events.detect_label`'s,
        with step 1's runs made once per ``off_ratio`` and steps 2-4 taken for every clip and
        label at once (:func:`~reasonaudio.detect.events.events_of_table`)."""
        shifts = list(itertools.product(self.frame_grid.onset_shifts_ms, self.frame_grid.offset_shifts_ms))
        pairs = [(i, j) for i in range(len(self.clips)) for j in active[i]]
        truth = self._truth_columns(pairs)
        tables: dict[float, RunTable] = {}
        found_best: tuple[tuple[float, float], DetectParams] | None = None
        for off_ratio, gap, min_ms, policy in grid:
            params = replace(base, off_ratio=off_ratio, gap_ms=gap, min_ms=min_ms, policy=policy)
            if off_ratio not in tables:
                tables[off_ratio] = RunTable.of(
                    (tracks[i][:, j], kept_runs(tracks[i][:, j], thr[j], off_ratio), self.bounds[i])
                    for i, j in pairs)
            which, on, off = events_of_table(tables[off_ratio], gap, min_ms, policy)
            held = truth[0][which]
            rows = np.stack([on[held], off[held], *(col[which[held]] for col in truth[1:])])
            scores = _shifted_scores(self.n_true, len(which), rows, shifts)
            for (on_shift, off_shift), score in zip(shifts, scores):
                if found_best is None or score > found_best[0]:
                    found_best = (score, replace(params, onset_shift_ms=on_shift,
                                                 offset_shift_ms=off_shift))
        assert found_best is not None
        return found_best

    def _truth_columns(self, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, ...]:
        """Per (clip, label) pair: whether the clip holds the label, the clip's duration and the
        label's true onset and offset (0 where it does not hold it)."""
        held = np.zeros(len(pairs), dtype=bool)
        cols = np.zeros((3, len(pairs)), dtype=np.int64)
        for p, (i, j) in enumerate(pairs):
            ref = self.truth_spans[i].get(self.labels[j])
            cols[0, p] = self.durations[i]
            if ref is not None:
                held[p], cols[1, p], cols[2, p] = True, ref[0], ref[1]
        return held, cols[0], cols[1], cols[2]


def _choose_thresholds(search: _Search, top_ks: Sequence[int]) -> tuple[DetectParams, list, np.ndarray, list]:
    """Stage 1: classes per label and the threshold rule, with the default post-processing (the
    first best wins); one top_k's tracks at a time, the winner's made again if they are gone."""
    default = DetectParams()
    first = [(default.off_ratio, default.gap_ms, default.min_ms, default.policy)]
    best1: tuple[tuple[float, float], int, float, float] | None = None
    tracks: list = []
    peaks = np.zeros((0, len(search.labels)))
    for k in top_ks:
        tracks, peaks = search.tracks_for(k)
        for beta, min_score in THRESHOLD_RULES:
            score = search.search(*search.thresholds_for(k, tracks, peaks, beta, min_score), first)[0]
            if best1 is None or score > best1[0]:
                best1 = (score, k, beta, min_score)
    assert best1 is not None
    _, k, beta, min_score = best1
    if k != top_ks[-1]:
        tracks = []  # dropped before the winner's are made
        tracks, peaks = search.tracks_for(k)
    return search.thresholds_for(k, tracks, peaks, beta, min_score)


def _grid_record(top_ks: Sequence[int], label_map: DetectorProtocol, min_positives: int) -> dict[str, Any]:
    """What the calibration searched, as its record keeps it."""
    frame_grid = label_map.grid
    return {"top_k": list(top_ks), "thresholds": list(THRESHOLD_GRID),
            "threshold_rules": [list(r) for r in THRESHOLD_RULES],
            "off_ratio": list(OFF_RATIOS), "gap_ms": list(GAPS_MS), "min_ms": list(MIN_MS),
            "policy": list(POLICIES), "onset_shift_ms": list(frame_grid.onset_shifts_ms),
            "offset_shift_ms": list(frame_grid.offset_shifts_ms), "min_positives": min_positives,
            "objective": "event-based micro F1 (perception collars), then tagging F1"}
