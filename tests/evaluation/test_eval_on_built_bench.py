"""Evaluation on a benchmark from the real builder (conftest's small_bench_dir, copied: eval
writes results/ into the data directory).

Retrievers here are test doubles built on the judge, so this checks that metrics, qrels, hard
negatives and choices agree with each other; the registry's real retrievers are tested below
when the registry is there.
"""

from __future__ import annotations

import shutil

import pytest
from evalkit import BagOfLabels, JudgeOracle, Shuffle

from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
from reasonaudio.evaluation.metrics import METRICS
from reasonaudio.querylang.judge import hard_negatives
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.dataset.view import BenchmarkView, load_benchmark


@pytest.fixture(scope="module")
def built(small_bench_dir, tmp_path_factory) -> BenchmarkView:
    dest = tmp_path_factory.mktemp("built") / "bench"
    shutil.copytree(small_bench_dir, dest)
    return load_benchmark(dest)


def test_choices_agree_with_qrels_and_hard_negatives(built):
    hn = hard_negatives(built)
    assert len(built.choices) == len(built.queries)
    for ch in built.choices:
        assert ch.positive in built.qrels[ch.query_id]
        assert ch.negative in hn[ch.query_id]
    assert all(hn[q.id] for q in built.queries)           # docs/benchmark.md: every query has one


def test_judge_oracle_perfect_bag_and_random_at_chance(built):
    res = evaluate_retrievers(built, [JudgeOracle(built), BagOfLabels(built), Shuffle(built)],
                              EvalContext(save=False))
    oracle = res.runs["judge-oracle"]
    assert set(oracle.per_task) == set(TASKS)
    for t in TASKS:
        assert oracle.per_task[t]["acc@1"] == 1.0 and oracle.per_task[t]["ndcg@10"] == 1.0
    # The judge oracle's search cannot be asked for scores, so MC uses the default (top-1000)
    assert oracle.overall["mc_acc"] == 1.0
    assert set(oracle.overall) == set(METRICS)
    # Bag of labels: the positive and its hard negative hold the same labels -> ties, except
    # negation (and mix queries with a negated sound) where the excluded sound adds a match to
    # the hard negative.
    bag = res.runs["bag-of-labels"]
    for t in ("order", "overlap", "duration"):
        assert bag.per_task[t]["mc_acc"] == 0.5
    assert bag.per_task["mix"]["mc_acc"] <= 0.5
    assert bag.per_task["negation"]["mc_acc"] == 0.0
    assert bag.overall["hnsr@10"] < 0.2
    shuffle = res.runs["shuffle"]
    assert 0.3 <= shuffle.overall["mc_acc"] <= 0.7       # 50 coin flips
    assert shuffle.overall["acc@1"] < 0.2


def test_registry_retrievers_end_to_end(built, tmp_path):
    """The real oracle (parser + Qdrant payload filter), random and bag-of-sounds via `bench eval`."""
    pytest.importorskip("reasonaudio.retrievers.registry")
    from typer.testing import CliRunner

    from reasonaudio.cli import app

    out = tmp_path / "res.json"
    res = CliRunner().invoke(app, ["eval", "--data", str(built.root), "-r", "oracle", "-r", "random",
                                   "-r", "bag-of-sounds", "--json", str(out)])
    assert res.exit_code == 0, res.output
    import json

    runs = json.loads(out.read_text())["runs"]
    for t in TASKS:
        assert runs["oracle"]["per_task"][t]["acc@1"] == 1.0
        assert runs["oracle"]["per_task"][t]["ndcg@10"] == 1.0
    assert runs["oracle"]["overall"]["mc_acc"] == 1.0
    assert 0.3 <= runs["random"]["overall"]["mc_acc"] <= 0.7
    assert runs["bag-of-sounds"]["per_task"]["negation"]["mc_acc"] == 0.0
    cmp = CliRunner().invoke(app, ["compare", "oracle", "bag-of-sounds", "--data", str(built.root)])
    assert cmp.exit_code == 0 and "evaluating now" not in cmp.output
    rep = CliRunner().invoke(app, ["report", "--data", str(built.root), "--out", str(tmp_path / "p")])
    assert rep.exit_code == 0, rep.output
    assert "projection plot skipped" in rep.output         # no embedding retriever here
    assert sorted(p.name for p in (tmp_path / "p").glob("*.png")) == ["failures.png", "metrics_by_task.png"]
    assert (tmp_path / "p" / "metrics_by_task.json").is_file()  # the bars' bootstrap intervals
