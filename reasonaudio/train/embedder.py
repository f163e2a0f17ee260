"""The registry's ``trained`` model: a ``bench train`` model directory as an Embedder.

Audio: the clip is rendered at 16 kHz and cut into YAMNet's log-mel patches like the ``yamnet``
model; the tagger's uint8 frame codes are the item's rows (served by the shared ``yamnet-frames``
cache when any YAMNet ingest saw the same audio) and :meth:`pool` runs the trained audio encoder
over them, one clip at a time so a vector never depends on its batch. Text: frozen MiniLM token
states (float16, as in training) through the trained text encoder, one text at a time.

The name is ``trained-<first 12 hex of the weights' sha256>``, so each trained model gets its own
collection (``reasonaudio-trained-<digest>``) and embedding cache; a model trained under an
acoustic condition (``bench train --condition snr5``) is ``trained-snr5-<digest>`` and its policy
(so its identity) records the condition; the revision is
``sha256:<16 hex>`` of ``model.safetensors`` and is checked at search time like any model's.
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np

from reasonaudio.dataset.conditions import CLEAN, trained_model_name
from reasonaudio.errors import ModelError
from reasonaudio.ingest.pipelines import frames_cache_spec
from reasonaudio.models.base import Embedder, torch_device
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.registry import load_model
from reasonaudio.train.card import load_model_dir
from reasonaudio.train.features import TokenEncoder, codes_to_features, frozen_model


class TrainedEmbedder(Embedder):
    sample_rate = 16_000
    cache_rows = True

    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None) -> None:
        if model_path is None:
            raise ModelError("model 'trained' needs --model-path MODEL_DIR (a folder written by "
                             "`bench train --out MODEL_DIR`)")
        import torch

        self.record = record
        self.device = torch_device(device)
        self.model, self.config, digest = load_model_dir(model_path, self.device)
        self.model_path = str(model_path)
        self.weights_sha256 = digest
        self.revision = f"sha256:{digest[:16]}"
        self.training_condition = self.config.get("training_condition")
        trained_under = (self.training_condition or {}).get("condition", {}).get("name", CLEAN)
        self._name = trained_model_name(digest[:12], trained_under)
        self.dimension = int(self.config["model"]["joint_dim"])
        self.yamnet = load_model("yamnet", batch_size=batch_size) if batch_size else frozen_model("yamnet")
        self.unit_batch = self.yamnet.unit_batch
        feats = self.config.get("audio_features", {})
        self.scale, self.zero_point = float(feats.get("scale", 0)), float(feats.get("zero_point", 0))
        if (self.scale, self.zero_point) != (float(self.yamnet.tagger.output_scale),
                                             float(self.yamnet.tagger.output_zero)):
            raise ModelError(f"{model_path}: trained on YAMNet outputs with other quantisation "
                             f"constants than the installed {self.yamnet.revision}")
        self._tokens: Any = None
        self._torch = torch

    @property
    def name(self) -> str:
        return self._name

    # --- audio: YAMNet units and rows, the trained encoder as pooling ---------------------
    def rows_cache_spec(self) -> tuple[str, dict[str, Any]]:
        return frames_cache_spec(self.yamnet)

    def audio_units(self, wave: np.ndarray) -> list[Any]:
        return self.yamnet.audio_units(wave)

    def pad_unit(self, key: Hashable) -> np.ndarray:
        return self.yamnet.pad_unit(key)

    def run_units(self, units: list[Any]) -> np.ndarray:
        return self.yamnet.run_units(units)

    def pool(self, rows: np.ndarray) -> np.ndarray:
        x = self._torch.from_numpy(codes_to_features(rows, self.scale, self.zero_point))[None]
        mask = self._torch.ones(x.shape[:2], dtype=self._torch.bool)
        with self._torch.inference_mode():
            vec = self.model.audio(x.to(self.device), mask.to(self.device))[0]
        return vec.float().cpu().numpy()

    def embed_audio(self, waves: Sequence[np.ndarray]) -> np.ndarray:
        if not waves:
            return np.zeros((0, self.dimension), np.float32)
        rows = self.unit_rows([self.audio_units(np.asarray(w, np.float32).reshape(-1)) for w in waves])
        return np.stack([self.pool(r) for r in rows]).astype(np.float32)

    # --- text ------------------------------------------------------------------------------
    def embed_text(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), np.float32)
        if self._tokens is None:
            self._tokens = TokenEncoder()
        states = self._tokens.encode(list(texts))
        out = []
        with self._torch.inference_mode():
            for t in texts:
                x = self._torch.from_numpy(states[t].astype(np.float32))[None]
                mask = self._torch.ones(x.shape[:2], dtype=self._torch.bool)
                out.append(self.model.text(x.to(self.device), mask.to(self.device))[0].float().cpu().numpy())
        return np.stack(out).astype(np.float32)

    def policy(self) -> dict[str, Any]:
        out = {"kind": "trained-dual-encoder", "frames": "yamnet 0.96 s patches every 0.48 s",
               "pooling": "temporal transformer, mean+max, L2", "weights": self.revision}
        if self.training_condition is not None:
            out["trained_under"] = self.training_condition
        return out

    def close(self) -> None:
        if self._tokens is not None:
            self._tokens.close()


def load(record: ModelRecord, **kwargs: Any) -> TrainedEmbedder:
    return TrainedEmbedder(record, **kwargs)
