"""``vectors:NAME``: search precomputed clip vectors with precomputed query vectors.

The vectors come from ``bench ingest --vectors ... --name NAME --query-vectors ...``
(:mod:`reasonaudio.ingest.vector_files`). There is no text tower, so the retriever answers only
the benchmark's own queries, asked by their exact text or by their id; any other text is a
:class:`QueryParseError` (the evaluation records it as a failure, ``bench search`` says so).
Search, exact multiple-choice scores and the embedding hook are the vector retriever's, so a
model's vectors brought in this way evaluate exactly like the model itself.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from reasonaudio.errors import QueryParseError, StoreError
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.ingest.vector_files import (FAMILY, check_name, clip_collection, query_collection)
from reasonaudio.retrievers.base import TIE_MARGIN, Hit, RetrieverOptions, rank
from reasonaudio.store.collections import fetch_vectors, require_ready
from reasonaudio.retrievers.vector import VectorRetriever
from reasonaudio.store.base import Store


def resolve_query_text(bench: BenchmarkView, text: str) -> str:
    """A query id becomes that query's text (so ``bench search q-0007`` shows its checks)."""
    q = bench.query_by_id.get(text)
    return q.text if q is not None else text


class QueryVectors:
    """Plays the text tower for :class:`VectorRetriever`: a lookup of stored query vectors."""

    def __init__(self, name: str, bench: BenchmarkView, vectors: dict[str, np.ndarray],
                 dimension: int, revision: str) -> None:
        self.name = name
        self.bench = bench
        self.vectors = vectors
        self.dimension = dimension
        self.revision = revision
        self._by_text: dict[str, str] = {}
        for q in bench.queries:
            self._by_text.setdefault(q.text, q.id)

    def query_id(self, text: str) -> str | None:
        if text in self.vectors:
            return text
        return self._by_text.get(text)

    def embed_text(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            qid = self.query_id(text)
            if qid is None or qid not in self.vectors:
                raise QueryParseError(f"{self.name} has precomputed vectors only for the benchmark's "
                                      f"queries; {text!r} is neither one's id nor its exact text")
            rows.append(self.vectors[qid])
        return np.stack(rows) if rows else np.zeros((0, self.dimension), dtype=np.float32)

    embed_queries = embed_text  # stored vectors: a query has no other form

    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "precomputed", "revision": self.revision}


class PrecomputedRetriever(VectorRetriever):
    """Nearest neighbours of a stored query vector among the stored clip vectors."""

    def check_compatible(self, command: str) -> None:
        if self.meta.dimension != self.embedder.dimension:
            raise StoreError(f"collection {self.collection!r} holds {self.meta.dimension}-d vectors, "
                             f"its query vectors are {self.embedder.dimension}-d; rerun `{command} --force`")
        if self.meta.revision != self.embedder.revision:
            raise StoreError(f"the query vectors of {self.name} belong to another ingest "
                             f"({self.embedder.revision}, clips {self.meta.revision}); "
                             f"rerun `{command} --force`")

    @property
    def sign(self) -> float:
        """Qdrant scores euclid / manhattan by distance (smaller is nearer): negated here, so a
        higher score is better for every distance, as the ranking rule and multiple choice need."""
        return -1.0 if self.meta.distance in ("euclid", "manhattan") else 1.0

    def search(self, text: str, k: int) -> list[Hit]:
        found = self.store.query(self.collection, self.query_vector(text).tolist(), k + TIE_MARGIN)
        return rank([(f.clip_id, self.sign * f.score) for f in found], k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        return [s if s == float("-inf") else self.sign * s for s in super().score(text, clip_ids)]

    def prepare(self, texts: Sequence[str]) -> None:
        """Look up every query at once; texts without a vector are left for search to refuse."""
        super().prepare([t for t in texts if self.embedder.query_id(t) is not None])

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "collection": self.collection, "model": self.embedder.identity(),
                "ingest": {"revision": self.meta.revision, "distance": self.meta.distance,
                           "dimension": self.meta.dimension, "source": self.meta.extra.get("source"),
                           "queries": self.meta.extra.get("queries")},
                "store": self.store.describe()}


def build_precomputed(name: str, bench: BenchmarkView, store: Store,
                      options: RetrieverOptions) -> PrecomputedRetriever:
    short = check_name(name[len(FAMILY):])
    hint = (f"bench ingest --data {bench.root} --vectors CLIPS.npy --ids CLIP_IDS.txt --name {short} "
            "--query-vectors QUERIES.npy --query-ids QUERY_IDS.txt")
    meta = require_ready(store, clip_collection(short), bench, hint)
    qname = query_collection(short)
    if not meta.extra.get("queries") or not store.exists(qname):
        raise StoreError(f"{name}: the collection {clip_collection(short)!r} has no query vectors, so "
                         f"it cannot be searched; rerun `{hint} --force` (or score a run file made "
                         "elsewhere with `bench eval --run NAME=PATH`)")
    qmeta = require_ready(store, qname, bench, hint)
    ids = [q.id for q in bench.queries]
    vectors = fetch_vectors(store, qname, ids)
    missing = [q for q in ids if q not in vectors]
    if missing:
        raise StoreError(f"collection {qname!r} has no vector for query {missing[0]!r} "
                         f"(another benchmark's queries?); rerun `{hint} --force`")
    embedder = QueryVectors(name, bench, vectors, qmeta.dimension, qmeta.revision)
    return PrecomputedRetriever(name, bench, store, embedder, collection=clip_collection(short),
                                ingest_hint=hint)
