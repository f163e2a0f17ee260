"""One atom: a labelled source recording (or synthetic recipe) that events are cut from.

Part of the data model: a benchmark's ``atoms.jsonl`` lists the atoms its clips use, with their
source and licence, so a clip can be re-rendered and credited from the directory alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

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
