"""The main job's trained detector: its training builds, its model (trained once per content key,
then reused) and its detection on the evaluated build (issue 52, item 4).

The plan is a function of the evaluated build's bank and seed (a :class:`DetectorPlan`: training
seeds beside the benchmark's, whose calibration builds take seed + 1 and + 2, so the training
seeds never meet them, and ``bench detect``'s separation rule, :mod:`reasonaudio.dataset.separation`,
checks it again; their size; the recipe, by default the enrolled figure's in
docs/trained-detector.md). Everything goes beside the benchmark, under ``OUT/detector``: the
training builds (``train-SEED``) and the model (``model-KEY``, where KEY hashes what determines
its weights: the training builds' content digests, the recipe and the runtime packages). A model
directory is complete or absent (written atomically), so a second run reuses it, and a change
of any of those trains a new one beside it. (Not in ``$REASONAUDIO_CACHE``: no command writes its
output there, :mod:`reasonaudio.output_dirs`.)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.dataset.benchmark import content_digest
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.detect.collection import DetectOptions
from reasonaudio.detect.trained import CARD
from reasonaudio.experiments.detection import DetectRun, detect_and_evaluate
from reasonaudio.generator.build import BuildParams, build_benchmark, holds_build
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.provenance import runtime_digest
from reasonaudio.store.base import Store
from reasonaudio.train.detector import DetectorRecipe, train_detector



@dataclass(frozen=True)
class DetectorPlan:
    """How the main job gets its trained detector: training builds beside the evaluated build's
    seed, their size, the recipe. The default is the enrolled figure's recipe on two builds of the
    speed benchmark's size (benchmarks/train_detector_speed.py)."""

    seed_offsets: tuple[int, ...] = (11, 12)
    """the training builds' seeds, as offsets from the evaluated build's (docs/trained-detector.md's
    seeds 11 and 12 for the demo's seed 0)"""
    clips: int = 1_500
    queries: int = 100
    recipe: DetectorRecipe = DetectorRecipe()


KEY_FORMAT = "reasonaudio-main-detector/1"


@dataclass(frozen=True)
class MainDetector:
    """The model the main job detects with: where it is, whether this run trained it, and the
    training builds it came from."""

    path: Path
    key: str
    trained: bool
    """False: reused from the cache"""
    builds: tuple[Path, ...]


def training_params(bench: BenchmarkView, plan: DetectorPlan = DetectorPlan()) -> list[BuildParams]:
    """The training builds of ``plan`` for ``bench``: its bank, seeds beside its own."""
    atoms = str((bench.manifest.get("parameters") or {}).get("atoms"))
    return [BuildParams(atoms=atoms, seed=bench.seed + off, n_clips=plan.clips, n_queries=plan.queries)
            for off in plan.seed_offsets]


def model_key(builds: list[BenchmarkView], recipe: DetectorRecipe) -> str:
    """16 hex: sha256 of the training builds' content digests, the recipe and the runtime
    packages (torch's version can change the weights' bytes)."""
    record = {"format": KEY_FORMAT, "builds": [content_digest(b.manifest) for b in builds],
              "recipe": recipe.to_json(), "runtime": runtime_digest()}
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def prepare_detector(bench: BenchmarkView, out: Path, plan: DetectorPlan = DetectorPlan(),
                     hooks: Hooks = SILENT) -> MainDetector:
    """Build (or keep) the training builds under ``out/detector``, then train the model there
    unless it is there under its key."""
    roots: list[Path] = []
    for params in training_params(bench, plan):
        root = out / "detector" / f"train-{params.seed}"
        if holds_build(root, params):
            hooks.notify(f"reusing the detector's training build {root}")
        else:
            build_benchmark(root, params, hooks=hooks)
        roots.append(root)
    builds = [load_benchmark(r) for r in roots]
    key = model_key(builds, plan.recipe)
    path = out / "detector" / f"model-{key}"
    if (path / CARD).is_file():
        hooks.notify(f"reusing the trained detector {path} (same training builds, recipe and packages)")
        return MainDetector(path, key, False, tuple(roots))
    hooks.notify(f"training the detector into {path} (`bench train-detector`; minutes, once)")
    train_detector(roots, path, plan.recipe, hooks=hooks)
    return MainDetector(path, key, True, tuple(roots))


def detect_trained(bench: BenchmarkView, store: Store, model: MainDetector, calibration: Path,
                   hooks: Hooks = SILENT) -> DetectRun:
    """``bench detect --mode trained`` with ``model``, calibrated on ``calibration``."""
    options = DetectOptions(mode="trained", model_path=model.path, calibration=calibration)
    return detect_and_evaluate(bench, store, options, hooks=hooks)
