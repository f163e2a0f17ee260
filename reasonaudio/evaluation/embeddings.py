"""The embedding hook: what an embedding retriever exposes so reports can draw its space.

A retriever is an *embedding retriever* when it has both

- ``query_vector(text) -> np.ndarray`` (the query's text vector, shape ``(d,)``), or instead
  ``embed_text(texts)`` batched like the model interface (``[text]`` in, ``(1, d)`` out), and
- ``clip_vectors(clip_ids) -> np.ndarray`` of shape ``(len(clip_ids), d)`` (or a mapping
  clip id -> vector) with the stored audio vectors of those clips.

At eval time, for one query per task (the one with the most relevant clips plus hard
negatives, each capped at :data:`MAX_PER_KIND`, first by id on ties) we save the query vector with up to :data:`MAX_PER_KIND` positives and hard negatives
(first by id) to ``DATA/results/<slug>.embeddings.npz``, so ``bench report`` can project them
without loading the model again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reasonaudio.evaluation.results import embeddings_path
from reasonaudio.querylang.judge import hard_negatives
from reasonaudio.dataset.benchmark import tasks_present
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.fileio import atomic_file
from reasonaudio.retrievers.base import RetrieverProtocol

MAX_PER_KIND = 12
KINDS = ("positive", "hard_negative")


def has_embedding_hook(retriever: RetrieverProtocol) -> bool:
    text = callable(getattr(retriever, "query_vector", None)) or callable(
        getattr(retriever, "embed_text", None))
    return text and callable(getattr(retriever, "clip_vectors", None))


def query_vector(retriever: RetrieverProtocol, text: str) -> np.ndarray:
    """The text vector of ``text``, through whichever hook the retriever has."""
    if callable(getattr(retriever, "query_vector", None)):
        vec = np.asarray(retriever.query_vector(text), dtype=np.float32)
    else:
        vec = np.asarray(retriever.embed_text([text]), dtype=np.float32)
        if vec.ndim == 2 and vec.shape[0] == 1:
            vec = vec[0]
    if vec.ndim != 1:
        raise ValueError(f"text embedding has shape {vec.shape}, expected one vector")
    return vec


def _vectors(retriever: RetrieverProtocol, clip_ids: list[str]) -> np.ndarray:
    got = retriever.clip_vectors(clip_ids)
    if isinstance(got, dict):
        got = [got[c] for c in clip_ids]
    arr = np.asarray(got, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != len(clip_ids):
        raise ValueError(f"clip_vectors returned shape {arr.shape} for {len(clip_ids)} clips")
    return arr


@dataclass
class ProjectionQuery:
    """One query's text vector and its positive / hard-negative clip vectors."""

    query_id: str
    task: str
    text: str
    query_vector: np.ndarray
    clip_ids: list[str]
    kinds: list[str]
    clip_vectors: np.ndarray


def collect(bench: BenchmarkView, retriever: RetrieverProtocol) -> list[ProjectionQuery]:
    hard = hard_negatives(bench)
    out = []
    for task in tasks_present([q.task for q in bench.queries]):
        # The query with the most positives and hard negatives (each capped), first by id on
        # ties: the richest picture the task offers, chosen the same way every time.
        best: tuple[int, str] | None = None
        for q in bench.queries:
            if q.task != task:
                continue
            n_pos = min(len(bench.qrels.get(q.id, ())), MAX_PER_KIND)
            n_neg = min(len(hard.get(q.id, ())), MAX_PER_KIND)
            if n_pos and n_neg:
                key = (-(n_pos + n_neg), q.id)
                if best is None or key < best:
                    best = key
        if best is None:
            continue
        q = bench.query_by_id[best[1]]
        pos = sorted(bench.qrels.get(q.id, ()))[:MAX_PER_KIND]
        neg = sorted(hard.get(q.id, ()))[:MAX_PER_KIND]
        ids = pos + neg
        qv = query_vector(retriever, q.text)
        cv = _vectors(retriever, ids)
        if cv.shape[1] != qv.shape[0]:
            raise ValueError(f"text vector has {qv.shape[0]} dims, clip vectors {cv.shape[1]}")
        out.append(ProjectionQuery(q.id, task, q.text, qv, ids,
                                   ["positive"] * len(pos) + ["hard_negative"] * len(neg), cv))
    return out


def save_projection_data(bench: BenchmarkView, retriever: RetrieverProtocol, name: str) -> None:
    items = collect(bench, retriever)
    if not items:
        return
    arrays: dict[str, np.ndarray] = {
        "query_ids": np.array([p.query_id for p in items]),
        "tasks": np.array([p.task for p in items]),
        "texts": np.array([p.text for p in items]),
        "query_vectors": np.stack([p.query_vector for p in items]),
        "clip_query": np.concatenate([np.full(len(p.clip_ids), i) for i, p in enumerate(items)]),
        "clip_ids": np.array([c for p in items for c in p.clip_ids]),
        "clip_kinds": np.array([k for p in items for k in p.kinds]),
        "clip_vectors": np.concatenate([p.clip_vectors for p in items]),
    }
    with atomic_file(embeddings_path(bench, name), "wb") as fh:
        np.savez_compressed(fh, **arrays)


def load_projection_data(path: Path) -> list[ProjectionQuery]:
    with np.load(path, allow_pickle=False) as z:
        out = []
        for i, qid in enumerate(z["query_ids"]):
            mask = z["clip_query"] == i
            out.append(ProjectionQuery(str(qid), str(z["tasks"][i]), str(z["texts"][i]),
                                       z["query_vectors"][i], [str(c) for c in z["clip_ids"][mask]],
                                       [str(k) for k in z["clip_kinds"][mask]], z["clip_vectors"][mask]))
        return out
