"""Time the main job from an empty cache, the bank's fetch included.

    .venv/bin/python benchmarks/demo_speed.py [--out DIR] [--keep]

Runs ``bench demo``'s library function (``reasonaudio.mainjob.run_main_job`` with its default
parameters) with ``REASONAUDIO_CACHE`` pointing at a new empty folder, so the atom bank is
fetched, the model archives are extracted and every embedding is computed, as on a fresh
machine. Prints the step table and the total with its ratio to the target (5 min on an idle
2-core machine; below 1 meets it). The working folder and the cache are deleted afterwards unless
``--keep``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 300.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="working folder (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the working folder and the cache")
    args = ap.parse_args(argv)
    work = args.out or Path(tempfile.mkdtemp(prefix="demo-speed-"))
    cache = work / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["REASONAUDIO_CACHE"] = str(cache)  # before the package reads it
    from reasonaudio.mainjob import MainJobParams, run_main_job

    t0 = time.perf_counter()
    try:
        result = run_main_job(MainJobParams(out=work / "demo"))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    total = time.perf_counter() - t0
    for step in result.steps:
        print(f"  {step.name:44s} {step.seconds:8.1f} s  {step.result}")
    print(f"main job from an empty cache: {total:.1f} s (target {TARGET_S:g} s: time/target "
          f"{total / TARGET_S:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
