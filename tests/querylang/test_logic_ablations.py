"""Logic ablations: ``oracle-without:FAMILY`` is the oracle over the logic without one family."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.querylang.ablation import ABLATIONS, without
from reasonaudio.logic import And, Before, Count, Has, Lasts, Not, Or, Overlap, walk
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.models.names import is_embedding
from reasonaudio.retrievers.registry import UnknownRetriever, retriever_names, spec_for

A, B, C = Has("a"), Has("b"), Has("c")


def test_each_family_is_removed_and_the_rest_kept():
    m2 = And((Before("a", "b"), Not(C)))
    assert without(m2, "negation") == Before("a", "b")
    assert without(m2, "order") == And((A, B, Not(C)))
    assert without(m2, "overlap") is m2 and without(m2, "duration") is m2
    m5 = And((Lasts("a", 2), Before("a", "b"), Before("b", "c"), Overlap("c", "d")))
    assert without(m5, "order") == And((Lasts("a", 2), A, B, C, Overlap("c", "d")))
    assert without(m5, "duration") == And((A, Before("a", "b"), Before("b", "c"), Overlap("c", "d")))
    assert without(m5, "overlap") == And((Lasts("a", 2), Before("a", "b"), Before("b", "c"), C,
                                          Has("d")))
    assert without(Count("a", 2), "count") == A
    assert without(Not(A), "negation") is None                        # nothing left to check
    assert without(Or((A, Not(B))), "negation") is None               # an arm that always holds
    assert without(Or((Before("a", "b"), A)), "order") == Or((And((A, B)), A))
    assert without(Not(Before("a", "b")), "order") == Not(And((A, B)))


def test_every_ablation_is_a_retriever_name():
    for a in ABLATIONS:
        assert a.retriever in retriever_names() and spec_for(a.retriever).needs_logic
        assert not is_embedding(a.retriever)    # never the "best learned" of a table
    with pytest.raises(UnknownRetriever, match="did you mean oracle-without:negation"):
        spec_for("oracle-without:negatoin")


def test_eval_without_negation_falls_on_negation_only(small_bench_dir, tmp_path):
    out = tmp_path / "res.json"
    res = CliRunner().invoke(app, ["eval", "--data", str(small_bench_dir), "-r", "oracle",
                                   "-r", "oracle-without:negation", "-r", "oracle-without:order",
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    runs = json.loads(out.read_text())["runs"]
    oracle, ablated = runs["oracle"], runs["oracle-without:negation"]
    assert ablated["describe"]["without"] == "negation"
    assert ablated["per_task"]["negation"]["acc@1"] < oracle["per_task"]["negation"]["acc@1"] == 1.0
    assert ablated["per_task"]["negation"]["mc_acc"] < 1.0
    logic = {q.id: q.logic for q in load_benchmark(small_bench_dir).queries}
    same = 0
    for qid, values in oracle["per_query"].items():
        if not any(isinstance(n, Not) for n in walk(logic[qid])):   # order, overlap, ... queries
            assert ablated["per_query"][qid] == values, qid
            same += values["task"] in ("order", "overlap")
    assert same > 0
    assert runs["oracle-without:order"]["per_task"]["order"]["acc@1"] < 1.0
    assert runs["oracle-without:order"]["per_task"]["negation"] == oracle["per_task"]["negation"]


def test_an_unknown_family_is_one_line():
    res = CliRunner().invoke(app, ["eval", "--data", "nowhere", "-r", "oracle-without:nothing"])
    assert res.exit_code == 2 and "Traceback" not in res.output
