"""Retrieval metrics of docs/evaluation.md, per query, per task and overall.

Exact definitions (``ranking`` is the run's list of clip ids for one query, best first; ``R`` the
relevant clips from qrels; ``H`` the query's hard negatives; ranks start at 1; a clip absent from
the ranking has rank infinity):

- ``acc@1``   1 if ``ranking[0]`` is in R, else 0 (= P@1 = Success@1).
- ``ndcg@k``  DCG@k / IDCG@k with binary gains (1 for a clip in R), linear gain,
  ``1 / log2(rank + 1)`` discount; IDCG@k is the DCG of an ideal ranking that puts all ``|R|``
  relevant clips first (so ``min(|R|, k)`` ones count).
- ``recall@k`` ``|R ∩ ranking[:k]| / |R|``.
- ``mrr``     ``1 / rank`` of the first relevant clip in the (whole) ranking; 0 if none.
- ``hnsr@k``  with T the best-ranked relevant clip and HN the best-ranked hard negative:
  1 if ``rank(T) <= k`` and ``rank(HN) > k`` (after Omni-Embed-Audio, arXiv 2604.18360).
- ``tfr@k``   1 if ``rank(T) == 1`` and ``rank(HN) > k``.

Edge cases: a query with no relevant clip scores 0 on every metric (never happens in a built
benchmark); a query without hard negatives has ``rank(HN) = inf``; a query the run does not
answer has an empty ranking and so scores 0. If a clip id repeats in a ranking only its first
occurrence counts. Ties: metrics read the ranking in the run's order and never re-sort it; every
run in this project is ordered by score descending, then clip id ascending
(:func:`reasonaudio.retrievers.base.rank`), and a TREC file is read back in its rank column order.

Multiple choice (``mc_acc``): per (positive, hard negative) pair, 1 if the retriever scores the
positive higher, 0.5 on a tie (including both ``-inf``), 0 otherwise; a NaN score counts as
``-inf``; a query's value is the mean over its pairs (:func:`reasonaudio.dataset.benchmark.multiple_choice`,
beside the ``Choice`` record, the rule's one place).

Aggregation: overall = macro mean over queries; per task = mean over that task's queries.
``mc_acc`` is the mean over the queries that have a choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

K = 10
RANK_METRICS = ("acc@1", "ndcg@10", "recall@10", "mrr", "hnsr@10", "tfr@10")
MC_METRIC = "mc_acc"
OVERALL = "overall"
"""the group of every query, beside the tasks"""
METRICS = RANK_METRICS + (MC_METRIC,)
"""Every metric key, in the order of the ``--json`` shape."""

LABELS = {"acc@1": "Acc@1", "ndcg@10": "nDCG@10", "recall@10": "Recall@10", "mrr": "MRR",
          "hnsr@10": "HNSR@10", "tfr@10": "TFR@10", "mc_acc": "MC acc"}
"""How tables and plots name each metric."""

INF = math.inf


def _dedup(ranking: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for cid in ranking:
        if cid not in seen:
            seen.add(cid)
            out.append(cid)
    return out


def first_rank(ranking: Sequence[str], targets: Iterable[str] | set[str]) -> float:
    """1-based rank of the first clip of ``targets`` in ``ranking``; ``inf`` if none appears."""
    targets = targets if isinstance(targets, (set, frozenset)) else set(targets)
    for i, cid in enumerate(ranking, 1):
        if cid in targets:
            return float(i)
    return INF


def acc_at_1(ranking: Sequence[str], relevant: set[str]) -> float:
    return 1.0 if ranking and ranking[0] in relevant else 0.0


def dcg_at_k(ranking: Sequence[str], relevant: set[str], k: int = K) -> float:
    return sum(1.0 / math.log2(i + 1) for i, cid in enumerate(ranking[:k], 1) if cid in relevant)


def ndcg_at_k(ranking: Sequence[str], relevant: set[str], k: int = K) -> float:
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), k) + 1))
    if ideal == 0.0:
        return 0.0
    return dcg_at_k(_dedup(ranking), relevant, k) / ideal


def recall_at_k(ranking: Sequence[str], relevant: set[str], k: int = K) -> float:
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def reciprocal_rank(ranking: Sequence[str], relevant: set[str]) -> float:
    r = first_rank(ranking, relevant)
    return 0.0 if r == INF else 1.0 / r


def hnsr_at_k(ranking: Sequence[str], relevant: set[str], hard_negatives: set[str],
              k: int = K) -> float:
    t = first_rank(ranking, relevant)
    hn = first_rank(ranking, hard_negatives)
    return 1.0 if t <= k and hn > k else 0.0


def tfr_at_k(ranking: Sequence[str], relevant: set[str], hard_negatives: set[str],
             k: int = K) -> float:
    t = first_rank(ranking, relevant)
    hn = first_rank(ranking, hard_negatives)
    return 1.0 if t == 1 and hn > k else 0.0


def query_metrics(ranking: Sequence[str], relevant: set[str] | frozenset[str],
                  hard_negatives: set[str] | frozenset[str] = frozenset()) -> dict[str, float]:
    """Every rank metric of one query (keys :data:`RANK_METRICS`)."""
    ranking = _dedup(ranking)
    relevant = set(relevant)
    hard = set(hard_negatives) - relevant
    if not relevant:
        return {m: 0.0 for m in RANK_METRICS}
    return {
        "acc@1": acc_at_1(ranking, relevant),
        "ndcg@10": ndcg_at_k(ranking, relevant, K),
        "recall@10": recall_at_k(ranking, relevant, K),
        "mrr": reciprocal_rank(ranking, relevant),
        "hnsr@10": hnsr_at_k(ranking, relevant, hard, K),
        "tfr@10": tfr_at_k(ranking, relevant, hard, K),
    }


@dataclass(frozen=True)
class Aggregate:
    """Means of per-query values: ``overall`` and ``per_task`` (tasks with no query left out)."""

    overall: dict[str, float]
    per_task: dict[str, dict[str, float]]
    counts: dict[str, int]
    """queries per task and ``"overall"``"""


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def aggregate(per_query: Mapping[str, Mapping[str, float]], task_of: Mapping[str, str],
              tasks: Sequence[str], metrics: Sequence[str] = METRICS) -> Aggregate:
    """Macro means: overall over every query in ``task_of``; per task over that task's queries.

    ``per_query`` must hold every rank metric for every query in ``task_of``; a metric missing
    from a query (``mc_acc`` when the query has no choice) is left out of that metric's mean.
    A query absent from ``per_query`` scores 0 on the rank metrics.
    """
    def means(qids: list[str]) -> dict[str, float]:
        out = {}
        for m in metrics:
            if m in RANK_METRICS:
                vals = [float(per_query.get(q, {}).get(m, 0.0)) for q in qids]
            else:
                vals = [float(per_query[q][m]) for q in qids if m in per_query.get(q, {})]
            out[m] = _mean(vals)
        return out

    qids = sorted(task_of)
    per_task = {}
    counts = {"overall": len(qids)}
    for task in tasks:
        tq = [q for q in qids if task_of[q] == task]
        if tq:
            per_task[task] = means(tq)
            counts[task] = len(tq)
    return Aggregate(means(qids), per_task, counts)
