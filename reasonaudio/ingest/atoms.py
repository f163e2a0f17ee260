"""Atom banks: labelled source recordings the composer cuts events from.

One interface, several kinds (synthetic, a Scaper-style folder, FSD50K). The composer reads only
the metadata (labels, natural durations); the renderer calls :meth:`AtomBank.load`.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

import numpy as np

from reasonaudio.errors import DataError


@dataclass(frozen=True)
class Atom:
    atom_id: str
    label: str
    """lower-case English words, e.g. ``dog barking``; one class per label in a bank"""
    path: str
    """file path relative to the bank root (or a ``synthetic:`` recipe name)"""
    sample_rate: int
    duration: float
    source: str
    license: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any], where: str = "atoms.jsonl") -> "Atom":
        try:
            return cls(str(obj["atom_id"]), str(obj["label"]), str(obj["path"]),
                       int(obj["sample_rate"]), float(obj["duration"]), str(obj["source"]),
                       str(obj["license"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where}: atom record missing or malformed field {exc}") from None


class AtomBank(abc.ABC):
    """A set of atoms plus a way to load their samples."""

    kind: str = "bank"

    def __init__(self, atoms: list[Atom] | tuple[Atom, ...]) -> None:
        if not atoms:
            raise DataError(f"{self.kind} atom bank has no atoms")
        ids = [a.atom_id for a in atoms]
        if len(set(ids)) != len(ids):
            raise DataError(f"{self.kind} atom bank has duplicate atom ids")
        self.atoms: tuple[Atom, ...] = tuple(sorted(atoms, key=lambda a: a.atom_id))

    @cached_property
    def by_id(self) -> dict[str, Atom]:
        return {a.atom_id: a for a in self.atoms}

    @cached_property
    def by_label(self) -> dict[str, tuple[Atom, ...]]:
        out: dict[str, list[Atom]] = {}
        for a in self.atoms:
            out.setdefault(a.label, []).append(a)
        return {k: tuple(v) for k, v in sorted(out.items())}

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.by_label)

    @abc.abstractmethod
    def load(self, atom_id: str) -> tuple[np.ndarray, int]:
        """Mono float32 samples in [-1, 1] and their sample rate."""

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """What the manifest records to find and rebuild this bank (kind, root, parameters)."""


def open_bank(spec: str) -> AtomBank:
    """``synthetic``, ``fsd50k:PATH`` or a folder ``PATH`` (Scaper layout, optional manifest)."""
    spec = spec.strip()
    if spec == "synthetic" or spec.startswith("synthetic:"):
        from reasonaudio.ingest.synthetic_bank import SyntheticBank

        return SyntheticBank.from_spec(spec)
    if spec.startswith("fsd50k:"):
        from reasonaudio.ingest.fsd50k_bank import FSD50KBank

        return FSD50KBank.from_path(spec.split(":", 1)[1])
    from reasonaudio.ingest.folder_bank import FolderBank

    return FolderBank.from_path(spec)
