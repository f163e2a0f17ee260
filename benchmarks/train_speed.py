"""Time the default `bench train` recipe end to end, feature extraction included.

    .venv/bin/python benchmarks/train_speed.py --data TRAIN_DIR [--fresh-cache] [--same-as MODEL_DIR]

Runs the default recipe (``TrainOptions()``: the CLI's defaults) on a training
build into a temporary model directory and prints wall time and CPU time per phase against the
15-minute target, with the machine's load average before and after (on a shared machine the
wall time says more about the neighbours than about the recipe; CPU time / threads is the
wall time an idle machine would need). ``--fresh-cache`` points ``REASONAUDIO_CACHE`` at an
empty folder, so YAMNet frames and MiniLM token states are computed, not served by the cache.
``--same-as MODEL_DIR`` also checks determinism: the weights must be byte-identical to that
model directory's (one trained earlier, in another process, with the same recipe and build).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from record import fresh_cache  # noqa: E402
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

TARGET_SECONDS = 15 * 60.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
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
        from reasonaudio.train.trainer import TrainOptions, train_model

        options = TrainOptions()
        if args.epochs is not None:
            options = replace(options, epochs=args.epochs)
        load_before = os.getloadavg()
        t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        result = train_model(args.data, Path(tmp) / "model", options)
        wall = time.perf_counter() - t0
        c1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    print(f"default recipe ({options.epochs} epochs, {result.steps} steps, "
          f"{'empty' if args.fresh_cache else 'existing'} cache): {wall:.0f} s wall, {cpu:.0f} s CPU")
    for phase, seconds in result.timings.items():
        print(f"  {phase}: {seconds:.0f} s")
    print(f"target {TARGET_SECONDS:.0f} s: wall / target = {wall / TARGET_SECONDS:.2f}; "
          f"CPU / 2 cores / target = {cpu / 2 / TARGET_SECONDS:.2f}")
    print(f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f} "
          f"({os.cpu_count()} CPUs)")
    print(f"weights sha256 {result.weights_sha256}")
    from record import Figure, vs_target, write_record

    figures = [vs_target(f"`bench train` default recipe ({options.epochs} epochs, {result.steps} steps, "
                         f"{'empty' if args.fresh_cache else 'existing'} cache), wall", wall, "s", TARGET_SECONDS),
               Figure("the same, CPU time", cpu, "s")]
    if args.same_as is not None:
        other = sha256_file(args.same_as / "model.safetensors")
        print(f"same bytes as {args.same_as}: {'yes' if other == result.weights_sha256 else 'NO'} "
              f"({other[:16]}...)")
        figures.append(vs_target("weights differing from an earlier run's", float(other != result.weights_sha256),
                                 "runs", 0))
    write_record(__file__, figures)


if __name__ == "__main__":
    main()
