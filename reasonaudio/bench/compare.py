"""Compare two retrievers query by query: per-task and overall differences with p-values.

Differences are ``A - B`` of the per-query means; significance is the paired randomization test
of :mod:`reasonaudio.bench.significance` (10,000 sign flips, seed 0, two-sided), run separately
for each task and overall, on the queries both results cover.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonaudio.bench.metrics import RANK_METRICS
from reasonaudio.bench.results import RetrieverResult
from reasonaudio.bench.significance import N_PERMUTATIONS, SEED, PairedTest, paired_randomization_test
from reasonaudio.dataset.benchmark import ALL_TASKS
from reasonaudio.errors import DataError

COMPARE_METRICS = ("acc@1", "ndcg@10", "mc_acc")
OVERALL = "overall"


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    metrics: tuple[str, ...]
    groups: tuple[str, ...]
    """tasks present, then ``overall``"""
    tests: dict[tuple[str, str], PairedTest]
    """(group, metric) -> test"""
    n_permutations: int
    seed: int

    def to_json(self) -> dict:
        return {"a": self.a, "b": self.b, "test": "paired randomization (sign flip), two-sided",
                "n_permutations": self.n_permutations, "seed": self.seed,
                "groups": {g: {m: {"n": t.n, "a": t.mean_a, "b": t.mean_b, "diff": t.diff,
                                   "p": t.p_value, "significant": t.significant, "exact": t.exact}
                               for (gg, m), t in self.tests.items() if gg == g}
                           for g in self.groups}}


def compare(a: RetrieverResult, b: RetrieverResult, metrics: tuple[str, ...] = COMPARE_METRICS,
            n_permutations: int = N_PERMUTATIONS, seed: int = SEED) -> Comparison:
    """Paired tests of ``a`` against ``b`` per task and overall."""
    shared = sorted(set(a.task_of) & set(b.task_of))
    if not shared:
        raise DataError(f"results of {a.name!r} and {b.name!r} share no query; "
                        "were they computed on the same benchmark?")
    task_of = a.task_of
    groups = [t for t in ALL_TASKS if any(task_of[q] == t for q in shared)] + [OVERALL]
    tests: dict[tuple[str, str], PairedTest] = {}
    for g in groups:
        qids = shared if g == OVERALL else [q for q in shared if task_of[q] == g]
        for m in metrics:
            # Rank metrics: every shared query (an unanswered one scores 0). Multiple choice:
            # the queries both results have a choice for.
            pairs = qids if m in RANK_METRICS else [
                q for q in qids if m in a.per_query.get(q, {}) and m in b.per_query.get(q, {})]
            tests[(g, m)] = paired_randomization_test(a.values(m, pairs), b.values(m, pairs),
                                                      n_permutations, seed)
    return Comparison(a.name, b.name, tuple(metrics), tuple(groups), tests, n_permutations, seed)
