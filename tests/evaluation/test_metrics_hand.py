"""Every metric against values computed by hand (docs/evaluation.md definitions, docstring of metrics.py)."""

from __future__ import annotations

import math

import pytest

from reasonaudio.dataset.benchmark import Choice, choice_score, multiple_choice
from reasonaudio.evaluation.metrics import (METRICS, RANK_METRICS, aggregate,
                                       ndcg_at_k, query_metrics)

pytestmark = pytest.mark.fast

L2 = math.log2
INF = float("inf")


def approx(d: dict) -> dict:
    return {k: pytest.approx(v, abs=1e-12) for k, v in d.items()}


def test_mixed_ranking_hard_negative_on_top():
    # relevant {a, c}, hard negative b ranked first, a at 2, c at 4
    got = query_metrics(["b", "a", "x", "c"], {"a", "c"}, {"b"})
    dcg = 1 / L2(3) + 1 / L2(5)
    idcg = 1 + 1 / L2(3)
    assert got == approx({"acc@1": 0, "ndcg@10": dcg / idcg, "recall@10": 1, "mrr": 0.5,
                          "hnsr@10": 0, "tfr@10": 0})
    assert got["ndcg@10"] == pytest.approx(0.650921, abs=1e-6)


def test_top_hit_and_hard_negative_below_cutoff():
    ranking = ["a"] + [f"x{i}" for i in range(10)] + ["b"]   # b at rank 12
    got = query_metrics(ranking, {"a"}, {"b"})
    assert got == approx({"acc@1": 1, "ndcg@10": 1, "recall@10": 1, "mrr": 1, "hnsr@10": 1,
                          "tfr@10": 1})


def test_hard_negative_exactly_at_k_fails_both():
    ranking = ["a"] + [f"x{i}" for i in range(8)] + ["b"]    # b at rank 10 = k
    got = query_metrics(ranking, {"a"}, {"b"})
    assert got["hnsr@10"] == 0 and got["tfr@10"] == 0 and got["acc@1"] == 1


def test_relevant_second_hard_negative_at_11():
    ranking = ["x", "a"] + [f"y{i}" for i in range(8)] + ["b"]   # a at 2, b at 11
    got = query_metrics(ranking, {"a"}, {"b"})
    assert got == approx({"acc@1": 0, "ndcg@10": 1 / L2(3), "recall@10": 1, "mrr": 0.5,
                          "hnsr@10": 1, "tfr@10": 0})


def test_relevant_at_10_counts_at_11_does_not():
    r10 = [f"x{i}" for i in range(9)] + ["a"]
    got = query_metrics(r10, {"a"}, set())
    assert got == approx({"acc@1": 0, "ndcg@10": 1 / L2(11), "recall@10": 1, "mrr": 0.1,
                          "hnsr@10": 1, "tfr@10": 0})
    r12 = [f"x{i}" for i in range(11)] + ["a"]
    got = query_metrics(r12, {"a"}, set())
    assert got == approx({"acc@1": 0, "ndcg@10": 0, "recall@10": 0, "mrr": 1 / 12,
                          "hnsr@10": 0, "tfr@10": 0})


def test_no_hard_negative_means_rank_infinity():
    assert query_metrics(["a"], {"a"}, set())["tfr@10"] == 1
    # a hard negative absent from the run also has rank infinity
    assert query_metrics(["a", "x"], {"a"}, {"b"})["hnsr@10"] == 1


def test_unanswered_query_scores_zero():
    assert query_metrics([], {"a"}, {"b"}) == {m: 0.0 for m in RANK_METRICS}


def test_no_relevant_scores_zero():
    assert query_metrics(["a", "b"], set(), {"b"}) == {m: 0.0 for m in RANK_METRICS}


def test_ideal_uses_all_relevant_and_caps_at_k():
    rel = {f"r{i}" for i in range(15)}
    ranking = sorted(rel)[:10] + ["x"]
    got = query_metrics(ranking, rel, set())
    assert got["ndcg@10"] == pytest.approx(1.0) and got["recall@10"] == pytest.approx(10 / 15)
    # three relevant, one retrieved first: DCG 1, IDCG 1 + 1/log2 3 + 1/2
    assert ndcg_at_k(["a", "x"], {"a", "b", "c"}) == pytest.approx(1 / (1 + 1 / L2(3) + 0.5))


def test_duplicate_clip_counts_once():
    got = query_metrics(["x", "x", "a"], {"a"}, set())
    assert got["mrr"] == pytest.approx(0.5)
    assert got["ndcg@10"] == pytest.approx(1 / L2(3))
    assert query_metrics(["a", "a"], {"a", "b"}, set())["ndcg@10"] == pytest.approx(1 / (1 + 1 / L2(3)))


def test_hard_negative_that_is_relevant_is_ignored():
    got = query_metrics(["a", "b"], {"a", "b"}, {"b"})
    assert got["tfr@10"] == 1


def test_order_is_the_runs_not_resorted():
    # same set, different order -> different scores: ties are the run's business
    assert query_metrics(["a", "x"], {"a"})["acc@1"] == 1
    assert query_metrics(["x", "a"], {"a"})["acc@1"] == 0


@pytest.mark.parametrize("pos,neg,want", [
    (1.0, 0.0, 1.0), (0.0, 1.0, 0.0), (0.3, 0.3, 0.5), (-INF, -INF, 0.5), (0.0, -INF, 1.0),
    (float("nan"), 0.0, 0.0), (float("nan"), float("nan"), 0.5), (0.0, float("nan"), 1.0)])
def test_choice_score(pos, neg, want):
    assert choice_score(pos, neg) == want


def test_multiple_choice_is_the_mean_of_a_querys_pairs():
    """The rule's one place: each pair by choice_score, a query's pairs averaged, a pair not
    asked (None) left out, a query with none asked absent; evaluation and run files agree."""
    from reasonaudio.evaluation.external import pair_choices

    pairs = [Choice("q1", "a", "b"), Choice("q1", "c", "d"), Choice("q2", "a", "c"),
             Choice("q3", "e", "a"), Choice("q4", "b", "a")]
    scores = {"q1": {"a": 2.0, "b": 1.0, "c": 0.5, "d": 0.5}, "q2": {"a": 0.0, "c": 1.0},
              "q4": {"a": 3.0}}
    got = multiple_choice(pairs, lambda ch: None if ch.query_id == "q3" else (
        scores.get(ch.query_id, {}).get(ch.positive, -INF), scores.get(ch.query_id, {}).get(ch.negative, -INF)))
    assert got == {"q1": 0.75, "q2": 0.0, "q4": 0.0}

    class Bench:  # what pair_choices reads of a benchmark
        choices = pairs
        query_by_id = {"q1": None, "q2": None, "q4": None}

    assert pair_choices(Bench(), scores) == got


def test_aggregate_macro_means():
    per_query = {
        "q1": {"acc@1": 1, "ndcg@10": 1, "recall@10": 1, "mrr": 1, "hnsr@10": 1, "tfr@10": 1, "mc_acc": 1},
        "q2": {"acc@1": 0, "ndcg@10": 0.5, "recall@10": 1, "mrr": 0.5, "hnsr@10": 1, "tfr@10": 0, "mc_acc": 0.5},
        "q3": {"acc@1": 0, "ndcg@10": 0, "recall@10": 0, "mrr": 0, "hnsr@10": 0, "tfr@10": 0},
    }
    task_of = {"q1": "order", "q2": "order", "q3": "negation", "q4": "negation"}  # q4 unanswered
    agg = aggregate(per_query, task_of, ("negation", "order", "overlap"))
    assert set(agg.per_task) == {"negation", "order"}
    assert agg.counts == {"overall": 4, "order": 2, "negation": 2}
    assert agg.per_task["order"]["acc@1"] == 0.5
    assert agg.per_task["order"]["ndcg@10"] == 0.75
    assert agg.per_task["order"]["mc_acc"] == 0.75
    assert agg.per_task["negation"]["acc@1"] == 0
    assert agg.overall["acc@1"] == 0.25          # q4 counts as 0
    assert agg.overall["mrr"] == pytest.approx(1.5 / 4)
    assert agg.overall["mc_acc"] == 0.75         # only the two queries with a choice
    assert list(agg.overall) == list(METRICS)
