"""How one ``--model`` turns clips into points: audio models and two-stage pipelines.

Audio models (``clap``, ``yamnet``, ...): render each clip at the model's rate, hash the samples,
look the hash up in the embedding cache, run the misses through the audio tower in fixed-shape
batches (so a vector never depends on its batch neighbours) and pool. Two-stage pipelines
(``two-stage:CAPTIONER+EMBEDDER``): caption each clip (from metadata, or from YAMNet frame scores,
themselves cached by audio hash), embed the caption with the text model; the caption goes into the
payload.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError, ModelError
from reasonaudio.ingest.audio_index import AudioHashIndex
from reasonaudio.ingest.embedding_cache import EmbeddingCache, audio_hash, identity_digest, text_hash
from reasonaudio.models.base import Embedder, EmbedderProtocol
from reasonaudio.models.batching import FixedBatcher
from reasonaudio.models.captioners import Captioner, get_captioner
from reasonaudio.models.names import is_two_stage, parse_two_stage, two_stage_name
from reasonaudio.models.registry import describe_model, dtype_for, get_record, load_model, names
from reasonaudio.models.windowing import with_chunking
from reasonaudio.models.yamnet_embedder import FrameTagger
from reasonaudio.store.base import CollectionMeta
from reasonaudio.store.collections import corpus_fingerprint

if TYPE_CHECKING:
    from reasonaudio.render.clips import ClipRenderer


@dataclass
class Timings:
    render_s: float = 0.0
    """time spent rendering (in the background thread)"""
    render_wait_s: float = 0.0
    """time the model side waited for a render"""
    units_s: float = 0.0
    """time cutting audio into model units (windows, log-mel patches), in the background thread"""
    model_s: float = 0.0
    model_calls: int = 0
    padded_units: int = 0
    embedded: int = 0
    """clips whose vector was computed (not served by the cache)"""


def _timed(run: Callable[[list[Any]], np.ndarray], timings: Timings) -> Callable[[list[Any]], np.ndarray]:
    def wrapped(units: list[Any]) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return run(units)
        finally:
            timings.model_s += time.perf_counter() - t0
            timings.model_calls += 1
    return wrapped


class Pipeline:
    """How one ``--model`` turns clips into points."""

    name: str
    dimension: int
    revision: str
    pooling: str

    def __init__(self) -> None:
        self.timings = Timings()
        self.caches: list[EmbeddingCache] = []
        self._renderer: ClipRenderer | None = None
        self.lookahead = 8
        self.audio_index: AudioHashIndex | None = None
        """clip -> audio hash, so later readers of the caches (``bench detect``) need not render again"""

    def identity(self) -> dict[str, Any]:
        raise NotImplementedError

    def meta(self, bench: BenchmarkView, limit: int | None) -> CollectionMeta:
        return CollectionMeta(model=self.name, revision=self.revision, dimension=self.dimension,
                              distance="cosine", pooling=self.pooling,
                              corpus_sha256=corpus_fingerprint(bench),
                              extra={"identity": self.identity(), "limit": limit})

    def vectors(self, clips: Sequence[Clip], done: Callable[[str], None]) -> dict[str, tuple[np.ndarray, dict[str, Any]]]:
        """clip id -> (vector, extra payload); ``done(clip_id)`` as each finishes."""
        raise NotImplementedError

    # rendering at the model's own rate (atoms are resampled by the renderer, once per atom)
    def attach_renderer(self, renderer: ClipRenderer | None) -> None:
        self._renderer = renderer

    def render(self, clip: Clip, sample_rate: int) -> np.ndarray:
        if self._renderer is None:
            raise DataError("ingest: no renderer attached for an audio model")
        t0 = time.perf_counter()
        try:
            return self._renderer.render(replace(clip, sample_rate=sample_rate))
        finally:
            self.timings.render_s += time.perf_counter() - t0

    def rendered(self, clips: Sequence[Clip], sample_rate: int, units: Callable[[np.ndarray], list[Any]],
                 cached: Callable[[str], bool] = lambda h: False
                 ) -> Iterator[tuple[Clip, list[Any] | None, str]]:
        """(clip, model units, audio hash) in clip order, rendered, hashed and cut into units
        (windows, log-mel patches) by one background thread up to :attr:`lookahead` clips ahead,
        so all of that overlaps the model's work (numpy, soxr, onnxruntime and torch release
        the GIL). Units are ``None`` when ``cached(hash)``: nothing to compute."""
        def job(clip: Clip) -> tuple[list[Any] | None, str]:
            wave = self.render(clip, sample_rate)
            digest = audio_hash(wave)
            if self.audio_index is not None:
                self.audio_index.put(clip, sample_rate, self._renderer, digest)
            if cached(digest):
                return None, digest
            t0 = time.perf_counter()
            cut = units(wave)
            self.timings.units_s += time.perf_counter() - t0
            return cut, digest

        if self.lookahead < 1 or len(clips) < 2:
            for clip in clips:
                cut, digest = job(clip)
                yield clip, cut, digest
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="render") as pool:
            pending = [pool.submit(job, c) for c in clips[: self.lookahead]]
            for i, clip in enumerate(clips):
                t0 = time.perf_counter()
                cut, digest = pending[i].result()
                self.timings.render_wait_s += time.perf_counter() - t0
                pending[i] = None  # type: ignore[call-overload]
                if i + self.lookahead < len(clips):
                    pending.append(pool.submit(job, clips[i + self.lookahead]))
                yield clip, cut, digest

    def cached_rows(self, clips: Sequence[Clip], model: Embedder | FrameTagger, cache: EmbeddingCache,
                    done: Callable[[str, np.ndarray, bool], None]) -> None:
        """Each clip's model rows (YAMNet frames, generated tokens): served from ``cache`` by the
        hash of the rendered audio, or computed for the misses in fixed-shape batches and stored.
        ``done(clip_id, rows, computed)`` for every clip."""
        hashes: dict[str, str] = {}

        def items() -> Iterator[tuple[str, list[Any]]]:
            for clip, units, digest in self.rendered(clips, model.sample_rate, model.audio_units,
                                                     cache.contains):
                hashes[clip.id] = digest
                rows = cache.get(digest)
                if rows is not None:
                    done(clip.id, rows, False)
                    continue
                yield clip.id, units if units is not None else model.audio_units(
                    self.render(clip, model.sample_rate))

        for cid, rows in _stream_rows(self, model, items()):
            cache.put(hashes[cid], rows)
            done(cid, rows, True)
        cache.commit()

    def _index_audio(self, cache_dir: Path | None, enabled: bool) -> None:
        self.audio_index = AudioHashIndex(cache_dir, enabled)
        self.caches.append(self.audio_index.cache)

    def close(self) -> None:
        for cache in self.caches:
            cache.close()

    def with_caches(self, cache_enabled: bool, cache_dir: Path | None) -> "Pipeline":
        """The same loaded models over other caches (a Ray actor kept for the next job of its
        model: :mod:`reasonaudio.ingest.ray_pool`); no renderer attached. This pipeline's caches
        are left open (close them)."""
        raise NotImplementedError

    @property
    def needs_audio(self) -> bool:
        return True


def _stream_rows(pipeline: Pipeline, embedder: Embedder | FrameTagger, items: Iterator[tuple[Any, list[Any]]]
                 ) -> Iterator[tuple[Any, np.ndarray]]:
    batcher = FixedBatcher(_timed(embedder.run_units, pipeline.timings), embedder.unit_batch,
                           embedder.pad_unit, embedder.unit_key)
    for key, units in items:
        yield from batcher.add(key, units)
    yield from batcher.flush()
    pipeline.timings.padded_units += batcher.padded_units


def caption_rows_cache_spec(captioner: Captioner) -> tuple[str, dict[str, Any]]:
    """(label, identity) of the cache of a captioner's audio-model rows (YAMNet frames, generated
    tokens) by audio hash: the clips' captions at ingest and a sound given by example share it."""
    model = captioner.audio_model
    return f"{model.name}-{captioner.rows_label}", model.identity()


def frames_cache_spec(tagger: FrameTagger) -> tuple[str, dict[str, Any]]:
    """(label, identity) of the frame cache the ``yamnet`` ingest, ``yamnet-caption``, detection
    and training share."""
    return f"{tagger.name}-frames", tagger.identity()


class AudioPipeline(Pipeline):
    def __init__(self, embedder: Embedder, cache_enabled: bool = True, cache_dir: Path | None = None) -> None:
        super().__init__()
        self.embedder = embedder
        self.name = embedder.name
        self.dimension = embedder.dimension
        self.revision = embedder.revision
        policy = embedder.policy()
        self.pooling = _policy_text(policy) + _dtype_text(embedder)
        self.cache = EmbeddingCache(f"{self.name}-audio", embedder.identity(), cache_dir, cache_enabled)
        self.caches = [self.cache]
        self.rows_cache: EmbeddingCache | None = None
        if getattr(embedder, "cache_rows", False):  # YAMNet: frame scores, shared with its captioner
            spec = getattr(embedder, "rows_cache_spec", None)  # `trained`: YAMNet's shared frames
            label, rows_identity = spec() if spec else frames_cache_spec(embedder)
            self.rows_cache = EmbeddingCache(label, rows_identity, cache_dir, cache_enabled)
            self.caches.append(self.rows_cache)
            self._index_audio(cache_dir, cache_enabled)

    def identity(self) -> dict[str, Any]:
        return self.embedder.identity()

    def with_caches(self, cache_enabled: bool, cache_dir: Path | None) -> "AudioPipeline":
        return AudioPipeline(self.embedder, cache_enabled, cache_dir)

    def vectors(self, clips: Sequence[Clip], done: Callable[[str], None]) -> dict[str, tuple[np.ndarray, dict[str, Any]]]:
        out: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}
        hashes: dict[str, str] = {}

        def items() -> Iterator[tuple[str, list[Any]]]:
            def known(h: str) -> bool:
                return self.cache.contains(h) or (self.rows_cache is not None
                                                  and self.rows_cache.contains(h))

            for clip, units, h in self.rendered(clips, self.embedder.sample_rate,
                                                self.embedder.audio_units, known):
                hashes[clip.id] = h
                cached = self.cache.get(h)
                if cached is None and self.rows_cache is not None:
                    rows = self.rows_cache.get(h)
                    if rows is not None:
                        cached = self.embedder.pool(rows)
                        self.cache.put(h, cached)
                if cached is not None:
                    out[clip.id] = (cached, {})
                    done(clip.id)
                    continue
                yield clip.id, units if units is not None else self.embedder.audio_units(
                    self.render(clip, self.embedder.sample_rate))

        for cid, rows in _stream_rows(self, self.embedder, items()):
            vec = self.embedder.pool(rows)
            if self.rows_cache is not None:
                self.rows_cache.put(hashes[cid], rows)
            self.cache.put(hashes[cid], vec)
            self.timings.embedded += 1
            out[cid] = (vec, {})
            done(cid)
        for cache in self.caches:
            cache.commit()
        return out


class TwoStagePipeline(Pipeline):
    def __init__(self, captioner: Captioner, embedder: Embedder, cache_enabled: bool = True,
                 cache_dir: Path | None = None) -> None:
        super().__init__()
        self.captioner = captioner
        self.embedder = embedder
        self.name = two_stage_name(captioner.name, embedder.name)
        self.dimension = embedder.dimension
        cap_id = captioner.identity()
        self.revision = f"{captioner.name}-{identity_digest(cap_id)[:8]}+{embedder.revision}"
        self.pooling = f"caption -> {embedder.name} text tower" + _dtype_text(embedder)
        self.text_cache = EmbeddingCache(f"{embedder.name}-text", embedder.identity(), cache_dir, cache_enabled)
        self.caches = [self.text_cache]
        self.frame_cache: EmbeddingCache | None = None
        if captioner.needs_audio:  # the audio model's rows (YAMNet frames, generated tokens)
            self.frame_cache = EmbeddingCache(*caption_rows_cache_spec(captioner), cache_dir,
                                              cache_enabled)
            self.caches.append(self.frame_cache)
            self._index_audio(cache_dir, cache_enabled)

    @property
    def needs_audio(self) -> bool:
        return bool(self.captioner.needs_audio)

    def identity(self) -> dict[str, Any]:
        return {"pipeline": self.name, "captioner": self.captioner.identity(),
                "embedder": self.embedder.identity()}

    def with_caches(self, cache_enabled: bool, cache_dir: Path | None) -> "TwoStagePipeline":
        return TwoStagePipeline(self.captioner, self.embedder, cache_enabled, cache_dir)

    def captions(self, clips: Sequence[Clip]) -> dict[str, str]:
        if not self.captioner.needs_audio:
            return {c.id: self.captioner.caption(c) for c in clips}
        assert self.frame_cache is not None
        tagger = self.captioner.audio_model
        out: dict[str, str] = {}

        def done(cid: str, rows: np.ndarray, _computed: bool) -> None:
            out[cid] = self.captioner.caption_from_rows(rows)

        self.cached_rows(clips, tagger, self.frame_cache, done)
        return out

    def vectors(self, clips: Sequence[Clip], done: Callable[[str], None]) -> dict[str, tuple[np.ndarray, dict[str, Any]]]:
        captions = self.captions(clips)
        out: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}

        def items() -> Iterator[tuple[str, list[Any]]]:
            for clip in clips:
                cached = self.text_cache.get(text_hash(captions[clip.id]))
                if cached is not None:
                    out[clip.id] = (cached, {"caption": captions[clip.id]})
                    done(clip.id)
                    continue
                yield clip.id, self.embedder.text_units(captions[clip.id])

        for cid, rows in _stream_rows(self, self.embedder, items()):
            vec = self.embedder.pool(rows)
            self.text_cache.put(text_hash(captions[cid]), vec)
            self.timings.embedded += 1
            out[cid] = (vec, {"caption": captions[cid]})
            done(cid)
        self.text_cache.commit()
        return out


def _dtype_text(embedder: EmbedderProtocol) -> str:
    """``, bf16`` etc. for loaders with a choice of dtype (so a collection made in one dtype is
    never resumed or topped up in another); nothing for fp32-only models (names unchanged)."""
    dtype = embedder.identity().get("dtype")
    return f", {dtype}" if dtype else ""


def _policy_text(policy: dict[str, Any]) -> str:
    """A short, stable description of how audio became one vector (compared on resume)."""
    if policy.get("kind") == "sliding-windows":
        return (f"sliding windows {policy['window_seconds']:g} s, hop {policy['hop_seconds']:g} s, "
                f"{policy['pooling']}")
    if policy.get("kind") == "yamnet-frames":
        return f"yamnet frames {policy['patch_seconds']:g} s / {policy['hop_seconds']:g} s, max pooled"
    return json.dumps(policy, sort_keys=True)


def open_pipeline(model: str, *, model_path: str | None = None, device: str = "cpu",
                  batch_size: int | None = None, cache: bool = True,
                  cache_dir: Path | None = None, dtype: str | None = None,
                  captioner_path: str | None = None, chunking: str = "fixed",
                  weights: bool = True) -> Pipeline:
    """The pipeline for ``--model`` (a registry name or ``two-stage:CAPTIONER+EMBEDDER``).

    ``chunking``: ``--chunking`` for a window model (:func:`reasonaudio.models.windowing.with_chunking`).
    ``weights=False``: a pipeline that only describes itself (name, identity, caches, what it
    renders) for a process that computes nothing, the Ray engine's driver: a model whose record
    has a describer is then not loaded (:func:`reasonaudio.models.registry.describe_model`);
    the others load as usual.

    In a two-stage pipeline ``model_path`` / ``batch_size`` are the embedder's and
    ``captioner_path`` the captioner's weights; ``device`` and ``dtype`` apply to both (``dtype``
    only where the model offers a choice)."""
    if is_two_stage(model):
        cap_name, emb_name = parse_two_stage(model)
        captioner = get_captioner(cap_name, model_path=captioner_path, device=device,
                                  dtype=dtype_for(cap_name, dtype) if cap_name in names() else None)
        # the captioner's windows are checked before the embedder loads: a refusal costs nothing
        with_chunking(getattr(captioner, "model", captioner), chunking, model)
        embedder = (load_model if weights else describe_model)(
            emb_name, model_path=model_path, device=device, batch_size=batch_size,
            dtype=dtype_for(emb_name, dtype))
        return TwoStagePipeline(captioner, embedder, cache, cache_dir)
    if captioner_path is not None:
        raise ModelError(f"--captioner-path is for two-stage:CAPTIONER+EMBEDDER models, not {model!r}")
    record = get_record(model)
    if record.kind == "captioner":
        raise ModelError(f"model {model!r} is a captioner: ingest it as two-stage:{model}+EMBEDDER, "
                         f"e.g. two-stage:{model}+minilm (weights with --captioner-path)")
    if not record.has_audio:
        raise ModelError(f"model {model!r} has no audio tower, so it cannot embed clips; as a text "
                         f"embedder use it in a two-stage pipeline, e.g. two-stage:oracle-caption+{model}")
    embedder = (load_model if weights else describe_model)(
        model, model_path=model_path, device=device, batch_size=batch_size, dtype=dtype)
    return AudioPipeline(with_chunking(embedder, chunking, model), cache, cache_dir)
