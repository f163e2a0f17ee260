"""``--engine ray``: the model ingest and ``bench detect``'s frame pass scheduled on Ray instead
of one process.

The same per-batch functions as the local engine, another scheduler:

    clip ids -> render (CPU tasks, under the benchmark's condition) -> model forward (an actor
    pool: ``workers`` actors, each ``gpus_per_worker`` GPUs, kept for later jobs of the same
    model: :mod:`reasonaudio.ingest.ray_pool`) -> vectors (+ captions) or frame rows -> store
    writes (ingest) or the driver (frames)

Each actor opens the same :class:`~reasonaudio.ingest.pipelines.Pipeline` the local engine
uses (:func:`open_pipeline` with the same arguments, or the detect reader's
:class:`~reasonaudio.ingest.frame_rows.FramePipeline`) and calls it on each batch, with a
renderer that serves the samples the render tasks made. The render tasks render with the local
engine's renderer, reinstated per worker from the benchmark and its condition
(:func:`~reasonaudio.render.clips.bench_renderer`: a ``ConditionRenderer`` for ``snrNN`` or
``long``). So vectors and captions are bit-identical
to the local engine's (fixed-shape model batches: a vector never depends on its neighbours), the
caches fill by audio hash exactly as a local run fills them, and the collection's
``loading``/``complete`` record, resume and the final count check stay
:func:`reasonaudio.store.collections.load_collection`'s: this engine only supplies its
``make_points``.

Writes: to the embedded store through the driver (one writer); to a Qdrant server or cluster
(``--qdrant-url``) by the actors themselves, in batches, the driver receiving only clip ids.

Failures: a batch whose forward raises is retried clip by clip (``retries`` tries each); a clip
that still fails is reported by id at the end (its point is not written, the collection stays
``loading``, a rerun retries it). An actor that dies mid-batch (killed, out of memory) is
restarted by Ray and the batch rerun on it; clips written before a driver dies are kept and a
rerun computes only the missing ones, mostly from the caches.

Ray is imported only here and only when a job starts (the ``ray`` extra).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import socket
import sys
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterable, Iterator, Mapping, Sequence, cast

import numpy as np

from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.errors import DataError, ModelError, echo, ReasonAudioError, one_line
from reasonaudio.ingest.pipelines import Pipeline, open_pipeline
from reasonaudio.ingest.ray_pool import actor_pool, drop_pool, run_blocks
from reasonaudio.models.registry import load_model
from reasonaudio.models.yamnet_embedder import FrameTagger, YamnetEmbedder
from reasonaudio.runtime import blas_single_thread, usable_cores
from reasonaudio.store.base import PointIn, Store
from reasonaudio.store.open import open_store, resolve_backend
from reasonaudio.store.payload import clip_payload

if TYPE_CHECKING:
    from reasonaudio.render.clips import ClipRenderer
    from reasonaudio.ingest.frame_rows import FrameStats

ENGINES = ("local", "ray")
JOIN_TIMEOUT_S = 5.0
"""how long ``--ray-address`` may take to accept a connection before the job is refused (Ray's own
join waits on GCS time-outs for minutes)"""
DEFAULT_ENGINE = "local"
FAILED_SHOWN = 10
"""Clip ids a failure report names before it says how many more."""
TIMINGS = ("batches", "actor_compute_s", "actor_commit_s", "driver_wait_s", "driver_rows_s")
"""The job's counters: Ray batches computed, the actors' seconds in the model (render, forward,
pooling) and in cache commits (summed over actors), the driver's seconds waiting for the next
clip (Ray's scheduling, transport and the actors' work it waits for) and turning clips into
points (decoding, payloads, bookkeeping: the store writes are load_collection's)."""
AUDIO_BATCH = 16
"""clips per Ray batch when the model hears audio (the size before issue 25: 16 ten-second 16 kHz
waves are 10 MB a block, a long-condition clip several times that; not measured larger);
when it reads captions: the local engine's upsert batch for text pipelines
(:data:`reasonaudio.ingest.run.TEXT_UPSERT_BATCH`), so both engines pad alike"""


@dataclass(frozen=True)
class RayOptions:
    """How the Ray job is laid out (docs/scale.md)."""

    address: str | None = None
    """an existing cluster (``ray://...`` or ``HOST:PORT``, ``auto``); ``None``: a local Ray for the run"""
    workers: int = 1
    """actors in the model pool (one model copy each)"""
    gpus_per_worker: float = 0.0
    cpus_per_worker: float | None = None
    """logical CPUs per actor; ``None``: every usable core shared out over the actors on a local
    Ray (an actor's torch runs on as many threads as it has CPUs: Ray sets ``OMP_NUM_THREADS``),
    one on a cluster (:meth:`resolved`)"""
    render_cpus: float = 0.5
    """logical CPUs a render task reserves (fractional: renders share cores with the actors)"""
    batch_clips: int | None = None
    """clips per Ray batch (a block travelling render -> actor -> driver); ``None``: chosen per
    job (:meth:`batch_for`)"""
    retries: int = 2
    """tries per clip after its batch failed, before the clip is reported"""
    local_cpus: int | None = None
    """a local Ray only: logical CPUs (default: the usable cores)"""
    object_store_mb: int = 500
    """a local Ray only: the object store's size"""
    worker_env: dict[str, str] = field(default_factory=dict)
    """extra environment for the actors (e.g. a cache folder on a node's local disk)"""

    def resolved(self) -> "RayOptions":
        """These options with ``cpus_per_worker`` chosen when it was left to the engine: on a
        local Ray each of the ``workers`` actors gets an equal share of the usable cores (at
        least one), so one actor's torch uses every core, as the local engine's does; on a
        cluster one CPU (the model runs on its GPU, or pass ``--cpus-per-worker``)."""
        if self.cpus_per_worker is not None:
            return self
        if self.address:
            return replace(self, cpus_per_worker=1.0)

        cores = self.local_cpus or usable_cores()
        return replace(self, cpus_per_worker=float(max(1, cores // max(1, self.workers))))

    def validate(self) -> None:
        if self.workers < 1:
            raise DataError(f"--workers must be >= 1, got {self.workers}")
        if self.gpus_per_worker < 0:
            raise DataError(f"--gpus-per-worker must be >= 0, got {self.gpus_per_worker:g}")
        if self.cpus_per_worker is not None and self.cpus_per_worker <= 0:
            raise DataError(f"--cpus-per-worker must be > 0, got {self.cpus_per_worker:g}")
        if self.batch_clips is not None and self.batch_clips < 1:
            raise DataError(f"ray batch size must be >= 1, got {self.batch_clips}")
        if self.retries < 0:
            raise DataError(f"ray retries must be >= 0, got {self.retries}")
        if not self.address:  # a local Ray runs on this machine's cores: never more actors

            cores = self.local_cpus or usable_cores()
            cpus = self.resolved().cpus_per_worker or 1.0
            if self.workers * cpus > cores:
                raise DataError(f"--workers {self.workers} x --cpus-per-worker {cpus:g} need "
                                f"{self.workers * cpus:g} CPUs; a local Ray has this machine's {cores} "
                                f"usable CPU(s) (use fewer --workers, or join a cluster with "
                                "--ray-address)")

    def batch_for(self, clips: int, needs_audio: bool) -> int:
        """Clips per Ray batch for a job over ``clips`` clips: ``batch_clips`` when given, else
        :data:`AUDIO_BATCH` when the model hears audio (a block of waves: the object store holds
        a few) and the local engine's text upsert batch when it reads captions (every batch ends
        in one padded model call per caption length class, so small batches pay mostly
        padding), at most an equal share of the clips per actor (every actor gets work)."""
        from reasonaudio.ingest.run import TEXT_UPSERT_BATCH

        if self.batch_clips is not None:
            return self.batch_clips
        size = AUDIO_BATCH if needs_audio else TEXT_UPSERT_BATCH
        return max(1, min(size, math.ceil(clips / self.workers)))

    def blocks_for(self, clips: int, needs_audio: bool) -> int:
        """How many Ray blocks a job over ``clips`` clips is cut into: one block per batch of at
        most :meth:`batch_for` clips, their number rounded up to a multiple of the actors, so
        the blocks are of (nearly) one size and every actor gets as many (an actor computes a
        whole block as one task; blocks bundled to fill a batch gave one of two actors six
        batches and the other four: docs/scale.md)."""
        if clips <= 0:
            return 1
        blocks = math.ceil(clips / self.batch_for(clips, needs_audio))
        return min(clips, self.workers * math.ceil(blocks / self.workers))

    def needed_cpus(self) -> float:
        """Logical CPUs the job needs at once: the actor pool plus one render task."""
        return self.workers * (self.resolved().cpus_per_worker or 1.0) + self.render_cpus

    def to_json(self) -> dict[str, Any]:
        return {"address": self.address or "local", "workers": self.workers,
                "gpus_per_worker": self.gpus_per_worker,
                "cpus_per_worker": self.resolved().cpus_per_worker, "render_cpus": self.render_cpus,
                "batch_clips": self.batch_clips or "auto", "retries": self.retries}


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise DataError(f"unknown --engine {engine!r}; expected one of {', '.join(ENGINES)}")
    return engine


def ray_engine_from_cli(engine: str, workers: int, gpus_per_worker: float, cpus_per_worker: float | None,
                        address: str | None, backend: str | None, url: str | None) -> "RayEngine | None":
    """The ``--engine`` flags -> the engine (``None``: local). Ray flags without ``--engine ray``
    are an error, not ignored."""
    if check_engine(engine) == "local":
        given = [flag for flag, on in (("--workers", workers != 1), ("--gpus-per-worker", gpus_per_worker != 0),
                                        ("--cpus-per-worker", cpus_per_worker is not None),
                                        ("--ray-address", address is not None)) if on]
        if given:
            raise DataError(f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} --engine ray")
        return None
    kind, server = resolve_backend(backend, url)
    return RayEngine(RayOptions(address=address, workers=workers, gpus_per_worker=gpus_per_worker,
                                cpus_per_worker=cpus_per_worker),
                     server_url=server if kind == "server" else None)


def check_reachable(address: str, timeout: float = JOIN_TIMEOUT_S) -> None:
    """A DataError, within ``timeout`` seconds, unless ``address`` (``HOST:PORT`` or
    ``ray://HOST:PORT``; ``auto`` is Ray's own lookup) accepts a TCP connection."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = hostport.rstrip("/").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise DataError(f"--ray-address {echo(address)}: expected HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        reason = (f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError)
                  else exc.strerror or str(exc))
        raise DataError(f"--ray-address {echo(address)}: cannot reach {echo(host)}:{port} "
                        f"({reason}); is the Ray head running?") from None


LOCAL_SYSTEM_CONFIG = {"worker_niceness": 0}
"""what a local Ray this engine starts changes in Ray's defaults: its workers run at the command's
own priority. Ray's default (nice 15 above it) starves the model actors beside any other work on
the machine, the driver's own included: a 12-clip Ray ingest took 8 times as long beside one
busy process (the test suite's other worker)."""


def _import_ray() -> ModuleType:
    try:
        import ray  # the `ray` extra
    except ImportError:
        raise ModelError('--engine ray needs Ray: pip install "reasonaudio[ray]" '
                         '(or pip install "ray")') from None
    return ray


@contextlib.contextmanager
def ray_session(options: RayOptions) -> Iterator[Any]:
    """Ray for one job: joins ``options.address``, reuses a Ray this process already started, or
    starts a local one (``local_cpus`` CPUs, a small object store, no dashboard) and shuts it
    down afterwards (its actor pool with it)."""
    ray = _import_ray()
    started = False
    logging.getLogger("ray").setLevel(logging.ERROR)  # library code is silent: Ray's INFO lines are not ours
    if not ray.is_initialized():
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
        kwargs: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                      logging_level=logging.ERROR, configure_logging=False)
        env = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"), **options.worker_env}
        kwargs["runtime_env"] = {"env_vars": env}
        try:
            if options.address:
                check_reachable(options.address)
                ray.init(address=options.address, **kwargs)
            else:
                ray.init(num_cpus=options.local_cpus or max(usable_cores(), math.ceil(options.needed_cpus())),
                         object_store_memory=options.object_store_mb * 1024 * 1024,
                         _system_config=LOCAL_SYSTEM_CONFIG, **kwargs)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            where = options.address or "a local Ray"
            raise DataError(f"--engine ray: cannot start or join {where} ({exc})") from None
        started = True
    try:
        _check_resources(ray.cluster_resources(), options)
    except DataError:
        if started:
            ray.shutdown()
        raise
    try:
        yield ray
    finally:
        if started:
            drop_pool()  # its actors end with this Ray
            ray.shutdown()


def _check_resources(have: dict[str, float], options: RayOptions) -> None:
    """A pool the cluster cannot hold would wait forever: say so instead."""
    cpus, gpus = float(have.get("CPU", 0)), float(have.get("GPU", 0))
    if cpus < options.needed_cpus():
        raise DataError(f"--engine ray: the cluster has {cpus:g} CPUs; --workers {options.workers} x "
                        f"--cpus-per-worker {options.cpus_per_worker:g} plus a render task "
                        f"({options.render_cpus:g}) need {options.needed_cpus():g}")
    if gpus < options.workers * options.gpus_per_worker:
        raise DataError(f"--engine ray: the cluster has {gpus:g} GPUs; --workers {options.workers} x "
                        f"--gpus-per-worker {options.gpus_per_worker:g} need "
                        f"{options.workers * options.gpus_per_worker:g}")


# --- the render stage: CPU tasks ----------------------------------------------------------------

@lru_cache(maxsize=4)
def _worker_bench(root: str, condition: str) -> BenchmarkView:
    """The benchmark as the driver reads it: loaded from ``root`` (the driver verified it) and
    read under ``condition``, so renders, collections and caches follow it as in a local run."""
    return load_benchmark(root, verify=False).with_condition(condition)


@lru_cache(maxsize=4)
def _worker_renderer(root: str, condition: str, bank_spec: str | None, job: str = "") -> ClipRenderer:
    """The local engine's renderer, reinstated in a worker: :func:`bench_renderer` of the
    benchmark under its condition (a ConditionRenderer with the same beds and seed when the
    condition is not ``clean``)."""
    from reasonaudio.render.clips import bench_renderer

    logging.getLogger("reasonaudio.render").setLevel(logging.ERROR)  # counted, not printed
    return bench_renderer(_worker_bench(root, condition), bank_spec)


def render_batch(batch: dict[str, np.ndarray], *, root: str, condition: str, bank_spec: str | None,
                 sample_rate: int, job: str = "") -> dict[str, np.ndarray]:
    """A block ``{"id"}`` -> ``{"id", "wave" (float32 bytes), "adjustments" (JSON)}``:
    each clip rendered at ``sample_rate`` under the job's condition."""
    bench = _worker_bench(root, condition)
    # a renderer per job (``job``: its token): its notes are this job's, as a local run's are,
    # though a worker process renders for many jobs
    renderer = _worker_renderer(root, condition, bank_spec, job)
    by_id = bench.clip_by_id
    before = set(renderer.noted)
    ids = [str(i) for i in batch["id"]]
    waves = [renderer.render(replace(by_id[i], sample_rate=sample_rate)).astype(np.float32, copy=False)
             .tobytes() for i in ids]
    # the (kind, subject) pairs this batch adjusted: the driver takes their union, so an atom
    # levelled by two workers counts once, as in a local run
    new = sorted(renderer.noted - before)
    notes = [json.dumps(new)] + ["[]"] * (len(ids) - 1)
    return {"id": np.array(ids, dtype=object), "wave": np.array(waves, dtype=object),
            "adjustments": np.array(notes[: len(ids)], dtype=object)}


class _ServedRenderer:
    """A renderer that serves the samples the render stage made for this batch (and renders
    anything else itself). Everything else (``bank``, ``params``, a condition's
    ``condition_identity``, the notes) is the real renderer's, so the audio-hash index keys are
    the local engine's."""

    def __init__(self, real: ClipRenderer) -> None:
        self.real = real
        self.waves: dict[tuple[str, int], np.ndarray] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def render(self, clip: Clip) -> np.ndarray:
        wave = self.waves.get((clip.id, clip.sample_rate))
        return wave if wave is not None else self.real.render(clip)


# --- the model stage: actors that keep their model across jobs -----------------------------------

class _PoolActor:
    """What every model actor shares: one model copy (loaded by the first batch it is given and
    kept for the actor's life, so the next job of the same model in this process does not load
    it again: :mod:`reasonaudio.ingest.ray_pool`), and per job the benchmark under the job's
    condition, a renderer serving the render tasks' samples, clip-by-clip retries of a failed
    batch, caches committed after every batch, and its start-up report. A subclass says how its
    model opens (:meth:`_open`), what one batch computes (:meth:`_compute`) and how a result
    travels (:meth:`_columns`)."""

    def __init__(self, **model: Any) -> None:
        self.model_args = model
        self.pipe: Any = None
        self.caches: dict[str, Any] | None = None
        """the caches the pipe writes: a job's ``caches`` (``cache``, ``cache_dir``), not part of
        the pool's key, so a job with other caches reuses the loaded model"""
        self.job: dict[str, Any] | None = None
        self.startup: dict[str, Any] | None = None
        self._stack = contextlib.ExitStack()
        self._job_stack = contextlib.ExitStack()

    def _open(self) -> tuple[Any, dict[str, Any]]:
        """This actor's model (a pipeline over the caches of :attr:`caches`) and its identity."""
        raise NotImplementedError

    def _cache_args(self) -> tuple[bool, Path | None]:
        """(cache enabled, cache folder) of :attr:`caches`, as a pipeline takes them."""
        assert self.caches is not None
        folder = self.caches["cache_dir"]
        return bool(self.caches["cache"]), Path(folder) if folder else None

    def _configure(self, job: dict[str, Any]) -> None:
        """Make this actor serve ``job`` (root, condition, bank_spec, sample_rate, retries, and
        what a subclass adds): the model opens on the first job, the benchmark and renderer per
        job; the job's first batch reports how the actor started (``reused``: the model was
        already loaded by an earlier job)."""
        t0, started = time.perf_counter(), time.time()
        reused = self.pipe is not None
        caches = job["caches"]
        if not reused:
            self._stack.enter_context(blas_single_thread())
            self.caches = caches
            self.pipe, identity = self._open()
            self._stack.callback(lambda: self.pipe.close())  # whichever pipe serves last
            self.identity = _identity_digest(identity)
        elif caches != self.caches:  # the loaded model over this job's caches
            self.pipe.close()
            self.caches = caches
            self.pipe = self.pipe.with_caches(*self._cache_args())
        self._job_stack.close()
        self._job_stack = contextlib.ExitStack()
        root, condition, bank_spec = job["root"], job["condition"], job["bank_spec"]
        self.bench = _worker_bench(root, condition)
        self.served: _ServedRenderer | None = None
        if self.pipe.needs_audio:
            self.served = _ServedRenderer(_worker_renderer(root, condition, bank_spec))
            self.pipe.attach_renderer(self.served)
        self.sample_rate, self.retries = job["sample_rate"], job["retries"]
        self._job_opened(job)
        self.job = job
        self.startup = {**_actor_startup(t0, started), "identity": self.identity, "reused": reused}

    def _job_opened(self, job: dict[str, Any]) -> None:
        """What a subclass opens per job (a server store)."""

    def _compute(self, clips: list[Clip]) -> dict[str, Any]:
        raise NotImplementedError

    def _counts(self) -> dict[str, int]:
        """Counters the driver adds up (a difference per batch)."""
        return {}

    def _tried(self, clips: list[Clip]) -> tuple[dict[str, Any], dict[str, str]]:
        try:
            return self._compute(clips), {}
        except Exception as exc:  # noqa: BLE001 - retried clip by clip, then reported by id
            first = _describe(exc)
        out: dict[str, Any] = {}
        failed: dict[str, str] = {}
        for clip in clips:
            problem = first
            for _ in range(self.retries):
                try:
                    out.update(self._compute([clip]))
                    break
                except Exception as exc:  # noqa: BLE001
                    problem = _describe(exc)
            else:
                failed[clip.id] = problem
        return out, failed

    def _batch(self, batch: dict[str, np.ndarray]) -> tuple[list[str], dict[str, Any], dict[str, str],
                                                            dict[str, Any]]:
        ids = [str(i) for i in batch["id"]]
        clips = [self.bench.clip_by_id[i] for i in ids]
        if self.served is not None:
            self.served.waves = {(i, int(self.sample_rate or 0)): np.frombuffer(w, dtype=np.float32)
                                 for i, w in zip(ids, batch["wave"])}
        before = self._counts()
        t0 = time.perf_counter()
        results, failed = self._tried(clips)
        t1 = time.perf_counter()
        if self.served is not None:
            self.served.waves = {}
        for cache in self.pipe.caches:  # an actor may be stopped without a goodbye: keep its work
            cache.commit()
        stats: dict[str, Any] = {k: v - before.get(k, 0) for k, v in self._counts().items()}
        stats["compute_s"], stats["commit_s"] = t1 - t0, time.perf_counter() - t1
        if self.startup is not None:  # a job's first batch here says how this actor started it
            stats["startup"], self.startup = self.startup, None
        return ids, results, failed, stats

    def run(self, job: dict[str, Any], batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """One batch of ``job`` -> its rows: ids, the subclass's columns, errors, the batch's
        counts (on its first row) and the render notes."""
        if job != self.job:
            self._configure(job)
        ids, results, failed, stats = self._batch(batch)
        columns = self._columns(ids, results)
        notes = [json.dumps(stats)] + ["{}"] * (len(ids) - 1)
        out = {"id": np.array(ids, dtype=object), **columns,
               "error": np.array([failed.get(cid, "") for cid in ids], dtype=object),
               "stats": np.array(notes, dtype=object)}
        if "adjustments" in batch:
            out["adjustments"] = batch["adjustments"]
        return out

    def _columns(self, ids: list[str], results: dict[str, Any]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._job_stack.close()
            self._stack.close()


class EmbedActor(_PoolActor):
    """One model copy of an ingest: a rendered batch -> vectors, captions, failures. Model
    arguments: ``pipeline_args`` (:func:`open_pipeline`'s but its caches) and ``pipeline_factory``
    (called with the caches too); a job adds ``caches``, ``collection`` and ``server_url``."""

    def _open(self) -> tuple[Any, dict[str, Any]]:
        cache, cache_dir = self._cache_args()
        pipe = (self.model_args.get("pipeline_factory") or open_pipeline)(
            **self.model_args["pipeline_args"], cache=cache, cache_dir=cache_dir)
        return pipe, pipe.identity()

    def _job_opened(self, job: dict[str, Any]) -> None:
        self.collection = job["collection"]
        self.store = None
        if job["server_url"]:
            self.store = self._job_stack.enter_context(open_store(job["root"], "server", job["server_url"]))

    def _compute(self, clips: list[Clip]) -> dict[str, Any]:
        return self.pipe.vectors(clips, lambda _cid: None)

    def _counts(self) -> dict[str, int]:
        return {"embedded": self.pipe.timings.embedded,
                "cache_hits": sum(c.hits for c in self.pipe.caches[:1])}

    def _columns(self, ids: list[str], vecs: dict[str, Any]) -> dict[str, np.ndarray]:
        written = False
        if self.store is not None:  # a server: the actor writes its own batch
            points = [clip_point(self.bench.clip_by_id[cid], *vecs[cid]) for cid in ids if cid in vecs]
            if points:
                self.store.upsert(self.collection, points)
            written = True
        rows_vec, rows_extra = [], []
        for cid in ids:
            if cid in vecs and not written:
                vec, extra = vecs[cid]
                rows_vec.append(np.asarray(vec, dtype=np.float32).tobytes())
                rows_extra.append(json.dumps(extra, sort_keys=True))
            else:
                rows_vec.append(b"")
                rows_extra.append("{}")
        return {"vector": np.array(rows_vec, dtype=object), "extra": np.array(rows_extra, dtype=object),
                "written": np.array([written] * len(ids))}


def registry_tagger(name: str) -> FrameTagger:
    """A frame actor's tagger: the registry's model of that name (what ``bench detect`` loads)."""
    return cast(YamnetEmbedder, load_model(name))


class FrameActor(_PoolActor):
    """One tagger copy of ``bench detect``'s frame pass: a rendered batch -> each clip's frame
    rows (uint8, cached by audio hash as :func:`reasonaudio.ingest.frame_rows.frame_rows`
    caches them), failures. Model arguments: ``tagger_name``, ``tagger_factory``; a job's
    ``caches``: ``cache``, ``cache_dir``."""

    def _open(self) -> tuple[Any, dict[str, Any]]:
        from reasonaudio.ingest.frame_rows import FramePipeline, FrameStats

        args = self.model_args
        self.tagger = (args.get("tagger_factory") or registry_tagger)(args["tagger_name"])
        self.stats = FrameStats()
        return FramePipeline(self.tagger, *self._cache_args()), self.tagger.identity()

    def _compute(self, clips: list[Clip]) -> dict[str, Any]:
        out: dict[str, np.ndarray] = {}
        self.pipe.rows(clips, self.stats, lambda cid, rows: out.__setitem__(cid, rows))
        return out

    def _counts(self) -> dict[str, int]:
        return {"rendered": self.stats.rendered, "cached_rows": self.stats.cached_rows,
                "tagged": self.stats.tagged}

    def _columns(self, ids: list[str], rows: dict[str, Any]) -> dict[str, np.ndarray]:
        data, shapes = [], []
        for cid in ids:
            got = rows.get(cid)
            data.append(b"" if got is None else np.ascontiguousarray(got).tobytes())
            shapes.append("[]" if got is None else json.dumps([list(got.shape), str(got.dtype)]))
        return {"rows": np.array(data, dtype=object), "shape": np.array(shapes, dtype=object)}


def _identity_digest(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_identity(stats: dict[str, Any], want: str, name: str, consequence: str) -> None:
    """An actor's first batch carries the identity of the model it loaded (its startup): one
    that is not the driver's stops the job before its rows are used."""
    seen = (stats.get("startup") or {}).get("identity")
    if seen is not None and seen != want:
        raise DataError(f"--engine ray: the workers' {name} is not the one this process describes "
                        f"(another revision, weights or settings): {consequence}")


def _actor_startup(t0: float, started: float) -> dict[str, Any]:
    """How an actor started: seconds to load its model (and benchmark, renderer), and the
    threads its runtimes got (torch reads ``OMP_NUM_THREADS``, which Ray sets to the actor's
    CPUs)."""
    out: dict[str, Any] = {"pid": os.getpid(), "started_at": started,
                           "load_s": round(time.perf_counter() - t0, 3),
                           "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch_threads"] = torch.get_num_threads()
    return out


def clip_point(clip: Clip, vector: np.ndarray, extra: dict[str, Any]) -> PointIn:
    """A clip's point: its vector and its payload plus what the pipeline added (a caption)."""
    payload = clip_payload(clip)
    payload.update(extra)
    return PointIn(clip.id, [float(x) for x in vector], payload)


def _job_error(exc: BaseException) -> Exception:
    """What a failed Ray job raised, as the project's error: the user error an actor or task
    raised (a missing model, an unreadable bank) keeps its type and line; anything else is named
    in one line (the whole job failed, not one clip: the actor could not even start)."""
    seen: list[BaseException] = []
    cur: Any = exc
    while cur is not None and cur not in seen and len(seen) < 10:
        seen.append(cur)
        if isinstance(cur, ReasonAudioError):
            return type(cur)(str(cur))
        cur = getattr(cur, "cause", None) or cur.__cause__
    return DataError(f"--engine ray: the job failed ({_describe(seen[-1])})")


def _describe(exc: BaseException) -> str:
    return one_line(f"{type(exc).__name__}: {exc}")[:200]


# --- the driver -------------------------------------------------------------------------------------

@dataclass
class RayEngine:
    """The ``engine`` hook of :func:`reasonaudio.ingest.run.ingest_model` and of
    ``bench detect``'s frame pass (:meth:`frame_rows`)."""

    options: RayOptions = field(default_factory=RayOptions)
    server_url: str | None = None
    """the Qdrant server the actors write to; ``None``: the driver writes (embedded store)"""
    pipeline_factory: Callable[..., Any] | None = None
    """builds each actor's pipeline from the ingest's arguments (default: ``open_pipeline``)"""
    tagger_factory: Callable[[str], Any] | None = None
    """builds each frame actor's tagger from its name (default: the model registry's)"""

    def __post_init__(self) -> None:
        self.options.validate()
        self.options = self.options.resolved()
        self.startup: dict[str, Any] = {"actors": []}
        """where the job's start-up went: ``ray_start_s`` (starting or joining Ray),
        ``first_row_s`` (job submitted -> first clip back), ``actors`` (each actor's
        :func:`_actor_startup`)"""
        self.timings: dict[str, float] = dict.fromkeys(TIMINGS, 0.0)
        """where the job's seconds went after start-up (:data:`TIMINGS`)"""
        self.failed: dict[str, str] = {}

    name = "ray"

    @contextlib.contextmanager
    def _session(self) -> Iterator[None]:
        t0 = time.perf_counter()
        with ray_session(self.options):
            self.startup["ray_start_s"] = round(time.perf_counter() - t0, 3)
            yield

    @contextlib.contextmanager
    def points(self, bench: BenchmarkView, store: Store, collection: str, pipe: Pipeline, by_id: dict[str, Clip],
               one_done: Callable[[str], None], pipeline_args: dict[str, Any],
               bank_spec: str | None) -> Iterator[Callable[[Sequence[str]], list[Any]]]:
        """A ``make_points`` for :func:`load_collection`. The first call starts the Ray job over
        every clip not yet stored (the same set load_collection just computed); each call returns
        the points of the ids it asks for as the job delivers them, in any order."""
        stack = contextlib.ExitStack()
        state: dict[str, Any] = {"rows": None, "remaining": None}
        buffer: dict[str, PointIn | None] = {}
        root, condition = str(Path(bench.root).resolve()), bench.condition.name
        renderer = getattr(pipe, "_renderer", None)
        want = _identity_digest(pipe.identity())  # what the collection's record says; each actor checks

        def start() -> Iterator[dict[str, Any]]:
            present = store.existing_ids(collection, list(by_id))
            todo = [cid for cid in by_id if cid not in present]
            state["remaining"] = set(todo)
            stack.enter_context(self._session())
            args = dict(pipeline_args)
            caches = dict(cache=args.pop("cache"), cache_dir=_path_text(args.pop("cache_dir")))
            model = dict(pipeline_args=args, pipeline_factory=self.pipeline_factory)
            job = dict(root=root, condition=condition, bank_spec=bank_spec, sample_rate=_sample_rate(pipe),
                       caches=caches, retries=self.options.retries, collection=collection,
                       server_url=self.server_url)
            return self._job(todo, EmbedActor, model, job)

        def make(ids: Sequence[str]) -> list[PointIn]:
            if state["rows"] is None:
                state["rows"] = start()
            wanted = [cid for cid in ids if cid not in buffer]
            missing = set(wanted)
            while missing:
                t0 = time.perf_counter()
                row = _next_row(state["rows"], missing)
                t1 = time.perf_counter()
                self.timings["driver_wait_s"] += t1 - t0
                cid = row["id"]
                stats = self._note_row(row, renderer)
                _check_identity(stats, want, pipe.name, f"collection {collection!r} stays loading")
                pipe.timings.embedded += int(stats.get("embedded", 0))
                if pipe.caches:
                    pipe.caches[0].hits += int(stats.get("cache_hits", 0))
                if row["error"]:
                    self.failed[cid] = row["error"]
                    buffer[cid] = None
                elif row["written"]:
                    buffer[cid] = None
                else:
                    buffer[cid] = clip_point(by_id[cid], np.frombuffer(row["vector"], dtype=np.float32),
                                             json.loads(row["extra"]))
                missing.discard(cid)
                one_done(cid)
                self.timings["driver_rows_s"] += time.perf_counter() - t1
            points = [p for p in (buffer.pop(cid) for cid in ids) if p is not None]
            state["remaining"].difference_update(ids)
            if not state["remaining"]:
                _drained(state["rows"])
            if not state["remaining"] and self.failed:
                store.upsert(collection, points)  # keep what worked, then say what did not
                raise DataError(self.failure_line(f"collection {collection!r} stays loading"))
            return points

        try:
            yield make
        finally:
            if state["rows"] is not None:  # an error before the job's end: stop the job first
                state["rows"].close()
            stack.close()

    def frame_rows(self, bench: BenchmarkView, clips: Sequence[Clip], tagger: FrameTagger, *, cache: bool = True,
                   cache_dir: Path | None = None, renderer: ClipRenderer | None = None,
                   progress: Callable[[int, int], None] | None = None
                   ) -> tuple[dict[str, np.ndarray], FrameStats]:
        """``bench detect``'s frame pass on Ray: what
        :func:`reasonaudio.ingest.frame_rows.frame_rows` returns, the same rows bit for bit
        and the same caches filled. Clips the ingest's audio-hash index and frame cache already
        hold are served here, without Ray (no render, no tagger pass, as the local reader serves
        them); the rest go through the ingest's stages: render tasks under the benchmark's
        condition -> a pool of :class:`FrameActor` (one tagger each, rows cached by audio
        hash) -> rows to the driver. A clip that still fails after its retries is named in one
        line (the rows computed are cached; a rerun computes only the rest)."""
        from reasonaudio.ingest.frame_rows import FramePipeline, FrameStats
        from reasonaudio.ingest.run import _quiet_render_log
        from reasonaudio.render.clips import bench_renderer

        if renderer is not None:
            raise DataError("--engine ray renders in its workers from the benchmark, not with a "
                            "renderer passed in: use --engine local")
        t0 = time.perf_counter()
        stats = FrameStats(clips=len(clips))
        out: dict[str, np.ndarray] = {}

        def done(cid: str, rows: np.ndarray) -> None:
            out[cid] = rows
            if progress is not None:
                progress(len(out), len(clips))

        here = bench_renderer(bench)  # the index keys (no render here) and the merged notes
        pipe = FramePipeline(tagger, cache, cache_dir)
        pipe.attach_renderer(here)
        misses: list[str] = []
        try:
            with _quiet_render_log():
                for clip in clips:
                    rows = pipe.known_rows(clip)
                    if rows is None:
                        misses.append(clip.id)
                    else:
                        stats.from_index += 1
                        stats.cached_rows += 1
                        done(clip.id, rows)
        finally:
            pipe.close()
        if misses:
            root, condition = str(Path(bench.root).resolve()), bench.condition.name
            want = _identity_digest(tagger.identity())
            model = dict(tagger_name=tagger.name, tagger_factory=self.tagger_factory)
            job = dict(root=root, condition=condition, bank_spec=None,
                       caches=dict(cache=cache, cache_dir=_path_text(cache_dir)),
                       sample_rate=int(tagger.sample_rate), retries=self.options.retries)
            with self._session(), contextlib.ExitStack() as stop:
                rows_iter = self._job(misses, FrameActor, model, job)
                stop.callback(rows_iter.close)  # an error before the end: stop the job first
                pending = set(misses)
                while pending:
                    row = _next_row(rows_iter, pending)
                    pending.discard(row["id"])
                    got = self._note_row(row, here)
                    for key in ("rendered", "cached_rows", "tagged"):
                        setattr(stats, key, getattr(stats, key) + int(got.get(key, 0)))
                    _check_identity(got, want, tagger.name, "frame rows would not match")
                    if row["error"]:
                        self.failed[row["id"]] = row["error"]
                        continue
                    shape, dtype = json.loads(row["shape"])
                    done(row["id"], np.frombuffer(row["rows"], dtype=dtype).reshape(shape).copy())
                _drained(rows_iter)
        if self.failed:
            raise DataError(self.failure_line("their frames are not cached"))
        stats.seconds = time.perf_counter() - t0
        return {c.id: out[c.id] for c in clips}, stats

    def failure_line(self, after: str) -> str:
        ids = sorted(self.failed)
        shown = ", ".join(ids[:FAILED_SHOWN]) + (f" and {len(ids) - FAILED_SHOWN} more"
                                                  if len(ids) > FAILED_SHOWN else "")
        first = self.failed[ids[0]]
        return (f"--engine ray: {len(ids)} clip(s) failed after {self.options.retries} retries: "
                f"{shown} (first: {first}); {after}, rerun to retry them")

    def _note_row(self, row: dict[str, Any], renderer: ClipRenderer | None) -> dict[str, Any]:
        """A row's bookkeeping: the job's start-up, the actor's start-up, the render notes
        (merged into the driver's ``renderer``, so the summary reads as a local run's);
        returns the actor's counts."""
        stats = json.loads(row.get("stats") or "{}")
        if "compute_s" in stats:  # the first row of each batch carries the batch's counts
            self.timings["batches"] += 1
            self.timings["actor_compute_s"] += float(stats["compute_s"])
            self.timings["actor_commit_s"] += float(stats["commit_s"])
        if "first_row_s" not in self.startup:
            self.startup["first_row_s"] = round(time.perf_counter() - self._job_t0, 3)
        if "startup" in stats:  # the seconds from submitting the job to the actor's constructor
            actor = dict(stats["startup"])
            actor["spawn_s"] = round(float(actor.pop("started_at")) - self._job_wall0, 3)
            self.startup["actors"].append(actor)
        if renderer is not None:  # the summary reads the driver's renderer, as in a local run
            renderer.merge_notes([(str(kind), str(subject))
                                  for kind, subject in json.loads(row.get("adjustments") or "[]")])
        return stats

    def _job(self, todo: list[str], actor: type, model: dict[str, Any],
             job: dict[str, Any]) -> Generator[dict[str, Any], None, None]:
        """The job over ``todo``: render tasks (when ``job["sample_rate"]``: the model hears
        audio) -> this process's pool of ``actor`` over ``model`` (kept from an earlier job of
        the same model: :mod:`reasonaudio.ingest.ray_pool`) -> rows, in any order."""
        if not todo:
            return _rows(())
        import ray

        self._job_t0, self._job_wall0 = time.perf_counter(), time.time()
        # every job is a job of its own to an actor, a rerun of the same one included: it
        # configures afresh and its first batch reports how the actor started it
        job = {**job, "serial": f"{os.getpid()}-{self._job_wall0!r}"}
        opts = self.options
        sample_rate = job["sample_rate"]
        # one block per batch (numpy's split: as even as it gets), a multiple of the actors
        blocks = [list(b) for b in np.array_split(np.array(todo, dtype=object),
                                                  opts.blocks_for(len(todo), bool(sample_rate)))]
        actors = actor_pool(ray, actor, model, workers=opts.workers, cpus=opts.cpus_per_worker or 1.0,
                            gpus=opts.gpus_per_worker)
        render = ray.remote(num_cpus=opts.render_cpus)(render_batch) if sample_rate else None
        render_kwargs = dict(root=job["root"], condition=job["condition"], bank_spec=job["bank_spec"],
                             sample_rate=sample_rate, job=job["serial"])
        return _rows(run_blocks(ray, actors, job, blocks, render, render_kwargs))


def _path_text(path: Path | str | None) -> str | None:
    """A cache folder as a job carries it (a string, or None: the default cache)."""
    return str(path) if path else None


def _rows(batches: Iterable[Mapping[str, Sequence[Any]]]) -> Generator[dict[str, Any], None, None]:
    """The blocks as they come (one object per batch, no per-row conversion in Ray) -> one dict
    per clip. Closing it closes the blocks' iterator, which cancels the blocks not yet done: a
    job left running after an error would outlive the Ray it runs on (the process then ends
    when that Ray is shut down: "Failed to connect to GCS")."""
    it = iter(batches)
    try:
        for batch in it:
            names = list(batch)
            for values in zip(*(batch[name] for name in names)):
                yield dict(zip(names, values))
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


def _next_row(rows: Iterator[dict[str, Any]], missing: set[str]) -> dict[str, Any]:
    try:
        return next(rows)
    except StopIteration:
        raise DataError(f"--engine ray: the job ended without {len(missing)} clips "
                        f"(e.g. {min(missing)}); rerun to finish them") from None
    except Exception as exc:  # noqa: BLE001 - a user error inside Ray stays one line
        raise _job_error(exc) from None


def _drained(rows: Iterator[dict[str, Any]]) -> None:
    """The job's end (every clip is back): let Ray finish it; a row more is a bug, not a result."""
    for row in rows:
        raise DataError(f"--engine ray: the job returned clip {row['id']!r} twice")


def _sample_rate(pipe: Pipeline) -> int | None:
    """The rate the pipeline renders at: its audio model's (YAMNet under a captioner)."""
    if not pipe.needs_audio:
        return None
    model = getattr(pipe, "embedder", None)
    captioner = getattr(pipe, "captioner", None)
    if captioner is not None and getattr(captioner, "needs_audio", False):
        model = captioner.audio_model
    return int(model.sample_rate)
