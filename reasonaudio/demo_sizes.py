"""The main job's sizes: ``bench demo`` (quick) and ``bench demo --full``, one record each, and
the custom size of ``bench demo --clips N --queries M``.

A size is the benchmark's clips and queries, its calibration build's (detection calibrates on it)
and that build's own (tuning a ``soft:`` rung detects on the calibration build, calibrated in
turn on its own), and the folder it goes to. A size given by numbers is a size of its own,
:data:`CUSTOM`, whatever the numbers (:func:`demo_size`); its calibration builds follow one rule
(:func:`custom_size`). :func:`demo_command` is the command that runs a size. Light on purpose:
the CLI's help reads it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DemoSize:
    name: str
    clips: int
    queries: int
    calibration_clips: int
    calibration_queries: int
    nested_clips: int
    nested_queries: int
    out: Path
    what: str
    noisy: str | None = None
    """the acoustic condition the retrievers that listen are also ingested, evaluated and
    detected under (docs/conditions.md); None: clean only (the quick size: about a third of its
    time on a 2-core machine)"""
    trains_detector: bool = False
    """the job trains (or reuses, by content key) the trained detector and evaluates
    ``detected:yamnet-trained`` (reasonaudio.experiments.main_detector): minutes, so the full
    size only"""

    def describe(self) -> str:
        """``600 clips, 200 queries; calibration 200 and 100 clips``"""
        return (f"{self.clips:,} clips, {self.queries:,} queries; calibration "
                f"{self.calibration_clips:,} and {self.nested_clips:,} clips")


DEMO_SIZES: dict[str, DemoSize] = {s.name: s for s in (
    DemoSize("quick", 600, 200, 200, 50, 100, 25, Path("data/demo"),
             "every step and table on a small sample: the README's first command"),
    DemoSize("full", 2_000, 500, 500, 100, 200, 50, Path("data/demo-full"),
             "the size every figure in docs/ is measured on", noisy="snr5", trains_detector=True),
)}
"""size name -> record; the full one's calibration builds are ``bench build --calibration-for``'s
default sizes (a test says so)"""


PAPER_ARGS = ("--clips", "10000", "--queries", "1000", "--noisy", "none", "--trained-detector")
"""``bench demo`` at the paper's size (ReasonAudio: 10,000 clips, 1,000 queries), clean only, with
the trained detector: what ``benchmarks/main_job_time.py --paper`` times and
``scripts/doc_figures.py --paper`` renders (a custom size, so arguments, not a record)"""

DEFAULT_SIZE = "quick"
"""the size ``bench demo`` runs without --full, --clips or --queries"""
CUSTOM = "custom"
"""the name of every size given by numbers"""
CALIBRATED_AS = "full"
"""the record whose calibration builds a custom size takes (capped at its own size): those
``bench build --calibration-for`` makes by default"""


def custom_size(clips: int, queries: int, out: Path | None = None) -> DemoSize:
    """The size of ``clips`` clips and ``queries`` queries, given by numbers: named
    :data:`CUSTOM` (never a named size's label, even where its numbers are one's), calibrated by
    one rule: the :data:`CALIBRATED_AS` record's calibration builds, the first at most the
    benchmark's size, its own at most the first's; that record's noisy condition. ``out``: its
    folder (default: the :data:`DEFAULT_SIZE` record's, where ``bench demo --clips N --queries M``
    goes)."""
    ref = DEMO_SIZES[CALIBRATED_AS]
    cal_clips, cal_queries = min(ref.calibration_clips, clips), min(ref.calibration_queries, queries)
    return DemoSize(CUSTOM, clips, queries, cal_clips, cal_queries, min(ref.nested_clips, cal_clips),
                    min(ref.nested_queries, cal_queries), DEMO_SIZES[DEFAULT_SIZE].out if out is None else out,
                    "a size given by numbers", noisy=ref.noisy)


def demo_size(name: str = DEFAULT_SIZE, clips: int | None = None, queries: int | None = None) -> DemoSize:
    """What ``bench demo`` runs: the record ``name`` (``--full``: full), or, when ``clips`` or
    ``queries`` is given, the custom size of those numbers (the record's for the one not given)
    going to the record's folder. ``name`` must be a :data:`DEMO_SIZES` key."""
    record = DEMO_SIZES[name]
    if clips is None and queries is None:
        return record
    return custom_size(record.clips if clips is None else clips,
                       record.queries if queries is None else queries, record.out)


def named_size(clips: int, queries: int) -> DemoSize | None:
    """The named record whose benchmark has ``clips`` clips and ``queries`` queries, if one has
    (the command that reuses a build of those numbers names it)."""
    return next((s for s in DEMO_SIZES.values() if (s.clips, s.queries) == (clips, queries)), None)


def demo_command(size: DemoSize, out: Path, seed: int = 0, atoms: str = "auto") -> str:
    """The ``bench demo`` command that runs ``size`` into ``out`` with the build's ``seed`` and
    ``atoms``: every option that selects the build, each left out where it is the default."""
    args = ["bench", "demo"]
    if size.name == CUSTOM:
        args += ["--clips", str(size.clips), "--queries", str(size.queries)]
    elif size.name != DEFAULT_SIZE:
        args.append(f"--{size.name}")
    default_out = DEMO_SIZES[DEFAULT_SIZE].out if size.name == CUSTOM else size.out
    if Path(out) != default_out:
        args += ["--out", str(out)]
    if atoms != "auto":
        args += ["--atoms", atoms]
    if seed:
        args += ["--seed", str(seed)]
    return shlex.join(args)
