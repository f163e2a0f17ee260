"""Opening an atom bank from its spec string: the one place that knows every bank kind.

Adding a bank kind is one branch here plus its module beside this one.
"""

from __future__ import annotations

from reasonaudio.ingest.atoms.bank import AtomBank
from reasonaudio.ingest.atoms.folder import FolderBank
from reasonaudio.ingest.atoms.fsd50k import FSD50KBank
from reasonaudio.ingest.atoms.synthetic import SyntheticBank


def open_bank(spec: str) -> AtomBank:
    """``synthetic``, ``fsd50k:PATH`` or a folder ``PATH`` (Scaper layout, optional manifest)."""
    spec = spec.strip()
    if spec == "synthetic" or spec.startswith("synthetic:"):
        return SyntheticBank.from_spec(spec)
    if spec.startswith("fsd50k:"):
        return FSD50KBank.from_path(spec.split(":", 1)[1])
    return FolderBank.from_path(spec)
