"""``two-stage:CAPTIONER+bm25``: the lexical baseline, captions as Qdrant BM25 sparse vectors.

Each clip's caption (the same captioner as the dense two-stage retrievers, so
``two-stage:oracle-caption+bm25`` runs offline) becomes a sparse vector of term frequencies
(Qdrant Edge's ``Bm25`` model: English stemming and stopwords, ``k = 1.2``, ``b = 0.75`` and the
captions' mean length in words as ``avg_len``) in the collection
``reasonaudio-two-stage-CAPTIONER-bm25``, whose sparse vector ``bm25`` carries Qdrant's IDF
modifier; a query is its unique terms (weight 1), so a search is one sparse nearest-neighbour
query scored by BM25. The same sparse vectors go to every backend (the Edge model only
tokenises; qdrant-client stores and scores them).

The collection is derived from the benchmark alone (plus, for an audio captioner, the frames its
two-stage ingest cached), so it is made on first use on Edge, and by
``bench ingest --model two-stage:CAPTIONER+bm25`` on local mode and servers.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from typing import Any, Sequence

import qdrant_edge as qe
from qdrant_client.http import models

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import QueryParseError, StoreError
from reasonaudio.ingest.pipelines import TwoStagePipeline
from reasonaudio.models.captioners import get_captioner
from reasonaudio.models.names import parse_two_stage
from reasonaudio.progress import Notify
from reasonaudio.retrievers.base import QueryRetriever, RetrieverOptions
from reasonaudio.store.base import STATE_COMPLETE, CollectionMeta, PointIn, Request, Sparse, Store, collection_name
from reasonaudio.store.collections import corpus_fingerprint, load_collection, require_ready
from reasonaudio.store.payload import clip_payload, point_id

SPARSE = "bm25"
BM25_K, BM25_B = 1.2, 0.75


def caption_texts(bench: BenchmarkView, captioner_name: str) -> dict[str, str]:
    """Clip id -> caption, as the two-stage ingest of this captioner writes it."""
    captioner = get_captioner(captioner_name)
    if not captioner.needs_audio:
        return {c.id: captioner.caption(c) for c in bench.clips}
    from reasonaudio.render.clips import bench_renderer

    pipe = TwoStagePipeline(captioner, _NoEmbedder())
    try:
        pipe.attach_renderer(bench_renderer(bench))
        return pipe.captions(bench.clips)
    finally:
        pipe.close()


class _NoEmbedder:
    """Stands in for the text model of a captions-only pipeline (BM25 needs no model)."""

    name = SPARSE
    revision = "bm25"
    dimension = 1

    def identity(self) -> dict[str, Any]:
        return {"name": SPARSE}


def bm25_model(avg_len: float) -> qe.Bm25:
    return qe.Bm25(qe.Bm25Config(k=BM25_K, b=BM25_B, avg_len=avg_len, language="english"))


def sparse(vec: qe.SparseVector) -> Sparse:
    return Sparse(tuple(int(i) for i in vec.indices), tuple(float(v) for v in vec.values))


def ensure_bm25_collection(bench: BenchmarkView, store: Store, name: str, *, auto: bool | None,
                           notify: Notify | None = None) -> CollectionMeta:
    """The BM25 collection of ``two-stage:CAPTIONER+bm25``, made when missing (Edge by default,
    elsewhere when ``auto``), else a one-line error naming the command that makes it."""
    captioner, _ = parse_two_stage(name, lexical=True)
    collection = collection_name(name)
    command = f"bench ingest --data {bench.root} --model {name}"
    try:
        return require_ready(store, collection, bench, command)
    except StoreError:
        if not (store.backend == "edge" if auto is None else auto):
            raise
    if notify:
        notify(f"indexing the {captioner} captions as BM25 sparse vectors into {collection!r}")
    captions = caption_texts(bench, captioner)
    words = [len(captions[c.id].split()) for c in bench.clips]
    avg_len = round(sum(words) / max(len(words), 1), 2) or 1.0
    model = bm25_model(avg_len)
    digest = hashlib.sha256(json.dumps(captions, sort_keys=True).encode()).hexdigest()[:12]
    meta = CollectionMeta(model=name, revision=f"bm25-k{BM25_K}-b{BM25_B}-captions-{digest}",
                          dimension=1, distance="dot", pooling="bm25 over captions",
                          corpus_sha256=corpus_fingerprint(bench),
                          extra={"kind": "bm25", "captioner": captioner, "avg_len": avg_len,
                                 "k": BM25_K, "b": BM25_B,
                                 "tokeniser": f"qdrant-edge-py {version('qdrant-edge-py')} Bm25"})
    by_id = bench.clip_by_id

    def make(ids: Sequence[str]) -> list[PointIn]:
        return [PointIn(cid, {SPARSE: sparse(model.embed_document(captions[cid]))},
                        {**clip_payload(by_id[cid]), "caption": captions[cid]}) for cid in ids]

    load_collection(store, collection, meta, [c.id for c in bench.clips], make, force=True,
                    index_labels=(), vectors={}, sparse=(SPARSE,), batch_size=1024)
    return store.meta(collection)


class Bm25Retriever(QueryRetriever):
    def __init__(self, name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> None:
        self.name = name
        self.bench = bench
        self.store = store
        self.collection = collection_name(name)
        self.meta = ensure_bm25_collection(bench, store, name, auto=options.auto_ingest,
                                           notify=options.hooks.notify)
        if self.meta.state != STATE_COMPLETE:
            raise StoreError(f"collection {self.collection!r} is incomplete")
        self.model = bm25_model(float(self.meta.extra["avg_len"]))

    def query_sparse(self, text: str) -> Sparse:
        vec = sparse(self.model.embed_query(text))
        if not vec.indices:
            raise QueryParseError(f"{self.name}: the query has no indexable word: {text!r}")
        return vec

    def request(self, text: str, limit: int) -> Request:
        return Request(limit=limit, nearest=self.query_sparse(text), using=SPARSE)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        """BM25 of these clips; a clip sharing no term with the query scores 0."""
        if not clip_ids:
            return []
        ids = models.Filter(must=[models.HasIdCondition(has_id=[point_id(c) for c in clip_ids])])
        req = Request(limit=len(clip_ids), nearest=self.query_sparse(text), using=SPARSE, flt=ids)
        got = {f.clip_id: f.score for f in self.answers([req])[0]}
        return [got.get(c, 0.0) for c in clip_ids]

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        found = self.store.retrieve(self.collection, list(clip_ids), fields=("clip_id", "caption"))
        return {f.clip_id: str((f.payload or {}).get("caption", "")) for f in found}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "collection": self.collection, "revision": self.meta.revision,
                "bm25": {k: self.meta.extra.get(k) for k in ("k", "b", "avg_len", "captioner")},
                "store": self.store.describe()}


def build_bm25(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> Bm25Retriever:
    return Bm25Retriever(name, bench, store, options)
