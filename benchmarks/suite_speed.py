"""Time the test suite: the README's whole-suite command and the fast tier.

    .venv/bin/python benchmarks/suite_speed.py [--tier suite|fast|both]

Runs, from the repository root, as a child process each (as a user or CI would; pyproject's
addopts spread each run over the machine's cores, tests/xdist_schedule.py):
- the whole suite: ``python -m pytest -q`` (target 5 min on an idle 2-core machine);
- the fast tier: ``python -m pytest -q -m fast`` (target 60 s; README's development section).
Prints each wall time with its ratio to the target (below 1 meets it), the pass/fail line pytest
closed with, and the ten slowest tests of each run (pytest's ``--durations=10``).

A rerun is timed, as a developer's loop runs: an untimed collection first compiles the test
modules (tests/conftest.py keeps that bytecode even under PYTHONDONTWRITEBYTECODE). On a fresh
clone the first run also compiles what it imports, once. Each run writes its temporary files into
a fresh folder (``--basetemp``) removed afterwards, untimed: without it pytest deletes the folders
of the runs before the last three at the end of a run, and a run would time the removal of an
earlier suite's (gigabytes of Qdrant files), which depends on what ran on the machine before.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import vs_target, write_record

ROOT = Path(__file__).resolve().parent.parent
TIERS = {"suite": ([], 300.0), "fast": (["-m", "fast"], 60.0)}
FIGURE_NAMES = {"suite": "the whole test suite (`python -m pytest -q`), wall",
                "fast": "the fast tier (`python -m pytest -q -m fast`), wall"}


def run_tier(name: str) -> tuple[float, str, list[str]]:
    """(wall seconds, pytest's closing line, the ten slowest tests' lines) of one tier."""
    extra, _ = TIERS[name]
    with tempfile.TemporaryDirectory(prefix=f"suite-speed-{name}-") as scratch:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=10",
               f"--basetemp={scratch}/t", *extra]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
    lines = done.stdout.splitlines()
    closing = next((ln.strip("= ") for ln in reversed(lines) if re.search(r"\d+ (passed|failed)", ln)),
                   f"pytest exited {done.returncode}")
    slow = [ln for ln in lines if re.match(r"^\d+\.\d+s (call|setup|teardown) ", ln)]
    return seconds, closing, slow


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tier", choices=["suite", "fast", "both"], default="both")
    args = ap.parse_args(argv)
    figures = []
    warm = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "-n", "0"]
    subprocess.run(warm, cwd=ROOT, capture_output=True, text=True)  # the bytecode caches, untimed
    for name in (["fast", "suite"] if args.tier == "both" else [args.tier]):
        seconds, closing, slow = run_tier(name)
        target = TIERS[name][1]
        print(f"{name:6s} {seconds:7.1f} s (target {target:g} s: time/target {seconds / target:.2f})  {closing}")
        for ln in slow:
            print(f"    {ln}")
        figures.append(vs_target(FIGURE_NAMES[name], seconds, "s", target))
    # `--tier both` is the default spelled out: the page's command, so it writes the record too
    write_record(__file__, figures, [] if args.tier == "both" else argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
