"""A tiny random-weight audio-text model in MTEB's own shape, for tests and demos offline.

MTEB's audio models are ``AbsEncoder`` subclasses whose ``encode(DataLoader, *, task_metadata,
hf_split, hf_subset, prompt_type)`` reads ``batch["audio"]`` (``{"array", "sampling_rate"}``
items) or ``batch["text"]``, with a ``ModelMeta`` naming them and pinning a revision. This one
does what MTEB's CLAP wrapper does (``ClapModel`` audio and text features, L2-normalised; audio
fed in windows of the feature extractor's length, so nothing is cropped at random, their
embeddings averaged over the whole clip) over the tiny CLAP
checkpoint of :mod:`reasonaudio.models.tiny` (local configs, no hub), resampling with soxr (MTEB's
collator needs torchaudio, which this project does not install). Its revision is the sha256 of
the checkpoint's weights. Its vectors mean nothing; the bridges around them are what is tested.

Importing this module imports ``mteb``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import soxr
from mteb.models import ModelMeta
from mteb.models.abs_encoder import AbsEncoder

from reasonaudio.fileio import sha256_file

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

TINY_MTEB_NAME = "reasonaudio/tiny-random-clap"


class TinyClapEncoder(AbsEncoder):
    def __init__(self, model_name: str, revision: str, device: str | None = None,
                 path: str = "", **kwargs: Any) -> None:
        import torch
        from transformers import AutoTokenizer, ClapFeatureExtractor, ClapModel

        self.model_name = model_name
        self.device = device or "cpu"
        self.model = ClapModel.from_pretrained(path).eval().to(self.device)
        self.features = ClapFeatureExtractor.from_pretrained(path)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.sampling_rate = int(self.features.sampling_rate)
        self._torch = torch

    def _audio(self, items: list[dict[str, Any]]) -> np.ndarray:
        window = int(self.features.nb_max_samples)
        windows, owner = [], []
        for i, item in enumerate(items):
            wave = np.asarray(item["array"], dtype=np.float32).reshape(-1)
            if int(item["sampling_rate"]) != self.sampling_rate:
                wave = soxr.resample(wave, int(item["sampling_rate"]), self.sampling_rate).astype(np.float32)
            starts = list(range(0, max(1, len(wave) - window + 1), window))
            if starts[-1] + window < len(wave):
                starts.append(len(wave) - window)  # the last window ends with the clip
            for start in starts:
                windows.append(wave[start:start + window])
                owner.append(i)
        feats = self.features(windows, sampling_rate=self.sampling_rate, return_tensors="pt",
                              truncation="rand_trunc", padding="repeatpad")  # each <= window: no crop
        longer = self._torch.zeros((len(windows), 1), dtype=self._torch.bool)
        with self._torch.inference_mode():
            out = self.model.get_audio_features(input_features=feats["input_features"].to(self.device),
                                                is_longer=longer.to(self.device))
        rows, owner_arr = self._normalised(out), np.asarray(owner)
        pooled = np.stack([rows[owner_arr == i].mean(axis=0) for i in range(len(items))])
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def _text(self, texts: list[str]) -> np.ndarray:
        tok = self.tokenizer(list(texts), padding=True, truncation=True, max_length=64,
                             return_tensors="pt")
        with self._torch.inference_mode():
            out = self.model.get_text_features(input_ids=tok["input_ids"].to(self.device),
                                               attention_mask=tok["attention_mask"].to(self.device))
        return self._normalised(out)

    @staticmethod
    def _normalised(out: Any) -> np.ndarray:
        out = out.pooler_output if hasattr(out, "pooler_output") else out
        arr = out.float().cpu().numpy()
        return arr / np.linalg.norm(arr, axis=1, keepdims=True)

    def encode(self, inputs: DataLoader, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
               prompt_type: PromptType | None = None, **kwargs: Any) -> np.ndarray:
        features = inputs.dataset.features
        parts = []
        for batch in inputs:
            if "audio" in features:
                parts.append(self._audio(batch["audio"]))
            elif "text" in features:
                parts.append(self._text(batch["text"]))
            else:
                raise ValueError("no audio or text column to encode")
        return np.vstack(parts)


class TinyModelMeta(ModelMeta):
    """MTEB checks an audio model for its ``audio`` extra (torchaudio, torchcodec) before loading
    it; this encoder uses neither (soxr resamples, the waveforms arrive decoded), so it checks
    what it does use."""

    def _check_requirements(self) -> None:
        missing = [m for m in ("transformers", "soxr") if importlib.util.find_spec(m) is None]
        if missing:
            raise ImportError(f"{self.name} needs {', '.join(missing)}")


def tiny_mteb_meta(checkpoint: Path | str) -> ModelMeta:
    """The ModelMeta of the tiny encoder over a checkpoint from ``build_tiny_clap``."""
    checkpoint = Path(checkpoint)
    return TinyModelMeta(
        loader=TinyClapEncoder, loader_kwargs={"path": str(checkpoint)}, name=TINY_MTEB_NAME,
        revision=sha256_file(checkpoint / "model.safetensors")[:40], release_date=None,
        languages=["eng-Latn"], n_parameters=None, memory_usage_mb=None, max_tokens=64.0,
        embed_dim=16, license="apache-2.0", open_weights=True, public_training_code=None,
        public_training_data=None, framework=["PyTorch"], similarity_fn_name="cosine",
        use_instructions=False, training_datasets=set(), modalities=["audio", "text"])
