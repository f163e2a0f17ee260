"""Intervals beside every mean (Wilson, bootstrap) and Holm's correction of per-task tests."""

from __future__ import annotations

import json

import evalkit
import numpy as np
import pytest
from scipy.stats import binomtest

from reasonaudio.evaluation.compare import compare, holm_by_metric
from reasonaudio.evaluation.intervals import result_intervals, wilson_interval
from reasonaudio.evaluation.report import write_results_json
from reasonaudio.evaluation.significance import PairedTest, holm

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (1, 1), (37, 100), (250, 500)])
def test_wilson_is_scipys_for_whole_counts(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(k / n, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_wilson_of_a_half_integer_mc_count_lies_between_its_neighbours():
    lo, hi = wilson_interval(5.5 / 10, 10)                  # one tie among ten choices
    lo5, hi5 = wilson_interval(0.5, 10)
    lo6, hi6 = wilson_interval(0.6, 10)
    assert lo5 < lo < lo6 and hi5 < hi < hi6
    assert all(np.isnan(wilson_interval(0.0, 0)))


def test_holm_against_a_hand_computed_case():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]                   # capped at 1
    assert holm([0.02]) == [0.02] and holm([]) == []


def test_holm_corrects_per_metric_over_the_tasks_not_overall():
    def t(p):
        return PairedTest(10, 0.5, 0.4, 0.1, p, False)

    tests = {("negation", "acc@1"): t(0.01), ("order", "acc@1"): t(0.04),
             ("overall", "acc@1"): t(0.03), ("negation", "mc_acc"): t(0.02)}
    adj = holm_by_metric(tests)
    assert adj == {("negation", "acc@1"): pytest.approx(0.02), ("order", "acc@1"): pytest.approx(0.04),
                   ("overall", "acc@1"): 0.03, ("negation", "mc_acc"): 0.02}


def test_compare_reports_raw_and_corrected_p(tmp_path):
    _, res = evalkit.evaluated_fakes(tmp_path / "bench")
    a, b = list(res.runs.values())[:2]
    c = compare(a, b)
    doc = c.to_json()
    assert doc["correction"].startswith("holm")
    for g, per in doc["groups"].items():
        for m, row in per.items():
            assert row["p_holm"] >= row["p"]
            assert row["significant_holm"] == (row["p_holm"] < 0.05)


def test_eval_json_carries_an_interval_beside_every_acc_and_mc(tmp_path):
    bench, res = evalkit.evaluated_fakes(tmp_path / "bench")
    write_results_json(tmp_path / "a.json", res)
    write_results_json(tmp_path / "b.json", res)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    runs = json.loads((tmp_path / "a.json").read_text())["runs"]
    for name, run in runs.items():
        iv = run["intervals"]
        assert iv["method"]["wilson"]["metrics"] == ["acc@1", "mc_acc"]
        for group, values in [("overall", run["overall"]), *run["per_task"].items()]:
            box = iv["overall"] if group == "overall" else iv["per_task"][group]
            for m in ("acc@1", "ndcg@10", "mc_acc"):
                if m in values:
                    lo, hi = box[m]
                    assert lo - 1e-9 <= values[m] <= hi + 1e-9, (name, group, m)
    assert result_intervals(res.runs[name]) == {k: v for k, v in iv.items() if k != "method"}
