"""The atom-bank interface: labelled source recordings the composer cuts events from.

One interface, several kinds (synthetic, a Scaper-style folder, FSD50K; :mod:`.registry` opens
them by spec). The composer reads only the metadata (labels, natural durations); the renderer
calls :meth:`AtomBank.load`.
"""

from __future__ import annotations

import abc
from functools import cached_property
from typing import Any

import numpy as np

from reasonaudio.dataset.atom import Atom
from reasonaudio.errors import DataError


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
