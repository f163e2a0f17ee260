"""Evaluation end to end on the hand-made benchmark with fake retrievers (no registry needed)."""

from __future__ import annotations

import json
import sys

import evalkit
import pytest

from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers, evaluate_run
from reasonaudio.evaluation.metrics import METRICS
from reasonaudio.evaluation.results import load_result, load_results, result_path, run_path
from reasonaudio.evaluation.runs import Run, read_trec
from reasonaudio.querylang.judge import hard_negatives
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.errors import QueryParseError, ReasonAudioError
from reasonaudio.progress import Hooks
from reasonaudio.retrievers.base import Hit, Retriever, RetrieverOptions

pytestmark = pytest.mark.fast


@pytest.fixture()
def bench(tmp_path):
    return evalkit.write_bench(tmp_path / "bench")


def test_hard_negatives_from_judge(bench):
    hn = hard_negatives(bench)
    assert hn["q-0000"] == {"clip-00002"}                  # has the excluded siren
    assert hn["q-0003"] == {"clip-00000", "clip-00001", "clip-00002", "clip-00004"}
    assert hn["q-0005"] == {"clip-00009"}                  # reversed order
    for q in bench.queries:
        assert not hn[q.id] & bench.qrels[q.id]


def test_oracle_scores_one_everywhere(bench, tmp_path):
    res = evaluate_retrievers(bench, [evalkit.OracleFake(bench)], EvalContext(trec_dir=tmp_path / "trec"))
    r = res.runs["oracle-fake"]
    assert r.overall == {m: 1.0 for m in METRICS}
    assert set(r.per_task) == set(TASKS)
    for t in TASKS:
        assert r.per_task[t] == {m: 1.0 for m in METRICS}
    assert (tmp_path / "trec" / "oracle-fake.trec").is_file()


def test_constant_retriever_by_hand(bench):
    """Ranking is clip-00000..clip-00009 for every query; every choice is a tie."""
    r = evaluate_retrievers(bench, [evalkit.ConstantFake(bench)]).runs["constant-fake"]
    pq = r.per_query
    # q-0000 relevant {0,1,3,4}: top hit relevant; HN clip-00002 at rank 3 -> hnsr 0
    assert pq["q-0000"]["acc@1"] == 1 and pq["q-0000"]["hnsr@10"] == 0
    # q-0002 relevant {1} at rank 2; q-0004 relevant {5} at rank 6, HN clip-00006 at 7
    assert pq["q-0002"]["mrr"] == 0.5 and pq["q-0004"]["mrr"] == pytest.approx(1 / 6)
    assert pq["q-0004"]["hnsr@10"] == 0
    # q-0005 relevant {8} at rank 9, HN {9} at rank 10
    assert pq["q-0005"]["recall@10"] == 1 and pq["q-0005"]["hnsr@10"] == 0
    assert all(v["mc_acc"] == 0.5 for v in pq.values())
    assert r.overall["mc_acc"] == 0.5
    assert r.per_task["order"]["acc@1"] == 0.5           # q-0001 right, q-0002 wrong
    assert r.overall["acc@1"] == pytest.approx(2 / 6)    # q-0000 and q-0001


def test_bag_of_sounds_cannot_beat_chance_on_hard_negatives(bench):
    r = evaluate_retrievers(bench, [evalkit.BagFake(bench)]).runs["bag-fake"]
    # ties on every pair except negation, where the excluded siren adds a match: 5 x 0.5 + 0
    assert r.overall["mc_acc"] == pytest.approx(2.5 / 6)
    assert r.per_task["negation"]["mc_acc"] == 0.0
    assert r.overall["hnsr@10"] == 0.0   # a 10-clip corpus: every hard negative is in the top 10


def test_saved_results_and_json_shape(bench):
    res = evaluate_retrievers(bench, [evalkit.OracleFake(bench), evalkit.ConstantFake(bench)])
    doc = json.loads(json.dumps(res.to_json()))
    assert set(doc) == {"data", "versions", "runs"}
    assert {"python", "numpy", "qdrant-client", "torch", "transformers", "reasonaudio"} <= set(doc["versions"])
    assert doc["data"]["n_queries"] == 6 and doc["data"]["seed"] == 7
    for name in ("oracle-fake", "constant-fake"):
        entry = doc["runs"][name]
        assert list(entry["overall"]) == list(METRICS)
        assert set(entry["per_task"]) == set(TASKS)
        for t in TASKS:
            assert list(entry["per_task"][t]) == list(METRICS)
        assert set(entry["per_query"]) == {q.id for q in bench.queries}
    # saved under DATA/results, reloaded without recomputation
    assert result_path(bench, "oracle-fake").is_file()
    assert read_trec(run_path(bench, "constant-fake")).ranking("q-0003")[:2] == ["clip-00000", "clip-00001"]
    loaded = load_results(bench)
    assert list(loaded.runs) == ["constant-fake", "oracle-fake"]   # "oracle" itself would lead
    for name, r in res.runs.items():
        assert loaded.runs[name].overall == r.overall
        assert loaded.runs[name].per_query == r.per_query
        assert loaded.runs[name].per_task == r.per_task


def test_results_of_another_build_are_stale(bench):
    evaluate_retrievers(bench, [evalkit.OracleFake(bench)])
    manifest = bench.root / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"seed": 7', '"seed": 8'))
    from reasonaudio.dataset.view import load_benchmark

    again = load_benchmark(bench.root)
    assert load_result(again, "oracle-fake") is None
    loaded = load_results(again)
    assert loaded.runs == {} and loaded.stale == ["oracle-fake"]


def test_unanswered_queries_score_zero(bench):
    run = Run("partial", {"q-0003": [Hit("clip-00003", 1.0)]})
    r = evaluate_run(bench, run)
    assert r.per_query["q-0003"]["acc@1"] == 1
    assert r.per_query["q-0000"]["acc@1"] == 0
    assert r.overall["acc@1"] == pytest.approx(1 / 6)
    assert "mc_acc" not in r.per_query["q-0000"]


class PickyFake(evalkit.OracleFake):
    """Cannot read the order queries, as a parser might not."""

    name = "picky"

    def search(self, text, k):
        if "then" in text:
            raise QueryParseError(f"cannot parse {text!r}")
        return super().search(text, k)

    def score(self, text, clip_ids):
        if "then" in text:
            raise QueryParseError(f"cannot parse {text!r}")
        return super().score(text, clip_ids)


def test_unreadable_queries_are_recorded_not_fatal(bench):
    r = evaluate_retrievers(bench, [PickyFake(bench)]).runs["picky"]
    assert set(r.failures) == {"q-0001", "q-0002", "q-0005"}
    assert r.per_task["order"]["acc@1"] == 0 and r.per_task["order"]["mc_acc"] == 0.5
    assert r.per_task["overlap"]["acc@1"] == 1


class BrokenEmbedding(evalkit.EmbeddingFake):
    name = "broken-embed"

    def clip_vectors(self, clip_ids):
        raise RuntimeError("store unreachable")


def test_embedding_hook_saved_and_failure_only_warns(bench, capsys):

    from reasonaudio.evaluation.embeddings import load_projection_data
    from reasonaudio.evaluation.results import embeddings_path

    evaluate_retrievers(bench, [evalkit.EmbeddingFake(bench)])
    items = load_projection_data(embeddings_path(bench, "embed-fake"))
    assert [p.task for p in items] == list(TASKS)
    assert items[0].query_id == "q-0000" and items[0].kinds.count("hard_negative") == 1
    assert items[0].clip_vectors.shape == (5, 16)
    evaluate_retrievers(bench, [evalkit.BatchedEmbeddingFake(bench)])
    batched = load_projection_data(embeddings_path(bench, "batched-embed-fake"))
    assert all((a.query_vector == b.query_vector).all() for a, b in zip(items, batched))
    res = evaluate_retrievers(bench, [BrokenEmbedding(bench)],
                              EvalContext(hooks=Hooks(on_warn=lambda msg: print(msg, file=sys.stderr))))
    assert res.runs["broken-embed"].overall["acc@1"] == 1.0
    assert "store unreachable" in capsys.readouterr().err
    assert not embeddings_path(bench, "broken-embed").exists()


def test_bad_arguments(bench):
    with pytest.raises(ReasonAudioError, match="depth"):
        evaluate_retrievers(bench, [evalkit.OracleFake(bench)], EvalContext(depth=0))
    with pytest.raises(ReasonAudioError, match="no retriever"):
        evaluate_retrievers(bench, [])


def test_depth_limits_the_run(bench):
    evaluate_retrievers(bench, [evalkit.ConstantFake(bench)], EvalContext(depth=3))
    run = read_trec(run_path(bench, "constant-fake"))
    assert all(len(h) == 3 for h in run.hits.values()) and len(run) == 6


def test_retriever_is_a_retriever():
    assert issubclass(evalkit.OracleFake, Retriever)


def test_model_options_from_cli():
    from reasonaudio.evaluation.evaluate import model_options

    assert model_options(["/w/clap", "bge-m3=/w/bge"], "cpu") == (
        RetrieverOptions(device="cpu", model_path="/w/clap"),
        {"bge-m3": RetrieverOptions(device="cpu", model_path="/w/bge")})
    with pytest.raises(ReasonAudioError, match="NAME=PATH"):
        model_options(["=/w"])


def test_retriever_options_reach_the_builder(bench, monkeypatch):
    from reasonaudio.retrievers import registry

    seen = {}

    def build(name, bench, store, opts):
        seen[name] = opts
        return evalkit.ConstantFake(bench)

    for n in ("a", "b"):
        monkeypatch.setitem(registry._REGISTRY, n, registry.RetrieverSpec(n, build, "test"))
    base = RetrieverOptions(device="cpu", model_path="/g")
    evaluate_retrievers(bench, ["a", "b"], EvalContext(
        options=base, retriever_options={"b": base.merged(model_path="/b")}))
    assert seen["a"].model_path == "/g" and seen["b"].model_path == "/b"
    assert seen["a"].device == "cpu"


def test_ensure_results_evaluates_a_name_given_weights_instead_of_reusing_it(monkeypatch):
    """A saved result is keyed by the retriever's name: `bench compare trained:x ...
    --model-path trained:x=NEW` must score NEW, not return what the old weights scored."""
    from types import SimpleNamespace

    from reasonaudio.evaluation import evaluate as ev
    from reasonaudio.retrievers.base import RetrieverOptions

    evaluated: list[list[str]] = []

    def fake_evaluate(bench, names, **kwargs):
        evaluated.append(list(names))
        return SimpleNamespace(runs={n: f"fresh {n}" for n in names})

    monkeypatch.setattr(ev, "load_result", lambda bench, name: f"saved {name}")
    monkeypatch.setattr(ev, "evaluate_retrievers", fake_evaluate)
    monkeypatch.setattr(ev, "data_summary", lambda bench: {})
    notes: list[str] = []
    from reasonaudio.dataset.keys import ResultKey

    bench = SimpleNamespace(key=ResultKey)  # the caption view: a result is stored by its name
    got = ev.ensure_results(bench, ["random", "trained:x"], EvalContext(
        retriever_options={"trained:x": RetrieverOptions(model_path="/m")},
        hooks=Hooks(on_notify=notes.append)))
    assert got.runs == {"random": "saved random", "trained:x": "fresh trained:x"}
    assert evaluated == [["trained:x"]] and any("weights given for trained:x" in n for n in notes)
    evaluated.clear()
    got = ev.ensure_results(bench, ["random", "trained:x"])
    assert got.runs == {"random": "saved random", "trained:x": "saved trained:x"} and evaluated == []
