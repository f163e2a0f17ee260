"""A build that helps evaluate a benchmark (calibration for ``bench detect``, training for
``bench train``) must not be that benchmark: the one rule both follow.

Clip ids are positional (``clip-00000`` in every build), so clips are compared by content.
"""

from __future__ import annotations

import hashlib
import json

from reasonaudio.dataset.benchmark import Benchmark
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError


def clip_key(clip: Clip) -> str:
    """What makes a clip the clip it is (its events, with their atoms and gains, and its
    length), whatever its id."""
    spec = {"duration": clip.duration, "events": [e.to_json() for e in clip.events]}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def check_separate(other: Benchmark, evaluated: Benchmark, role: str) -> None:
    """DataError unless ``other`` (the ``role``, e.g. "training build") differs from the
    benchmark under test in folder and seed and shares no clip with it."""
    where = f"{role} {other.root}"
    if other.root.resolve() == evaluated.root.resolve():
        raise DataError(f"{where}: is the benchmark under test; use another build "
                        "(bench build --seed N with another seed)")
    if other.seed == evaluated.seed:
        raise DataError(f"{where}: has seed {other.seed}, the same as the benchmark under test "
                        f"{evaluated.root}; build it with another --seed")
    shared = {clip_key(c) for c in other.clips} & {clip_key(c) for c in evaluated.clips}
    if shared:
        raise DataError(f"{where}: {len(shared)} clip(s) identical to clips of the benchmark "
                        f"under test {evaluated.root}")
