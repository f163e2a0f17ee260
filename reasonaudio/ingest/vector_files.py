"""Precomputed embeddings: a model that ran elsewhere brings its vectors, we store and search them.

``bench ingest --vectors clips.npy --ids clip_ids.txt --name NAME [--query-vectors q.npy
--query-ids q_ids.txt]`` loads one vector per clip into ``reasonaudio-vectors-NAME`` with the
same event payload as any model's collection (so filters and ``bench search``'s checks work),
and the query vectors into ``reasonaudio-vectors-NAME.queries`` (points keyed by query id, the
query text in the payload). ``--retriever vectors:NAME`` then searches with those query vectors.

Everything is checked before the store is touched, so bad input leaves nothing behind: the
matrix is 2-D and real, every value finite, one row per id, ids unique, every clip of the
corpus present exactly once and no unknown id (the same for queries), query and clip vectors of
one dimension, and no all-zero vector under cosine distance. The collection records dimension,
distance, where the vectors came from (paths and sha256) and a digest of their contents as the
revision, so ingesting other vectors under the same name needs ``--force``.

Files: ``.npy`` (``numpy.save``; no pickles) or ``.parquet`` (one list column, or only numeric
columns; reading it needs pyarrow, e.g. ``pip install 'reasonaudio[hf]'``). Ids: a text file, one
id per line, in the row order of the matrix.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from reasonaudio.dataset.interleaved import variant_id, variant_ids, variant_texts
from reasonaudio.errors import DataError, StoreError
from reasonaudio.fileio import read_text, sha256_file
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.store.base import DISTANCES, CollectionMeta, PointIn, Store, collection_name
from reasonaudio.store.collections import corpus_fingerprint, load_collection
from reasonaudio.store.payload import clip_payload

FAMILY = "vectors:"
QUERIES_SUFFIX = ".queries"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
POOLING = "precomputed"
KIND = "precomputed"

@dataclass(frozen=True)
class VectorFiles:
    """One matrix file and the ids of its rows."""

    vectors: Path
    ids: Path


@dataclass(frozen=True)
class PrecomputedOptions:
    name: str
    """the retriever is ``vectors:NAME``; letters, digits, ``-`` and ``_``"""
    clips: VectorFiles
    queries: VectorFiles | None = None
    distance: str = "cosine"
    force: bool = False
    batch_size: int = 1024


@dataclass(frozen=True)
class CheckedVectors:
    """A matrix that passed every check, rows in ``ids`` order (float32): the benchmark's order,
    whatever the order of the files, so :meth:`digest` does not depend on it."""

    ids: list[str]
    matrix: np.ndarray
    source: dict[str, object]
    """paths and sha256 of the files (recorded in the collection)"""

    @property
    def dimension(self) -> int:
        return int(self.matrix.shape[1])

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update("\n".join(self.ids).encode("utf-8"))
        h.update(np.ascontiguousarray(self.matrix, dtype="<f4").tobytes())
        return h.hexdigest()


@dataclass(frozen=True)
class PrecomputedSummary:
    name: str
    retriever: str
    collection: str
    query_collection: str | None
    backend: str
    clips: int
    queries: int
    dimension: int
    distance: str
    upserted: int
    """points written now (clips and queries; 0 when both collections were already complete)"""
    seconds: float


def retriever_name(name: str) -> str:
    return FAMILY + name


def clip_collection(name: str) -> str:
    return collection_name(retriever_name(name))


def query_collection(name: str) -> str:
    return clip_collection(name) + QUERIES_SUFFIX


def check_name(name: str) -> str:
    if not NAME_PATTERN.match(name):
        raise DataError(f"--name {name!r}: use 1 to 64 letters, digits, '-' or '_' "
                        "(it names the collection and the retriever vectors:NAME)")
    return name


def read_ids(path: Path, what: str) -> list[str]:
    """One id per line (surrounding whitespace stripped; a final newline, CRLF and a BOM are fine)."""
    if not path.is_file():
        raise DataError(f"{path}: {what} id file not found")
    lines = read_text(path).splitlines()
    ids = [line.strip() for line in lines]
    while ids and not ids[-1]:
        ids.pop()
    for i, cid in enumerate(ids, 1):
        if not cid:
            raise DataError(f"{path}:{i}: empty line; the file must hold one {what} id per line")
    return ids


def _read_parquet(path: Path) -> np.ndarray:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(f"{path}: reading .parquet needs pyarrow (pip install 'reasonaudio[hf]'), "
                        "or save the matrix with numpy.save as .npy") from None
    import pyarrow as pa

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"{path}: not a readable parquet file ({exc})") from None
    lists = [f for f in table.schema if pa.types.is_list(f.type) or pa.types.is_fixed_size_list(f.type)
             or pa.types.is_large_list(f.type)]
    if len(lists) == 1:
        column = table.column(lists[0].name).to_pylist()
        if any(v is None for v in column):
            raise DataError(f"{path}: column {lists[0].name!r} has a null vector")
        lengths = {len(v) for v in column}
        if len(lengths) > 1:
            raise DataError(f"{path}: column {lists[0].name!r} holds vectors of different "
                            f"lengths ({', '.join(map(str, sorted(lengths)[:3]))})")
        return np.asarray(column, dtype=np.float64).reshape(len(column), -1)
    if lists:
        raise DataError(f"{path}: {len(lists)} list columns ({', '.join(f.name for f in lists[:3])}); "
                        "expected one column of vectors")
    bad = [f.name for f in table.schema if not (pa.types.is_floating(f.type) or pa.types.is_integer(f.type))]
    if bad:
        raise DataError(f"{path}: column {bad[0]!r} is not numeric; expected one list column of "
                        "vectors or only numeric columns (one per dimension)")
    if table.num_columns == 0:
        raise DataError(f"{path}: no columns")
    if any(table.column(i).null_count for i in range(table.num_columns)):
        raise DataError(f"{path}: null values")
    return np.column_stack([table.column(i).to_numpy() for i in range(table.num_columns)])


def _read_npy(path: Path) -> np.ndarray:
    """A ``.npy`` array whose header was checked against the file first: a header claiming more
    data than the file holds (10^12 rows in a 1 KiB file) is refused before anything is allocated."""
    unreadable = f"{path}: not a readable .npy array without pickles"
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                      else np.lib.format.read_array_header_2_0)
            shape, _fortran, dtype = header(fh)
            data_bytes = path.stat().st_size - fh.tell()
    except (ValueError, OSError, SyntaxError, TypeError) as exc:
        raise DataError(f"{unreadable} ({(str(exc) or type(exc).__name__).splitlines()[0]})") from None
    if dtype.hasobject:
        raise DataError(f"{unreadable} (dtype {dtype} holds Python objects)")
    need = math.prod(shape) * dtype.itemsize
    if need > data_bytes:
        raise DataError(f"{path}: its header says shape {tuple(shape)} of {dtype} ({need:,} bytes) "
                        f"but the file holds {data_bytes:,} bytes of data; the file is truncated "
                        "or its header is wrong")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"{unreadable} ({exc})") from None


def read_matrix(path: Path) -> np.ndarray:
    """A 2-D real matrix from ``.npy`` or ``.parquet``."""
    if not path.is_file():
        raise DataError(f"{path}: vector file not found")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        matrix = _read_npy(path)
    elif suffix == ".parquet":
        matrix = _read_parquet(path)
    else:
        raise DataError(f"{path}: expected a .npy or .parquet file, got {suffix or 'no suffix'!r}")
    if not isinstance(matrix, np.ndarray) or matrix.dtype.kind not in "fiu":
        raise DataError(f"{path}: expected a real-valued matrix, got dtype {getattr(matrix, 'dtype', '?')}")
    if matrix.ndim != 2:
        raise DataError(f"{path}: expected a 2-D matrix (rows = ids), got shape {tuple(matrix.shape)}")
    if matrix.shape[1] < 1:
        raise DataError(f"{path}: vectors have dimension 0")
    return matrix


def check_vectors(files: VectorFiles, known: Sequence[str], what: str, distance: str,
                  dimension: int | None = None, optional: Sequence[str] = ()) -> CheckedVectors:
    """Read and check one matrix against the benchmark's ``known`` ids (every one exactly once)
    and ``optional`` ones (at most once: interleaved variants, ``QID@interleaved``)."""
    matrix = read_matrix(files.vectors)
    ids = read_ids(files.ids, what)
    if matrix.shape[0] != len(ids):
        raise DataError(f"{files.vectors}: {matrix.shape[0]} rows but {files.ids} lists {len(ids)} ids")
    if dimension is not None and matrix.shape[1] != dimension:
        raise DataError(f"{files.vectors}: {what} vectors have dimension {matrix.shape[1]}, "
                        f"the clip vectors {dimension}")
    seen: set[str] = set()
    for i, x in enumerate(ids, 1):
        if x in seen:
            raise DataError(f"{files.ids}:{i}: {what} id {x!r} appears twice")
        seen.add(x)
    known_set = set(known) | set(optional)
    unknown = [x for x in ids if x not in known_set]
    if unknown:
        raise DataError(f"{files.ids}: {len(unknown)} unknown {what} id(s), e.g. {unknown[0]!r} "
                        f"(not in the benchmark)")
    missing = [x for x in known if x not in seen]
    if missing:
        raise DataError(f"{files.ids}: {len(missing)} of the benchmark's {len(known)} {what}s have no "
                        f"vector, e.g. {missing[0]!r}; every {what} must appear exactly once")
    with np.errstate(over="ignore"):  # a value beyond float32 becomes inf, refused just below
        vectors = matrix.astype(np.float32)
    bad_rows = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
    if bad_rows.size:
        r = int(bad_rows[0])
        kind = "NaN" if np.isnan(vectors[r]).any() else "inf (or a value beyond float32)"
        raise DataError(f"{files.vectors}: row {r} ({what} {ids[r]!r}) holds {kind}; "
                        f"{bad_rows.size} row(s) are not finite")
    if distance == "cosine":
        zero = np.flatnonzero(~vectors.any(axis=1))
        if zero.size:
            raise DataError(f"{files.vectors}: row {int(zero[0])} ({what} {ids[int(zero[0])]!r}) is "
                            "all zeros; cosine similarity is undefined for it")
    source = {"vectors": str(files.vectors), "vectors_sha256": sha256_file(files.vectors),
              "ids": str(files.ids), "ids_sha256": sha256_file(files.ids)}
    # rows in the benchmark's order: the same vectors give the same digest (the collection's
    # revision) whatever row order the files use
    row = {x: i for i, x in enumerate(ids)}
    kept = list(known) + [x for x in optional if x in row]
    return CheckedVectors(kept, vectors[[row[x] for x in kept]], source)


def _metas(bench: BenchmarkView, opts: PrecomputedOptions, clips: CheckedVectors,
           queries: CheckedVectors | None) -> tuple[CollectionMeta, CollectionMeta | None]:
    revision = "sha256:" + hashlib.sha256(
        (clips.digest() + (queries.digest() if queries else "")).encode()).hexdigest()[:16]
    corpus = corpus_fingerprint(bench)
    extra = {"kind": KIND, "name": opts.name, "source": clips.source,
             "queries": (None if queries is None else
                         {"collection": query_collection(opts.name), "count": len(queries.ids),
                          "source": queries.source})}
    clip_meta = CollectionMeta(model=retriever_name(opts.name), revision=revision,
                               dimension=clips.dimension, distance=opts.distance, pooling=POOLING,
                               corpus_sha256=corpus, extra=extra)
    query_meta = None
    if queries is not None:
        query_meta = CollectionMeta(model=retriever_name(opts.name) + QUERIES_SUFFIX, revision=revision,
                                    dimension=queries.dimension, distance=opts.distance,
                                    pooling=POOLING, corpus_sha256=corpus,
                                    extra={"kind": KIND + "-queries", "name": opts.name,
                                           "source": queries.source})
    return clip_meta, query_meta


def check_store(store: Store, checked: "CheckedInput") -> None:
    """Without --force, fail before writing when an existing collection was made differently."""
    if checked.opts.force:
        return
    name = checked.opts.name
    plans = [(clip_collection(name), checked.clip_meta)]
    if checked.query_meta is not None:
        plans.append((query_collection(name), checked.query_meta))
    for name, want in plans:
        if not store.exists(name):
            continue
        have = store.meta(name)
        for key in ("model", "revision", "dimension", "distance", "pooling", "corpus_sha256"):
            if getattr(have, key) != getattr(want, key):
                raise StoreError(f"collection {name!r} holds other vectors ({key} is "
                                 f"{getattr(have, key)!r}, these are {getattr(want, key)!r}); "
                                 "pass --force to replace it")


@dataclass(frozen=True)
class CheckedInput:
    """Everything ``bench ingest --vectors`` needs, checked against the benchmark."""

    opts: PrecomputedOptions
    clips: CheckedVectors
    queries: CheckedVectors | None
    clip_meta: CollectionMeta
    query_meta: CollectionMeta | None


def check_precomputed(bench: BenchmarkView, opts: PrecomputedOptions) -> CheckedInput:
    """Read and check every file (no store involved): bad input fails here, before any write."""
    check_name(opts.name)
    if opts.distance not in DISTANCES:
        raise DataError(f"--distance must be one of {', '.join(DISTANCES)}, got {opts.distance!r}")
    clips = check_vectors(opts.clips, [c.id for c in bench.clips], "clip", opts.distance)
    queries = None
    if opts.queries is not None:
        queries = check_vectors(opts.queries, [q.id for q in bench.queries], "query", opts.distance,
                                dimension=clips.dimension, optional=variant_ids(bench.files))
    clip_meta, query_meta = _metas(bench, opts, clips, queries)
    return CheckedInput(opts, clips, queries, clip_meta, query_meta)


def ingest_precomputed(bench: BenchmarkView, store: Store, opts: PrecomputedOptions | CheckedInput,
                       hooks: Hooks = SILENT) -> PrecomputedSummary:
    """Check the files (unless given checked), then load the clip (and query) collection; one
    progress label, ``vectors:NAME -> BACKEND``, over clip and query points together."""
    t0 = time.perf_counter()
    checked = opts if isinstance(opts, CheckedInput) else check_precomputed(bench, opts)
    opts, clips, queries = checked.opts, checked.clips, checked.queries
    clip_meta, query_meta = checked.clip_meta, checked.query_meta
    cname, qname = clip_collection(opts.name), query_collection(opts.name)
    check_store(store, checked)
    total = len(clips.ids) + (len(queries.ids) if queries else 0)
    by_id = bench.clip_by_id
    row = {cid: i for i, cid in enumerate(clips.ids)}

    def clip_points(ids: Sequence[str]) -> list[PointIn]:
        return [PointIn(cid, clips.matrix[row[cid]].tolist(), clip_payload(by_id[cid])) for cid in ids]

    label = f"vectors:{opts.name} -> {store.backend}"
    upserted = load_collection(store, cname, clip_meta, [c.id for c in bench.clips], clip_points,
                               force=opts.force, index_labels=bench.labels,
                               batch_size=opts.batch_size,
                               progress=hooks.counter(label, total=total)).upserted
    if queries is not None and query_meta is not None:
        qrow = {qid: i for i, qid in enumerate(queries.ids)}
        texts = {**{q.id: q.text for q in bench.queries}, **variant_texts(bench.files)}
        task_of = {**{q.id: q.task for q in bench.queries},
                   **{variant_id(q.id): q.task for q in bench.queries}}

        def query_points(ids: Sequence[str]) -> list[PointIn]:
            # the store addresses points by the payload's clip_id; here it holds the query id
            # (or an interleaved variant's key, QID@interleaved)
            return [PointIn(qid, queries.matrix[qrow[qid]].tolist(),
                            {"clip_id": qid, "query_id": qid, "text": texts[qid],
                             "task": task_of[qid]}) for qid in ids]

        upserted += load_collection(store, qname, query_meta, list(queries.ids),
                                    query_points, force=opts.force, batch_size=opts.batch_size,
                                    progress=hooks.counter(label, len(clips.ids), total)).upserted
    elif store.exists(qname):
        store.drop(qname)  # query vectors of an earlier ingest would not match these clips
    return PrecomputedSummary(
        name=opts.name, retriever=retriever_name(opts.name), collection=cname,
        query_collection=qname if queries is not None else None, backend=store.backend,
        clips=len(clips.ids), queries=len(queries.ids) if queries else 0,
        dimension=clips.dimension, distance=opts.distance, upserted=upserted,
        seconds=time.perf_counter() - t0)


def options_from_cli(model: str | None, vectors: Path | None, ids: Path | None, name: str | None,
                     query_vectors: Path | None, query_ids: Path | None, distance: str,
                     force: bool) -> PrecomputedOptions:
    """``bench ingest``'s precomputed-vector flags as options (each missing pair named)."""
    if model is not None and vectors is not None:
        raise DataError("pass either --model or --vectors, not both")
    if vectors is None:
        raise DataError("pass --model NAME (see `bench models`; none = payload only) or "
                        "--vectors FILE --ids FILE --name NAME")
    if ids is None or name is None:
        raise DataError("--vectors needs --ids (one clip id per line, in row order) and --name NAME")
    if (query_vectors is None) != (query_ids is None):
        raise DataError("--query-vectors and --query-ids go together")
    queries = VectorFiles(query_vectors, query_ids) if query_vectors and query_ids else None
    return PrecomputedOptions(name=check_name(name), clips=VectorFiles(vectors, ids), queries=queries,
                              distance=distance, force=force)
