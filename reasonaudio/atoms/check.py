"""`bench atoms check SOURCE`: validate an atom bank and summarise it.

:func:`check_bank` opens the bank collecting every bad file instead of stopping at the first, then
(unless ``decode=False``) decodes every atom to prove it is readable, non-empty and finite. The
result is plain data (:class:`BankReport`); :func:`print_bank_report` draws it with rich. Further
checks (e.g. an audio tagger agreeing with the labels) can take ``report.bank`` and add their own
rows without touching this module.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reasonaudio.querylang.labels import UNSAFE_WORDS
from reasonaudio.errors import DataError
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.distinct import (
    RecordingsReport, comparable, compare_recordings, label_groups, to_compare,
)
from reasonaudio.atoms.folder import FolderBank
from reasonaudio.atoms.fsd50k import FSD50KBank
from reasonaudio.atoms.registry import FETCHED_PREFIX, open_bank, open_fetched
from reasonaudio.atoms.split import PREFIX as SPLIT_PREFIX
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.atoms.rules import check_samples, duration_problems, payload_label_problems


@dataclass
class BankReport:
    source: str
    bank: AtomBank
    description: dict[str, Any]
    n_classes: int
    n_files: int
    durations: tuple[float, float, float]
    """min, median, max natural duration in seconds"""
    sample_rates: dict[int, int]
    licences: dict[str, int]
    decoded: bool
    errors: list[str] = field(default_factory=list)
    """one line per bad file, naming it"""
    warnings: list[str] = field(default_factory=list)
    recordings: RecordingsReport | None = None
    """labels by recordings and by distinct recordings (decoded banks only)"""

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "bank": self.description, "classes": self.n_classes,
                "files": self.n_files, "duration_min": self.durations[0],
                "duration_median": self.durations[1], "duration_max": self.durations[2],
                "sample_rates": {str(k): v for k, v in self.sample_rates.items()},
                "licences": self.licences, "decoded": self.decoded, "errors": self.errors,
                "warnings": self.warnings,
                "recordings": self.recordings.to_json() if self.recordings is not None else None}


def _open_collecting(source: str, errors: list[str]) -> AtomBank:
    spec = source.strip()
    if spec == "synthetic" or spec.startswith(("synthetic:", SPLIT_PREFIX)):
        return open_bank(spec)
    if spec.startswith("fsd50k:"):
        return FSD50KBank.from_path(spec.split(":", 1)[1], errors=errors)
    if spec.startswith(FETCHED_PREFIX):
        return open_fetched(spec, errors)
    return FolderBank.from_path(spec, errors=errors)


def _label_warnings(labels: tuple[str, ...]) -> list[str]:
    out = []
    risky = [lb for lb in labels if set(lb.split()) & UNSAFE_WORDS]
    if risky:
        out.append(f"{len(risky)} label(s) contain words the query language uses, e.g. {risky[0]!r}; "
                   "query text may read ambiguously")
    odd = [lb for lb in labels if not all(w.isalpha() for w in lb.split())]
    if odd:
        out.append(f"{len(odd)} label(s) contain digits or punctuation, e.g. {odd[0]!r}")
    return out


def check_bank(source: str, decode: bool = True, hooks: Hooks = SILENT) -> BankReport:
    """Open and validate the bank named by ``source`` (``synthetic``, ``fetched:NAME``, ``PATH``,
    ``fsd50k:PATH``, ``split:PART:SPEC``)."""
    errors: list[str] = []
    bank = _open_collecting(source, errors)
    bad_ids: set[str] = set()
    groups = label_groups(bank) if decode else {}
    compared = to_compare(groups)
    kept: dict[str, np.ndarray] = {}
    if decode:
        report = hooks.progress
        report("decoding atoms", 0, len(bank.atoms))
        for n, atom in enumerate(bank.atoms, 1):
            try:
                x, sr = bank.load(atom.atom_id)
                check_samples(x, sr, atom.path)
                if atom.atom_id in compared:
                    kept[atom.atom_id] = comparable(x, sr)
            except DataError as exc:
                errors.append(f"{atom.atom_id}: {exc}" if atom.atom_id not in str(exc) else str(exc))
                bad_ids.add(atom.atom_id)
            report("decoding atoms", n, len(bank.atoms))
    errors.extend(duration_problems(a for a in bank.atoms if a.atom_id not in bad_ids))
    errors.extend(payload_label_problems(bank.atoms, source))
    durations = sorted(a.duration for a in bank.atoms)
    recordings = None
    if decode:
        recordings = compare_recordings(groups, kept.get, hooks)
    warnings = _label_warnings(bank.labels) + [
        f"{s.label}: recordings {s.first} and {s.second} share their audio (peak correlation "
        f"{s.correlation:.2f}): an unseen-recordings split would test a heard recording"
        for s in (recordings.shared if recordings else ())]
    return BankReport(
        source=source, bank=bank, description=bank.describe(), n_classes=len(bank.labels),
        n_files=len(bank.atoms),
        durations=(durations[0], statistics.median(durations), durations[-1]),
        sample_rates=dict(sorted(Counter(a.sample_rate for a in bank.atoms).items())),
        licences=dict(Counter(a.license for a in bank.atoms).most_common()),
        decoded=decode, errors=errors, warnings=warnings, recordings=recordings)
