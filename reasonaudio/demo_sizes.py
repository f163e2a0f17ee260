"""The main job's sizes: ``bench demo`` (quick) and ``bench demo --full``, one record each.

A size is the benchmark's clips and queries, its calibration build's (detection calibrates on it)
and that build's own (tuning a ``soft:`` rung detects on the calibration build, calibrated in
turn on its own), and the folder it goes to. Light on purpose: the CLI's help reads it.
"""

from __future__ import annotations

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

    def describe(self) -> str:
        """``600 clips, 200 queries; calibration 200 and 100 clips``"""
        return (f"{self.clips:,} clips, {self.queries:,} queries; calibration "
                f"{self.calibration_clips:,} and {self.nested_clips:,} clips")


DEMO_SIZES: dict[str, DemoSize] = {s.name: s for s in (
    DemoSize("quick", 600, 200, 200, 50, 100, 25, Path("data/demo"),
             "every step and table on a small sample: the README's first command"),
    DemoSize("full", 2_000, 500, 500, 100, 200, 50, Path("data/demo-full"),
             "the size every figure in docs/ is measured on"),
)}
"""size name -> record; the full one's calibration builds are ``bench build --calibration-for``'s
default sizes (a test says so)"""


def size_of(clips: int, queries: int) -> DemoSize | None:
    """The record whose benchmark has ``clips`` clips and ``queries`` queries, if one has."""
    return next((s for s in DEMO_SIZES.values() if (s.clips, s.queries) == (clips, queries)), None)
