"""The main job's time from a cold cache: `bench demo` in a fresh folder with an empty
``REASONAUDIO_CACHE``, so the real-sound bank is fetched and every model runs.

    .venv/bin/python benchmarks/main_job_time.py [--out DIR]

Runs ``python -m reasonaudio.cli demo --out DIR/demo`` as a child process (its step table is
printed as it goes) with ``REASONAUDIO_CACHE=DIR/cache``, and prints its wall time against the
3-minute target (an idle 2-core machine; issue 54) and the CPU time it and its children used. ``--out`` keeps the folder (default:
a temporary one, removed after). A demo on a bank of fewer classes than the full install's
(without fluidsynth, say) writes no record: the page's figures are of the full install.

``--paper`` runs the paper's size instead (issue 52): ``reasonaudio.demo_sizes.PAPER_ARGS``, 10,000 clips and
1,000 queries, clean only, with the trained detector; its time has no target.
``scripts/doc_figures.py --paper DIR/demo`` renders its headline table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import Figure, vs_target, write_record

from reasonaudio.demo_sizes import PAPER_ARGS

TARGET_SECONDS = 3 * 60.0


def bank_classes(bench: Path) -> int | None:
    """The classes of the bank ``bench`` was built from (its manifest), or None."""
    try:
        return json.loads((bench / "manifest.json").read_text())["bank"]["n_classes"]
    except (OSError, ValueError, KeyError):
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="keep the demo and its cache here")
    ap.add_argument("--paper", action="store_true", help="the paper's size (PAPER_ARGS), not the quick one")
    args = ap.parse_args()
    size = list(PAPER_ARGS) if args.paper else []
    work = args.out or Path(tempfile.mkdtemp(prefix="main-job-time-"))
    try:
        env = {**os.environ, "REASONAUDIO_CACHE": str(work / "cache")}
        t0 = time.perf_counter()
        demo = [sys.executable, "-m", "reasonaudio.cli", "demo", "--out", str(work / "demo"), *size]
        rc = subprocess.run(demo, env=env).returncode
        wall = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        classes = bank_classes(work / "demo" / "bench")
    finally:
        if args.out is None:
            shutil.rmtree(work, ignore_errors=True)
    if rc != 0:
        print(f"error: bench demo exited with {rc}", file=sys.stderr)
        return rc
    from reasonaudio.atoms.fetch.recipes import full_install_classes

    want = full_install_classes()
    if classes != want:  # the page's figures are of the full install (scripts/install.sh)
        print(f"error: the demo ran on a bank of {classes} classes, not the full install's {want} "
              "(bash scripts/install.sh installs fluidsynth for the rest); no record written",
              file=sys.stderr)
        return 2
    cpu = usage.ru_utime + usage.ru_stime
    job = " ".join(["bench demo", *size])
    if args.paper:  # no target
        print(f"{job}, cold cache: {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU")
        timed = Figure(f"`{job}` from an empty cache, wall", wall / 60, "min")
    else:
        print(f"{job}, cold cache: {wall:.0f} s wall (target {TARGET_SECONDS:.0f} s: "
              f"{wall / TARGET_SECONDS:.2f}), {cpu:.0f} s CPU")
        timed = vs_target(f"`{job}` from an empty cache (bank fetch included), wall", wall / 60, "min",
                          TARGET_SECONDS / 60)
    write_record(__file__, [timed, Figure("the same, CPU time of the job", cpu / 60, "min")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
