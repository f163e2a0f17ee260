"""qdrant-client backends: local mode (``QdrantClient(path=...)``, pure Python, on disk) and a
real server or cluster (``QdrantClient(url=...)``).

Both keep our :class:`CollectionMeta` in the collection's own metadata under ``"reasonaudio"``.
On a server, collections get payload indexes (keyword on ``labels``/``before``/``overlaps``,
float on every ``dur."<label>"``) and may be sharded/replicated at creation. The API key comes
from the environment only and is never printed, logged or written.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from qdrant_client import QdrantClient
from qdrant_client.http import models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from reasonaudio.errors import StoreError, echo, strip_userinfo
from reasonaudio.store.base import (
    META_KEY, CollectionMeta, Fields, Found, PointIn, Request, Sparse, Store, VectorSpec,
    found_from_payload, payload_fields, plain_vector,
)
from reasonaudio.store import formula as fm
from reasonaudio.store.handles import SharedHandles
from reasonaudio.store.lock import StoreLock
from reasonaudio.store.payload import KEYWORD_FIELDS, dur_key, integer_fields, point_id

_DISTANCE = {"cosine": models.Distance.COSINE, "dot": models.Distance.DOT,
             "euclid": models.Distance.EUCLID, "manhattan": models.Distance.MANHATTAN}

PROBE_TIMEOUT_S = 5
"""How long an unreachable server may take to say so, at open."""
REQUEST_TIMEOUT_S = 120
"""Per-request timeout once connected (large upsert batches on a busy cluster)."""


def redact_url(url: str) -> str:
    """The URL without any user:password part, for messages."""
    return strip_userinfo(url)


def _reason(exc: BaseException) -> str:
    """What went wrong, as one short line with credentials redacted (a server may echo headers)."""
    if isinstance(exc, UnexpectedResponse):
        body = exc.content.decode("utf-8", "replace").strip() if exc.content else ""
        return f"HTTP {exc.status_code}{': ' + echo(body) if body else ''}"
    return echo(str(exc).strip() or type(exc).__name__)


def _not_qdrant(where: str, exc: BaseException) -> StoreError:
    """A 200 answer that is not Qdrant's JSON (a proxy page, another service on the port)."""
    return StoreError(f"Qdrant at {where} answered with something that is not Qdrant's JSON API "
                      f"({_reason(exc)}); is the URL a Qdrant server?")


def _vector(vec: Sequence[float] | Sparse) -> list[float] | models.SparseVector:
    if isinstance(vec, Sparse):
        return models.SparseVector(indices=list(vec.indices), values=[float(v) for v in vec.values])
    return [float(x) for x in vec]


def _scoring(req: Request) -> models.Query | list[float] | models.SparseVector | None:
    if req.nearest is not None:
        return _vector(req.nearest)
    if req.formula is not None:
        return models.FormulaQuery(formula=fm.to_client(req.formula), defaults=fm.defaults(req.formula))
    if req.fusion == "rrf":
        return models.RrfQuery(rrf=models.Rrf(k=req.rrf_k))
    if req.fusion == "dbsf":
        return models.FusionQuery(fusion=models.Fusion.DBSF)
    if req.fusion is not None:
        raise ValueError(f"unknown fusion {req.fusion!r}")
    return None


def _params(req: Request) -> models.SearchParams | None:
    return models.SearchParams(exact=True) if req.exact else None


def _prefetch(req: Request) -> models.Prefetch:
    return models.Prefetch(query=_scoring(req), using=req.using, limit=req.limit, filter=req.flt,
                           prefetch=[_prefetch(p) for p in req.prefetch] or None,
                           score_threshold=req.score_threshold, params=_params(req))


def to_client_request(req: Request, payload: bool = True) -> models.QueryRequest:
    """A :class:`Request` in qdrant-client's models (``query_batch_points``; ``payload=False``:
    no payload back)."""
    return models.QueryRequest(query=_scoring(req), using=req.using, limit=req.limit,
                               filter=req.flt, prefetch=[_prefetch(p) for p in req.prefetch] or None,
                               with_payload=payload_fields(req.fields) if payload else False,
                               with_vector=False, score_threshold=req.score_threshold,
                               params=_params(req))


def _close_client(client: QdrantClient) -> None:
    with contextlib.suppress(Exception):
        client.close()


_LOCAL = SharedHandles(_close_client)
"""Local-mode folders: local mode locks its folder, so every ClientStore of the process shares
one client per folder."""


def _open_local(key: str) -> QdrantClient:
    try:
        return QdrantClient(path=key)
    except RuntimeError as exc:  # "already accessed by another instance"
        raise StoreError(f"{key}: {_reason(exc)}") from None


class ClientStore(Store):
    """A store reached through qdrant-client: local mode (``path``) or a server (``url``)."""

    _lock: StoreLock | None = None
    """local mode's inter-process lock on its folder (a server has its own concurrency)"""

    def __init__(self, *, path: Path | None = None, url: str | None = None,
                 api_key: str | None = None, write: bool = False) -> None:
        if (path is None) == (url is None):
            raise ValueError("give exactly one of path= or url=")
        self.path = Path(path) if path is not None else None
        self.url = url
        self.backend = "local" if path is not None else "server"
        self.where = str(self.path) if self.path is not None else redact_url(url or "")
        self._key: str | None = None
        if self.path is not None:
            self._lock = StoreLock(self.path, "qdrant-client local store").acquire(write)
            self._key = str(self.path.resolve())
            try:
                self.client = _LOCAL.acquire(self._key, lambda: _open_local(self._key))
            except BaseException:
                self._lock.release()
                raise
        else:
            self._probe(url or "", api_key)
            self.client = QdrantClient(url=url, api_key=api_key, timeout=REQUEST_TIMEOUT_S,
                                       check_compatibility=False)

    def _probe(self, url: str, api_key: str | None) -> None:
        """Fail fast, in one line, when the server is unreachable or refuses the key."""
        with warnings.catch_warnings():  # the real client below warns about http + key once
            warnings.simplefilter("ignore")
            probe = QdrantClient(url=url, api_key=api_key, timeout=PROBE_TIMEOUT_S,
                                 check_compatibility=False)
        try:
            probe.get_collections()
        except UnexpectedResponse as exc:
            if exc.status_code in (401, 403):
                raise StoreError(f"Qdrant server at {redact_url(url)} refused the request "
                                 f"(HTTP {exc.status_code}); set QDRANT_API_KEY") from None
            raise StoreError(f"Qdrant server at {redact_url(url)}: {_reason(exc)}") from None
        except (ResponseHandlingException, OSError) as exc:
            if isinstance(getattr(exc, "source", None), ValueError):
                raise _not_qdrant(redact_url(url), exc.source) from None
            raise StoreError(f"cannot reach Qdrant server at {redact_url(url)} "
                             f"({_reason(exc)})") from None
        except ValueError as exc:  # JSONDecodeError, pydantic's ValidationError
            raise _not_qdrant(redact_url(url), exc) from None
        except Exception as exc:  # httpx errors and anything else from the transport
            if type(exc).__module__.startswith(("httpx", "httpcore")):
                raise StoreError(f"cannot reach Qdrant server at {redact_url(url)} "
                                 f"({_reason(exc)})") from None
            raise
        finally:
            with contextlib.suppress(Exception):
                probe.close()

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Server-side failures as one StoreError line; bugs keep their traceback."""
        try:
            yield
        except UnexpectedResponse as exc:
            raise StoreError(f"Qdrant at {self.where}: {what} failed ({_reason(exc)})") from None
        except ResponseHandlingException as exc:
            if isinstance(getattr(exc, "source", None), ValueError):
                raise _not_qdrant(self.where, exc.source) from None
            raise StoreError(f"Qdrant at {self.where}: {what} failed, server unreachable "
                             f"({_reason(exc)})") from None
        except ValueError as exc:
            if self.backend != "server":
                raise
            raise _not_qdrant(self.where, exc) from None

    def _writing(self) -> None:
        """Local mode: hold the folder's lock alone before changing anything (see store/lock.py)."""
        if self._lock is not None:
            self._lock.require_write()

    def _require(self, name: str) -> None:
        if not self.exists(name):
            raise StoreError(f"collection {name!r} not found in Qdrant at {self.where} "
                             f"({self.backend})")

    # --- collections ---------------------------------------------------------------------
    def collections(self) -> list[str]:
        with self._errors("listing collections"):
            return sorted(c.name for c in self.client.get_collections().collections)

    def exists(self, name: str) -> bool:
        with self._errors(f"checking collection {name!r}"):
            return bool(self.client.collection_exists(name))

    def create(self, name: str, meta: CollectionMeta, *, index_labels: Sequence[str] = (),
               shard_number: int | None = None, replication_factor: int | None = None,
               float_maps: Sequence[str] = ("dur",), vectors: Mapping[str, VectorSpec] | None = None,
               sparse: Sequence[str] = (), plain_sparse: Sequence[str] = (),
               segments: int = 1) -> None:
        self._writing()
        if self.exists(name):
            raise StoreError(f"collection {name!r} already exists in Qdrant at {self.where}")
        opts: dict[str, Any] = {}
        if self.backend == "server":
            opts = {"shard_number": shard_number, "replication_factor": replication_factor}
        with self._errors(f"creating collection {name!r}"):
            if vectors is None and not sparse and not plain_sparse:
                config: Any = models.VectorParams(size=meta.dimension,
                                                  distance=_DISTANCE[meta.distance])
            else:
                config = {k: models.VectorParams(size=v.size, distance=_DISTANCE[v.distance])
                          for k, v in (vectors or {}).items()}
            sparse_config = {**{k: models.SparseVectorParams(modifier=models.Modifier.IDF)
                                for k in sparse},
                             **{k: models.SparseVectorParams() for k in plain_sparse}} or None
            self.client.create_collection(
                name, vectors_config=config, sparse_vectors_config=sparse_config,
                metadata={META_KEY: meta.to_json()}, **opts)
            if self.backend == "server":  # local mode ignores payload indexes (and warns)
                for key in KEYWORD_FIELDS:
                    self.client.create_payload_index(name, key, models.PayloadSchemaType.KEYWORD)
                for key in integer_fields(tuple(float_maps)):
                    self.client.create_payload_index(name, key, models.IntegerIndexParams(
                        type=models.IntegerIndexType.INTEGER, lookup=True, range=False))
                for label in index_labels:
                    for field in float_maps:
                        self.client.create_payload_index(name, dur_key(label, field),
                                                         models.PayloadSchemaType.FLOAT)

    def meta(self, name: str) -> CollectionMeta:
        self._require(name)
        with self._errors(f"reading collection {name!r}"):
            info = self.client.get_collection(name)
        raw = (getattr(info.config, "metadata", None) or {}).get(META_KEY)
        if raw is None:
            raise StoreError(f"collection {name!r} in Qdrant at {self.where} has no reasonaudio "
                             "metadata (created by something else, or a server too old to keep "
                             "collection metadata)")
        return CollectionMeta.from_json(raw, f"collection {name!r}")

    def set_meta(self, name: str, meta: CollectionMeta) -> None:
        self._writing()
        self._require(name)
        with self._errors(f"updating collection {name!r}"):
            self.client.update_collection(name, metadata={META_KEY: meta.to_json()})

    def drop(self, name: str) -> None:
        self._writing()
        with self._errors(f"deleting collection {name!r}"):
            if self.client.collection_exists(name):
                self.client.delete_collection(name)

    # --- points --------------------------------------------------------------------------
    def upsert(self, name: str, points: Sequence[PointIn]) -> None:
        self._writing()
        structs = [models.PointStruct(id=point_id(p.clip_id),
                                      vector={k: _vector(v) for k, v in p.vector.items()}
                                      if isinstance(p.vector, Mapping) else _vector(p.vector),
                                      payload=p.payload) for p in points]
        with self._errors(f"upserting into {name!r}"):
            self.client.upsert(name, points=structs, wait=True)

    def query(self, name: str, vector: Sequence[float], k: int, flt: models.Filter | None = None,
              fields: Fields = False) -> list[Found]:
        self._require(name)
        with self._errors(f"querying {name!r}"):
            res = self.client.query_points(name, query=[float(x) for x in vector], limit=k,
                                           query_filter=flt, with_payload=payload_fields(fields),
                                           with_vectors=False)
        return [found_from_payload(p.payload, p.score, fields, name) for p in res.points]

    def _answers(self, name: str, requests: Sequence[Request], payload: bool) -> list[list[Any]]:
        self._require(name)
        with self._errors(f"querying {name!r}"):
            answers = self.client.query_batch_points(name, [to_client_request(r, payload)
                                                            for r in requests])
        return [a.points for a in answers]

    def scroll(self, name: str, flt: models.Filter | None = None, fields: Fields = ("clip_id",),
               batch: int = 2048) -> Iterator[Found]:
        self._require(name)
        offset = None
        while True:
            with self._errors(f"scrolling {name!r}"):
                records, offset = self.client.scroll(name, scroll_filter=flt, limit=batch,
                                                     offset=offset,
                                                     with_payload=payload_fields(fields),
                                                     with_vectors=False)
            for r in records:
                yield found_from_payload(r.payload, 0.0, fields, name)
            if offset is None:
                return

    def count(self, name: str, flt: models.Filter | None = None) -> int:
        self._require(name)
        with self._errors(f"counting {name!r}"):
            return int(self.client.count(name, count_filter=flt, exact=True).count)

    def retrieve(self, name: str, clip_ids: Sequence[str], fields: Fields = ("clip_id",)) -> list[Found]:
        self._require(name)
        with self._errors(f"retrieving from {name!r}"):
            records = self.client.retrieve(name, ids=[point_id(c) for c in clip_ids],
                                           with_payload=payload_fields(fields), with_vectors=False)
        return [found_from_payload(r.payload, 0.0, fields, name) for r in records]

    def vectors(self, name: str, clip_ids: Sequence[str]) -> dict[str, list[float]]:
        self._require(name)
        with self._errors(f"retrieving vectors from {name!r}"):
            records = self.client.retrieve(name, ids=[point_id(c) for c in clip_ids],
                                           with_payload=payload_fields(False), with_vectors=True)
        return {found_from_payload(r.payload, 0.0, False, name).clip_id: plain_vector(r.vector)
                for r in records}

    def delete(self, name: str, clip_ids: Sequence[str]) -> None:
        self._writing()
        with self._errors(f"deleting points from {name!r}"):
            self.client.delete(name, points_selector=models.PointIdsList(
                points=[point_id(c) for c in clip_ids]), wait=True)

    def close(self) -> None:
        if self._key is not None:
            _LOCAL.release(self._key)
            self._key = None
            if self._lock is not None:
                self._lock.release()
            return
        with contextlib.suppress(Exception):
            self.client.close()

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "location": self.where}
