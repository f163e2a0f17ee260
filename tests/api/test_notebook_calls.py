"""The public API called as a notebook calls it: what the command line saves, the API reads back
equal; what it refuses, it refuses in one line (a ReasonAudioError, as the command prints it)."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

import reasonaudio as ra
from reasonaudio.cli import app
from reasonaudio.errors import DataError, QueryParseError, ReasonAudioError


@pytest.fixture(scope="module")
def data(small_bench_dir, tmp_path_factory):
    dest = tmp_path_factory.mktemp("api") / "small"
    shutil.copytree(small_bench_dir, dest)  # the shared build is read-only; stores write here
    return dest


def test_what_bench_eval_saved_is_what_evaluate_computes(data):
    got = CliRunner().invoke(app, ["eval", "--data", str(data), "-r", "bag-of-sounds"])
    assert got.exit_code == 0, got.output
    bench = ra.load(data)
    saved = ra.load_results(bench, ["bag-of-sounds"])
    fresh = ra.evaluate(bench, ["bag-of-sounds"], save=False)
    assert ra.scores(saved, "mc_acc") == ra.scores(fresh, "mc_acc")
    assert saved.runs["bag-of-sounds"].per_query == fresh.runs["bag-of-sounds"].per_query
    run = ra.load_run(bench, "bag-of-sounds")
    q = bench.queries[0].id
    assert [h.clip_id for h in run.hits[q]] == [h.clip_id for h in ra.get_retriever(
        "bag-of-sounds", bench).search(bench.queries[0].text, 100)][:len(run.hits[q])]


def test_parse_reads_a_benchmark_or_a_list_of_labels(data):
    bench = ra.load(data)
    a, b = bench.labels[:2]
    assert ra.parse(f"{a} but no {b}", bench) == ra.parse(f"{a} but no {b}", [a, b])
    assert ra.parse_detailed(f"{a} but no {b}", bench).logic == ra.parse(f"{a} but no {b}", bench, strict=True)
    with pytest.raises(QueryParseError):
        ra.parse("nothing anyone could read", [a, b])


def test_refusals_are_one_line(data):
    bench = ra.load(data)
    for call in (lambda: ra.evaluate(bench, ["oracle"], formulation="all"),
                 lambda: ra.load_run(bench, "never-evaluated"),
                 lambda: ra.evaluate(bench, ["no-such-retriever"]),
                 lambda: ra.build(data.parent / "other", clips=60, queries=10, tasks="nonsense")):
        with pytest.raises(ReasonAudioError) as err:
            call()
        assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="never-evaluated"):
        ra.load_run(bench, "never-evaluated")


def test_a_retriever_of_your_own_is_evaluated_beside_named_ones(data):
    from reasonaudio.retrievers.base import Hit, Retriever

    bench = ra.load(data)
    truth = {q.text: sorted(bench.qrels[q.id]) for q in bench.queries}

    class Cheat(Retriever):  # answers from the qrels: every measure at its best
        name = "cheat"

        def search(self, text, k):
            return [Hit(cid, 1.0) for cid in truth.get(text, [])[:k]]

    results = ra.evaluate(bench, ["oracle", Cheat()], save=False)
    assert list(results.runs) == ["oracle", "cheat"]
    assert ra.scores(results)["cheat"] == ra.scores(results)["oracle"]
    assert ra.load_results(bench, ["cheat"]).runs == {}  # save=False: nothing saved
