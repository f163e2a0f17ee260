"""Plots and search output researchers can use (issue 27, item 8; colours: issue 44): one colour
per retriever of a report, bars carry seeded 95% bootstrap intervals that are recorded, the projection is fitted
once on every panel's points, and `bench search QUERY-ID` marks relevant hits and the hard
negative."""

from __future__ import annotations

import json

import evalkit
import numpy as np
import pytest
from typer.testing import CliRunner

from hostile import small_build
from reasonaudio.evaluation import plots
from reasonaudio.evaluation.results import Results, RetrieverResult
from reasonaudio.cli import app


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return evalkit.evaluated_fakes(tmp_path_factory.mktemp("plots") / "bench")


def test_a_retrievers_colour_comes_from_its_place_among_the_reports_sorted_names():
    names = ["oracle", "bag-of-sounds", "random", "clap", "two-stage:oracle-caption+minilm"]
    first = plots.retriever_styles(names)
    again = plots.retriever_styles(list(reversed(names)))
    assert first == again  # the order given does not matter: the names are sorted
    assert [first[n].colour for n in sorted(names)] == list(plots.PALETTE[:len(names)])
    assert len({s.colour for s in first.values()}) == len(names)


def test_names_past_the_palette_are_told_apart_by_hatching():
    names = [f"r{i:02d}" for i in range(len(plots.PALETTE) + 3)]
    styles = plots.retriever_styles(names)
    assert all(styles[n].hatch is None for n in names[:len(plots.PALETTE)])
    late = names[len(plots.PALETTE):]
    assert [styles[n].colour for n in late] == list(plots.PALETTE[:3])
    assert {styles[n].hatch for n in late} == {plots.HATCHES[0]}
    assert len({(s.colour, s.hatch) for s in styles.values()}) == len(names)


def _result(name: str, values: list[float], task: str = "order") -> RetrieverResult:
    per_query = {f"q{i:03d}": {m: v for m in ("acc@1", "ndcg@10", "recall@10", "mrr", "hnsr@10",
                                              "tfr@10", "mc_acc")} for i, v in enumerate(values)}
    return RetrieverResult(name, per_query, {q: task for q in per_query})


def test_bootstrap_interval_is_seeded_covers_the_mean_and_shrinks_with_n():
    v = np.array([1.0, 0.0] * 50)
    lo, hi = plots.bootstrap_interval(v, "a", "order", "acc@1")
    assert lo < 0.5 < hi and 0.14 < hi - lo < 0.26          # ~ 2 x 1.96 x sqrt(.25 / 100)
    assert (lo, hi) == plots.bootstrap_interval(v, "a", "order", "acc@1")  # same seed, same interval
    assert (lo, hi) != plots.bootstrap_interval(v, "a", "order", "acc@1", seed=1)
    big = np.array([1.0, 0.0] * 2000)
    blo, bhi = plots.bootstrap_interval(big, "a", "order", "acc@1")
    assert bhi - blo < (hi - lo) / 3
    assert plots.bootstrap_interval(np.ones(7), "x") == (1.0, 1.0)
    assert all(np.isnan(plots.bootstrap_interval(np.array([]), "x")))


def test_intervals_are_recorded_beside_the_bars_and_do_not_depend_on_other_retrievers(tmp_path):
    a = _result("a", [1.0, 0.0, 1.0, 1.0] * 10)
    b = _result("b", [0.0, 0.0, 1.0, 0.0] * 10)
    png = plots.plot_metrics_by_task(Results({}, {}, {"a": a, "b": b}), tmp_path / "ab")
    doc = json.loads(png.with_suffix(".json").read_text())
    assert doc["method"]["bootstrap"]["seed"] == plots.BOOTSTRAP_SEED
    assert doc["method"]["bootstrap"]["resamples"] == plots.BOOTSTRAP_RESAMPLES
    assert doc["method"]["confidence"] == 0.95 and doc["method"]["wilson"]["metrics"] == ["acc@1", "mc_acc"]
    cell = doc["intervals"]["a"]["order"]["acc@1"]
    assert cell["n"] == 40 and cell["low"] < cell["mean"] == 0.75 < cell["high"]
    # one interval per figure: the bar's whisker is the table's (Wilson for Acc@1)
    from reasonaudio.evaluation.intervals import result_intervals, wilson_interval

    assert [cell["low"], cell["high"]] == list(wilson_interval(0.75, 40))
    assert [cell["low"], cell["high"]] == result_intervals(a)["per_task"]["order"]["acc@1"]
    overall = doc["intervals"]["a"]["overall"]["acc@1"]  # one task: overall holds the same queries
    assert (overall["mean"], overall["n"]) == (cell["mean"], cell["n"])
    assert overall["low"] < overall["mean"] < overall["high"]
    alone = plots.plot_metrics_by_task(Results({}, {}, {"a": a}), tmp_path / "a")
    assert json.loads(alone.with_suffix(".json").read_text())["intervals"]["a"] == doc["intervals"]["a"]


def test_group_values_are_the_tables_means(results):
    _, res = results
    for r in res.runs.values():
        for g in [*r.per_task, "overall"]:
            src = r.overall if g == "overall" else r.per_task[g]
            for m in plots.BAR_METRICS:
                if m in src:
                    assert plots.group_values(r, g, m).mean() == pytest.approx(src[m])


def test_the_projection_is_fitted_once_on_every_panels_points(results, tmp_path, monkeypatch):
    from reasonaudio.evaluation.embeddings import load_projection_data
    from reasonaudio.evaluation.results import embeddings_path

    bench, res = results
    items = load_projection_data(embeddings_path(bench, "embed-fake"))
    assert len(items) >= 2
    calls: list[int] = []
    real = plots.project_2d

    def spy(points, method="pca", seed=0):
        calls.append(len(points))
        return real(points, method, seed)

    monkeypatch.setattr(plots, "project_2d", spy)
    assert plots.plot_projection("embed-fake", items, tmp_path) is not None
    assert calls == [sum(1 + len(p.clip_vectors) for p in items)]


def test_search_by_query_id_marks_relevant_hits_and_the_hard_negative(tmp_path):
    from reasonaudio.dataset.view import load_benchmark

    data = small_build(tmp_path / "b", clips=40, queries=10)
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", "--data", str(data), "--model", "none"]).exit_code == 0
    bench = load_benchmark(data)
    q = bench.queries[0]
    choice = next(c for c in bench.choices if c.query_id == q.id)
    r = runner.invoke(app, ["search", q.id, "--data", str(data), "-r", "random", "-k", "40"],
                      env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    out = r.stdout
    rows = [ln for ln in out.splitlines() if "clip-" in ln and "│" in ln]
    relevant_rows = [ln for ln in rows if "relevant" in ln]
    assert len(relevant_rows) == len(bench.qrels[q.id])
    assert all(any(c in ln for c in bench.qrels[q.id]) for ln in relevant_rows)
    neg_row = next(ln for ln in rows if "hard neg." in ln)
    assert choice.negative in neg_row
    ranks = [int(ln.split("│")[1]) for ln in relevant_rows]
    assert f"first relevant clip at rank {min(ranks)}" in out
    assert f"hard negative {choice.negative} at rank" in out
    free = runner.invoke(app, ["search", q.text, "--data", str(data), "-r", "random"],
                         env={"COLUMNS": "160"})
    assert free.exit_code == 0 and "first relevant clip" not in free.stdout and "truth" not in free.stdout
