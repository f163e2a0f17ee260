"""Calibration builds: made once by a named step, read by ``bench detect`` and ``bench tune``.

:func:`make_calibration_builds` (``bench build --calibration-for DATA``, and the main job's
"build calibration" step) makes ``DATA-calibration`` beside ``DATA`` (or ``--out DIR``): the
same atom bank, seed + 1. It also makes that build's own calibration build,
``DATA-calibration-calibration`` (seed + 2, at most :data:`NESTED_CLIPS` clips): tuning a
``soft:`` part detects events on the calibration build, calibrated in turn on *its*
calibration build, so no build ever calibrates on itself. Both are always made: the step that
makes them cannot know which retrievers will be tuned later, and the second is a small build of
specs (no audio) that keeps ``bench tune`` from needing a step of its own.

:func:`resolve_calibration` is what detection and tuning read: the build ``--calibration``
names, or by default ``DATA-calibration``; it never builds one. A missing build is refused in
one line naming the folder and the command that makes it (a typo never becomes a new
benchmark). The build must come from the evaluated build's atom bank (the same ``atoms.jsonl``,
or the other part of the same ``split:`` bank: a detector evaluated on unheard recordings is
calibrated on the recordings it was trained on) and be another build than it
(:func:`reasonaudio.dataset.separation.check_separate`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from reasonaudio.atoms.split import split_parts
from reasonaudio.dataset.benchmark import ATOMS, MANIFEST
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.dataset.separation import check_separate
from reasonaudio.errors import DataError, echo
from reasonaudio.generator.build import BuildParams, bank_folders, build_benchmark, holds_build
from reasonaudio.output_dirs import BENCHMARK_OUTPUT, check_output_dir
from reasonaudio.progress import SILENT, Hooks

ROLE = "calibration build"
CLIPS, QUERIES = 500, 100
"""the calibration build's default size"""
NESTED_CLIPS, NESTED_QUERIES = 200, 50
"""the calibration build's own calibration build: at most this many clips and queries"""


@dataclass(frozen=True)
class CalibrationMade:
    """One calibration build :func:`make_calibration_builds` made or found already made."""

    build: BenchmarkView
    of: BenchmarkView
    """the build it calibrates"""
    reused: bool
    """the folder already held this build (same bank, seed and sizes): kept as it was"""


def calibration_dir(bench: BenchmarkView, given: Path | str | None = None) -> Path:
    """The calibration build's folder: the one given, else ``DATA-calibration`` beside ``DATA``."""
    return Path(given) if given is not None else own_calibration_dir(bench.root)


def calibration_params(bench: BenchmarkView, clips: int = CLIPS, queries: int = QUERIES) -> BuildParams:
    """The calibration build of ``bench``: its atom bank, the next seed."""
    atoms = (bench.manifest.get("parameters") or {}).get("atoms")
    if not atoms:
        raise DataError(f"{bench.root}/manifest.json: parameters.atoms does not name the atom bank")
    return BuildParams(atoms=str(atoms), seed=bench.seed + 1, n_clips=clips, n_queries=queries)


def make_command(bench: BenchmarkView, given: Path | str | None = None) -> str:
    """The command that makes ``bench``'s calibration build (in ``given`` when named)."""
    command = f"bench build --calibration-for {shlex.quote(str(bench.root))}"
    return command if given is None else f"{command} --out {shlex.quote(str(given))}"


def make_calibration_builds(bench: BenchmarkView, out: Path | str | None = None, clips: int = CLIPS,
                            queries: int = QUERIES, *, overwrite: bool = False,
                            nested: tuple[int, int] = (NESTED_CLIPS, NESTED_QUERIES),
                            hooks: Hooks = SILENT) -> list[CalibrationMade]:
    """Make ``bench``'s calibration build in ``out`` (default ``DATA-calibration``), then that
    build's own beside it (``OUT-calibration``). A folder that already holds the same build is
    kept; one holding anything else is refused (``overwrite``: a previous benchmark or an empty
    folder is replaced, as ``bench build --force`` does) before either build is written. Neither
    may be ``bench`` itself (``--out D`` for ``D``, or ``--out X`` for ``X-calibration``) or its
    bank, whatever ``overwrite`` says.
    ``nested``: the own build's clips and queries, each at most the first's."""
    root = calibration_dir(bench, out)
    params = calibration_params(bench, clips, queries)
    nested_build = replace(params, seed=params.seed + 1, n_clips=min(nested[0], clips),
                           n_queries=min(nested[1], queries))
    wanted = ((root, params), (own_calibration_dir(root), nested_build))
    for target, build in wanted:  # never the build calibrated, nor the bank: checked first
        check_output_dir(target, BENCHMARK_OUTPUT, True, [bench.root, *bank_folders(build.atoms)])
    todo = [(target, build) for target, build in wanted if not holds_build(target, build)]
    for target, build in todo:  # both targets checked before anything is written
        _check_replaceable(bench, out, target, build, overwrite, (clips, queries))
    for target, build in todo:
        build_benchmark(target, build, overwrite=overwrite, hooks=hooks)
    made = [(target, build) in todo for target, build in wanted]
    first = load_benchmark(root)
    return [CalibrationMade(first, bench, reused=not made[0]),
            CalibrationMade(load_benchmark(wanted[1][0]), first, reused=not made[1])]


def _check_replaceable(bench: BenchmarkView, out: Path | str | None, target: Path, build: BuildParams,
                       overwrite: bool, sizes: tuple[int, int]) -> None:
    """``target`` (not an input: checked before) holds no other build unless ``overwrite``; the
    refusal names the command that replaces it, which can replace nothing but earlier builds."""
    if (target / MANIFEST).is_file() and not overwrite:
        raise DataError(f"{target}: holds another build than the calibration build wanted "
                        f"(seed {build.seed}, {build.n_clips} clips, {build.n_queries} "
                        f"queries); delete it, or replace it with `{make_command(bench, out)} "
                        f"--clips {sizes[0]} --queries {sizes[1]} --force`")
    check_output_dir(target, BENCHMARK_OUTPUT, overwrite, [bench.root, *bank_folders(build.atoms)])


def own_calibration_dir(root: Path) -> Path:
    """``ROOT-calibration`` beside ``ROOT``: where a calibration build's own one goes."""
    return root.parent / f"{root.name}-calibration"


def resolve_calibration(bench: BenchmarkView, given: Path | str | None = None) -> BenchmarkView:
    """The calibration build for ``bench``: ``given``, or ``DATA-calibration``; refused in one
    line when it is missing (naming the command that makes it), holds another atom bank, or is
    not separate from ``bench``. Never builds one."""
    root = calibration_dir(bench, given)
    if not (root / MANIFEST).is_file():
        what = f"--calibration {echo(str(given))}" if given is not None else f"{ROLE} {root}"
        raise DataError(f"{what}: not a benchmark (no {MANIFEST}); make it with "
                        f"`{make_command(bench, given)}` (or name another with --calibration)")
    calib = load_benchmark(root)
    if _bank_digest(calib) != _bank_digest(bench) and not split_parts(
            calib.manifest.get("bank") or {}, bench.manifest.get("bank") or {}):
        raise DataError(f"{ROLE} {echo(str(root))}: built from another atom bank than the benchmark "
                        f"under test {echo(str(bench.root))} ({ATOMS} differs); calibrate on a "
                        "build of the same bank (or of the other part of its split)")
    check_separate(calib, bench, ROLE)
    return calib


def _bank_digest(bench: BenchmarkView) -> str | None:
    record = (bench.manifest.get("files") or {}).get(ATOMS)
    return record.get("sha256") if isinstance(record, dict) else None
