"""``--engine ray``: the model ingest scheduled by Ray Data instead of one process.

The same per-batch functions as the local engine, another scheduler:

    clip ids -> render (CPU tasks) -> model forward (an actor pool: ``workers`` actors, each
    ``gpus_per_worker`` GPUs) -> vectors (+ captions) -> store writes

Each actor opens the same :class:`~reasonaudio.ingest.embed.pipelines.Pipeline` the local engine
uses (:func:`open_pipeline` with the same arguments) and calls its ``vectors`` on each batch, with a
renderer that serves the samples the render tasks made. So vectors and captions are bit-identical
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
import json
import logging
import math
import os
import sys
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError, ModelError

ENGINES = ("local", "ray")
DEFAULT_ENGINE = "local"
CONDITIONS = ("clean",)
"""Render conditions the render stage knows (a condition is a named change to the rendered audio)."""
FAILED_SHOWN = 10
"""Clip ids a failure report names before it says how many more."""


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
    batch_clips: int = 16
    """clips per Ray batch (a block travelling render -> actor -> driver)"""
    retries: int = 2
    """tries per clip after its batch failed, before the clip is reported"""
    local_cpus: int | None = None
    """a local Ray only: logical CPUs (default: the usable cores)"""
    object_store_mb: int = 500
    """a local Ray only: the object store's size"""
    condition: str = "clean"
    """the render condition (only ``clean`` exists so far)"""
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
        from reasonaudio.runtime import usable_cores

        cores = self.local_cpus or usable_cores()
        return replace(self, cpus_per_worker=float(max(1, cores // max(1, self.workers))))

    def validate(self) -> None:
        if self.workers < 1:
            raise DataError(f"--workers must be >= 1, got {self.workers}")
        if self.gpus_per_worker < 0:
            raise DataError(f"--gpus-per-worker must be >= 0, got {self.gpus_per_worker:g}")
        if self.cpus_per_worker is not None and self.cpus_per_worker <= 0:
            raise DataError(f"--cpus-per-worker must be > 0, got {self.cpus_per_worker:g}")
        if self.batch_clips < 1:
            raise DataError(f"ray batch size must be >= 1, got {self.batch_clips}")
        if self.retries < 0:
            raise DataError(f"ray retries must be >= 0, got {self.retries}")
        if self.condition not in CONDITIONS:
            raise DataError(f"unknown render condition {self.condition!r}; known: {', '.join(CONDITIONS)}")

    def needed_cpus(self) -> float:
        """Logical CPUs the job needs at once: the actor pool plus one render task."""
        return self.workers * (self.resolved().cpus_per_worker or 1.0) + self.render_cpus

    def to_json(self) -> dict[str, Any]:
        return {"address": self.address or "local", "workers": self.workers,
                "gpus_per_worker": self.gpus_per_worker,
                "cpus_per_worker": self.resolved().cpus_per_worker, "render_cpus": self.render_cpus,
                "batch_clips": self.batch_clips, "retries": self.retries, "condition": self.condition}


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise DataError(f"unknown --engine {engine!r}; expected one of {', '.join(ENGINES)}")
    return engine


def ray_engine_from_cli(engine: str, workers: int, gpus_per_worker: float, cpus_per_worker: float | None,
                        address: str | None, backend: str | None, url: str | None) -> "RayEngine | None":
    """The ``--engine`` flags -> the engine (``None``: local). Ray flags without ``--engine ray``
    are an error, not ignored."""
    from reasonaudio.store.open import resolve_backend

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


def _import_ray() -> Any:
    try:
        import ray  # the `ray` extra
        import ray.data  # noqa: F401
    except ImportError:
        raise ModelError('--engine ray needs Ray Data: pip install "reasonaudio[ray]" '
                         '(or pip install "ray[data]")') from None
    return ray


@contextlib.contextmanager
def ray_session(options: RayOptions) -> Iterator[Any]:
    """Ray for one job: joins ``options.address``, reuses a Ray this process already started, or
    starts a local one (``local_cpus`` CPUs, a small object store, no dashboard) and shuts it
    down afterwards. Ray Data's own progress bars are off: the job has one bar, the caller's."""
    ray = _import_ray()
    started = False
    for name in ("ray", "ray.data"):  # library code is silent: Ray's INFO lines are not ours to print
        logging.getLogger(name).setLevel(logging.ERROR)
    if not ray.is_initialized():
        os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
        kwargs: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                      logging_level=logging.ERROR, configure_logging=False)
        env = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"), **options.worker_env}
        kwargs["runtime_env"] = {"env_vars": env}
        try:
            if options.address:
                ray.init(address=options.address, **kwargs)
            else:
                from reasonaudio.runtime import usable_cores

                ray.init(num_cpus=options.local_cpus or max(usable_cores(), math.ceil(options.needed_cpus())),
                         object_store_memory=options.object_store_mb * 1024 * 1024, **kwargs)
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
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    with contextlib.suppress(AttributeError):
        ctx.print_on_execution_start = False
    try:
        yield ray
    finally:
        if started:
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
def _worker_bench(root: str) -> Any:
    from reasonaudio.dataset.benchmark import load_benchmark

    return load_benchmark(root, verify=False)  # the driver verified it


@lru_cache(maxsize=4)
def _worker_renderer(root: str, bank_spec: str | None) -> Any:
    from reasonaudio.ingest.render import bench_renderer

    logging.getLogger("reasonaudio.render").setLevel(logging.ERROR)  # counted, not printed
    return bench_renderer(_worker_bench(root), bank_spec)


def render_condition(wave: np.ndarray, condition: str) -> np.ndarray:
    """The rendered clip under a named condition; ``clean`` is the clip as built."""
    if condition != "clean":
        raise DataError(f"unknown render condition {condition!r}; known: {', '.join(CONDITIONS)}")
    return wave


def render_batch(batch: dict[str, np.ndarray], *, root: str, bank_spec: str | None,
                 sample_rate: int, condition: str) -> dict[str, np.ndarray]:
    """Ray Data batch ``{"id"}`` -> ``{"id", "wave" (float32 bytes), "adjustments" (JSON)}``."""
    bench = _worker_bench(root)
    renderer = _worker_renderer(root, bank_spec)
    by_id = bench.clip_by_id
    before = set(renderer.noted)
    ids = [str(i) for i in batch["id"]]
    waves = [render_condition(renderer.render(replace(by_id[i], sample_rate=sample_rate)),
                              condition).astype(np.float32, copy=False).tobytes() for i in ids]
    # the (kind, subject) pairs this batch adjusted: the driver takes their union, so an atom
    # levelled by two workers counts once, as in a local run
    new = sorted(renderer.noted - before)
    notes = [json.dumps(new)] + ["[]"] * (len(ids) - 1)
    return {"id": np.array(ids, dtype=object), "wave": np.array(waves, dtype=object),
            "adjustments": np.array(notes[: len(ids)], dtype=object)}


class _ServedRenderer:
    """A renderer that serves the samples the render stage made for this batch (and renders
    anything else itself). ``bank`` and ``params`` are the real renderer's, so the audio-hash
    index keys are the local engine's."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.bank = real.bank
        self.params = real.params
        self.adjustments = real.adjustments
        self.noted = real.noted
        self.merge_notes = real.merge_notes
        self.waves: dict[tuple[str, int], np.ndarray] = {}

    def render(self, clip: Clip) -> np.ndarray:
        wave = self.waves.get((clip.id, clip.sample_rate))
        return wave if wave is not None else self.real.render(clip)


# --- the model stage: an actor pool ---------------------------------------------------------------

class EmbedActor:
    """One model copy. ``__call__``: a rendered batch -> vectors, captions, failures."""

    def __init__(self, root: str, pipeline_args: dict[str, Any], bank_spec: str | None,
                 sample_rate: int | None, collection: str, server_url: str | None,
                 retries: int, pipeline_factory: Callable[..., Any] | None = None) -> None:
        from reasonaudio.ingest.embed.pipelines import open_pipeline
        from reasonaudio.runtime import blas_single_thread

        t0, started = time.perf_counter(), time.time()
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(blas_single_thread())
        self.bench = _worker_bench(root)
        self.pipe = (pipeline_factory or open_pipeline)(**pipeline_args)
        self._stack.callback(self.pipe.close)
        self.served: _ServedRenderer | None = None
        if self.pipe.needs_audio:
            self.served = _ServedRenderer(_worker_renderer(root, bank_spec))
            self.pipe.attach_renderer(self.served)
        self.sample_rate = sample_rate
        self.collection = collection
        self.retries = retries
        self.store = None
        if server_url:
            from reasonaudio.store.open import open_store

            self.store = self._stack.enter_context(open_store(root, "server", server_url))
        self.startup: dict[str, Any] | None = _actor_startup(t0, started)

    def _vectors(self, clips: list[Clip]) -> tuple[dict[str, tuple[np.ndarray, dict[str, Any]]],
                                                   dict[str, str]]:
        try:
            return self.pipe.vectors(clips, lambda _cid: None), {}
        except Exception as exc:  # noqa: BLE001 - retried clip by clip, then reported by id
            first = _describe(exc)
        out: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}
        failed: dict[str, str] = {}
        for clip in clips:
            problem = first
            for _ in range(self.retries):
                try:
                    out.update(self.pipe.vectors([clip], lambda _cid: None))
                    break
                except Exception as exc:  # noqa: BLE001
                    problem = _describe(exc)
            else:
                failed[clip.id] = problem
        return out, failed

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        ids = [str(i) for i in batch["id"]]
        clips = [self.bench.clip_by_id[i] for i in ids]
        if self.served is not None:
            self.served.waves = {(i, int(self.sample_rate or 0)): np.frombuffer(w, dtype=np.float32)
                                 for i, w in zip(ids, batch["wave"])}
        t = self.pipe.timings
        embedded0, hits0 = t.embedded, sum(c.hits for c in self.pipe.caches[:1])
        vecs, failed = self._vectors(clips)
        if self.served is not None:
            self.served.waves = {}
        for cache in self.pipe.caches:  # an actor may be stopped without a goodbye: keep its work
            cache.commit()
        stats: dict[str, Any] = {"embedded": t.embedded - embedded0,
                                 "cache_hits": sum(c.hits for c in self.pipe.caches[:1]) - hits0}
        if self.startup is not None:  # the first batch says how long this actor took to start
            stats["startup"], self.startup = self.startup, None
        written = False
        if self.store is not None:  # a server: the actor writes its own batch
            points = [clip_point(self.bench.clip_by_id[cid], *vecs[cid]) for cid in ids if cid in vecs]
            if points:
                self.store.upsert(self.collection, points)
            written = True
        rows_vec, rows_extra, rows_err = [], [], []
        for cid in ids:
            if cid in vecs and not written:
                vec, extra = vecs[cid]
                rows_vec.append(np.asarray(vec, dtype=np.float32).tobytes())
                rows_extra.append(json.dumps(extra, sort_keys=True))
            else:
                rows_vec.append(b"")
                rows_extra.append("{}")
            rows_err.append(failed.get(cid, ""))
        notes = [json.dumps(stats)] + ["{}"] * (len(ids) - 1)
        out = {"id": np.array(ids, dtype=object), "vector": np.array(rows_vec, dtype=object),
               "extra": np.array(rows_extra, dtype=object), "error": np.array(rows_err, dtype=object),
               "stats": np.array(notes, dtype=object), "written": np.array([written] * len(ids))}
        if "adjustments" in batch:
            out["adjustments"] = batch["adjustments"]
        return out

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stack.close()


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


def clip_point(clip: Clip, vector: np.ndarray, extra: dict[str, Any]) -> Any:
    """A clip's point: its vector and its payload plus what the pipeline added (a caption)."""
    from reasonaudio.store.base import PointIn
    from reasonaudio.store.payload import clip_payload

    payload = clip_payload(clip)
    payload.update(extra)
    return PointIn(clip.id, [float(x) for x in vector], payload)


def _job_error(exc: BaseException) -> Exception:
    """What a failed Ray job raised, as the project's error: the user error an actor or task
    raised (a missing model, an unreadable bank) keeps its type and line; anything else is named
    in one line (the whole job failed, not one clip: the actor could not even start)."""
    from reasonaudio.errors import ReasonAudioError

    seen: list[BaseException] = []
    cur: Any = exc
    while cur is not None and cur not in seen and len(seen) < 10:
        seen.append(cur)
        if isinstance(cur, ReasonAudioError):
            return type(cur)(str(cur))
        cur = getattr(cur, "cause", None) or cur.__cause__
    return DataError(f"--engine ray: the job failed ({_describe(seen[-1])})")


def _describe(exc: BaseException) -> str:
    from reasonaudio.errors import one_line

    return one_line(f"{type(exc).__name__}: {exc}")[:200]


# --- the driver -------------------------------------------------------------------------------------

@dataclass
class RayEngine:
    """The ``engine`` hook of :func:`reasonaudio.ingest.embed.run.ingest_model`."""

    options: RayOptions = field(default_factory=RayOptions)
    server_url: str | None = None
    """the Qdrant server the actors write to; ``None``: the driver writes (embedded store)"""
    pipeline_factory: Callable[..., Any] | None = None
    """builds each actor's pipeline from the ingest's arguments (default: ``open_pipeline``)"""

    def __post_init__(self) -> None:
        self.options.validate()
        self.options = self.options.resolved()
        self.startup: dict[str, Any] = {"actors": []}
        """where the job's start-up went: ``ray_start_s`` (starting or joining Ray),
        ``first_row_s`` (job submitted -> first clip back), ``actors`` (each actor's
        :func:`_actor_startup`)"""
        self.adjustments: dict[str, int] = {}
        self._noted: set[tuple[str, str]] = set()
        self.failed: dict[str, str] = {}

    name = "ray"

    @contextlib.contextmanager
    def points(self, bench: Any, store: Any, collection: str, pipe: Any, by_id: dict[str, Clip],
               one_done: Callable[[str], None], pipeline_args: dict[str, Any],
               bank_spec: str | None) -> Iterator[Callable[[Sequence[str]], list[Any]]]:
        """A ``make_points`` for :func:`load_collection`. The first call starts the Ray job over
        every clip not yet stored (the same set load_collection just computed); each call returns
        the points of the ids it asks for as the job delivers them, in any order."""
        from reasonaudio.store.base import PointIn

        stack = contextlib.ExitStack()
        state: dict[str, Any] = {"rows": None, "remaining": None}
        buffer: dict[str, PointIn | None] = {}

        def start() -> Iterator[dict[str, Any]]:
            present = store.existing_ids(collection, list(by_id))
            todo = [cid for cid in by_id if cid not in present]
            state["remaining"] = set(todo)
            t0 = time.perf_counter()
            stack.enter_context(ray_session(self.options))
            self.startup["ray_start_s"] = round(time.perf_counter() - t0, 3)
            self._job_t0, self._job_wall0 = time.perf_counter(), time.time()
            return self._rows(bench, pipe, todo, collection, pipeline_args, bank_spec)

        def make(ids: Sequence[str]) -> list[PointIn]:
            if state["rows"] is None:
                state["rows"] = start()
            wanted = [cid for cid in ids if cid not in buffer]
            missing = set(wanted)
            while missing:
                try:
                    row = next(state["rows"])
                except StopIteration:
                    raise DataError(f"--engine ray: the job ended without {len(missing)} clips "
                                    f"(e.g. {sorted(missing)[0]}); rerun to finish them") from None
                except Exception as exc:  # noqa: BLE001 - a user error inside Ray stays one line
                    raise _job_error(exc) from None
                cid = row["id"]
                if row["error"]:
                    self.failed[cid] = row["error"]
                    buffer[cid] = None
                elif row["written"]:
                    buffer[cid] = None
                else:
                    buffer[cid] = clip_point(by_id[cid], np.frombuffer(row["vector"], dtype=np.float32),
                                             json.loads(row["extra"]))
                missing.discard(cid)
                self._count(row, pipe)
                one_done(cid)
            points = [p for p in (buffer.pop(cid) for cid in ids) if p is not None]
            state["remaining"].difference_update(ids)
            if not state["remaining"]:
                for row in state["rows"]:  # the job's end (nothing is left): let Ray finish it
                    raise DataError(f"--engine ray: the job returned clip {row['id']!r} twice")
            if not state["remaining"] and self.failed:
                store.upsert(collection, points)  # keep what worked, then say what did not
                raise DataError(self.failure_line(collection))
            return points

        try:
            yield make
        finally:
            stack.close()

    def failure_line(self, collection: str) -> str:
        ids = sorted(self.failed)
        shown = ", ".join(ids[:FAILED_SHOWN]) + (f" and {len(ids) - FAILED_SHOWN} more"
                                                  if len(ids) > FAILED_SHOWN else "")
        first = self.failed[ids[0]]
        return (f"--engine ray: {len(ids)} clip(s) failed after {self.options.retries} retries: "
                f"{shown} (first: {first}); collection {collection!r} stays loading, rerun to retry them")

    def _count(self, row: dict[str, Any], pipe: Any) -> None:
        """The actors' counts into the driver's pipeline, so the summary reads as a local run's."""
        stats = json.loads(row.get("stats") or "{}")
        if "first_row_s" not in self.startup:
            self.startup["first_row_s"] = round(time.perf_counter() - self._job_t0, 3)
        if "startup" in stats:  # the seconds from submitting the job to the actor's constructor
            actor = stats["startup"]
            actor["spawn_s"] = round(float(actor.pop("started_at")) - self._job_wall0, 3)
            self.startup["actors"].append(actor)
        pipe.timings.embedded += int(stats.get("embedded", 0))
        if pipe.caches:
            pipe.caches[0].hits += int(stats.get("cache_hits", 0))
        notes = [(str(kind), str(subject)) for kind, subject in json.loads(row.get("adjustments") or "[]")]
        target = getattr(pipe, "_renderer", None)
        if target is not None:
            target.merge_notes(notes)
            return
        for note in notes:
            if note not in self._noted:
                self._noted.add(note)
                self.adjustments[note[0]] = self.adjustments.get(note[0], 0) + 1

    def _rows(self, bench: Any, pipe: Any, todo: list[str], collection: str,
              pipeline_args: dict[str, Any], bank_spec: str | None) -> Iterator[dict[str, Any]]:
        if not todo:
            return iter(())
        import ray.data

        opts = self.options
        root = str(Path(bench.root).resolve())
        blocks = max(1, math.ceil(len(todo) / opts.batch_clips))
        ds = ray.data.from_items([{"id": cid} for cid in todo], override_num_blocks=blocks)
        sample_rate = _sample_rate(pipe)
        if pipe.needs_audio:
            ds = ds.map_batches(render_batch, batch_size=opts.batch_clips, num_cpus=opts.render_cpus,
                                fn_kwargs=dict(root=root, bank_spec=bank_spec,
                                               sample_rate=sample_rate, condition=opts.condition))
        ds = ds.map_batches(
            EmbedActor, batch_size=opts.batch_clips, compute=ray.data.ActorPoolStrategy(size=opts.workers),
            num_cpus=opts.cpus_per_worker, num_gpus=opts.gpus_per_worker or None,
            fn_constructor_kwargs=dict(root=root, pipeline_args=pipeline_args, bank_spec=bank_spec,
                                       sample_rate=sample_rate, collection=collection,
                                       server_url=self.server_url, retries=opts.retries,
                                       pipeline_factory=self.pipeline_factory))
        # an actor lost mid-batch is restarted and its batch rerun (Ray Data's actor defaults:
        # max_restarts=-1, max_task_retries=-1), so no clip is lost with it
        return iter(ds.iter_rows())


def _sample_rate(pipe: Any) -> int | None:
    """The rate the pipeline renders at: its audio model's (YAMNet under a captioner)."""
    if not pipe.needs_audio:
        return None
    model = getattr(pipe, "embedder", None)
    captioner = getattr(pipe, "captioner", None)
    if captioner is not None and getattr(captioner, "needs_audio", False):
        model = captioner.audio_model
    return int(model.sample_rate)
