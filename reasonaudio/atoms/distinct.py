"""Are a label's recordings distinct audio, or one recording twice?

The unseen-recordings split (:mod:`reasonaudio.atoms.split`) tests a label on recordings its
training builds never played. That only means something when the recordings differ as audio,
not just as files: two soundfonts that ship the same samples, or one file saved twice at another
gain, pass a file check and are still one recording. Two recordings **share their audio** when
their peak normalised cross-correlation, over every lag, reaches :data:`SAME_AUDIO` (the rule the
second-recordings book was authored under, ``note`` of ``atom_recipes_second.jsonl``). Measured
at :data:`COMPARE_RATE` on the mono samples, so gain and sample rate do not matter; a pitch or
time change of one recording is not detected.

A label's **distinct recordings** are the groups its recordings form when every sharing pair is
joined (one group: one recording, however many files). Labels with more than
:data:`MAX_COMPARED` recordings (FSD50K's hundreds per class) are not compared and are counted
apart: their pairs grow with the square.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import soxr

from reasonaudio.atoms.bank import AtomBank
from reasonaudio.errors import DataError
from reasonaudio.progress import SILENT, Hooks

SAME_AUDIO = 0.7
"""peak normalised cross-correlation at or above which two recordings are one"""
COMPARE_RATE = 8_000
"""Hz: recordings are compared at this rate (mono, float64)"""
MAX_COMPARED = 6
"""labels with more recordings than this are not compared (their pairs grow with the square)"""


def comparable(x: np.ndarray, sample_rate: int) -> np.ndarray:
    """Mono float64 samples at :data:`COMPARE_RATE`."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim > 1:
        x = x.mean(axis=1)
    if sample_rate != COMPARE_RATE:
        x = soxr.resample(x, sample_rate, COMPARE_RATE)
    return np.ascontiguousarray(x, dtype=np.float64)


def peak_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """max over lags of |sum_t a[t] b[t + lag]| / (|a| |b|), in [0, 1]; 0 when either is silent."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    if norm == 0.0:
        return 0.0
    size = 1 << (len(a) + len(b) - 2).bit_length()
    spectrum = np.fft.rfft(a, size) * np.conj(np.fft.rfft(b, size))
    return min(1.0, float(np.abs(np.fft.irfft(spectrum, size)).max()) / norm)


@dataclass(frozen=True)
class SharedAudio:
    """Two recordings of one label that are one recording."""
    label: str
    first: str
    second: str
    correlation: float

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "first": self.first, "second": self.second,
                "correlation": round(self.correlation, 3)}


@dataclass
class RecordingsReport:
    """Labels counted by their recordings (files) and by their distinct recordings."""
    by_recordings: dict[int, int] = field(default_factory=dict)
    """number of recordings -> labels with that many"""
    by_distinct: dict[int, int] = field(default_factory=dict)
    """number of distinct recordings -> labels with that many (compared labels only)"""
    shared: list[SharedAudio] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)
    """labels with more than MAX_COMPARED recordings"""

    def to_json(self) -> dict[str, Any]:
        return {"rule": f"peak normalised cross-correlation >= {SAME_AUDIO} at {COMPARE_RATE} Hz: "
                        "one recording",
                "labels_by_recordings": {str(k): v for k, v in sorted(self.by_recordings.items())},
                "labels_by_distinct_recordings": {str(k): v for k, v in sorted(self.by_distinct.items())},
                "shared_audio": [s.to_json() for s in self.shared],
                "not_compared": self.not_compared}


def distinct_count(ids: Sequence[str], shared: Sequence[SharedAudio]) -> int:
    """The groups ``ids`` form when each sharing pair is joined."""
    parent = {i: i for i in ids}

    def root(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for s in shared:
        parent[root(s.first)] = root(s.second)
    return len({root(i) for i in ids})


def label_groups(bank: AtomBank) -> dict[str, list[str]]:
    """label -> the ids of its recordings, in the bank's order."""
    return {label: [a.atom_id for a in atoms] for label, atoms in bank.by_label.items()}


def to_compare(groups: dict[str, Sequence[str]]) -> set[str]:
    """The recordings :func:`compare_recordings` reads: those of labels of 2 to MAX_COMPARED."""
    return {i for ids in groups.values() if 1 < len(ids) <= MAX_COMPARED for i in ids}


def compare_recordings(groups: dict[str, Sequence[str]], samples: Callable[[str], np.ndarray | None],
                       hooks: Hooks = SILENT) -> RecordingsReport:
    """``groups``: label -> its recordings' ids; ``samples(id)``: :func:`comparable` samples, or
    None for a recording that could not be read (left out of its label's comparison)."""
    out = RecordingsReport(by_recordings=dict(Counter(len(v) for v in groups.values())))
    distinct: Counter[int] = Counter()
    wanted = to_compare(groups)
    for done, (label, ids) in enumerate(groups.items()):
        hooks.progress("comparing recordings", done, len(groups))
        if len(ids) > MAX_COMPARED:
            out.not_compared.append(label)
            continue
        read = {i: samples(i) for i in ids if i in wanted}
        ok = [i for i in ids if i not in wanted or read[i] is not None]
        pairs = []
        for n, a in enumerate(ok):
            for b in ok[n + 1:]:
                r = peak_correlation(read[a], read[b])
                if r >= SAME_AUDIO:
                    pairs.append(SharedAudio(label, a, b, r))
        out.shared += pairs
        distinct[distinct_count(ok, pairs)] += 1
    hooks.progress("comparing recordings", len(groups), len(groups))
    out.by_distinct = dict(distinct)
    return out


def bank_recordings(bank: AtomBank, hooks: Hooks = SILENT) -> RecordingsReport:
    """:func:`compare_recordings` over ``bank``, decoding only the recordings it compares (one
    that cannot be decoded is left out; ``bench atoms check`` names it)."""
    def samples(atom_id: str) -> np.ndarray | None:
        try:
            return comparable(*bank.load(atom_id))
        except DataError:
            return None

    return compare_recordings(label_groups(bank), samples, hooks)
