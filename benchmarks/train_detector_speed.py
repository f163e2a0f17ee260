"""Time the default `bench train-detector` recipe on training builds, inputs included.

    .venv/bin/python benchmarks/train_detector_speed.py --data TRAIN_DIR [--data TRAIN_DIR ...] \
        [--fresh-cache] [--epochs N] [--same-as MODEL_DIR]

Runs the default recipe (``DetectorRecipe()``: the CLI's defaults) into a temporary model
directory and prints wall time and CPU time, the inputs (YAMNet rows and the mel track: served
by the caches the ingest and earlier runs filled, or computed) and the training apart, against
the 15-minute target, with the load average before and after (on a shared machine the wall
time says more about the neighbours than about the recipe; CPU time / 2 cores is the time an
idle 2-core machine would need). ``--fresh-cache`` points ``REASONAUDIO_CACHE`` at an empty
folder, so every input is computed. ``--same-as MODEL_DIR`` also checks determinism: the
weights must be byte-identical to that model directory's (trained earlier, in another process,
with the same recipe and builds).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from record import Figure, fresh_cache, vs_target, write_record

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

TARGET_SECONDS = 15 * 60.0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, action="append", required=True)
    ap.add_argument("--epochs", type=int, default=None, help="default: the recipe's")
    ap.add_argument("--fresh-cache", action="store_true")
    ap.add_argument("--same-as", type=Path, default=None,
                    help="a model directory trained with the same recipe: compare the weights")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.fresh_cache:
            fresh_cache(Path(tmp) / "cache")
        from dataclasses import replace

        from reasonaudio.fileio import sha256_file
        from reasonaudio.train.detector import DetectorRecipe, train_detector

        recipe = DetectorRecipe()
        if args.epochs is not None:
            recipe = replace(recipe, epochs=args.epochs)
        load_before = os.getloadavg()
        t0, c0 = time.perf_counter(), _cpu()
        result = train_detector(args.data, Path(tmp) / "model", recipe)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
    t = result.timings
    print(f"default recipe ({recipe.epochs} epochs, {result.data['clips_train']} training clips, "
          f"{result.data['frames_train']:,} frames, {'empty' if args.fresh_cache else 'existing'} "
          f"cache): {wall:.0f} s wall, {cpu:.0f} s CPU")
    print(f"  inputs: {t['features_s']:.0f} s; training: {t['train_s']:.0f} s "
          f"({recipe.threads} threads)")
    print(f"target {TARGET_SECONDS:.0f} s: wall / target = {wall / TARGET_SECONDS:.2f}; "
          f"CPU / 2 cores / target = {cpu / 2 / TARGET_SECONDS:.2f}")
    print(f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f} "
          f"({os.cpu_count()} CPUs)")
    print(f"weights sha256 {result.weights_sha256}")
    if args.same_as is not None:
        other = sha256_file(args.same_as / "model.safetensors")
        print(f"same bytes as {args.same_as}: {'yes' if other == result.weights_sha256 else 'NO'} "
              f"({other[:16]}...)")
    write_record(__file__, [vs_target("`bench train-detector`, default recipe, two 1,500-clip builds, "
                                      "empty cache, wall", wall / 60, "min", TARGET_SECONDS / 60),
                            Figure("the same, CPU time", cpu / 60, "min")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
