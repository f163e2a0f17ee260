"""``split:train:SPEC`` / ``split:test:SPEC``: a bank's recordings cut into two parts, so a
detector can be trained on some recordings and evaluated on sounds it never heard.

The rule, per label of the bank ``SPEC`` (deterministic, no seed: the same atoms on every run):

- a label with two or more recordings: they are ranked by ``sha256(label, atom id)``; the first
  ``n // 2`` are the **test** part, the rest the **train** part (other recordings);
- a label with one recording of at least :data:`MIN_EXCERPT_S`: its first half is the train
  part and its second half the test part (an *unheard excerpt* of a heard recording, a weaker
  separation, said apart in every report: :func:`kinds`);
- a label with one shorter recording: train part only (its label is absent from the test part).

So every test event comes from audio the training builds never played. Excerpt atoms keep
their recording's id with ``#head`` / ``#tail`` and are cut from its samples when loaded.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np

from reasonaudio.dataset.atom import Atom
from reasonaudio.errors import DataError
from reasonaudio.atoms.bank import AtomBank

PREFIX = "split:"
PARTS = ("train", "test")
MIN_EXCERPT_S = 2.0
"""a single recording at least this long is cut in two halves (each >= 1 s)"""
HEAD, TAIL = "#head", "#tail"
RULE = (f"labels with >= 2 recordings: the first n // 2 by sha256(label, atom id) test, the rest "
        f"train; one recording >= {MIN_EXCERPT_S:g} s: first half train, second half test; one "
        "shorter recording: train only")
RULE_VERSION = 1


def parse_spec(spec: str) -> tuple[str, str]:
    """``split:PART:SPEC`` -> (part, inner spec); a one-line error otherwise."""
    part, _, inner = spec[len(PREFIX):].partition(":")
    if part not in PARTS or not inner.strip():
        raise DataError(f"atom bank {spec!r}: expected split:train:SPEC or split:test:SPEC "
                        "(SPEC: the bank to split, e.g. fetched:packages)")
    return part, inner.strip()


def _rank(atom: Atom) -> str:
    return hashlib.sha256(f"{atom.label}\t{atom.atom_id}".encode()).hexdigest()


def split_atoms(atoms_by_label: dict[str, tuple[Atom, ...]], part: str) -> list[Atom]:
    """The atoms of ``part`` (module docstring)."""
    out: list[Atom] = []
    for label, atoms in sorted(atoms_by_label.items()):
        if len(atoms) >= 2:
            ranked = sorted(atoms, key=lambda a: (_rank(a), a.atom_id))
            k = len(ranked) // 2
            out += ranked[:k] if part == "test" else ranked[k:]
        elif atoms[0].duration >= MIN_EXCERPT_S:
            a = atoms[0]
            half = round(a.duration / 2, 6)
            suffix = TAIL if part == "test" else HEAD
            out.append(replace(a, atom_id=a.atom_id + suffix, duration=half))
        elif part == "train":
            out.append(atoms[0])
    return out


def atom_kind(atom_id: str) -> str:
    """``recording`` (a whole recording) or ``excerpt`` (half of one)."""
    return "excerpt" if atom_id.endswith((HEAD, TAIL)) else "recording"


def kinds(bank: AtomBank) -> dict[str, str]:
    """atom id -> :func:`atom_kind` of every atom of ``bank``."""
    return {a.atom_id: atom_kind(a.atom_id) for a in bank.atoms}


def split_parts(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two banks (their ``describe()``, as manifests record them) are the two parts of
    one split of the same recordings (the same parent description, fingerprint included)."""
    return (a.get("kind") == b.get("kind") == SplitBank.kind and a.get("part") != b.get("part")
            and a.get("rule_version") == b.get("rule_version") and a.get("parent") == b.get("parent"))


class SplitBank(AtomBank):
    """One part of another bank (module docstring)."""

    kind = "split"

    def __init__(self, spec: str, parent: AtomBank) -> None:
        self.spec = spec
        self.part, _ = parse_spec(spec)
        self.parent = parent
        atoms = split_atoms(parent.by_label, self.part)
        if not atoms:
            raise DataError(f"atom bank {spec!r}: the {self.part} part is empty (no label has two "
                            f"recordings or one of at least {MIN_EXCERPT_S:g} s)")
        super().__init__(atoms)

    def load(self, atom_id: str) -> tuple[np.ndarray, int]:
        for suffix, first in ((HEAD, True), (TAIL, False)):
            if atom_id.endswith(suffix):
                x, sr = self.parent.load(atom_id[: -len(suffix)])
                cut = len(x) // 2
                return (x[:cut] if first else x[cut:]), sr
        return self.parent.load(atom_id)

    def describe(self) -> dict[str, Any]:
        by_kind = kinds(self)
        return {"kind": self.kind, "spec": self.spec, "part": self.part, "rule": RULE,
                "rule_version": RULE_VERSION, "parent": self.parent.describe(),
                "n_classes": len(self.labels), "n_atoms": len(self.atoms),
                "excerpts": sum(v == "excerpt" for v in by_kind.values())}
