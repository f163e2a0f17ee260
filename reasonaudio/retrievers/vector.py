"""Vector retrievers: query text -> the model's text tower -> top-k in the model's collection.

One retriever per audio-text model in the registry (``clap``, ``clap-large``, ``laion-clap``);
the collection must come from ``bench ingest --model NAME`` with the same weights (the revision
recorded at ingest is checked, so vectors from different weights are never compared).

Scores are Qdrant's cosine similarities; ties are broken by the project rule (score descending,
then clip id ascending): we ask Qdrant for a few more than ``k`` and re-rank. Multiple-choice
scores are exact (a query restricted to the given clips by id), and the embedding hook
(``query_vector`` / ``clip_vectors``) lets reports draw the space.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

import numpy as np
from qdrant_client.http import models

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import StoreError
from reasonaudio.models.base import Embedder
from reasonaudio.models.mteb_models import is_mteb
from reasonaudio.models.registry import dtype_for, load_model
from reasonaudio.dataset.conditions import collection_for
from reasonaudio.retrievers.base import QueryRetriever, QueryVectors, Retriever, RetrieverOptions
from reasonaudio.store.base import Request, Store, collection_name
from reasonaudio.store.collections import fetch_vectors, require_ready
from reasonaudio.store.payload import point_id



class VectorRetriever(QueryRetriever):
    """Nearest neighbours of the query's text vector among the clips' stored vectors."""

    def __init__(self, name: str, bench: BenchmarkView, store: Store, embedder: Embedder,
                 collection: str | None = None, ingest_hint: str = "",
                 query_vectors: QueryVectors | None = None) -> None:
        self.name = name
        self.query_vectors = query_vectors
        self.bench = bench
        self.store = store
        self.embedder = embedder
        self.collection = collection or collection_name(name)
        command = ingest_hint or f"bench ingest --data {bench.root} --model {name}"
        self.meta = require_ready(store, self.collection, bench, command)
        self.check_compatible(command)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._prepared: dict[str, np.ndarray] = {}

    def check_compatible(self, command: str) -> None:
        if self.meta.dimension != self.embedder.dimension:
            raise StoreError(f"collection {self.collection!r} holds {self.meta.dimension}-d vectors; "
                             f"the loaded {self.embedder.name!r} makes {self.embedder.dimension}-d ones "
                             f"(rerun `{command} --force`)")
        if self.meta.revision != self.embedder.revision:
            raise StoreError(f"collection {self.collection!r} was ingested with {self.name} weights "
                             f"{self.meta.revision}, but the loaded weights are {self.embedder.revision}; "
                             f"pass the same --model-path, or rerun `{command} --force`")
        self.check_dtype((self.meta.extra or {}).get("identity") or {}, command)

    def check_dtype(self, identity: dict[str, Any], command: str) -> None:
        """Queries in the dtype the clips were embedded in (recorded in the identity)."""
        have, want = identity.get("dtype"), self.embedder.identity().get("dtype")
        if have != want:
            raise StoreError(f"collection {self.collection!r} was embedded in {have or 'fp32'}, the "
                             f"loaded {self.embedder.name!r} runs in {want or 'fp32'}; pass --dtype "
                             f"{have or 'fp32'}, or rerun `{command} --force`")

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed a run's queries in full model batches: a lone query would be padded to a whole
        batch (fixed batch shapes keep vectors bit-identical), costing ``unit_batch`` times more."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._prepared))
        if todo:
            self._prepared.update(zip(todo, self._embed_queries(todo)))

    def _embed_queries(self, texts: list[str]) -> np.ndarray:
        """Queries through the model's query side (an instruction prefix where it has one)."""
        if self.query_vectors is not None:
            return self.query_vectors.embed(self.embedder, texts)
        return self.embedder.embed_queries(texts)

    def query_vector(self, text: str) -> np.ndarray:
        prepared = self._prepared.get(text)
        if prepared is not None:
            return prepared
        vec = self._vectors.get(text)
        if vec is None:
            vec = self._vectors[text] = self._embed_queries([text])[0]
            if len(self._vectors) > 256:
                self._vectors.popitem(last=False)
        else:
            self._vectors.move_to_end(text)
        return vec

    def request(self, text: str, limit: int) -> Request:
        """Nearest neighbours of the query's vector (one query; a run sends them in batches)."""
        return Request(limit=limit, nearest=self.query_vector(text).tolist())

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        if not clip_ids:
            return []
        flt = models.Filter(must=[models.HasIdCondition(has_id=[point_id(c) for c in clip_ids])])
        found = self.store.query(self.collection, self.query_vector(text).tolist(), len(clip_ids), flt)
        got = {f.clip_id: f.score for f in found}
        return [got.get(c, float("-inf")) for c in clip_ids]

    def clip_vectors(self, clip_ids: Sequence[str]) -> np.ndarray:
        got = fetch_vectors(self.store, self.collection, clip_ids)
        missing = [c for c in clip_ids if c not in got]
        if missing:
            raise StoreError(f"collection {self.collection!r} has no point for {missing[0]!r}")
        return np.stack([got[c] for c in clip_ids])

    def close(self) -> None:
        self._vectors.clear()
        self._prepared.clear()
        self.embedder = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "collection": self.collection, "model": self.embedder.identity(),
                "ingest": {"revision": self.meta.revision, "pooling": self.meta.pooling},
                "store": self.store.describe()}


def build_vector(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> VectorRetriever:
    # ``trained:LABEL`` names one trained model among several; ``mteb:NAME`` is one whole name
    model = name if is_mteb(name) else name.partition(":")[0]
    embedder = load_model(model, model_path=options.model_path, device=options.device,
                          batch_size=options.batch_size, dtype=dtype_for(model, options.dtype))
    # the embedder's name: ``trained`` models carry their weights' digest in it
    collection = collection_for(collection_name(embedder.name), bench.condition.name)
    return VectorRetriever(name, bench, store, embedder, collection=collection,
                           ingest_hint=ingest_hint(bench, model, options),
                           query_vectors=options.query_vectors)


def ingest_hint(bench: BenchmarkView, name: str, options: RetrieverOptions) -> str:
    """The command that makes the collection this retriever searches."""
    hint = f"bench ingest --data {bench.root} --model {name}"
    condition = bench.condition
    hint += "" if condition.is_clean else f" --condition {condition.name}"
    return hint + (f" --model-path {options.model_path}" if options.model_path else "")


def has_audio_tower(r: Retriever) -> bool:
    """A vector retriever whose model embeds audio too (at its declared sample rate)."""
    emb = getattr(r, "embedder", None)
    return isinstance(r, VectorRetriever) and callable(getattr(emb, "embed_audio", None)) \
        and getattr(emb, "sample_rate", None) is not None


def takes_interleaved_input(r: Retriever) -> bool:
    """The embedder declares one input of text and audio parts in order (``interleaved_input``)."""
    emb = getattr(r, "embedder", None)
    return has_audio_tower(r) and getattr(emb, "interleaved_input", False) is True \
        and callable(getattr(emb, "embed_interleaved", None))


def example_reading(name: str, r: Retriever) -> str | None:
    """How a vector retriever reads a sound given by example (``RetrieverSpec.examples``), by
    what its embedder declares: one ``interleaved`` input, else ``audio+text`` beside the
    text; no audio tower: None (refused)."""
    if takes_interleaved_input(r):
        return "interleaved"
    return "audio+text" if has_audio_tower(r) else None
