"""CLAP through the ``laion_clap`` package (optional extra ``laion-clap``).

Why the windows: ``laion_clap`` 1.1.7 always uses its "fusion" truncation, which crashes on the
unfused checkpoints for input over 10 s (LAION-AI/CLAP#182) and would crop at random anyway. We
give it exactly one 10 s window per row (short clips repeat-padded by us, as its own
``repeatpad``), so it never crops or pads, and pool the windows as for ``clap``. The package pins
numpy<2, so it usually lives in its own environment; it also fetches a RoBERTa tokenizer at start,
so offline use needs that tokenizer in the Hugging Face cache.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Hashable, TypeAlias

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, loading_weights, torch_device
from reasonaudio.models.hub import fingerprint, missing_weights_error, offline
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.windowing import WindowPolicy

DEFAULT_CHECKPOINT = "630k-audioset-best.pt"


def repeat_pad(wave: np.ndarray, length: int) -> np.ndarray:
    """Tile a short window whole times, then zero-pad to ``length`` (laion_clap's repeatpad)."""
    wave = np.asarray(wave, dtype=np.float32)
    if len(wave) >= length:
        return wave[:length]
    tiled = np.tile(wave, length // len(wave))
    return np.pad(tiled, (0, length - len(tiled)))


def _int16_round_trip(x: np.ndarray) -> np.ndarray:
    """The quantisation laion_clap applies to numpy input, done up front so it is explicit."""
    return (np.clip(x, -1.0, 1.0) * 32767.0).astype(np.int16).astype(np.float32) / 32767.0


LaionUnit: TypeAlias = "str | np.ndarray"
"""a text, or one window's samples"""


class LaionClapEmbedder(Embedder):
    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None) -> None:
        self.record = record
        self.device = torch_device(device)
        spec = importlib.util.find_spec("laion_clap")
        if spec is None:
            raise ModelError("model 'laion-clap' needs the laion_clap package (pip install 'reasonaudio[laion-clap]')")
        if model_path is not None:
            ckpt = Path(model_path).expanduser()
            if ckpt.is_dir():
                ckpt = ckpt / DEFAULT_CHECKPOINT
            if not ckpt.is_file():
                raise ModelError(f"model 'laion-clap': checkpoint {ckpt} not found")
        else:
            ckpt = Path(list(spec.submodule_search_locations or [""])[0]) / DEFAULT_CHECKPOINT
            if not ckpt.is_file() and offline():
                raise missing_weights_error(record.name, record.hub_id, record.revision, DEFAULT_CHECKPOINT)
        import laion_clap

        with loading_weights("model 'laion-clap': cannot load; offline it needs the roberta-base "
                             "tokenizer cached and --model-path CHECKPOINT"):
            self.module = laion_clap.CLAP_Module(enable_fusion=False, amodel="HTSAT-tiny", device=self.device)
            self.module.load_ckpt(str(ckpt) if ckpt.is_file() else None)
        self.revision = fingerprint(ckpt) if ckpt.is_file() else record.revision
        self.sample_rate = record.sample_rate or 48_000
        self.window = WindowPolicy(record.window_seconds or 10.0, record.hop_seconds or 10.0, record.pooling)
        self.dimension = record.dimension
        self.window_samples = int(round(self.window.window_seconds * self.sample_rate))
        # >= 2: its tokenizer squeezes a batch of one text into a bare sequence
        self.unit_batch = max(2, batch_size or 8)

    def policy(self) -> dict[str, Any]:
        return {**self.window.describe(), "int16_round_trip": True, "short_windows": "repeatpad"}

    def audio_units(self, wave: np.ndarray) -> list[Any]:
        return [_int16_round_trip(repeat_pad(w, self.window_samples))
                for w in self.window.cut(wave, self.sample_rate)]

    def text_units(self, text: str) -> list[Any]:
        return [text]  # its tokenizer pads every text to 77 tokens: one shape

    def unit_key(self, unit: LaionUnit) -> Hashable:
        return "text" if isinstance(unit, str) else "audio"

    def pad_unit(self, key: Hashable) -> LaionUnit:
        return "" if key == "text" else np.zeros(self.window_samples, np.float32)

    def run_units(self, units: list[Any]) -> np.ndarray:
        import torch

        if isinstance(units[0], str):
            return np.asarray(self.module.get_text_embedding(list(units)), dtype=np.float32)
        with torch.inference_mode():
            out = self.module.get_audio_embedding_from_data(x=torch.from_numpy(np.stack(units)),
                                                            use_tensor=True)
        return out.float().cpu().numpy()


def load(record: ModelRecord, **kwargs: Any) -> LaionClapEmbedder:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return LaionClapEmbedder(record, **kwargs)
