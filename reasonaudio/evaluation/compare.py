"""Compare two retrievers query by query: per-task and overall differences with p-values.

Differences are ``A - B`` of the per-query means; significance is the paired randomization test
of :mod:`reasonaudio.evaluation.significance` (10,000 sign flips, seed 0, two-sided), run separately
for each task and overall, on the queries both results cover.

Testing several tasks at once is corrected with **Holm-Bonferroni**: for each metric, the
per-task tests form one family and their p-values are adjusted together (``p_holm``); the
overall test is a family of its own (its ``p_holm`` is its p). A difference is marked
significant when its adjusted p is below 0.05, which bounds the chance of any false claim among
a metric's tasks at 0.05. Both p-values are reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonaudio.evaluation.metrics import OVERALL, RANK_METRICS
from reasonaudio.evaluation.results import RetrieverResult
from reasonaudio.evaluation.significance import (ALPHA, CORRECTION, N_PERMUTATIONS, SEED, PairedTest, holm,
                                            paired_randomization_test)
from reasonaudio.dataset.benchmark import ALL_TASKS
from reasonaudio.errors import DataError

COMPARE_METRICS = ("acc@1", "ndcg@10", "mc_acc")


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
    p_holm: dict[tuple[str, str], float]
    """(group, metric) -> Holm-adjusted p (per metric over the tasks; overall: its own p)"""

    def significant(self, group: str, metric: str) -> bool:
        """The difference holds at 0.05 after the correction for several tasks."""
        return self.p_holm[(group, metric)] < ALPHA

    def to_json(self) -> dict:
        return {"a": self.a, "b": self.b, "test": "paired randomization (sign flip), two-sided",
                "n_permutations": self.n_permutations, "seed": self.seed,
                "correction": f"{CORRECTION}: per metric over the tasks; overall on its own",
                "groups": {g: {m: {"n": t.n, "a": t.mean_a, "b": t.mean_b, "diff": t.diff,
                                   "p": t.p_value, "significant": t.significant,
                                   "p_holm": self.p_holm[(g, m)],
                                   "significant_holm": self.significant(g, m), "exact": t.exact}
                               for (gg, m), t in self.tests.items() if gg == g}
                           for g in self.groups}}


def holm_by_metric(tests: dict[tuple[str, str], PairedTest]) -> dict[tuple[str, str], float]:
    """Holm-adjusted p of every test: one family per metric over its task groups; the overall
    group is left as it is (one test, one claim)."""
    out = {key: t.p_value for key, t in tests.items() if key[0] == OVERALL}
    for m in dict.fromkeys(m for _, m in tests):
        keys = [key for key in tests if key[1] == m and key[0] != OVERALL]
        out.update(zip(keys, holm([tests[k].p_value for k in keys])))
    return out


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
    return Comparison(a.name, b.name, tuple(metrics), tuple(groups), tests, n_permutations, seed,
                      holm_by_metric(tests))

