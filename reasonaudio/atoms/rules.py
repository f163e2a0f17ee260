"""The rules an atom bank must pass, in one place, applied up front by every command that
takes a bank: `bench atoms check`, `bench build`, and (for labels) `bench ingest`.

- labels: what a Qdrant payload can hold (:func:`reasonaudio.store.payload.check_label`: no
  ``"``, ``\\``, ``>`` or ``|``), so a bank that builds also ingests;
- samples: every atom decodes to finite samples (NaN or infinity would render a silent or
  broken event), at least one, at a positive rate.

Decoding a whole file bank costs a pass over its audio (0.3 s for the 165-atom real-sound
bank); a bank that passed is remembered by its files' sizes and modification times in the
cache folder, so later builds of the same files skip the pass. Synthetic atoms are generated
by this package and not decoded here.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Iterable

import numpy as np

from reasonaudio.dataset.atom import Atom
from reasonaudio.errors import DataError, echo
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.models.cache_dir import cache_root
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.store.payload import check_label

VALIDATED_DIR = "validated-banks"


def payload_label_problems(atoms: Iterable[Atom], where: str) -> list[str]:
    """One message per atom whose label a Qdrant payload cannot hold (empty if none)."""
    out = []
    for atom in atoms:
        try:
            check_label(atom.label, f"{where}: atom {echo(atom.atom_id)}")
        except DataError as exc:
            out.append(str(exc))
    return out


def check_samples(x: np.ndarray, sr: int, where: str) -> None:
    """Decoded atom samples: non-empty, a positive rate, every sample finite."""
    x = np.asarray(x)
    if x.size == 0 or sr <= 0:
        raise DataError(f"{where}: decodes to no samples")
    if not np.all(np.isfinite(x)):
        raise DataError(f"{where}: decodes to NaN or infinite samples")


def duration_problems(atoms: Iterable[Atom]) -> list[str]:
    return [f"{a.path}: duration {a.duration} s is not positive" for a in atoms
            if not (a.duration > 0 and math.isfinite(a.duration))]


def _files_key(bank: AtomBank) -> str | None:
    """sha256 over every atom's file identity (id, label, size, mtime), or None (no files)."""
    file_of = getattr(bank, "file_of", None)
    if file_of is None:
        return None
    h = hashlib.sha256(bank.kind.encode())
    for a in bank.atoms:
        st = Path(file_of(a.atom_id)).stat()
        h.update(f"{a.atom_id}\t{a.label}\t{st.st_size}\t{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _marker(key: str, root: Path | None) -> Path:
    if root is None:
        root = cache_root()
    return Path(root) / VALIDATED_DIR / f"{key}.ok"


def validate_bank(bank: AtomBank, *, decode: bool = True, hooks: Hooks = SILENT,
                  cache: Path | None = None) -> None:
    """Every rule, raising the first problem as one DataError naming the atom (for build).

    ``bench atoms check`` reports every problem instead, with the same functions."""
    for problem in payload_label_problems(bank.atoms, bank.kind + " bank") + duration_problems(bank.atoms):
        raise DataError(problem)
    key = _files_key(bank) if decode else None
    if key is None:
        return
    marker = _marker(key, cache)
    if marker.is_file():
        return
    for i, atom in enumerate(bank.atoms):
        x, sr = bank.load(atom.atom_id)
        check_samples(x, sr, f"atom {echo(atom.atom_id)} ({bank.kind} bank)")
        hooks.progress("checking atoms", i + 1, len(bank.atoms))
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("ok\n", encoding="utf-8")
    except OSError:
        pass  # a read-only cache only costs the next build another pass
