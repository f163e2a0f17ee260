"""What the trained detector adds to `bench demo --full`: its training builds, training and detection, from an empty cache.

    .venv/bin/python benchmarks/main_detector_cost.py --data data/demo-full

Runs the main job's own steps (``reasonaudio.experiments.main_detector``: ``prepare_detector``
then ``detect_trained``, with the job's default plan) on the benchmark of a finished ``bench demo
--full`` folder, into a temporary copy of its ``detector/`` place (so the training builds are
built and the model trained, never reused) with ``REASONAUDIO_CACHE`` pointed at an empty folder
(so every YAMNet input is computed), calibrated on the folder's calibration build. Prints each
part's wall time, the CPU time, and the total against the 15-minute training budget of issue 52
(the part a user waits for on top of the rest of the job); the load average before and after
says how busy the machine was.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from record import Figure, fresh_cache, vs_target, write_record

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

BUDGET_SECONDS = 15 * 60.0


def _cpu() -> float:
    self_, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return self_.ru_utime + self_.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="a finished `bench demo --full` folder")
    args = ap.parse_args()
    bench_dir, calibration = args.data / "bench", args.data / "calibration"
    for need in (bench_dir, calibration):
        if not (need / "manifest.json").is_file():
            print(f"error: {need}: no build here; run `bench demo --full --out {args.data}` first",
                  file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp:
        fresh_cache(Path(tmp) / "cache")
        from reasonaudio.dataset.view import load_benchmark
        from reasonaudio.experiments.detection import DetectRun
        from reasonaudio.experiments.main_detector import DetectorPlan, detect_trained, prepare_detector
        from reasonaudio.store.open import open_store

        # the benchmark and its store are read from a copy: the demo folder keeps its results
        work = Path(tmp) / "demo"
        shutil.copytree(bench_dir, work / "bench")
        bench = load_benchmark(work / "bench")
        plan = DetectorPlan()
        load_before = os.getloadavg()
        t0, c0 = time.perf_counter(), _cpu()
        model = prepare_detector(bench, work, plan)
        t1 = time.perf_counter()
        with open_store(bench.root, write=True) as store:
            run: DetectRun = detect_trained(bench, store, model, calibration)
        t2 = time.perf_counter()
        cpu = _cpu() - c0
    train_wall, detect_wall = t1 - t0, t2 - t1
    total = t2 - t0
    acc = run.result.overall.get("acc@1", float("nan"))
    print(f"{len(plan.seed_offsets)} training builds of {plan.clips:,} clips, built and trained: "
          f"{train_wall:.0f} s; detection on {len(bench.clips):,} clips: {detect_wall:.0f} s")
    print(f"total {total:.0f} s wall, {cpu:.0f} s CPU; budget {BUDGET_SECONDS:.0f} s: "
          f"wall / budget = {total / BUDGET_SECONDS:.2f}")
    print(f"detected:yamnet-trained Acc@1 {acc:.3f} (the demo folder's figure is the job's own)")
    print(f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f} "
          f"({os.cpu_count()} CPUs)")
    write_record(__file__, [
        vs_target("`bench demo --full`: the trained detector's steps (training builds, training, "
                  "detection), empty cache, wall", total / 60, "min", BUDGET_SECONDS / 60),
        Figure("of which training builds and training", train_wall / 60, "min"),
        Figure("of which detection and its evaluation", detect_wall / 60, "min"),
        Figure("the same, CPU time", cpu / 60, "min")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
