"""A hand-made benchmark and tiny fake retrievers for the evaluation tests (no builder needed)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Sequence

import numpy as np

from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.logic import (And, Before, Has, Lasts, Node, Not, Overlap, labels,
                                           to_json)
from reasonaudio.querylang.semantics import evaluate
from reasonaudio.dataset.benchmark import write_qrels
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.fileio import write_jsonl
from reasonaudio.dataset.benchmark import write_manifest
from reasonaudio.retrievers.base import Hit, Retriever, rank

LABELS = ("bell", "dog barking", "rain", "siren", "thunder")


def _clip(i: int, events: list[tuple[str, float, float]], mode: str = "sequential") -> Clip:
    dur = max(e[2] for e in events) + 1.0
    return Clip(f"clip-{i:05d}", mode, dur, 16000,
                tuple(Event(lab, on, off, f"{lab}-0", 0.0) for lab, on, off in events))


def clips() -> list[Clip]:
    return [
        _clip(0, [("dog barking", 0, 2), ("rain", 2.5, 4)]),                       # dog < rain
        _clip(1, [("rain", 0, 2), ("dog barking", 3, 5)]),                          # rain < dog
        _clip(2, [("dog barking", 0, 2), ("rain", 2, 4), ("siren", 5, 6)]),         # + siren
        _clip(3, [("dog barking", 0, 4), ("rain", 1, 3)], "overlap"),               # overlap 2 s
        _clip(4, [("dog barking", 0, 4), ("rain", 3.8, 6)], "overlap"),             # overlap 0.2 s
        _clip(5, [("thunder", 0, 5), ("bell", 6, 7)]),                              # thunder 5 s
        _clip(6, [("thunder", 0, 9), ("bell", 9.5, 10)]),                           # thunder 9 s
        _clip(7, [("bell", 0, 1), ("siren", 2, 3)]),
        _clip(8, [("thunder", 0, 2), ("rain", 3, 4), ("bell", 4, 5)]),              # thunder 2 s
        _clip(9, [("rain", 0, 1), ("thunder", 2, 4.2), ("siren", 5, 6)]),           # thunder 2.2 s
    ]


QUERIES: list[tuple[str, str, str, Node]] = [
    ("q-0000", "negation", "dog barking and rain but no siren",
     And((Has("dog barking"), Has("rain"), Not(Has("siren"))))),
    ("q-0001", "order", "dog barking then rain", Before("dog barking", "rain")),
    ("q-0002", "order", "rain then dog barking", Before("rain", "dog barking")),
    ("q-0003", "overlap", "dog barking while rain", Overlap("dog barking", "rain")),
    ("q-0004", "duration", "thunder for 5 seconds", Lasts("thunder", 5)),
    ("q-0005", "mix", "thunder for 2 seconds then rain",
     And((Lasts("thunder", 2), Before("thunder", "rain")))),
]


def write_bench(root: Path, with_choices: bool = True) -> BenchmarkView:
    """Write the hand-made benchmark (qrels and choices from the judge's semantics)."""
    root = Path(root)
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    cs = clips()
    write_jsonl(root / "corpus.jsonl", [c.to_json() for c in cs])
    write_jsonl(root / "queries.jsonl",
                [{"_id": q, "text": t, "task": task, "logic": to_json(lg)} for q, task, t, lg in QUERIES])
    qrels: dict[str, list[str]] = {}
    choices = []
    for qid, _task, _text, logic in QUERIES:
        rel = [c.id for c in cs if evaluate(logic, c.events)]
        qrels[qid] = rel
        need = set(labels(logic))
        hn = [c.id for c in cs if need <= set(c.labels) and c.id not in rel]
        if rel and hn:
            choices.append({"query_id": qid, "positive": rel[0], "negative": hn[0]})
    write_qrels(root / "qrels" / "test.tsv", qrels)
    write_jsonl(root / "choices.jsonl", choices if with_choices else [])
    write_jsonl(root / "atoms.jsonl", [
        {"atom_id": f"{lab}-0", "label": lab, "path": f"synthetic:{lab}", "sample_rate": 16000,
         "duration": 10.0, "source": "test", "license": "CC0"} for lab in LABELS])
    write_manifest(root, {"seed": 7, "params": {"n_clips": len(cs), "n_queries": len(QUERIES)}})
    return load_benchmark(root)


class OracleFake(Retriever):
    """Like a payload filter: returns only the relevant clips (score 1); others score 0."""

    name = "oracle-fake"

    def __init__(self, bench: BenchmarkView) -> None:
        self.bench = bench
        self.by_text = {q.text: q.id for q in bench.queries}

    def _scores(self, text: str) -> dict[str, float]:
        rel = self.bench.qrels.get(self.by_text.get(text, ""), set())
        return {c.id: (1.0 if c.id in rel else 0.0) for c in self.bench.clips}

    def search(self, text: str, k: int) -> list[Hit]:
        return [h for h in rank(self._scores(text), k) if h.score > 0]

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        s = self._scores(text)
        return [s[c] for c in clip_ids]


class ConstantFake(Retriever):
    """Every clip scores 0: ranking by clip id, every multiple choice a tie."""

    name = "constant-fake"

    def __init__(self, bench: BenchmarkView) -> None:
        self.ids = [c.id for c in bench.clips]

    def search(self, text: str, k: int) -> list[Hit]:
        return rank({c: 0.0 for c in self.ids}, k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        return [0.0 for _ in clip_ids]


class BagFake(OracleFake):
    """Scores clips by how many query labels they contain: cannot tell hard negatives apart."""

    name = "bag-fake"

    def _scores(self, text: str) -> dict[str, float]:
        q = self.bench.query_by_id.get(self.by_text.get(text, ""))
        need = set(labels(q.logic)) if q else set()
        return {c.id: float(len(need & set(c.labels))) for c in self.bench.clips}

    def search(self, text: str, k: int) -> list[Hit]:
        return rank(self._scores(text), k)


class EmbeddingFake(OracleFake):
    """Oracle ranking plus the embedding hook (random but seeded vectors)."""

    name = "embed-fake"

    def __init__(self, bench: BenchmarkView, dim: int = 16) -> None:
        super().__init__(bench)
        rng = np.random.default_rng(0)
        self.vecs = {c.id: rng.normal(size=dim).astype(np.float32) for c in bench.clips}
        self.dim = dim

    def query_vector(self, text: str) -> np.ndarray:
        seed = sum(map(ord, text))
        return np.random.default_rng(seed).normal(size=self.dim).astype(np.float32)

    def clip_vectors(self, clip_ids: Sequence[str]) -> np.ndarray:
        return np.stack([self.vecs[c] for c in clip_ids])


class BatchedEmbeddingFake(EmbeddingFake):
    """The other text hook: ``embed_text`` batched like the model interface."""

    name = "batched-embed-fake"
    query_vector = None  # type: ignore[assignment]

    def embed_text(self, texts: Sequence[str]) -> np.ndarray:
        assert not isinstance(texts, str)
        return np.stack([EmbeddingFake.query_vector(self, t) for t in texts])


# --- doubles built on the judge, for any benchmark (the built ones too) -------------------

class JudgeOracle(Retriever):
    """Relevance from the query's logic (not from qrels): clips the judge admits, by id."""

    name = "judge-oracle"

    def __init__(self, bench: BenchmarkView) -> None:
        self.index = ClipIndex(bench.clips)
        self.logic = {q.text: q.logic for q in bench.queries}

    def search(self, text: str, k: int) -> list[Hit]:
        return [Hit(c, 1.0) for c in self.index.ids(self.index.relevant(self.logic[text]))[:k]]


class BagOfLabels(Retriever):
    """Counts the query's labels present in a clip: blind to order, overlap, duration, negation."""

    name = "bag-of-labels"

    def __init__(self, bench: BenchmarkView) -> None:
        self.clips = [(c.id, set(c.labels)) for c in bench.clips]
        self.need = {q.text: set(labels(q.logic)) for q in bench.queries}

    def _scores(self, text: str) -> dict[str, float]:
        need = self.need[text]
        return {cid: float(len(need & ls)) for cid, ls in self.clips}

    def search(self, text: str, k: int) -> list[Hit]:
        return rank(self._scores(text), k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        s = self._scores(text)
        return [s[c] for c in clip_ids]


class Shuffle(Retriever):
    """Seeded random scores."""

    name = "shuffle"

    def __init__(self, bench: BenchmarkView) -> None:
        self.ids = [c.id for c in bench.clips]
        self.rng = random.Random(0)

    def search(self, text: str, k: int) -> list[Hit]:
        return rank({c: self.rng.random() for c in self.ids}, k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        return [self.rng.random() for _ in clip_ids]


FAKES = {"oracle-fake": OracleFake, "constant-fake": ConstantFake, "bag-fake": BagFake,
         "embed-fake": EmbeddingFake}


def evaluated_fakes(root: Path):
    """The hand-made benchmark at ``root`` with the oracle, constant and embedding fakes
    evaluated on it: ``(bench, results)``, for the report and plot tests."""
    from reasonaudio.evaluation.evaluate import evaluate_retrievers

    bench = write_bench(root)
    return bench, evaluate_retrievers(bench, [OracleFake(bench), ConstantFake(bench),
                                              EmbeddingFake(bench)])
