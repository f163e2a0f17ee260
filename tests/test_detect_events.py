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
