"""Confidence intervals of a retriever's means, per task and overall (docs/evaluation.md).

- Acc@1 and multiple-choice accuracy: the **Wilson score interval** (no continuity correction)
  of a proportion, with ``p`` the group's mean and ``n`` its query count. Acc@1 is a count of
  successes; a multiple-choice tie counts 0.5, so MC's "successes" may be a half-integer, which
  the Wilson formula takes as it is (for whole counts it is scipy's
  ``binomtest(k, n).proportion_ci(method="wilson")``, tested).
- nDCG@10: a **percentile bootstrap** of the mean (the group's per-query values resampled with
  replacement, 1,000 times), each (retriever, group, metric) from its own numpy stream seeded by
  :data:`BOOTSTRAP_SEED` and a sha256 of the three names, so an interval does not depend on
  which other retrievers are reported.

The plots draw these same intervals as whiskers (one method per figure, plots and tables alike).

Both at 95%. Same per-query values, same intervals, byte for byte.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np

from reasonaudio.evaluation.metrics import OVERALL, RANK_METRICS
from reasonaudio.evaluation.results import RetrieverResult, Results
from reasonaudio.seeds import seeded_rng

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_CONFIDENCE = CONFIDENCE
BOOTSTRAP_SEED = 0
"""The intervals' seed; each (retriever, group, metric) draws from its own stream seeded by
this and a hash of the three names, so an interval never depends on what else is reported."""
BOOTSTRAP_METHOD = {"method": "percentile; per-query values resampled with replacement within "
                              "each task (overall: all queries)",
                    "resamples": BOOTSTRAP_RESAMPLES, "confidence": BOOTSTRAP_CONFIDENCE,
                    "seed": BOOTSTRAP_SEED,
                    "streams": "numpy default_rng([seed, sha256(retriever, group, metric)])"}
"""How a bootstrap interval is drawn (recorded beside the intervals)."""
WILSON_METRICS = ("acc@1", "mc_acc")
BOOTSTRAP_METRICS = ("ndcg@10",)
INTERVAL_METRICS = ("acc@1", "ndcg@10", "mc_acc")


def wilson_interval(p: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` observed over ``n`` trials; (nan, nan) for
    ``n == 0``. Bounds are clipped to [0, 1] (they are inside it up to rounding)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_interval(values: np.ndarray, *key: str, resamples: int = BOOTSTRAP_RESAMPLES,
                       confidence: float = BOOTSTRAP_CONFIDENCE,
                       seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (queries resampled with
    replacement), from a stream seeded by ``seed`` and ``key``; (nan, nan) without values."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return float("nan"), float("nan")
    rng = seeded_rng(seed, *key)
    means = v[rng.integers(0, v.size, size=(resamples, v.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def group_values(r: RetrieverResult, group: str, metric: str) -> np.ndarray:
    """The per-query values whose mean is the table's figure: every query of the group (a rank
    metric missing from a query counts 0), or only the queries that have it (``mc_acc``)."""
    qids = sorted(q for q, t in r.task_of.items() if group == OVERALL or t == group)
    if metric in RANK_METRICS:
        vals = [float(r.per_query.get(q, {}).get(metric, 0.0)) for q in qids]
    else:
        vals = [float(r.per_query[q][metric]) for q in qids if metric in r.per_query.get(q, {})]
    return np.asarray(vals, dtype=np.float64)


def metric_interval(r: RetrieverResult, group: str, metric: str) -> tuple[float, float]:
    """The interval of ``metric``'s mean over ``group`` (Wilson or bootstrap, as above)."""
    v = group_values(r, group, metric)
    if metric in WILSON_METRICS:
        return wilson_interval(float(v.mean()) if v.size else 0.0, int(v.size))
    return bootstrap_interval(v, r.name, group, metric)


def _pair(lo: float, hi: float) -> list[float] | None:
    return None if math.isnan(lo) else [lo, hi]


def result_intervals(r: RetrieverResult, metrics: Sequence[str] = INTERVAL_METRICS) -> dict[str, Any]:
    """``{"overall": {metric: [low, high]}, "per_task": {task: {metric: [low, high]}}}`` for the
    tasks of ``r.per_task`` (``None`` for a group without values)."""
    return {"overall": {m: _pair(*metric_interval(r, OVERALL, m)) for m in metrics},
            "per_task": {t: {m: _pair(*metric_interval(r, t, m)) for m in metrics}
                         for t in r.per_task}}


def interval_method() -> dict[str, Any]:
    """How :func:`result_intervals` computes its intervals (recorded beside them)."""
    return {"confidence": CONFIDENCE,
            "wilson": {"metrics": list(WILSON_METRICS),
                       "method": "Wilson score interval, no continuity correction; p = the mean "
                                 "(a multiple-choice tie counts 0.5), n = the group's queries"},
            "bootstrap": {"metrics": list(BOOTSTRAP_METRICS), **BOOTSTRAP_METHOD}}


def results_document(results: Results) -> dict[str, Any]:
    """The ``bench eval --json`` document: data, versions, runs (with per-query values), each run
    with the 95% intervals of its Acc@1, nDCG@10 and MC and how they were computed
    (``intervals``: ``overall``, ``per_task``, ``method``). ``bench eval --json``, the main job's
    results.json and the explorer's download all write this one document."""
    doc = results.to_json(per_query=True)
    for name, r in results.runs.items():
        doc["runs"][name]["intervals"] = {**result_intervals(r), "method": interval_method()}
    return doc


def seed_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Student-t interval of the mean of one figure measured on K builds of other seeds
    (``bench replicate``): ``mean -/+ t(K-1) * sd / sqrt(K)``, sd with K-1 in its denominator;
    clipped to [0, 1] (the figures are proportions); (nan, nan) for fewer than two values.
    Seeds, not queries, are the samples here."""
    from scipy.stats import t as student_t

    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float("nan"), float("nan")
    half = float(student_t.ppf(0.5 + confidence / 2, v.size - 1)) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return max(0.0, float(v.mean()) - half), min(1.0, float(v.mean()) + half)
