"""CLAP through transformers (``ClapModel``): audio and text towers in one 512-d space.

Why the care: the feature extractor's default ``truncation="fusion"`` feeds 4 channels and fails
on the unfused checkpoints, and ``rand_trunc`` crops longer input at random. We always hand it
exactly one window (``rand_trunc`` then has nothing to crop; shorter clips are repeat-padded),
cut long clips into deterministic sliding windows (:mod:`reasonaudio.models.windowing`) and pool
(mean of L2-normalised window embeddings, normalised again). The window length comes from the
checkpoint's own feature extractor, so tiny test models with a shorter window work the same way.
"""

from __future__ import annotations

import math
from typing import Any, Hashable, TypeAlias

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, loading_weights
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.windowing import WindowPolicy

TRUNCATION = "rand_trunc"
PADDING = "repeatpad"
TEXT_BUCKET = 16
"""texts are padded to a multiple of this many tokens (a fixed shape per length class)"""
AUDIO = "audio"


def _tensor(output: Any) -> Any:
    """transformers 5 returns BaseModelOutputWithPooling from get_*_features; 4.x a tensor."""
    return output.pooler_output if hasattr(output, "pooler_output") else output


ClapUnit: TypeAlias = "tuple[str, int] | np.ndarray"
"""a text and its padded token length, or one window's log-mel features"""


class ClapEmbedder(Embedder):
    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None) -> None:
        weights = self._hub_weights(record, model_path, device)
        self.weights_source = weights.source
        import torch
        from transformers import AutoTokenizer, ClapFeatureExtractor, ClapModel

        with loading_weights(f"model {record.name!r}: cannot load a CLAP checkpoint from {weights.path}"):
            self.model = ClapModel.from_pretrained(str(weights.path)).eval().to(self.device)
            self.features = ClapFeatureExtractor.from_pretrained(str(weights.path))
            self.tokenizer = AutoTokenizer.from_pretrained(str(weights.path))
        self._torch = torch
        self.sample_rate = int(self.features.sampling_rate)
        self.window_samples = int(self.features.nb_max_samples)
        window = self.window_samples / self.sample_rate
        ratio = (record.hop_seconds or window) / (record.window_seconds or window)
        self.window = WindowPolicy(window_seconds=round(window, 6), hop_seconds=round(window * ratio, 6),
                                   pooling=record.pooling)
        self.dimension = int(self.model.config.projection_dim)
        self.unit_batch = batch_size or (32 if self.device.startswith("cuda") else 8)
        text_cfg = self.model.config.text_config
        self.max_tokens = int(min(self.tokenizer.model_max_length, text_cfg.max_position_embeddings - 2))
        self._pad_features: np.ndarray | None = None

    def policy(self) -> dict[str, Any]:
        return {**self.window.describe(), "feature_extractor": {"truncation": TRUNCATION, "padding": PADDING}}

    # --- units --------------------------------------------------------------------------------
    def audio_units(self, wave: np.ndarray) -> list[Any]:
        """One log-mel input per window (computed here, so ingest can do it off the model's
        thread); each window alone, so the features never depend on the neighbours."""
        if wave.size == 0:
            raise ModelError(f"model {self.name!r}: cannot embed an empty waveform")
        return [self.window_features(w) for w in self.window.cut(wave, self.sample_rate)]

    def window_features(self, window: np.ndarray) -> np.ndarray:
        feats = self.features([np.asarray(window, dtype=np.float32)], sampling_rate=self.sample_rate,
                              return_tensors="np", truncation=TRUNCATION, padding=PADDING)
        return np.asarray(feats["input_features"][0], dtype=np.float32)

    def text_units(self, text: str) -> list[Any]:
        n = len(self.tokenizer(text, truncation=True, max_length=self.max_tokens)["input_ids"])
        return [(text, min(self.max_tokens, TEXT_BUCKET * math.ceil(n / TEXT_BUCKET)))]

    def unit_key(self, unit: ClapUnit) -> Hashable:
        return unit[1] if isinstance(unit, tuple) else AUDIO

    def pad_unit(self, key: Hashable) -> ClapUnit:
        if key != AUDIO:
            return ("", key)
        if self._pad_features is None:
            self._pad_features = self.window_features(np.zeros(self.window_samples, np.float32))
        return self._pad_features

    def run_units(self, units: list[Any]) -> np.ndarray:
        if isinstance(units[0], tuple):
            return self.text_rows([t for t, _ in units], int(units[0][1]))
        return self.feature_rows(np.stack(units))

    def feature_rows(self, features: np.ndarray) -> np.ndarray:
        """Raw audio-tower outputs for stacked window features (n, 1, frames, mels)."""
        torch = self._torch
        batch = torch.from_numpy(features).to(self.device)
        # every window is at most the model's length, so none is "longer" (no fusion crops)
        longer = torch.zeros((len(features), 1), dtype=torch.bool, device=self.device)
        with torch.inference_mode():
            out = self.model.get_audio_features(input_features=batch, is_longer=longer)
        return _tensor(out).float().cpu().numpy()

    def window_rows(self, windows: list[np.ndarray]) -> np.ndarray:
        """Raw audio-tower outputs, one per window of at most the model's length."""
        return self.feature_rows(np.stack([self.window_features(w) for w in windows]))

    def text_rows(self, texts: list[str], length: int) -> np.ndarray:
        torch = self._torch
        tok = self.tokenizer(texts, padding="max_length", truncation=True, max_length=length,
                             return_tensors="pt")
        with torch.inference_mode():
            out = self.model.get_text_features(input_ids=tok["input_ids"].to(self.device),
                                               attention_mask=tok["attention_mask"].to(self.device))
        return _tensor(out).float().cpu().numpy()


def load(record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
         batch_size: int | None = None) -> ClapEmbedder:
    return ClapEmbedder(record, model_path=model_path, device=device, batch_size=batch_size)
