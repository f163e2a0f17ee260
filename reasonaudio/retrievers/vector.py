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

from reasonaudio.errors import StoreError
from reasonaudio.ingest.benchmark import Benchmark
from reasonaudio.retrievers.base import Hit, Retriever, rank
from reasonaudio.store.base import Store, collection_name
from reasonaudio.store.payload import point_id

TIE_MARGIN = 16
"""extra hits fetched so ties at the k-th score are broken by clip id, not by the engine"""


def fetch_vectors(store: Store, name: str, clip_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """Stored vectors of these clips (missing clips left out), on every backend."""
    getter = getattr(store, "vectors", None)
    if callable(getter):
        return {k: np.asarray(v, dtype=np.float32) for k, v in getter(name, clip_ids).items()}
    ids = [point_id(c) for c in clip_ids]
    if store.backend == "edge":
        import qdrant_edge as qe

        records = store._shard(name).retrieve(  # type: ignore[attr-defined]
            ids, with_payload=qe.PayloadSelector.Include(["clip_id"]), with_vector=True)
    else:
        records = store.client.retrieve(name, ids=ids, with_payload=["clip_id"],  # type: ignore[attr-defined]
                                        with_vectors=True)
    out = {}
    for r in records:
        vec = r.vector
        if isinstance(vec, dict):  # a named default vector
            vec = next(iter(vec.values()))
        out[str(r.payload["clip_id"])] = np.asarray(vec, dtype=np.float32)
    return out


class VectorRetriever(Retriever):
    """Nearest neighbours of the query's text vector among the clips' stored vectors."""

    def __init__(self, name: str, bench: Benchmark, store: Store, embedder: Any,
                 collection: str | None = None, ingest_hint: str = "") -> None:
        from reasonaudio.store.ingest import require_ready

        self.name = name
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

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed a run's queries in full model batches: a lone query would be padded to a whole
        batch (fixed batch shapes keep vectors bit-identical), costing ``unit_batch`` times more."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._prepared))
        if todo:
            self._prepared.update(zip(todo, self.embedder.embed_text(todo)))

    def query_vector(self, text: str) -> np.ndarray:
        prepared = self._prepared.get(text)
        if prepared is not None:
            return prepared
        vec = self._vectors.get(text)
        if vec is None:
            vec = self._vectors[text] = self.embedder.embed_text([text])[0]
            if len(self._vectors) > 256:
                self._vectors.popitem(last=False)
        else:
            self._vectors.move_to_end(text)
        return vec

    def search(self, text: str, k: int) -> list[Hit]:
        found = self.store.query(self.collection, self.query_vector(text).tolist(), k + TIE_MARGIN)
        return rank([(f.clip_id, f.score) for f in found], k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        from qdrant_client.http import models

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

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "collection": self.collection, "model": self.embedder.identity(),
                "ingest": {"revision": self.meta.revision, "pooling": self.meta.pooling},
                "store": self.store.describe()}


def build_vector(name: str, bench: Benchmark, store: Store, *, model_path: str | None = None,
                 device: str = "cpu", batch_size: int | None = None, **_: Any) -> VectorRetriever:
    from reasonaudio.models.registry import load_model

    model = name.partition(":")[0]  # ``trained:LABEL`` names one trained model among several
    embedder = load_model(model, model_path=model_path, device=device, batch_size=batch_size)
    hint = f"bench ingest --data {bench.root} --model {model}"
    if model_path:
        hint += f" --model-path {model_path}"
    # the embedder's name: ``trained`` models carry their weights' digest in it
    return VectorRetriever(name, bench, store, embedder, collection=collection_name(embedder.name),
                           ingest_hint=hint)


def register_all() -> None:
    """One retriever per registry model with both towers, and the ``two-stage:`` family."""
    from reasonaudio.models.registry import RECORDS
    from reasonaudio.retrievers.registry import RetrieverSpec, _REGISTRY, register
    from reasonaudio.retrievers.two_stage import build_two_stage

    for record in RECORDS:
        if record.has_audio and record.has_text and record.name not in _REGISTRY:
            register(RetrieverSpec(record.name, build_vector,
                                   f"{record.description}: text tower -> cosine top-k over "
                                   f"`bench ingest --model {record.name}`"))
    if "trained:" not in _REGISTRY:
        register(RetrieverSpec("trained:", build_vector,
                               "a `bench train` model under a label of your choice (several in one "
                               "eval): --model-path trained:LABEL=MODEL_DIR",
                               family=True, example="trained:LABEL"))
    if "two-stage:" not in _REGISTRY:
        register(RetrieverSpec("two-stage:", build_two_stage,
                               "caption every clip (oracle-caption | yamnet-caption), embed captions "
                               "and the query with a text model (minilm | bge-m3)",
                               family=True, example="two-stage:oracle-caption+minilm"))
