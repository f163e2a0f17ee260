"""Model ingest: clips -> vectors -> one Qdrant collection per model, cached and resumable.

Audio models (``clap``, ``yamnet``, ...): render each clip at the model's rate, hash the samples,
look the hash up in the on-disk embedding cache, run the misses through the audio tower in
fixed-shape batches (so a vector never depends on its batch neighbours), pool, upsert with the
DESIGN 4 payload into ``reasonaudio-<model>``. Two-stage pipelines
(``two-stage:CAPTIONER+EMBEDDER``): caption each clip (from metadata, or from YAMNet frame scores,
themselves cached by audio hash), embed the caption with the text model, upsert with the caption
in the payload.

Resumable and idempotent: point ids come from clip ids, :func:`reasonaudio.store.ingest.load_collection`
upserts only clips not yet stored, and the cache holds everything computed before an interruption.
After ``kill -9`` a rerun ends with exactly one point per clip and the same vectors as an
uninterrupted run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import re
import sqlite3
import threading
import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from reasonaudio.errors import DataError, ModelError
from reasonaudio.ingest.benchmark import Benchmark
from reasonaudio.ingest.spec import Clip
from reasonaudio.models.cache import cache_root
from reasonaudio.store.base import CollectionMeta, PointIn, Store, collection_name
from reasonaudio.store.ingest import corpus_fingerprint, load_collection
from reasonaudio.store.payload import clip_payload

TWO_STAGE = "two-stage:"
CACHE_SCHEMA = 1


# --- the embedding cache ----------------------------------------------------------------------

def audio_hash(wave: np.ndarray) -> str:
    """sha256 of the rendered float32 samples: the cache key of everything computed from audio."""
    return hashlib.sha256(np.ascontiguousarray(wave, dtype=np.float32).tobytes()).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def identity_digest(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _pack(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return zlib.compress(buf.getvalue(), 1)


def _unpack(blob: bytes) -> np.ndarray:
    return np.load(io.BytesIO(zlib.decompress(blob)), allow_pickle=False)


class EmbeddingCache:
    """Arrays on disk keyed by content hash, one SQLite file per (model, exact weights, policy).

    The namespace is a digest of the model's identity, so a new revision or window policy can
    never be served stale vectors. SQLite in WAL mode: a ``kill -9`` loses at most the rows not
    yet committed, never the file.
    """

    def __init__(self, label: str, identity: dict[str, Any], root: Path | None = None,
                 enabled: bool = True) -> None:
        self.enabled = enabled
        self.identity = identity
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")
        self.path = Path(root or cache_root()) / "embeddings" / f"{slug}-{identity_digest(identity)}.sqlite"
        self.hits = 0
        self.misses = 0
        self._pending: list[tuple[str, bytes]] = []
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()  # the render thread asks contains() while the main thread writes
        if enabled:
            self._open()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None,
                                 check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS arrays (k TEXT PRIMARY KEY, v BLOB NOT NULL)")
            want = json.dumps({"schema": CACHE_SCHEMA, "identity": self.identity}, sort_keys=True, default=str)
            row = db.execute("SELECT v FROM meta WHERE k='identity'").fetchone()
            if row is None:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('identity', ?)", (want,))
            elif row[0] != want:
                raise ModelError(f"{self.path}: embedding cache made for another model identity; "
                                 "delete the file")
        except sqlite3.DatabaseError as exc:
            raise ModelError(f"{self.path}: unreadable embedding cache ({exc}); delete the file") from None
        self._db = db

    def _blob(self, key: str) -> bytes | None:
        with self._lock:
            if self._db is None:
                return None
            row = self._db.execute("SELECT v FROM arrays WHERE k=?", (key,)).fetchone()
            if row is not None:
                return row[0]
            for k, blob in self._pending:
                if k == key:
                    return blob
            return None

    def contains(self, key: str) -> bool:
        """Whether ``key`` is cached (no hit counted; safe from the render thread)."""
        return self.enabled and self._blob(key) is not None

    def get(self, key: str) -> np.ndarray | None:
        blob = self._blob(key) if self.enabled else None
        if blob is None:
            self.misses += 1
            return None
        self.hits += 1
        return _unpack(blob)

    def put(self, key: str, array: np.ndarray) -> None:
        if self.enabled:
            packed = _pack(array)
            with self._lock:
                self._pending.append((key, packed))
            if len(self._pending) >= 256:
                self.commit()

    def commit(self) -> None:
        with self._lock:
            if self._db is None or not self._pending:
                return
            with contextlib.suppress(sqlite3.OperationalError):
                self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO arrays VALUES (?, ?)", self._pending)
            self._db.execute("COMMIT")
            self._pending.clear()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self.commit()
                self._db.close()
                self._db = None


# --- pipelines ----------------------------------------------------------------------------------

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
        self._renderer: Any = None
        self.lookahead = 8

    def identity(self) -> dict[str, Any]:
        raise NotImplementedError

    def meta(self, bench: Benchmark, limit: int | None) -> CollectionMeta:
        return CollectionMeta(model=self.name, revision=self.revision, dimension=self.dimension,
                              distance="cosine", pooling=self.pooling,
                              corpus_sha256=corpus_fingerprint(bench),
                              extra={"identity": self.identity(), "limit": limit})

    def vectors(self, clips: Sequence[Clip], done: Callable[[str], None]) -> dict[str, tuple[np.ndarray, dict[str, Any]]]:
        """clip id -> (vector, extra payload); ``done(clip_id)`` as each finishes."""
        raise NotImplementedError

    # rendering at the model's own rate (atoms are resampled by the renderer, once per atom)
    def attach_renderer(self, renderer: Any) -> None:
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
        from concurrent.futures import ThreadPoolExecutor

        def job(clip: Clip) -> tuple[list[Any] | None, str]:
            wave = self.render(clip, sample_rate)
            digest = audio_hash(wave)
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

    def close(self) -> None:
        for cache in self.caches:
            cache.close()

    @property
    def needs_audio(self) -> bool:
        return True


def _stream_rows(pipeline: Pipeline, embedder: Any, items: Iterator[tuple[Any, list[Any]]]
                 ) -> Iterator[tuple[Any, np.ndarray]]:
    from reasonaudio.models.batching import FixedBatcher

    batcher = FixedBatcher(_timed(embedder.run_units, pipeline.timings), embedder.unit_batch,
                           embedder.pad_unit, embedder.unit_key)
    for key, units in items:
        yield from batcher.add(key, units)
    yield from batcher.flush()
    pipeline.timings.padded_units += batcher.padded_units


class AudioPipeline(Pipeline):
    def __init__(self, embedder: Any, cache_enabled: bool = True, cache_dir: Path | None = None) -> None:
        super().__init__()
        self.embedder = embedder
        self.name = embedder.name
        self.dimension = embedder.dimension
        self.revision = embedder.revision
        policy = embedder.policy()
        self.pooling = _policy_text(policy)
        self.cache = EmbeddingCache(f"{self.name}-audio", embedder.identity(), cache_dir, cache_enabled)
        self.caches = [self.cache]
        self.rows_cache: EmbeddingCache | None = None
        if getattr(embedder, "cache_rows", False):  # YAMNet: frame scores, shared with its captioner
            spec = getattr(embedder, "rows_cache_spec", None)  # `trained`: YAMNet's shared frames
            label, rows_identity = spec() if spec else (f"{self.name}-frames", embedder.identity())
            self.rows_cache = EmbeddingCache(label, rows_identity, cache_dir, cache_enabled)
            self.caches.append(self.rows_cache)

    def identity(self) -> dict[str, Any]:
        return self.embedder.identity()

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
    def __init__(self, captioner: Any, embedder: Any, cache_enabled: bool = True,
                 cache_dir: Path | None = None) -> None:
        super().__init__()
        self.captioner = captioner
        self.embedder = embedder
        self.name = f"{TWO_STAGE}{captioner.name}+{embedder.name}"
        self.dimension = embedder.dimension
        cap_id = captioner.identity()
        self.revision = f"{captioner.name}-{identity_digest(cap_id)[:8]}+{embedder.revision}"
        self.pooling = f"caption -> {embedder.name} text tower"
        self.text_cache = EmbeddingCache(f"{embedder.name}-text", embedder.identity(), cache_dir, cache_enabled)
        self.caches = [self.text_cache]
        self.frame_cache: EmbeddingCache | None = None
        if captioner.needs_audio:
            self.frame_cache = EmbeddingCache(f"{captioner.tagger.name}-frames", captioner.tagger.identity(),
                                              cache_dir, cache_enabled)
            self.caches.append(self.frame_cache)

    @property
    def needs_audio(self) -> bool:
        return bool(self.captioner.needs_audio)

    def identity(self) -> dict[str, Any]:
        return {"pipeline": self.name, "captioner": self.captioner.identity(),
                "embedder": self.embedder.identity()}

    def captions(self, clips: Sequence[Clip]) -> dict[str, str]:
        if not self.captioner.needs_audio:
            return {c.id: self.captioner.caption(c) for c in clips}
        assert self.frame_cache is not None
        tagger = self.captioner.tagger
        out: dict[str, str] = {}
        hashes: dict[str, str] = {}

        def items() -> Iterator[tuple[str, list[Any]]]:
            for clip, units, h in self.rendered(clips, tagger.sample_rate, tagger.audio_units,
                                                self.frame_cache.contains):
                hashes[clip.id] = h
                rows = self.frame_cache.get(h)
                if rows is not None:
                    out[clip.id] = self.captioner.caption_from_rows(rows)
                    continue
                yield clip.id, units if units is not None else tagger.audio_units(
                    self.render(clip, tagger.sample_rate))

        for cid, rows in _stream_rows(self, tagger, items()):
            self.frame_cache.put(hashes[cid], rows)
            out[cid] = self.captioner.caption_from_rows(rows)
        self.frame_cache.commit()
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


def _policy_text(policy: dict[str, Any]) -> str:
    """A short, stable description of how audio became one vector (compared on resume)."""
    if policy.get("kind") == "sliding-windows":
        return (f"sliding windows {policy['window_seconds']:g} s, hop {policy['hop_seconds']:g} s, "
                f"{policy['pooling']}")
    if policy.get("kind") == "yamnet-frames":
        return f"yamnet frames {policy['patch_seconds']:g} s / {policy['hop_seconds']:g} s, max pooled"
    return json.dumps(policy, sort_keys=True)


def parse_two_stage(name: str) -> tuple[str, str]:
    body = name[len(TWO_STAGE):]
    captioner, plus, embedder = body.partition("+")
    if not plus or not captioner or not embedder:
        raise ModelError(f"two-stage model {name!r} must look like two-stage:CAPTIONER+EMBEDDER, "
                         "e.g. two-stage:oracle-caption+minilm")
    return captioner, embedder


def open_pipeline(model: str, *, model_path: str | None = None, device: str = "cpu",
                  batch_size: int | None = None, cache: bool = True,
                  cache_dir: Path | None = None) -> Pipeline:
    """The pipeline for ``--model`` (a registry name or ``two-stage:CAPTIONER+EMBEDDER``)."""
    from reasonaudio.models.registry import get_record, load_model

    if model.startswith(TWO_STAGE):
        from reasonaudio.ingest.captions import get_captioner

        cap_name, emb_name = parse_two_stage(model)
        record = get_record(emb_name)
        if not record.has_text:
            raise ModelError(f"{model}: {emb_name!r} has no text tower; use a text model such as minilm")
        captioner = get_captioner(cap_name)
        embedder = load_model(emb_name, model_path=model_path, device=device, batch_size=batch_size)
        return TwoStagePipeline(captioner, embedder, cache, cache_dir)
    record = get_record(model)
    if not record.has_audio:
        raise ModelError(f"model {model!r} has no audio tower, so it cannot embed clips; as a text "
                         f"embedder use it in a two-stage pipeline, e.g. two-stage:oracle-caption+{model}")
    embedder = load_model(model, model_path=model_path, device=device, batch_size=batch_size)
    return AudioPipeline(embedder, cache, cache_dir)


def model_collection(model: str) -> str:
    return collection_name(model)


def fetch_stored(store: Store, collection: str, clip_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Stored vectors of these clips (for checks and benchmarks)."""
    from reasonaudio.retrievers.vector import fetch_vectors

    return fetch_vectors(store, collection, clip_ids)


# --- the ingest -----------------------------------------------------------------------------------

@dataclass
class IngestSummary:
    model: str
    collection: str
    backend: str
    clips: int
    """clips the collection must hold after this run"""
    already_stored: int
    upserted: int
    embedded: int
    cache_hits: int
    wall_s: float
    render_s: float
    render_wait_s: float
    units_s: float
    model_s: float
    model_calls: int
    padded_units: int
    resumed: bool
    adjustments: dict[str, int] = field(default_factory=dict)

    @property
    def clips_per_s(self) -> float:
        return self.upserted / self.wall_s if self.wall_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["clips_per_s"] = round(self.clips_per_s, 3)
        return out


@contextlib.contextmanager
def _quiet_render_log() -> Iterator[None]:
    """Renderer adjustments are counted and summarised, not printed once per atom."""
    log = logging.getLogger("reasonaudio.render")
    before = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(before)


@contextlib.contextmanager
def blas_single_thread() -> Iterator[None]:
    """numpy's OpenBLAS on one thread while ingesting: its spinning worker threads competed with
    the model's on 2 cores (YAMNet ingest/bare went from ~0.66 to ~0.9). torch (MKL + OpenMP)
    and onnxruntime keep their own thread pools."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency of scikit-learn and declared
        yield
        return
    with threadpool_limits(limits={"openblas": 1}):
        yield


def _renderer_for(bench: Benchmark, bank_spec: str | None) -> Any:
    from reasonaudio.ingest.atoms import open_bank
    from reasonaudio.ingest.render import Renderer, RenderParams

    spec = bank_spec or (bench.manifest.get("parameters") or {}).get("atoms")
    if not spec:
        raise DataError(f"{bench.root}/manifest.json: parameters.atoms does not name the atom bank; "
                        "pass --atoms")
    return Renderer(open_bank(str(spec)), RenderParams.from_json(bench.manifest.get("render")))


def ingest_model(bench: Benchmark, store: Store, model: str, *, model_path: str | None = None,
                 device: str = "cpu", batch_size: int | None = None, limit: int | None = None,
                 force: bool = False, cache: bool = True, cache_dir: Path | None = None,
                 bank_spec: str | None = None, upsert_batch: int | None = None, console: Any = None,
                 progress: bool = True, pipeline: Pipeline | None = None) -> IngestSummary:
    """Make ``reasonaudio-<model>`` hold one point per clip (the first ``limit`` clips, plus any
    already stored), computing only what is neither stored nor cached.

    ``upsert_batch``: clips per upsert (default 256 for audio models, 1024 for text pipelines,
    whose padded last batches per length class cost more); every computed vector is cached as it
    completes, so a larger batch loses nothing on interruption."""
    if limit is not None and limit < 1:
        raise DataError(f"--limit must be >= 1, got {limit}")
    t0 = time.perf_counter()
    pipe = pipeline or open_pipeline(model, model_path=model_path, device=device,
                                     batch_size=batch_size, cache=cache, cache_dir=cache_dir)
    name = collection_name(pipe.name)
    clips = bench.clips
    wanted = clips if limit is None else clips[:limit]
    if limit is not None and store.exists(name) and not force:
        present = store.existing_ids(name, [c.id for c in clips])  # never shrink a collection
        keep = {c.id for c in wanted} | present
        wanted = [c for c in clips if c.id in keep]
    by_id = {c.id: c for c in wanted}
    renderer = pipe._renderer
    if pipe.needs_audio and renderer is None:
        renderer = _renderer_for(bench, bank_spec)
        pipe.attach_renderer(renderer)

    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    from rich.text import Text

    class _Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f} clips/s" if speed else "- clips/s")

    state = {"base": 0, "in_batch": 0}
    with contextlib.ExitStack() as stack:
        stack.enter_context(_quiet_render_log())
        stack.enter_context(blas_single_thread())
        stack.callback(pipe.close)
        bar = stack.enter_context(Progress(
            TextColumn(f"ingest {pipe.name}"), BarColumn(), MofNCompleteColumn(), _Rate(),
            TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn(),
            console=console, disable=not progress, transient=False))
        task = bar.add_task("ingest", total=len(wanted))

        def sync(done: int, total: int) -> None:
            state["base"], state["in_batch"] = done, 0
            bar.update(task, completed=done)

        def one_done(_cid: str) -> None:
            state["in_batch"] += 1
            bar.update(task, completed=state["base"] + state["in_batch"])

        def make_points(ids: Sequence[str]) -> list[PointIn]:
            vecs = pipe.vectors([by_id[i] for i in ids], one_done)
            points = []
            for cid in ids:
                vec, extra = vecs[cid]
                payload = clip_payload(by_id[cid])
                payload.update(extra)
                points.append(PointIn(cid, [float(x) for x in vec], payload))
            return points

        result = load_collection(store, name, pipe.meta(bench, limit), [c.id for c in wanted],
                                 make_points, force=force, index_labels=bench.labels,
                                 batch_size=upsert_batch or (256 if pipe.needs_audio else 1024),
                                 progress=sync)
    hits = sum(c.hits for c in pipe.caches[:1])
    return IngestSummary(
        model=pipe.name, collection=name, backend=store.backend, clips=result.points,
        already_stored=result.points - result.upserted, upserted=result.upserted,
        embedded=pipe.timings.embedded, cache_hits=hits, wall_s=time.perf_counter() - t0,
        render_s=pipe.timings.render_s, render_wait_s=pipe.timings.render_wait_s,
        units_s=pipe.timings.units_s,
        model_s=pipe.timings.model_s,
        model_calls=pipe.timings.model_calls, padded_units=pipe.timings.padded_units,
        resumed=result.resumed,
        adjustments=dict(sorted(renderer.adjustments.items())) if renderer is not None else {})


def print_ingest_summary(console: Any, summary: IngestSummary) -> None:
    from rich.table import Table

    table = Table(title=f"ingest {summary.model} -> {summary.collection} ({summary.backend})",
                  show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    rows = [
        ("clips in the collection", f"{summary.clips:,}"),
        ("already stored (skipped)", f"{summary.already_stored:,}"),
        ("upserted now", f"{summary.upserted:,}"),
        ("embedded now (model run)", f"{summary.embedded:,}"),
        ("served by the embedding cache", f"{summary.cache_hits:,}"),
        ("wall time", f"{summary.wall_s:.1f} s"),
        ("clips/s (upserted / wall)", f"{summary.clips_per_s:.1f}"),
        ("  rendering (background thread)", f"{summary.render_s:.1f} s"),
        ("  model inputs (background thread)", f"{summary.units_s:.1f} s"),
        ("  waiting for renders", f"{summary.render_wait_s:.1f} s"),
        ("  model calls", f"{summary.model_s:.1f} s ({summary.model_calls} calls, "
                          f"{summary.padded_units} padding units)"),
    ]
    if summary.resumed:
        rows.append(("resumed an interrupted ingest", "yes"))
    for kind, n in summary.adjustments.items():
        rows.append((f"render adjustments: {kind}", str(n)))
    for what, value in rows:
        table.add_row(what, value)
    console.print(table)
