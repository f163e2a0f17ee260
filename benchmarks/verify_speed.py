"""Time the integrity check a benchmark load makes (manifest format + sha256 of every file).

    .venv/bin/python benchmarks/verify_speed.py [--data DIR] [--clips 10000] [--queries 1000]

Builds a benchmark (metadata only) into a temporary directory unless ``--data`` names one, then
prints the median of 5 loads with verification, 5 without, the difference, the bytes hashed,
and the ratio of the verified load to the cheapest thing a command does with a benchmark
after loading it (reading its labels), so the check's cost is seen against real work.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from reasonaudio.dataset.benchmark import BENCHMARK_FILES

from reasonaudio.dataset.view import load_benchmark
from reasonaudio.generator.build import BuildParams, build_benchmark
from record import vs_baseline, write_record


def _median(fn, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure(root: Path) -> list:
    size = sum((root / n).stat().st_size for n in BENCHMARK_FILES)
    plain = _median(lambda: load_benchmark(root, verify=False))
    verified = _median(lambda: load_benchmark(root))
    labels = _median(lambda: load_benchmark(root, verify=False).labels)
    clips = _median(lambda: load_benchmark(root, verify=False).clips, 3)
    print(f"{root}: {size / 1e6:.1f} MB in {len(BENCHMARK_FILES)} files")
    print(f"load without verification  {plain * 1e3:8.2f} ms")
    print(f"load with verification     {verified * 1e3:8.2f} ms "
          f"(+{(verified - plain) * 1e3:.2f} ms, {size / 1e6 / max(verified - plain, 1e-9):.0f} MB/s)")
    print(f"reading the labels         {labels * 1e3:8.2f} ms")
    print(f"reading the corpus         {clips * 1e3:8.2f} ms")
    print(f"verification / corpus read: {(verified - plain) / clips:.2f}")
    return [vs_baseline(f"integrity check on load (sha256 of {size / 1e6:.1f} MB)", (verified - plain) * 1e3, "ms",
                        "reading the corpus", clips * 1e3)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path)
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=1_000)
    args = ap.parse_args()
    if args.data is not None:
        figures = measure(args.data)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "bench"
            build_benchmark(root, BuildParams(n_clips=args.clips, n_queries=args.queries))
            figures = measure(root)
    write_record(__file__, figures)


if __name__ == "__main__":
    main()
