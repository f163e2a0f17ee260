"""The ingest itself: make ``reasonaudio-<model>`` hold one point per clip, resumably.

Resumable and idempotent: point ids come from clip ids, :func:`reasonaudio.store.collections.load_collection`
upserts only clips not yet stored, and the cache holds everything computed before an interruption.
After ``kill -9`` a rerun ends with exactly one point per clip and the same vectors as an
uninterrupted run. Silent from Python: progress goes to the caller's :class:`~reasonaudio.progress.Hooks`.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError
from reasonaudio.ingest.pipelines import Pipeline, open_pipeline
from reasonaudio.models.captioners import CAPTIONERS
from reasonaudio.models.names import is_two_stage, parse_two_stage
from reasonaudio.models.registry import get_record, names
from reasonaudio.models.windowing import long_form
from reasonaudio.render.clips import ClipRenderer, bench_renderer
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.runtime import blas_single_thread
from reasonaudio.dataset.conditions import collection_for
from reasonaudio.store.base import PointIn, Store, collection_name, CollectionMeta
from reasonaudio.store.collections import check_payload_labels, load_collection, LoadResult
from reasonaudio.store.payload import clip_payload


AUDIO_UPSERT_BATCH = 256
TEXT_UPSERT_BATCH = 1024
"""clips per upsert by default (:attr:`IngestOptions.upsert_batch`)"""


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


@dataclass(frozen=True)
class IngestOptions:
    """How :func:`ingest_model` loads a model and fills its collection (``bench ingest``'s flags)."""

    model_path: str | None = None
    """local weights instead of the hub id"""
    device: str = "cpu"
    batch_size: int | None = None
    """model units per forward call (None: the model's default)"""
    dtype: str | None = None
    captioner_path: str | None = None
    """two-stage with a model captioner: its local weights (``model_path`` is the embedder's)"""
    limit: int | None = None
    """only the first ``limit`` clips (plus any already stored: a collection never shrinks)"""
    force: bool = False
    """drop and reload the collection"""
    cache: bool = True
    """use the embedding cache"""
    cache_dir: Path | None = None
    bank_spec: str | None = None
    """the atom bank to render from, if not the one the manifest names"""
    upsert_batch: int | None = None
    """clips per upsert (default 256 for audio models, 1024 for text pipelines, whose padded last
    batches per length class cost more); every computed vector is cached as it completes, so a
    larger batch loses nothing on interruption"""
    engine: Any = None
    """another scheduler of the same per-batch work
    (:class:`reasonaudio.ingest.ray_engine.RayEngine`); None runs it in this process"""
    chunking: str = "fixed"
    """``--chunking``: how a window model cuts long audio (``fixed`` | ``silence``)"""


def _long_form(model: str, chunking: str) -> dict[str, Any]:
    """How the model covers audio longer than its window (the collection records it)."""
    audio = model
    if is_two_stage(model):
        captioner = parse_two_stage(model)[0]
        audio = getattr(CAPTIONERS.get(captioner), "registry_model", None) or captioner
    if audio not in names():  # a captioner without a registry record (oracle captions)
        return {"covers": "no audio (captions from the clip's metadata)", "chunking": "none"}
    out = long_form(get_record(audio))
    if isinstance(out.get("chunking"), list):
        out["chunking"] = chunking
    return out


def _check_chunking(store: Store, name: str, chunking: str, force: bool) -> None:
    """A collection made with other windows is not the one asked for (``--force`` replaces it)."""
    if force or not store.exists(name):
        return
    have = (store.meta(name).extra or {}).get("chunking", "fixed")
    if have != chunking:
        raise DataError(f"collection {name!r} was made with --chunking {have}; pass --force to "
                        f"replace it with --chunking {chunking}")


def ingest_model(bench: BenchmarkView, store: Store, model: str, options: IngestOptions = IngestOptions(),
                 *, hooks: Hooks = SILENT, pipeline: Pipeline | None = None) -> IngestSummary:
    """Make ``reasonaudio-<model>`` hold one point per clip (the first ``options.limit`` clips,
    plus any already stored), computing only what is neither stored nor cached.

    ``hooks.progress("ingest NAME", done, total)`` is called as clips complete (the CLI draws a
    bar from it); ``pipeline``: an already open pipeline instead of the registry's."""
    o = options
    limit = o.limit
    if limit is not None and limit < 1:
        raise DataError(f"--limit must be >= 1, got {limit}")
    check_payload_labels(bench)  # the payload rule, before a model is loaded or a clip rendered
    t0 = time.perf_counter()
    condition = bench.condition
    pipeline_args = dict(model=model, model_path=o.model_path, device=o.device,
                         batch_size=o.batch_size, cache=o.cache, cache_dir=o.cache_dir,
                         dtype=o.dtype, captioner_path=o.captioner_path, chunking=o.chunking)
    # on an engine the workers compute: this process only describes the model (no weights
    # where its record can say what it is without them)
    pipe = pipeline or open_pipeline(**pipeline_args, weights=o.engine is None)
    name = collection_for(collection_name(pipe.name), condition.name)
    wanted = _wanted_clips(bench, store, name, limit, o.force)
    by_id = {c.id: c for c in wanted}
    renderer = pipe._renderer
    if pipe.needs_audio and renderer is None:
        renderer = bench_renderer(bench, o.bank_spec)
        pipe.attach_renderer(renderer)

    progress = _Progress(hooks.progress, f"ingest {pipe.name}", len(wanted))
    with contextlib.ExitStack() as stack:
        stack.enter_context(_quiet_render_log())
        stack.enter_context(blas_single_thread())
        stack.callback(pipe.close)
        progress.report(0)
        if o.engine is not None:
            make_points = stack.enter_context(o.engine.points(bench, store, name, pipe, by_id, progress.one_done,
                                                            pipeline_args, o.bank_spec))
        else:
            make_points = _points_maker(pipe, by_id, progress.one_done)
        meta = _collection_meta(bench, store, name, pipe, renderer, o)
        result = load_collection(store, name, meta, [c.id for c in wanted],
                                 make_points, force=o.force, index_labels=bench.labels,
                                 batch_size=o.upsert_batch or (AUDIO_UPSERT_BATCH if pipe.needs_audio
                                                               else TEXT_UPSERT_BATCH),
                                 progress=progress.sync)
    return _summary(pipe, store, name, result, renderer, t0)


def _wanted_clips(bench: BenchmarkView, store: Store, name: str, limit: int | None, force: bool) -> list[Clip]:
    """The clips the collection must hold: the first ``limit`` (all without one) plus, unless
    ``force`` replaces it, every clip it already holds (a collection never shrinks)."""
    clips = bench.clips
    wanted = clips if limit is None else clips[:limit]
    if limit is not None and store.exists(name) and not force:
        present = store.existing_ids(name, [c.id for c in clips])  # never shrink a collection
        keep = {c.id for c in wanted} | present
        wanted = [c for c in clips if c.id in keep]
    return wanted


class _Progress:
    """``hooks.progress`` as clips complete: the count the store confirmed after the last batch
    plus the clips finished since inside the batch under way."""

    def __init__(self, report: Callable[[str, int, int], None], label: str, total: int) -> None:
        self._report, self.label, self.total = report, label, total
        self.base = self.in_batch = 0

    def report(self, done: int) -> None:
        self._report(self.label, done, self.total)

    def sync(self, done: int, _total: int) -> None:
        self.base, self.in_batch = done, 0
        self.report(done)

    def one_done(self, _cid: str) -> None:
        self.in_batch += 1
        self.report(self.base + self.in_batch)


def _points_maker(pipe: Pipeline, by_id: dict[str, Clip], one_done: Callable[[str], None]
                  ) -> Callable[[Sequence[str]], list[PointIn]]:
    """Points computed in this process: each clip's vector and payload (the clip's, plus what
    the pipeline adds)."""

    def make_points(ids: Sequence[str]) -> list[PointIn]:
        vecs = pipe.vectors([by_id[i] for i in ids], one_done)
        points = []
        for cid in ids:
            vec, extra = vecs[cid]
            payload = clip_payload(by_id[cid])
            payload.update(extra)
            points.append(PointIn(cid, [float(x) for x in vec], payload))
        return points

    return make_points


def _collection_meta(bench: BenchmarkView, store: Store, name: str, pipe: Pipeline,
                     renderer: ClipRenderer | None, o: IngestOptions) -> CollectionMeta:
    """The collection's record: the pipeline's, how the model covers long audio, the chunking
    (checked against the stored collection's) and, under a condition, the audio its vectors heard."""
    meta = pipe.meta(bench, o.limit)
    meta.extra["long_form"] = _long_form(pipe.name, o.chunking)
    if o.chunking != "fixed":
        meta.extra["chunking"] = o.chunking
        _check_chunking(store, name, o.chunking, o.force)
    condition = bench.condition
    if not condition.is_clean:  # the collection says which audio its vectors heard
        meta.extra["condition"] = renderer.condition_identity if renderer is not None \
            else condition.to_json()
    return meta


def _summary(pipe: Pipeline, store: Store, name: str, result: LoadResult, renderer: ClipRenderer | None,
             t0: float) -> IngestSummary:
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
