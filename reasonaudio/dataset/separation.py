"""A build that helps evaluate a benchmark (calibration for ``bench detect``, training for
``bench train``) must not be that benchmark: the one rule both follow.

Clip ids are positional (``clip-00000`` in every build), so clips are compared by content.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError


def clip_key(clip: Clip) -> str:
    """What makes a clip the clip it is (its events, with their atoms and gains, and its
    length), whatever its id."""
    spec = {"duration": clip.duration, "events": [e.to_json() for e in clip.events]}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class BuildRecord:
    """What the rule reads of a build: its folder, seed and clip keys. A trained detector keeps
    one per training build (``bench train-detector``), so the rule holds at detection time
    without the training builds at hand."""

    root: Path
    seed: int
    keys: frozenset[str]

    @classmethod
    def of(cls, bench: BenchmarkView) -> "BuildRecord":
        return cls(Path(bench.root), bench.seed, frozenset(clip_key(c) for c in bench.clips))


def check_separate(other: BenchmarkView | BuildRecord, evaluated: BenchmarkView, role: str,
                   under_test: str = "the benchmark under test") -> None:
    """DataError unless ``other`` (the ``role``, e.g. "training build") differs from the
    benchmark under test in folder and seed and shares no clip with it. ``under_test`` names
    ``evaluated`` in the message (a trained detector's builds are also kept apart from the
    calibration build)."""
    record = other if isinstance(other, BuildRecord) else BuildRecord.of(other)
    where = f"{role} {record.root}"
    if record.root.resolve() == evaluated.root.resolve():
        raise DataError(f"{where}: is {under_test}; use another build "
                        "(bench build --seed N with another seed)")
    if record.seed == evaluated.seed:
        raise DataError(f"{where}: has seed {record.seed}, the same as {under_test} "
                        f"{evaluated.root}; build it with another --seed")
    shared = record.keys & {clip_key(c) for c in evaluated.clips}
    if shared:
        raise DataError(f"{where}: {len(shared)} clip(s) identical to clips of {under_test} "
                        f"{evaluated.root}")
