"""Qdrant Edge backend: the server's Rust engine in-process (``qdrant-edge-py``), one shard per
collection, kept on disk under the benchmark (``DATA/qdrant/edge/<collection>/``).

Layout of a collection folder::

    shard/            the EdgeShard's files (segments, WAL, edge_config.json)
    collection.json   our CollectionMeta (Edge has no collection metadata), written last

A folder without ``collection.json`` is a create that was interrupted; it is removed and made
again. Filters arrive as qdrant-client ``models.Filter`` and are translated to Edge's own
mirror classes by :func:`to_edge_filter`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence, TypeAlias

import qdrant_edge as qe
from qdrant_client.http import models

from reasonaudio.errors import StoreError
from reasonaudio.fileio import atomic_file
from reasonaudio.store.base import (
    CollectionMeta, Fields, Found, PointIn, Request, Sparse, Store, VectorSpec,
    found_from_payload, payload_fields, plain_vector,
)
from reasonaudio.store import formula as fm
from reasonaudio.store.handles import SharedHandles
from reasonaudio.store.lock import StoreLock, holder
from reasonaudio.store.space import check_free_space
from reasonaudio.store.payload import KEYWORD_FIELDS, dur_key, integer_fields, point_id

META_FILE = "collection.json"
SHARD_DIR = "shard"

_DISTANCE = {"cosine": qe.Distance.Cosine, "dot": qe.Distance.Dot,
             "euclid": qe.Distance.Euclid, "manhattan": qe.Distance.Manhattan}


# --- filter translation: qdrant-client models -> qdrant_edge classes ------------------------
EdgeCondition: TypeAlias = ("qe.Filter | qe.FieldCondition | qe.IsEmptyCondition | qe.IsNullCondition"
                            " | qe.HasIdCondition | qe.NestedCondition")
"""one condition of an Edge filter"""


def _as_list(value: object) -> list[Any] | None:
    if value is None:
        return None
    return list(value) if isinstance(value, list) else [value]


def _edge_match(match: models.Match) -> qe.MatchValue | qe.MatchAny | qe.MatchExcept | qe.MatchText:
    if isinstance(match, models.MatchValue):
        if isinstance(match.value, bool):  # Edge 0.9.0 stores True as 1 (docs/qdrant.md)
            raise TypeError("boolean MatchValue is not supported on Qdrant Edge 0.9.0")
        return qe.MatchValue(match.value)
    if isinstance(match, models.MatchAny):
        return qe.MatchAny(list(match.any))
    if isinstance(match, models.MatchExcept):
        return qe.MatchExcept(list(match.except_))
    if isinstance(match, models.MatchText):
        return qe.MatchText(match.text)
    raise TypeError(f"match {type(match).__name__} has no Qdrant Edge translation here")


def _edge_condition(cond: models.Condition) -> EdgeCondition:
    if isinstance(cond, models.Filter):
        return to_edge_filter(cond)
    if isinstance(cond, models.FieldCondition):
        rng = None
        if cond.range is not None:
            r = cond.range
            rng = qe.RangeFloat(gte=r.gte, gt=r.gt, lte=r.lte, lt=r.lt)
        other = (cond.geo_bounding_box, cond.geo_radius, cond.geo_polygon, cond.values_count)
        if any(o is not None for o in other):
            raise TypeError(f"field condition on {cond.key!r} uses a kind Edge translation lacks")
        return qe.FieldCondition(key=cond.key, match=_edge_match(cond.match) if cond.match else None,
                                 range=rng, is_empty=cond.is_empty, is_null=cond.is_null)
    if isinstance(cond, models.IsEmptyCondition):
        return qe.IsEmptyCondition(cond.is_empty.key)
    if isinstance(cond, models.IsNullCondition):
        return qe.IsNullCondition(cond.is_null.key)
    if isinstance(cond, models.HasIdCondition):
        return qe.HasIdCondition(set(str(i) for i in cond.has_id))
    if isinstance(cond, models.NestedCondition):
        return qe.NestedCondition(cond.nested.key, to_edge_filter(cond.nested.filter))
    raise TypeError(f"condition {type(cond).__name__} has no Qdrant Edge translation here")


def to_edge_filter(flt: models.Filter | None) -> qe.Filter | None:
    """The same filter in qdrant_edge's classes (must/should/must_not, nested filters)."""
    if flt is None:
        return None
    if flt.min_should is not None:
        raise TypeError("min_should has no Qdrant Edge translation here")
    conv = lambda conds: (None if conds is None  # noqa: E731
                          else [_edge_condition(c) for c in _as_list(conds)])
    return qe.Filter(must=conv(flt.must), should=conv(flt.should), must_not=conv(flt.must_not))


_OPS = {"sum": lambda a: qe.Expression.Sum(a), "mult": lambda a: qe.Expression.Mult(a),
        "max": lambda a: qe.Expression.Max(a), "min": lambda a: qe.Expression.Min(a),
        "neg": lambda a: qe.Expression.Neg(a[0]), "exp": lambda a: qe.Expression.Exp(a[0]),
        "abs": lambda a: qe.Expression.Abs(a[0]),
        "div": lambda a: qe.Expression.Div(a[0], a[1], 0.0)}


def to_edge_expression(expr: fm.Expr) -> qe.Expression:
    """A ``store.formula`` expression in qdrant_edge's classes."""
    if isinstance(expr, fm.Const):
        return qe.Expression.Constant(float(expr.value))
    if isinstance(expr, fm.Var):
        return qe.Expression.Variable(expr.key)
    if isinstance(expr, fm.Cond):
        return qe.Expression.Condition(to_edge_filter(expr.flt))
    if isinstance(expr, fm.Op) and expr.name in _OPS:
        return _OPS[expr.name]([to_edge_expression(a) for a in expr.args])
    raise TypeError(f"formula expression {expr!r} has no Qdrant Edge translation here")


def _edge_vector(vec: Sequence[float] | Sparse) -> list[float] | qe.SparseVector:
    if isinstance(vec, Sparse):
        return qe.SparseVector(list(vec.indices), [float(v) for v in vec.values])
    return [float(x) for x in vec]


def _edge_scoring(req: Request) -> qe.Query | qe.Formula | qe.Fusion | None:
    if req.nearest is not None:
        return qe.Query.Nearest(_edge_vector(req.nearest), using=req.using)
    if req.formula is not None:
        return qe.Formula(to_edge_expression(req.formula), defaults=fm.defaults(req.formula))
    if req.fusion == "rrf":
        return qe.Fusion.Rrf(k=req.rrf_k)
    if req.fusion == "dbsf":
        return qe.Fusion.Dbsf()
    if req.fusion is not None:
        raise ValueError(f"unknown fusion {req.fusion!r}")
    return None


_EXACT = qe.SearchParams(exact=True)


def _edge_prefetch(req: Request, filters: dict[int, qe.Filter | None]) -> qe.Prefetch:
    return qe.Prefetch(limit=req.limit, query=_edge_scoring(req),
                       prefetches=[_edge_prefetch(p, filters) for p in req.prefetch] or None,
                       filter=_shared_filter(req.flt, filters), score_threshold=req.score_threshold,
                       params=_EXACT if req.exact else None)


def _shared_filter(flt: models.Filter | None, filters: dict[int, qe.Filter | None]) -> qe.Filter | None:
    """``to_edge_filter`` once per filter object of a request (a soft query's searches share
    one: half the translation time)."""
    if flt is None:
        return None
    if id(flt) not in filters:
        filters[id(flt)] = to_edge_filter(flt)
    return filters[id(flt)]


def to_edge_request(req: Request, payload: bool = True) -> qe.QueryRequest:
    """A :class:`Request` as an Edge ``QueryRequest`` (``payload=False``: no payload back)."""
    filters: dict[int, qe.Filter | None] = {}
    return qe.QueryRequest(limit=req.limit, query=_edge_scoring(req),
                           prefetches=[_edge_prefetch(p, filters) for p in req.prefetch] or None,
                           filter=_shared_filter(req.flt, filters),
                           with_payload=_selector(req.fields) if payload else False,
                           with_vector=False, score_threshold=req.score_threshold,
                           params=_EXACT if req.exact else None)


def _selector(fields: Fields) -> bool | qe.PayloadSelector:
    sel = payload_fields(fields)
    return True if sel is True else qe.PayloadSelector.Include(sel)


# --- the store -----------------------------------------------------------------------------

def _flush_and_close(shard: qe.EdgeShard) -> None:
    shard.flush()
    shard.close()


_SHARDS = SharedHandles(_flush_and_close)
"""Shard paths: an Edge shard holds a lock on its WAL, so one process may open it only once;
every EdgeStore of this process shares it."""


def _busy(path: Path, exc: BaseException) -> StoreError:
    text = str(exc)
    if "WouldBlock" in text:
        who = holder(path.parent) or "another process"
        return StoreError(f"{path}: the Qdrant Edge shard is open in {who} (Edge allows "
                          "one at a time); wait for it, or use --backend local or a server")
    return StoreError(f"{path}: cannot open Qdrant Edge shard ({text.splitlines()[0][:200]})")


class EdgeStore(Store):
    """Collections as Qdrant Edge shards in folders under ``root``."""

    backend = "edge"

    def __init__(self, root: Path, float_indexes: bool = False, write: bool = False) -> None:
        self.root = Path(root)
        self._lock = StoreLock(self.root, "Qdrant Edge store").acquire(write)
        """shared while reading; exclusive from open (``write``) or from the first change"""
        self.float_indexes = float_indexes
        """Float indexes on ``dur."<label>"``: off by default. Edge 0.9.0 spends about 0.15 s
        creating each one (30 s for 200 labels), while the ``has`` guard the translator puts
        beside every duration range already lets the planner start from the keyword index."""
        self._held: set[str] = set()

    def _dir(self, name: str) -> Path:
        return self.root / name

    def _key(self, name: str) -> str:
        return str((self._dir(name) / SHARD_DIR).resolve())

    def _hold(self, key: str, shard: qe.EdgeShard | None = None) -> qe.EdgeShard:
        """The shared shard for ``key``, this store counted once among its users."""
        if key not in _SHARDS:
            self._held.discard(key)  # dropped meanwhile, by this or another store
        if key in self._held:
            return _SHARDS.peek(key)
        handle = _SHARDS.acquire(key, lambda: shard if shard is not None else self._load(key))
        self._held.add(key)
        return handle

    @staticmethod
    def _load(key: str) -> qe.EdgeShard:
        check_free_space(Path(key), "Qdrant Edge")
        try:
            return qe.EdgeShard.load(key)
        except Exception as exc:  # the Rust side raises plain exceptions
            raise _busy(Path(key).parent, exc) from None

    def _shard(self, name: str) -> qe.EdgeShard:
        key = self._key(name)
        if key not in _SHARDS and not self.exists(name):
            raise StoreError(f"collection {name!r} not found in {self.root} (Qdrant Edge)")
        return self._hold(key)

    def _forget(self, key: str) -> None:
        _SHARDS.drop(key)
        self._held.discard(key)

    def collections(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if (p / META_FILE).is_file() and (p / SHARD_DIR).is_dir())

    def exists(self, name: str) -> bool:
        d = self._dir(name)
        return (d / META_FILE).is_file() and (d / SHARD_DIR).is_dir()

    def create(self, name: str, meta: CollectionMeta, *, index_labels: Sequence[str] = (),
               shard_number: int | None = None, replication_factor: int | None = None,
               float_maps: Sequence[str] = ("dur",), vectors: Mapping[str, VectorSpec] | None = None,
               sparse: Sequence[str] = (), plain_sparse: Sequence[str] = (),
               segments: int = 1) -> None:
        self._lock.require_write()
        if self.exists(name):
            raise StoreError(f"collection {name!r} already exists in {self.root}")
        d = self._dir(name)
        check_free_space(d, "Qdrant Edge")
        self._forget(self._key(name))
        if d.exists():  # an interrupted create: no collection.json was written
            shutil.rmtree(d)
        d.mkdir(parents=True)
        parallel: dict[str, Any] = {}
        if segments > 1:  # seal() turns the open segment into an immutable one, then a new one opens
            parallel = {"optimizers": qe.EdgeOptimizersConfig(default_segment_number=segments,
                                                              indexing_threshold=1),
                        "max_search_threads": segments}
        if vectors is None and not sparse and not plain_sparse:
            config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=meta.dimension,
                                                               distance=_DISTANCE[meta.distance]),
                                   **parallel)
        else:
            config = qe.EdgeConfig(
                vectors={k: qe.EdgeVectorParams(size=v.size, distance=_DISTANCE[v.distance])
                         for k, v in (vectors or {}).items()} or None,
                sparse_vectors={**{k: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)
                                   for k in sparse},
                                **{k: qe.EdgeSparseVectorParams() for k in plain_sparse}} or None,
                **parallel)
        try:
            shard = qe.EdgeShard.create(str(d / SHARD_DIR), config)
        except Exception as exc:
            raise _busy(d, exc) from None
        for key in KEYWORD_FIELDS:
            shard.update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))
        for key in integer_fields(tuple(float_maps)):
            shard.update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Integer))
        for label in (index_labels if self.float_indexes else ()):
            for field in float_maps:
                shard.update(qe.UpdateOperation.create_field_index(dur_key(label, field),
                                                                   qe.PayloadSchemaType.Float))
        shard.flush()
        self._hold(self._key(name), shard)
        self._write_meta(name, meta)

    def _write_meta(self, name: str, meta: CollectionMeta) -> None:
        with atomic_file(self._dir(name) / META_FILE, encoding="utf-8") as fh:
            json.dump(meta.to_json(), fh, indent=2, sort_keys=True)
            fh.write("\n")

    def meta(self, name: str) -> CollectionMeta:
        path = self._dir(name) / META_FILE
        if not self.exists(name):
            raise StoreError(f"collection {name!r} not found in {self.root} (Qdrant Edge)")
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise StoreError(f"{path}: unreadable collection metadata ({exc})") from None
        return CollectionMeta.from_json(obj, str(path))

    def set_meta(self, name: str, meta: CollectionMeta) -> None:
        self._lock.require_write()
        self._shard(name).flush()  # points first, then the record that says they are there
        self._write_meta(name, meta)

    def drop(self, name: str) -> None:
        self._lock.require_write()
        self._forget(self._key(name))
        d = self._dir(name)
        if d.exists():
            (d / META_FILE).unlink(missing_ok=True)  # no longer looks complete, even if rmtree dies
            shutil.rmtree(d)

    def upsert(self, name: str, points: Sequence[PointIn]) -> None:
        """Write the points in the order given, one per update operation. Edge gives the points
        of one multi-point operation their internal offsets in no fixed order (a hash map), and
        those offsets decide the order of equal scores and the last float32 digit of a BM25
        score, so two builds of one collection answered differently; one point per operation
        costs the same (0.022 against 0.024 ms per point, 3,000 x 512 vectors) and makes every
        build of a collection from the same points answer the same (docs/qdrant.md,
        "Repeatable answers")."""
        self._lock.require_write()
        shard = self._shard(name)
        edge_points = [qe.Point(point_id(p.clip_id),
                                {k: _edge_vector(v) for k, v in p.vector.items()}
                                if isinstance(p.vector, Mapping) else _edge_vector(p.vector),
                                p.payload)
                       for p in points]
        for point in edge_points:  # one point per operation: see the docstring
            shard.update(qe.UpdateOperation.upsert_points([point]))

    def seal(self, name: str) -> None:
        self._lock.require_write()
        self._shard(name).optimize()  # only a shard created with segments > 1 optimises

    def query(self, name: str, vector: Sequence[float], k: int, flt: models.Filter | None = None,
              fields: Fields = False) -> list[Found]:
        req = qe.QueryRequest(limit=k, query=qe.Query.Nearest([float(x) for x in vector]),
                              filter=to_edge_filter(flt), with_payload=_selector(fields),
                              with_vector=False)
        return [found_from_payload(p.payload, p.score, fields, name)
                for p in self._shard(name).query(req)]

    def _answers(self, name: str, requests: Sequence[Request], payload: bool) -> list[list[Any]]:
        return self._shard(name).query_batch(qe.QueryBatchRequest(
            [to_edge_request(r, payload) for r in requests]))

    def scroll(self, name: str, flt: models.Filter | None = None, fields: Fields = ("clip_id",),
               batch: int = 2048) -> Iterator[Found]:
        shard = self._shard(name)
        eflt = to_edge_filter(flt)
        sel = _selector(fields)
        offset = None
        while True:
            records, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=batch, filter=eflt,
                                                            with_payload=sel, with_vector=False))
            for r in records:
                yield found_from_payload(r.payload, 0.0, fields, name)
            if offset is None:
                return

    def count(self, name: str, flt: models.Filter | None = None) -> int:
        return int(self._shard(name).count(qe.CountRequest(exact=True, filter=to_edge_filter(flt))))

    def retrieve(self, name: str, clip_ids: Sequence[str], fields: Fields = ("clip_id",)) -> list[Found]:
        records = self._shard(name).retrieve([point_id(c) for c in clip_ids],
                                             with_payload=_selector(fields), with_vector=False)
        return [found_from_payload(r.payload, 0.0, fields, name) for r in records]

    def vectors(self, name: str, clip_ids: Sequence[str]) -> dict[str, list[float]]:
        records = self._shard(name).retrieve([point_id(c) for c in clip_ids],
                                             with_payload=_selector(False), with_vector=True)
        return {found_from_payload(r.payload, 0.0, False, name).clip_id: plain_vector(r.vector)
                for r in records}

    def delete(self, name: str, clip_ids: Sequence[str]) -> None:
        self._lock.require_write()
        self._shard(name).update(qe.UpdateOperation.delete_points([point_id(c) for c in clip_ids]))

    def close(self) -> None:
        for key in sorted(self._held):
            _SHARDS.release(key)
        self._held.clear()
        self._lock.release()

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "path": str(self.root)}
