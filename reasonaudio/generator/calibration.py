"""Which calibration build a command tunes on: the one ``--calibration`` names, which must be a
benchmark already, or by default ``DATA-calibration`` beside ``DATA``, built (seed + 1) when
missing.

A named path is never built: a typo would otherwise become a new benchmark (and, for a
``soft:`` part, its own calibration build beside it) that the command then tunes on. Either way
the calibration build must come from the evaluated build's atom bank (the same ``atoms.jsonl``,
or the other part of the same ``split:`` bank: a detector evaluated on unheard recordings is
calibrated on the recordings it was trained on) and be another build than it
(:func:`reasonaudio.dataset.separation.check_separate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from reasonaudio.dataset.benchmark import ATOMS, MANIFEST, Benchmark, load_benchmark
from reasonaudio.dataset.separation import check_separate
from reasonaudio.errors import DataError, echo
from reasonaudio.atoms.split import split_parts
from reasonaudio.generator.build import BuildParams, build_benchmark

ROLE = "calibration build"


def _bank_digest(bench: Benchmark) -> str | None:
    record = (bench.manifest.get("files") or {}).get(ATOMS)
    return record.get("sha256") if isinstance(record, dict) else None


def calibration_dir(bench: Benchmark, given: Path | None) -> Path:
    """The calibration build's folder: the one given, else ``DATA-calibration`` beside ``DATA``."""
    return Path(given) if given else bench.root.parent / f"{bench.root.name}-calibration"


def calibration_build(bench: Benchmark, out: Path, clips: int = 500, queries: int = 100) -> Benchmark:
    """A calibration build from the same bank with another seed (the evaluated seed + 1)."""
    atoms = (bench.manifest.get("parameters") or {}).get("atoms")
    if not atoms:
        raise DataError(f"{bench.root}/manifest.json: parameters.atoms does not name the atom bank")
    build_benchmark(out, BuildParams(atoms=str(atoms), seed=bench.seed + 1, n_clips=clips,
                                     n_queries=queries))
    return load_benchmark(out)


def resolve_calibration(bench: Benchmark, given: Path | str | None, clips: int = 500,
                        queries: int = 100, notify: Callable[[str], None] | None = None) -> Benchmark:
    """The calibration build for ``bench``: ``given`` (an existing benchmark), or the default
    folder, built when missing (``notify`` says so); refused in one line when ``given`` is not a
    benchmark, holds another atom bank, or is not separate from ``bench``."""
    root = calibration_dir(bench, Path(given) if given is not None else None)
    if given is not None and not (root / MANIFEST).is_file():
        raise DataError(f"--calibration {echo(str(given))}: not a benchmark (no {MANIFEST}); name "
                        "a build of the same atom bank with another seed, or omit --calibration "
                        f"to build {bench.root.name}-calibration")
    if (root / MANIFEST).is_file():
        calib = load_benchmark(root)
    else:
        if notify is not None:
            notify(f"building the calibration build {root} (seed {bench.seed + 1})")
        calib = calibration_build(bench, root, clips, queries)
    if _bank_digest(calib) != _bank_digest(bench) and not split_parts(
            calib.manifest.get("bank") or {}, bench.manifest.get("bank") or {}):
        raise DataError(f"{ROLE} {echo(str(root))}: built from another atom bank than the benchmark "
                        f"under test {echo(str(bench.root))} ({ATOMS} differs); calibrate on a "
                        "build of the same bank (or of the other part of its split)")
    check_separate(calib, bench, ROLE)
    return calib
