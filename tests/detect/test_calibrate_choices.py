"""Calibration's step 3: threshold caps and off ratio chosen by the calibration build's pairs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from reasonaudio.dataset.benchmark import Choice, Query
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.detect.calibrate import Calibration
from reasonaudio.detect.calibrate_choices import ChoiceGrid, choice_accuracy, tune_for_choices
from reasonaudio.detect.events import DetectParams
from reasonaudio.detect.labelmap import LabelMap
from reasonaudio.detect.trained import TRAINED_GRID, TrainedMap
from reasonaudio.logic import Overlap

pytestmark = pytest.mark.fast

LABELS = ["a", "b"]
FRAMES = 100  # 80 ms frames: 8 s clips


def _clip(cid: str) -> Clip:
    return Clip(cid, "overlap", FRAMES * 0.08, 16000, (Event("a", 0.0, 1.0, "x", 0.0),))


def _tracks(a: tuple[int, int, float], b: tuple[int, int, float]) -> np.ndarray:
    t = np.zeros((FRAMES, 2), dtype=np.float32)
    for j, (start, stop, level) in enumerate((a, b)):
        t[start:stop, j] = level
    return t


@pytest.fixture()
def masked():
    """The positive: ``b`` under ``a`` and quieter (peak 0.4); the hard negative: ``a`` then ``b``,
    both loud. A strict threshold misses the quiet ``b``: both clips fail the query (a tie)."""
    clips = [_clip("pos"), _clip("neg")]
    tracks = [_tracks((0, 60, 0.95), (20, 50, 0.4)), _tracks((0, 30, 0.95), (40, 70, 0.95))]
    bench = SimpleNamespace(queries=[Query("q1", "a while b", "overlap", Overlap("a", "b"))],
                            choices=[Choice("q1", "pos", "neg")])
    params = DetectParams(on=0.9, off_ratio=0.5, gap_ms=0, min_ms=0, thresholds={"a": 0.9, "b": 0.9})
    return bench, clips, tracks, params


def test_a_cap_under_the_masked_peak_answers_the_pair(masked):
    bench, clips, tracks, params = masked
    assert choice_accuracy(bench, clips, tracks, LABELS, TRAINED_GRID, params) == 0.5
    grid = ChoiceGrid(caps=(0.7, 0.3), off_ratios=(0.5, 0.25))
    tuned, record = tune_for_choices(bench, clips, tracks, LABELS, TRAINED_GRID, params, grid)
    assert record["choices_mc_before"] == 0.5 and record["choices_mc"] == 1.0
    assert (record["threshold_cap"], record["off_ratio"]) == (0.3, 0.5)  # the first best in grid order
    assert tuned.thresholds == {"a": 0.3, "b": 0.3} and tuned.on == 0.3
    assert choice_accuracy(bench, clips, tracks, LABELS, TRAINED_GRID, tuned) == 1.0


def test_nothing_better_keeps_the_event_f1_choice(masked):
    bench, clips, tracks, params = masked
    tuned, record = tune_for_choices(bench, clips, tracks, LABELS, TRAINED_GRID, params,
                                     ChoiceGrid(caps=(0.8, 0.5), off_ratios=(0.5,)))
    assert tuned == params and record["threshold_cap"] == 1.0 and record["choices_mc"] == 0.5


def test_a_build_without_pairs_skips_the_step(masked):
    bench, clips, tracks, params = masked
    bare = SimpleNamespace(queries=bench.queries, choices=[])
    tuned, record = tune_for_choices(bare, clips, tracks, LABELS, TRAINED_GRID, params,
                                     ChoiceGrid(caps=(0.3,), off_ratios=(0.5,)))
    assert tuned == params and "skipped" in record


def test_only_the_trained_map_runs_the_step_and_the_record_round_trips():
    assert LabelMap.choice_grid is None and isinstance(TrainedMap.choice_grid, ChoiceGrid)
    plain = Calibration(DetectParams(), 1, "sha", 10, "digest", "p")
    assert "choices" not in plain.to_json()  # YAMNet's records keep their bytes
    with_step = Calibration(DetectParams(), 1, "sha", 10, "digest", "p",
                            choices={"threshold_cap": 0.3, "off_ratio": 0.1})
    assert Calibration.from_json(with_step.to_json()) == with_step


def test_soft_evidence_stays_calibrated_at_the_event_operating_point():
    """Step 3 caps thresholds to assert more events; the soft presence that ranks clips is
    calibrated against the event operating point's thresholds, not the cap."""
    import copy

    from reasonaudio.detect.collection import add_soft_evidence

    payloads = [
        {"clip_id": "c1", "events": [{"label": "a", "onset": 0.0, "offset": 2.0}],
         "confidence": {"a": 0.95}, "track": {"b": [0.3, 0, 2000]}},
        {"clip_id": "c2", "events": [{"label": "a", "onset": 0.0, "offset": 2.0}],
         "confidence": {"a": 0.2}, "track": {"b": [0.05, 0, 2000]}},
    ]
    event = DetectParams(on=0.9, thresholds={"a": 0.9, "b": 0.9})
    capped = DetectParams(on=0.1, thresholds={"a": 0.1, "b": 0.1})

    def soft(cal: Calibration) -> list[dict]:
        out = copy.deepcopy(payloads)
        add_soft_evidence(out, cal)
        return out

    at_event = soft(Calibration(event, 1, "sha", 2, "d", "p"))
    moved = soft(Calibration(capped, 1, "sha", 2, "d", "p", event_params=event))
    at_cap = soft(Calibration(capped, 1, "sha", 2, "d", "p"))
    assert moved == at_event and moved != at_cap
