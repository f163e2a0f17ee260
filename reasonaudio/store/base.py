"""The one interface every Qdrant backend implements, and what a collection records about itself.

Ingest and retrievers only see :class:`Store`, so the embedded default, qdrant-client's local
mode and a real server (or cluster) are interchangeable. Filters are qdrant-client's
``models.Filter`` (the REST schema); a backend with its own classes (Qdrant Edge) converts them.
Points are addressed by clip id: the backend maps it to a uuid5 point id
(:func:`reasonaudio.store.payload.point_id`) and keeps the clip id in the payload.
"""

from __future__ import annotations

import abc
import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from reasonaudio.errors import StoreError
from reasonaudio.types import ClipId

if TYPE_CHECKING:
    from qdrant_client.models import Filter

COLLECTION_PREFIX = "reasonaudio-"
PAYLOAD_MODEL = "none"
"""The pseudo model of the payload-only collection the oracle and baselines search."""

META_KEY = "reasonaudio"
"""Key under which our record sits in a server's collection metadata."""

STATE_LOADING = "loading"
STATE_COMPLETE = "complete"

DISTANCES = ("cosine", "dot", "euclid", "manhattan")


def collection_name(model: str) -> str:
    """``reasonaudio-<model>``; characters a collection name or a folder should not hold become ``-``."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", model.strip()).strip("-.")
    if not slug:
        raise StoreError(f"model name {model!r} gives an empty collection name")
    return COLLECTION_PREFIX + ("payload" if model == PAYLOAD_MODEL else slug)


@dataclass(frozen=True)
class CollectionMeta:
    """What a collection records about how its points were made (docs/qdrant.md).

    ``state`` is ``loading`` from creation until every point is in, then ``complete``: an
    interrupted ingest leaves ``loading`` behind, which the next ingest detects and resumes.
    ``corpus_sha256`` ties the collection to one benchmark corpus (a server may hold several).
    """

    model: str
    revision: str
    dimension: int
    distance: str
    pooling: str
    corpus_sha256: str = ""
    points: int = 0
    state: str = STATE_LOADING
    extra: dict[str, Any] = field(default_factory=dict)
    schema: int = 1

    def __post_init__(self) -> None:
        if self.distance not in DISTANCES:
            raise ValueError(f"distance must be one of {DISTANCES}, got {self.distance!r}")
        if self.dimension < 1:
            raise ValueError(f"dimension must be >= 1, got {self.dimension}")

    @property
    def complete(self) -> bool:
        return self.state == STATE_COMPLETE

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: object, where: str) -> "CollectionMeta":
        if not isinstance(obj, dict):
            raise StoreError(f"{where}: collection metadata missing or not an object "
                             "(not created by reasonaudio?)")
        try:
            return cls(model=str(obj["model"]), revision=str(obj["revision"]),
                       dimension=int(obj["dimension"]), distance=str(obj["distance"]),
                       pooling=str(obj["pooling"]), corpus_sha256=str(obj.get("corpus_sha256", "")),
                       points=int(obj.get("points", 0)), state=str(obj.get("state", STATE_LOADING)),
                       extra=dict(obj.get("extra") or {}), schema=int(obj.get("schema", 1)))
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"{where}: malformed collection metadata ({exc})") from None

    def with_(self, **changes: Any) -> "CollectionMeta":
        return replace(self, **changes)


@dataclass(frozen=True)
class Sparse:
    """A sparse vector (BM25 term weights, soft evidence): indices and their values, every value
    above 0, so a search of positive vectors scores every point it lists above 0: local mode
    lists a point scoring 0, Edge's and a server's sparse indexes drop it (qdrant-client#1454)."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if not all(v > 0 for v in self.values):
            raise ValueError(f"a sparse vector holds a value that is not above 0 ({self.values}); "
                             "leave it out (docs/qdrant.md, \"Backends that agree\")")


@dataclass(frozen=True)
class VectorSpec:
    """One named vector of a collection made of several (``Store.create(vectors=...)``)."""

    size: int
    distance: str


@dataclass(frozen=True)
class PointIn:
    """A point to upsert: the clip it stands for, its vector and its payload. ``vector`` is one
    dense vector, or name -> dense vector or :class:`Sparse` for a collection of named vectors."""

    clip_id: str
    vector: Sequence[float] | Mapping[str, Sequence[float] | Sparse]
    payload: dict[str, Any]


@dataclass(frozen=True)
class Request:
    """One query of a batch (``Store.query_batch``), backend-neutral: exactly one of ``nearest``
    (a dense vector or :class:`Sparse`, searched in the vector ``using``), ``formula`` (a
    ``store.formula.Expr`` scoring the points the prefetches bring) or ``fusion`` (``rrf`` |
    ``dbsf`` of the prefetches: only at the root, never in a prefetch), or none (the first points
    ``flt`` admits, unscored, in an order the backend chooses). Prefetches are requests too;
    ``fields`` only matters at the top."""

    limit: int
    nearest: Sequence[float] | Sparse | None = None
    using: str | None = None
    formula: Any = None
    """a ``store.formula.Expr``"""
    fusion: str | None = None
    rrf_k: int = 60
    prefetch: tuple["Request", ...] = ()
    flt: "Filter | None" = None
    fields: "Fields" = False
    score_threshold: float | None = None
    """only points scoring at least this come back (``formula.kept_to_first``)"""
    exact: bool = False
    """search ``nearest`` exactly, never by an approximate (HNSW) index: a search whose scores
    a formula reads as values (``formula.order_search``)"""

    def __post_init__(self) -> None:
        if any(p.fusion is not None for p in self.prefetch):
            raise ValueError("a fusion may only be the root of a query, never a prefetch: a "
                             "sharded server fuses a prefetch's lists on each shard apart "
                             "(qdrant/qdrant#10640; docs/qdrant.md, \"Backends that agree\")")


FUSIONS = ("rrf", "dbsf")


@dataclass(frozen=True)
class Found:
    """A point coming back from a query, scroll or retrieve (score 0 where nothing was scored)."""

    clip_id: str
    score: float = 0.0
    payload: dict[str, Any] | None = None


Fields = bool | Sequence[str]
"""Which payload to return: ``True`` all, ``False`` none, or a list of top-level keys."""

ID_FIELD = "clip_id"


@runtime_checkable
class StoreProtocol(Protocol):
    """What searching needs of a store: the read side of :class:`Store` (retrievers, the
    explorer, evaluation). Every backend implements it by subclassing :class:`Store`, the
    explorer's locked store by delegating each call; a test double or another vector database
    needs only these methods."""

    backend: str

    def exists(self, name: str) -> bool: ...

    def meta(self, name: str) -> CollectionMeta: ...

    def query(self, name: str, vector: Sequence[float], k: int, flt: Filter | None = None,
              fields: Fields = False) -> list[Found]: ...

    def query_batch(self, name: str, requests: Sequence[Request],
                    names: Mapping[str, str] | None = None) -> list[list[Found]]: ...

    def scroll(self, name: str, flt: Filter | None = None, fields: Fields = (ID_FIELD,),
               batch: int = 2048) -> Iterator[Found]: ...

    def count(self, name: str, flt: Filter | None = None) -> int: ...

    def matching_ids(self, name: str, flt: Filter | None = None) -> list[ClipId]: ...

    def retrieve(self, name: str, clip_ids: Sequence[ClipId],
                 fields: Fields = (ID_FIELD,)) -> list[Found]: ...

    def vectors(self, name: str, clip_ids: Sequence[ClipId]) -> dict[ClipId, list[float]]: ...

    def describe(self) -> dict[str, Any]: ...


class Store(abc.ABC):
    """A set of named collections in one Qdrant backend (implements :class:`StoreProtocol`)."""

    backend: str = "store"

    # --- collections ---------------------------------------------------------------------
    @abc.abstractmethod
    def collections(self) -> list[str]:
        """Names of every collection this backend holds."""

    def exists(self, name: str) -> bool:
        return name in self.collections()

    @abc.abstractmethod
    def create(self, name: str, meta: CollectionMeta, *, index_labels: Sequence[str] = (),
               shard_number: int | None = None, replication_factor: int | None = None,
               float_maps: Sequence[str] = ("dur",), vectors: Mapping[str, VectorSpec] | None = None,
               sparse: Sequence[str] = (), plain_sparse: Sequence[str] = (),
               segments: int = 1) -> None:
        """Create ``name`` (it must not exist) with payload indexes on the filter fields.

        ``index_labels`` are the labels whose ``<map>."<label>"`` keys (``float_maps``: ``dur``,
        and a detected collection's soft fields) get a float index (servers; Edge on request).
        ``shard_number`` / ``replication_factor`` only mean something on a server.
        ``vectors`` / ``sparse``: named dense vectors and named sparse vectors (IDF-weighted,
        for BM25) instead of the one unnamed vector of ``meta``; ``plain_sparse``: named sparse
        vectors scored by their plain dot product (soft evidence: ``formula.EVIDENCE_VECTORS``).
        ``segments``: Edge keeps the points in this many segments, which it searches in parallel
        (:meth:`seal` closes one; ``formula.SEARCH_SEGMENTS``); a server and local mode choose
        their own.
        """

    @abc.abstractmethod
    def meta(self, name: str) -> CollectionMeta:
        """The collection's record; :class:`StoreError` naming the collection if it is missing."""

    @abc.abstractmethod
    def set_meta(self, name: str, meta: CollectionMeta) -> None:
        """Replace the collection's record (used to mark an ingest complete)."""

    @abc.abstractmethod
    def drop(self, name: str) -> None:
        """Delete the collection and its points (no error if it does not exist)."""

    # --- points --------------------------------------------------------------------------
    @abc.abstractmethod
    def upsert(self, name: str, points: Sequence[PointIn]) -> None:
        """Insert or replace one batch of points (callers batch; see ``ingest``)."""

    @abc.abstractmethod
    def query(self, name: str, vector: Sequence[float], k: int, flt: Filter | None = None,
              fields: Fields = False) -> list[Found]:
        """The ``k`` nearest points to ``vector`` (optionally among those ``flt`` admits)."""

    def query_batch(self, name: str, requests: Sequence[Request],
                    names: Mapping[str, str] | None = None) -> list[list[Found]]:
        """Several :class:`Request` s in one call (Edge ``query_batch``, servers
        ``query_batch_points``); one list of points per request, in order.

        ``names``: point id -> clip id of the points the answers may hold
        (``payload.point_names``). Where no request asks for fields, the points come back named
        from it, their payloads unread (Edge parses a point's whole payload to read its clip id:
        a fifth of a soft query's time on the real detected payload). An answer holding a point
        it lacks makes the batch go again, named by payloads."""
        if not requests:
            return []
        if names is not None and all(r.fields is False for r in requests):
            got = _named(self._answers(name, requests, payload=False), names)
            if got is not None:
                return got
        return [[found_from_payload(p.payload, p.score, r.fields, name) for p in points]
                for r, points in zip(requests, self._answers(name, requests, payload=True))]

    @abc.abstractmethod
    def _answers(self, name: str, requests: Sequence[Request], payload: bool) -> list[list[Any]]:
        """The backend's scored points (``.id``, ``.score``, ``.payload``) per request, with each
        request's fields (``payload``) or none."""

    @abc.abstractmethod
    def scroll(self, name: str, flt: Filter | None = None, fields: Fields = (ID_FIELD,),
               batch: int = 2048) -> Iterator[Found]:
        """Every point ``flt`` admits (all points when ``None``), in point-id order."""

    @abc.abstractmethod
    def count(self, name: str, flt: Filter | None = None) -> int:
        """Exact number of points ``flt`` admits."""

    @abc.abstractmethod
    def retrieve(self, name: str, clip_ids: Sequence[str], fields: Fields = (ID_FIELD,)) -> list[Found]:
        """The points of these clips that exist (missing ones are left out)."""

    @abc.abstractmethod
    def vectors(self, name: str, clip_ids: Sequence[str]) -> dict[str, list[float]]:
        """Clip id -> stored vector for these clips (missing ones left out): embedding plots."""

    @abc.abstractmethod
    def delete(self, name: str, clip_ids: Sequence[str]) -> None:
        """Remove the points of these clips."""

    def seal(self, name: str) -> None:
        """Close the segment the points so far went into, so later points go into a new one (a
        collection created with ``segments`` > 1 on Edge; elsewhere nothing)."""

    def close(self) -> None:
        """Release files, locks and connections."""

    # --- conveniences built on the primitives ---------------------------------------------
    def matching_ids(self, name: str, flt: Filter | None = None) -> list[str]:
        """Clip ids of every point ``flt`` admits, sorted ascending."""
        return sorted(f.clip_id for f in self.scroll(name, flt, fields=(ID_FIELD,)))

    def existing_ids(self, name: str, clip_ids: Sequence[str], batch: int = 1024) -> set[str]:
        """Which of ``clip_ids`` already have a point (resumable ingest)."""
        out: set[str] = set()
        for i in range(0, len(clip_ids), batch):
            out.update(f.clip_id for f in self.retrieve(name, clip_ids[i:i + batch]))
        return out

    def describe(self) -> dict[str, Any]:
        """Where the data lives, for results files (never credentials)."""
        return {"backend": self.backend}

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def payload_fields(fields: Fields) -> bool | list[str]:
    """Normalise ``fields``; the clip id always comes back so hits can be named."""
    if fields is True:
        return True
    if fields is False:
        return [ID_FIELD]
    out = list(fields)
    if ID_FIELD not in out:
        out.insert(0, ID_FIELD)
    return out


def _named(answers: Iterable[Iterable[Any]], names: Mapping[str, str]) -> list[list[Found]] | None:
    """Scored points (``.id``, ``.score``) as :class:`Found` s named by ``names``; None when a
    point is not in it."""
    out = []
    for points in answers:
        got = []
        for p in points:
            clip_id = names.get(str(p.id))
            if clip_id is None:
                return None
            got.append(Found(clip_id, float(p.score)))
        out.append(got)
    return out


def found_from_payload(payload: dict[str, Any] | None, score: float, fields: Fields,
                       where: str) -> Found:
    """Build a :class:`Found`; a point without a clip id is foreign data, named as such."""
    if not payload or ID_FIELD not in payload:
        raise StoreError(f"{where}: a point has no {ID_FIELD!r} in its payload "
                         "(the collection was not written by reasonaudio)")
    clip_id = str(payload[ID_FIELD])
    keep = None if fields is False else payload
    return Found(clip_id, float(score), keep)


def plain_vector(vec: Sequence[float] | Mapping[str, Sequence[float]]) -> list[float]:
    """A stored vector as a list of floats (a single named vector is unwrapped)."""
    if isinstance(vec, dict):
        if len(vec) != 1:
            raise StoreError(f"expected one vector per point, got named vectors {sorted(vec)}")
        vec = next(iter(vec.values()))
    return [float(x) for x in vec]


def batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
