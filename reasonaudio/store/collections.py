"""Loading a collection: idempotent, resumable, and never silently half done.

:func:`load_collection` is shared by the payload-only collection (:func:`ingest_payload`, here)
and the per-model vector collections (model ingest, elsewhere): it creates the collection with
``state="loading"``, upserts only the points that are missing (so an interrupted load resumes
where it stopped), and flips the record to ``complete`` last. A reader that finds ``loading``
knows the collection is incomplete (:func:`require_ready`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from reasonaudio.dataset.benchmark import CORPUS
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import StoreError
from reasonaudio.fileio import sha256_file
from reasonaudio.progress import SILENT, Counter, Hooks
from reasonaudio.dataset.benchmark import ATOMS
from reasonaudio.store.base import (
    PAYLOAD_MODEL,
    STATE_COMPLETE,
    STATE_LOADING,
    CollectionMeta,
    PointIn,
    Store,
    VectorSpec,
    batched,
    collection_name,
)
from reasonaudio.store.payload import check_label, clip_payload

PAYLOAD_COLLECTION = collection_name(PAYLOAD_MODEL)
PAYLOAD_VECTOR = (1.0,)
"""The payload-only collection's 1-d dummy vector (Qdrant points need one)."""

@dataclass(frozen=True)
class LoadResult:
    collection: str
    points: int
    upserted: int
    """how many points this call wrote (0 when the collection was already complete)"""
    seconds: float
    resumed: bool


def corpus_fingerprint(bench: BenchmarkView) -> str:
    """sha256 of corpus.jsonl (from the manifest when the load verified the file against it)."""
    recorded = (bench.manifest.get("files") or {}).get(CORPUS, {})
    if bench.verified and isinstance(recorded, dict) and recorded.get("sha256"):
        return str(recorded["sha256"])
    return sha256_file(bench.root / CORPUS)


def _compatible(have: CollectionMeta, want: CollectionMeta) -> str | None:
    for key in ("model", "revision", "dimension", "distance", "pooling", "corpus_sha256"):
        if getattr(have, key) != getattr(want, key):
            return f"{key} is {getattr(have, key)!r}, this ingest needs {getattr(want, key)!r}"
    return None


def load_collection(store: Store, name: str, meta: CollectionMeta, clip_ids: Sequence[str],
                    make_points: Callable[[Sequence[str]], Iterable[PointIn]], *,
                    force: bool = False, index_labels: Sequence[str] = (),
                    float_maps: Sequence[str] = ("dur",),
                    vectors: Mapping[str, VectorSpec] | None = None, sparse: Sequence[str] = (),
                    plain_sparse: Sequence[str] = (), shard_number: int | None = None,
                    replication_factor: int | None = None, segments: int = 1,
                    batch_size: int = 256, progress: Counter | None = None) -> LoadResult:
    """Make ``name`` hold exactly one point per clip id, built by ``make_points(ids)``;
    ``progress(points done, points total)`` after every batch.

    Complete and compatible: nothing to do. Incomplete (an interrupted load) and compatible:
    only the missing points are made and upserted. Made for another model, revision or corpus:
    a :class:`StoreError` unless ``force``, which drops and reloads it.
    """
    start = time.perf_counter()
    want = meta.with_(points=len(clip_ids), state=STATE_LOADING)
    resumed = False
    if store.exists(name):
        have = store.meta(name)
        problem = _compatible(have, want)
        if problem and not force:
            raise StoreError(f"collection {name!r} was made differently ({problem}); "
                             "pass --force to replace it")
        if problem or force:
            store.drop(name)
        elif have.complete and store.count(name) == len(clip_ids):
            if progress:
                progress(len(clip_ids), len(clip_ids))
            return LoadResult(name, len(clip_ids), 0, time.perf_counter() - start, False)
        else:
            resumed = True
            store.set_meta(name, want)
    if not store.exists(name):
        store.create(name, want, index_labels=index_labels, shard_number=shard_number,
                     replication_factor=replication_factor, float_maps=float_maps,
                     vectors=vectors, sparse=sparse, plain_sparse=plain_sparse, segments=segments)
    present = store.existing_ids(name, list(clip_ids)) if resumed else set()
    todo = [c for c in clip_ids if c not in present]
    done = len(clip_ids) - len(todo)
    if progress:
        progress(done, len(clip_ids))
    pieces = _segment_pieces(todo, done, len(clip_ids), segments)
    for k, piece in enumerate(pieces):
        for ids in batched(piece, batch_size):
            points = list(make_points(ids))
            store.upsert(name, points)
            done += len(ids)
            if progress:
                progress(done, len(clip_ids))
        if k < len(pieces) - 1:
            store.seal(name)  # the next piece goes into a segment of its own
    if store.count(name) != len(clip_ids):
        # points of clips no longer in the corpus (only possible when a collection is reused)
        extra = set(store.matching_ids(name)) - set(clip_ids)
        if extra:
            store.delete(name, sorted(extra))
        have = store.count(name)
        if have != len(clip_ids):
            raise StoreError(f"collection {name!r} holds {have} points after loading "
                             f"{len(clip_ids)} clips; rerun with --force")
    store.set_meta(name, want.with_(state=STATE_COMPLETE))
    return LoadResult(name, len(clip_ids), len(todo), time.perf_counter() - start, resumed)


def _segment_pieces(todo: Sequence[str], done: int, total: int, segments: int) -> list[Sequence[str]]:
    """``todo`` (the clips after the ``done`` already loaded) cut where the ``total`` points
    divide into ``segments`` equal parts: each piece is upserted, then sealed."""
    cuts = [total * k // segments - done for k in range(1, segments)]
    bounds = [0, *(c for c in cuts if 0 < c < len(todo)), len(todo)]
    return [todo[a:b] for a, b in zip(bounds, bounds[1:])]


def check_payload_labels(bench: BenchmarkView) -> None:
    """Every label of the benchmark's bank fits a payload (before any collection is touched)."""
    for label in bench.labels:
        check_label(label, f"{bench.root / ATOMS}")


def payload_meta(bench: BenchmarkView) -> CollectionMeta:
    return CollectionMeta(model=PAYLOAD_MODEL, revision="payload-v1", dimension=1,
                          distance="dot", pooling="none",
                          corpus_sha256=corpus_fingerprint(bench),
                          extra={"kind": "payload-only"})


def ingest_payload(bench: BenchmarkView, store: Store, *, force: bool = False,
                   shard_number: int | None = None, replication_factor: int | None = None,
                   batch_size: int = 1024, hooks: Hooks = SILENT) -> LoadResult:
    """Load the payload-only collection the oracle and the baselines search (progress under
    ``payload -> BACKEND``)."""
    check_payload_labels(bench)
    by_id = bench.clip_by_id

    def make(ids: Sequence[str]) -> Iterable[PointIn]:
        return (PointIn(cid, PAYLOAD_VECTOR, clip_payload(by_id[cid])) for cid in ids)

    return load_collection(store, PAYLOAD_COLLECTION, payload_meta(bench),
                           [c.id for c in bench.clips], make, force=force,
                           index_labels=bench.labels, shard_number=shard_number,
                           replication_factor=replication_factor, batch_size=batch_size,
                           progress=hooks.counter(f"payload -> {store.backend}"))


def require_ready(store: Store, name: str, bench: BenchmarkView, command: str) -> CollectionMeta:
    """The record of a complete collection made from this benchmark's corpus, or a one-line error
    naming the collection and the ``command`` that (re)creates it."""
    if not store.exists(name):
        raise StoreError(f"collection {name!r} not found ({store.backend}); create it with `{command}`")
    meta = store.meta(name)
    if meta.state != STATE_COMPLETE:
        raise StoreError(f"collection {name!r} is incomplete (an interrupted ingest); "
                         f"rerun `{command}` to finish it")
    if meta.corpus_sha256 and meta.corpus_sha256 != corpus_fingerprint(bench):
        raise StoreError(f"collection {name!r} holds another benchmark's corpus; "
                         f"rerun `{command} --force` to replace it")
    return meta


def ensure_payload_collection(bench: BenchmarkView, store: Store, *, auto: bool | None = None,
                              hooks: Hooks = SILENT) -> str:
    """The payload collection's name, loading it first on the embedded Edge store when needed.

    Auto-loading is on by default only for Edge (10,000 clips take about a second or two);
    local mode and servers are never written to implicitly: the error names the command.
    """
    auto = store.backend == "edge" if auto is None else auto
    command = f"bench ingest --data {bench.root} --model none" + (
        " --backend local" if store.backend == "local" else "")  # the store that lacks it
    try:
        require_ready(store, PAYLOAD_COLLECTION, bench, command)
    except StoreError:
        if not auto:
            raise
        hooks.notify(f"loading the payload collection {PAYLOAD_COLLECTION!r} into {store.backend} "
                     f"({len(bench.clips)} clips; once per benchmark)")
        ingest_payload(bench, store, force=True)
    return PAYLOAD_COLLECTION


def fetch_vectors(store: Store, name: str, clip_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Stored vectors of these clips as float32 arrays (missing clips left out)."""
    return {k: np.asarray(v, dtype=np.float32) for k, v in store.vectors(name, clip_ids).items()}
