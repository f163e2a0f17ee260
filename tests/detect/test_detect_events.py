"""Tracks -> events (hysteresis, gaps, minimum length, policy), perception collars, soft scores."""

from __future__ import annotations

import numpy as np
import pytest

from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, Overlap
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.detect.events import (
    DetectParams,
    detect_clip,
    detect_label,
    detected_clip,
    frame_bounds,
    track_summary,
)
from reasonaudio.detect.event_metrics import matches, perception
from reasonaudio.detect.soft import SoftIndex, calibrated
from reasonaudio.store.payload import clip_payload


def test_frame_bounds_tile_the_clip():
    b = frame_bounds(5, 2600)
    assert b.tolist() == [0, 720, 1200, 1680, 2160, 2600]
    assert frame_bounds(3, 1000).tolist() == [0, 720, 1000, 1000]


def test_hysteresis_keeps_weak_tails_of_strong_runs_only():
    track = np.array([0.0, 0.25, 0.6, 0.25, 0.0, 0.0, 0.25, 0.25, 0.0, 0.0], dtype=np.float32)
    bounds = frame_bounds(len(track), 5000)
    p = DetectParams(on=0.5, off_ratio=0.4, gap_ms=0, min_ms=0)
    d = detect_label(track, bounds, 0.5, p, "x")
    assert (d.onset_ms, d.offset_ms) == (int(bounds[1]), int(bounds[4]))  # tail kept, blip dropped
    assert d.confidence == pytest.approx(0.6)
    assert detect_label(track, bounds, 0.7, p, "x") is None


def test_gap_merging_min_length_and_policy():
    track = np.array([0.9, 0.0, 0.0, 0.6, 0.6, 0.6, 0.0, 0.0, 0.0, 0.0], dtype=np.float32)
    bounds = frame_bounds(len(track), 5000)
    base = DetectParams(on=0.5, off_ratio=1.0, gap_ms=0, min_ms=0, policy="span")
    d = detect_label(track, bounds, 0.5, base)
    assert (d.onset_ms, d.offset_ms) == (0, int(bounds[6]))
    strongest = DetectParams(on=0.5, off_ratio=1.0, gap_ms=0, min_ms=0, policy="strongest")
    d = detect_label(track, bounds, 0.5, strongest)
    assert (d.onset_ms, d.offset_ms) == (0, int(bounds[1]))
    long_only = DetectParams(on=0.5, off_ratio=1.0, gap_ms=0, min_ms=1000, policy="strongest")
    d = detect_label(track, bounds, 0.5, long_only)
    assert (d.onset_ms, d.offset_ms) == (int(bounds[3]), int(bounds[6]))
    merged = DetectParams(on=0.5, off_ratio=1.0, gap_ms=1000, min_ms=0, policy="strongest")
    d = detect_label(track, bounds, 0.5, merged)  # the gap (960 ms) is bridged: one run
    assert (d.onset_ms, d.offset_ms) == (0, int(bounds[6]))


def test_per_label_thresholds_and_detected_clip_payload():
    tracks = np.zeros((10, 3), dtype=np.float32)
    tracks[0:4, 0] = 0.4            # a: over its own threshold 0.3, under the default
    tracks[3:8, 1] = 0.9            # b
    tracks[:, 2] = 0.2              # c: under everything
    p = DetectParams(on=0.5, off_ratio=1.0, gap_ms=0, thresholds={"a": 0.3})
    found = detect_clip(tracks, ["a", "b", "c"], 5000, p)
    assert [d.label for d in found] == ["a", "b"]
    truth = Clip("clip-1", "overlap", 5.0, 48000, (Event("a", 0.0, 1.0, "x", 0.0),))
    det = detected_clip(truth, found)
    payload = clip_payload(det)
    assert payload["labels"] == ["a", "b"] and payload["overlaps"] == []
    assert det.mode == "overlap" and payload["before"] == []  # a ends 480 ms into b: no overlap()
    assert payload["dur"]["b"] == pytest.approx((frame_bounds(10, 5000)[8] - frame_bounds(10, 5000)[3]) / 1000)
    summary = track_summary(tracks, ["a", "b", "c"], 5000, floor=0.1)
    assert set(summary) == {"a", "b", "c"} and summary["b"][0] == pytest.approx(0.9)


def test_perception_collars():
    assert matches((1000, 3000), (1250, 3250))
    assert not matches((1000, 3000), (1251, 3000))
    assert matches((0, 10_000), (0, 12_000))            # offset collar 20% of 10 s
    assert not matches((0, 10_000), (0, 12_001))
    truth = [Clip("c", "sequential", 10.0, 48000, (Event("a", 0.0, 2.0, "x", 0.0),
                                                  Event("b", 3.0, 5.0, "y", 0.0)))]
    det = {"c": Clip("c", "sequential", 10.0, 48000, (Event("a", 0.1, 2.1, "d", 0.0),
                                                     Event("b", 3.0, 9.0, "d", 0.0),
                                                     Event("z", 0.0, 1.0, "d", 0.0)))}
    rep = perception(truth, det, ["a", "b", "z"])
    assert (rep.events["a"].tp, rep.events["b"].tp, rep.events["b"].fp, rep.events["b"].fn) == (1, 0, 1, 1)
    assert rep.tagging["b"].tp == 1 and rep.tagging["z"].fp == 1 and rep.events["z"].fp == 1
    assert rep.total("events").tp == 1 and rep.total("tagging").tp == 2
    assert rep.worst(1) == ["b"]


def test_soft_semantics():
    assert calibrated(np.array([0.2]), 0.2)[0] == pytest.approx(0.5)
    assert calibrated(np.array([0.0, 1.0]), 0.3).tolist() == [0.0, 1.0]
    payloads = [
        {"clip_id": "c1", "events": [{"label": "a", "onset": 0.0, "offset": 2.0},
                                     {"label": "b", "onset": 3.0, "offset": 5.0}],
         "confidence": {"a": 0.9, "b": 0.8}, "track": {}},
        {"clip_id": "c2", "events": [], "confidence": {},
         "track": {"a": [0.1, 4000, 6000], "b": [0.1, 0, 2000]}},
    ]
    idx = SoftIndex.from_payloads(payloads, {"a": 0.5}, 0.5)
    has_a = idx.score(Has("a"))
    assert has_a[0] > 0.5 > has_a[1] > 0
    assert np.allclose(idx.score(Not(Has("a"))), 1 - has_a)
    assert np.allclose(idx.score(And((Has("a"), Has("b")))), has_a * idx.score(Has("b")))
    assert np.allclose(idx.score(Or((Has("a"), Has("b")))), np.maximum(has_a, idx.score(Has("b"))))
    before = idx.score(Before("a", "b"))
    assert before[0] > 0.5 * has_a[0] * idx.score(Has("b"))[0]        # a ends 1 s before b starts
    assert idx.score(Before("b", "a"))[0] < before[0]
    assert idx.score(Overlap("a", "b"))[0] < 0.1
    assert idx.score(Lasts("a", 2.0))[0] == pytest.approx(has_a[0])   # inside the tolerance
    assert idx.score(Lasts("a", 10.0))[0] < 0.01 * has_a[0]
    assert idx.score(Has("missing")).tolist() == [0.0, 0.0]


def test_label_map_tracks_and_truncation():
    from reasonaudio.detect.labelmap import LabelMap

    names = ("a", "b", "c")
    zs = LabelMap("zero-shot", ("x", "y"), ((0, 2), (1,)), ((0.9, 0.5), (0.8,)), ("recipe", "all classes"),
                  names)
    probs = np.array([[0.1, 0.2, 0.7], [0.6, 0.0, 0.1]], dtype=np.float32)
    assert np.allclose(zs.tracks(probs), [[0.7, 0.2], [0.6, 0.0]])
    assert np.allclose(zs.truncated(1).tracks(probs), [[0.1, 0.2], [0.6, 0.0]])
    en = LabelMap("enrolled", ("x",), ((0, 2),), ((0.5, 0.25),), ("atoms",), names, ((0.8, 0.4),))
    alone = np.array([[0.8, 0.0, 0.4]], dtype=np.float32)  # the atom's own profile scores 1.0
    assert en.tracks(alone)[0, 0] == pytest.approx(1.0)
    assert en.tracks(alone * 0.5)[0, 0] == pytest.approx(0.5)
    assert en.tracks(np.ones((1, 3), dtype=np.float32))[0, 0] == 1.0  # clipped


@pytest.mark.parametrize("tag,name,named", [
    ("bell", "Bell", True), ("bell", "Church bell", True), ("bell", "Belly laugh", False),
    ("bell", "Bellow", False), ("bagpipe", "Bagpipes", True), ("rustl", "Rustling leaves", True),
    ("car", "Carnatic music", False), ("engine start", "Engine starting", True),
    ("cat", "Cattle, bovinae", False), ("chirp", "Chirp, tweet", True)])
def test_a_tag_names_a_class_only_up_to_an_inflection(tag, name, named):
    from reasonaudio.detect.labelmap import tag_names_class

    assert tag_names_class(tag, name) is named



def _plain_scores(search, found, shifts):
    """Calibration's objective written plainly: every detection moved by shifted() and matched by
    matches(), one at a time, for each (onset, offset) shift."""
    from reasonaudio.detect.events import shifted

    def f1(tp, fp, fn):
        return 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 0.0

    out = []
    for on_shift, off_shift in shifts:
        tp = tag_tp = n_found = n_true = 0
        for ref, dets, dur in zip(search.truth_spans, found, search.durations):
            n_true, n_found = n_true + len(ref), n_found + len(dets)
            for d in dets:
                if d.label in ref:
                    tag_tp += 1
                    s = shifted(d, on_shift, off_shift, dur)
                    tp += matches(ref[d.label], (s.onset_ms, s.offset_ms))
        out.append((f1(tp, n_found - tp, n_true - tp), f1(tag_tp, n_found - tag_tp, n_true - tag_tp)))
    return out


def test_events_of_a_run_table_are_the_events_of_each_pairs_runs():
    """Steps 2-4 in arrays (calibration's search) give each (clip, label) pair the event that
    ``event_of_runs`` gives it, under every gap, minimum length and policy: quantised scores
    (peak ties between runs), gaps exactly at the grid's values, frame bounds clipped at the
    clip's end (runs of 0 ms) and pairs without a kept run."""
    import itertools

    from reasonaudio.detect.calibrate import GAPS_MS, MIN_MS, OFF_RATIOS
    from reasonaudio.detect.events import POLICIES, RunTable, event_of_runs, events_of_table, kept_runs

    rng = np.random.default_rng(11)
    pairs = []
    for _ in range(400):
        n = int(rng.integers(1, 40))
        duration = int(rng.integers(1, n + 2)) * 480 - int(rng.choice([0, 240, 479]))
        track = np.round(rng.random(n) * rng.choice([0.4, 1.0]), 1).astype(np.float32)
        pairs.append((track, frame_bounds(n, max(duration, 1)), float(rng.choice([0.2, 0.5, 0.7]))))
    seen = 0
    for off_ratio in OFF_RATIOS:
        kept = [kept_runs(track, on, off_ratio) for track, _, on in pairs]
        table = RunTable.of((track, runs, bounds) for (track, bounds, _), runs in zip(pairs, kept))
        for gap, min_ms, policy in itertools.product(GAPS_MS + (240, 480), MIN_MS + (1, 240), POLICIES):
            params = DetectParams(off_ratio=off_ratio, gap_ms=gap, min_ms=min_ms, policy=policy)
            plain = {p: (d.onset_ms, d.offset_ms)
                     for p, ((track, bounds, _), runs) in enumerate(zip(pairs, kept))
                     if (d := event_of_runs(track, runs, bounds, params)) is not None}
            which, on, off = events_of_table(table, gap, min_ms, policy)
            assert dict(zip(which.tolist(), zip(on.tolist(), off.tolist()))) == plain
            seen += len(plain)
    assert seen > 10_000


def test_calibration_search_chooses_what_a_plain_search_chooses():
    """The calibration's grid search (step 1's runs made once per off_ratio, every shift scored
    in arrays) scores every grid point and shift as the plain search over detect_label, shifted
    and matches does, and picks the same parameters, on tracks with YAMNet-like ties, true
    events exactly at the collars' edges and detections at the clip's end."""
    import itertools
    from dataclasses import replace

    from reasonaudio.detect.calibrate import GAPS_MS, MIN_MS, OFF_RATIOS, _Search, micro_scores
    from reasonaudio.detect.events import POLICIES
    from reasonaudio.detect.labelmap import LabelMap

    rng = np.random.default_rng(7)
    labels = ("a", "b", "c", "d")
    clips, probs = [], {}
    for i in range(48):
        duration = round(float(rng.integers(300, 2500)) / 100, 2)
        n = int(np.ceil(duration / 0.48)) + 1  # the last frames' bounds clip at the clip's end
        frames = np.round(rng.random((n, 6)) * 0.3, 1).astype(np.float32)  # quantised: ties
        events = []
        for label in rng.choice(labels, size=int(rng.integers(0, 4)), replace=False):
            first = int(rng.integers(0, n - 1))
            # onsets and offsets at a frame bound, or 250 ms (the collar) from one, or the ends
            on = max(0.0, first * 0.48 + 0.24 + float(rng.choice([-0.25, 0.0, 0.25, -0.24])))
            off = min(duration, on + float(rng.choice([0.25, 0.96, 1.25, 2.4, 30.0])))
            if off > on and on < duration:
                events.append(Event(str(label), round(on, 3), round(off, 3), "atom", 0.0))
            frames[first:first + int(rng.integers(1, 6)), labels.index(str(label))] = \
                np.round(rng.uniform(0.3, 1.0), 1)
        clips.append(Clip(f"c{i:02d}", "overlap", duration, 16000, tuple(events)))
        probs[clips[-1].id] = frames
    label_map = LabelMap("zero-shot", labels, ((0, 4), (1, 5), (2,), (3, 4)),
                         ((1.0, 0.5), (1.0, 0.5), (1.0,), (1.0, 0.5)), ("atoms.jsonl",) * 4,
                         class_names=tuple(f"class {k}" for k in range(6)))
    search = _Search(clips, probs, label_map, min_positives=2)
    shifts = list(itertools.product(search.frame_grid.onset_shifts_ms, search.frame_grid.offset_shifts_ms))
    grid = list(itertools.product(OFF_RATIOS, GAPS_MS, MIN_MS, POLICIES))
    seen = set()
    for k, (beta, min_score) in itertools.product((1, 2), ((1.0, 0.0), (0.5, 0.0))):
        tracks, peaks = search.tracks_for(k)
        base, tracks, thr, active = search.thresholds_for(k, tracks, peaks, beta, min_score)
        best = None
        for off_ratio, gap, min_ms, policy in grid:
            params = replace(base, off_ratio=off_ratio, gap_ms=gap, min_ms=min_ms, policy=policy)
            found = [[d for d in (detect_label(tracks[i][:, j], search.bounds[i], thr[j], params,
                                               search.labels[j]) for j in active[i]) if d is not None]
                     for i in range(len(clips))]
            plain = _plain_scores(search, found, shifts)
            assert micro_scores(search.truth_spans, found, search.durations, shifts) == plain
            seen.update(plain)
            for (on_shift, off_shift), score in zip(shifts, plain):
                if best is None or score > best[0]:
                    best = (score, replace(params, onset_shift_ms=on_shift, offset_shift_ms=off_shift))
        assert search.search(base, tracks, thr, active, grid) == best
    assert len(seen) > 50  # the shifts and the grid move the figures
