"""Report tables, comparisons and plots on hand-made results."""

from __future__ import annotations

import evalkit
import numpy as np
import pytest
from rich.console import Console

from reasonaudio.evaluation.compare import compare
from reasonaudio.evaluation.plots import plot_metrics_by_task, plot_report, project_2d
from reasonaudio.evaluation.results import Results, RetrieverResult
from reasonaudio.errors import DataError
from reasonaudio.views.results import compare_table, eval_table, mc_table, print_eval_tables


def text_of(renderable, width=200) -> str:
    c = Console(width=width, record=True, file=open("/dev/null", "w"))
    c.print(renderable)
    return c.export_text()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return evalkit.evaluated_fakes(tmp_path_factory.mktemp("rep") / "bench")


def test_eval_table_cells(results):
    _, res = results
    out = text_of(eval_table(res))
    assert "Acc@1 / nDCG@10" in out
    row = next(line for line in out.splitlines() if "constant-fake" in line)
    # negation, order, overlap, duration, mix, overall (values from test_eval_evaluate by hand)
    assert "1.000 / 0.956" in row and "0.333 / 0.599" in row
    assert "(n=2)" in out and "(n=6)" in out


def test_mc_table(results):
    _, res = results
    out = text_of(mc_table(res))
    assert "chance 0.5" in out
    row = next(line for line in out.splitlines() if "constant-fake" in line)
    assert row.count("0.500") == 6


def test_print_eval_tables_handles_empty():
    c = Console(record=True, file=open("/dev/null", "w"))
    print_eval_tables(c, Results({}, {}))
    assert "no results" in c.export_text()


def _result(name, values, tasks):
    per_query = {f"q{i}": {"acc@1": v, "ndcg@10": v, "recall@10": v, "mrr": v, "hnsr@10": v,
                           "tfr@10": v, "mc_acc": v} for i, v in enumerate(values)}
    return RetrieverResult(name, per_query, {f"q{i}": t for i, t in enumerate(tasks)})


def test_compare_marks_significance():
    tasks = ["order"] * 30 + ["negation"] * 3
    a = _result("a", [1.0] * 33, tasks)
    b = _result("b", [0.0] * 30 + [1.0, 0.0, 1.0], tasks)
    c = compare(a, b)
    assert c.groups == ("negation", "order", "overall")
    assert c.tests[("order", "acc@1")].significant
    assert not c.tests[("negation", "acc@1")].significant          # 1 non-zero diff: p = 1
    assert c.tests[("negation", "acc@1")].p_value == 1.0
    out = text_of(compare_table(c))
    assert "+1.000*" in out and "+0.333 " in out
    doc = c.to_json()
    assert doc["groups"]["order"]["acc@1"]["significant"] is True
    assert doc["n_permutations"] == 10_000


def test_compare_mc_uses_queries_both_have():
    a = _result("a", [1.0, 1.0], ["order", "order"])
    b = _result("b", [0.0, 0.0], ["order", "order"])
    del b.per_query["q1"]["mc_acc"]
    assert compare(a, b).tests[("order", "mc_acc")].n == 1
    assert compare(a, b).tests[("order", "acc@1")].n == 2


def test_compare_needs_shared_queries():
    with pytest.raises(DataError, match="share no query"):
        compare(_result("a", [1.0], ["order"]), RetrieverResult("b", {}, {}))


def test_pca_recovers_a_planar_layout():
    rng = np.random.default_rng(0)
    basis = np.linalg.qr(rng.normal(size=(8, 2)))[0].T             # two orthonormal rows
    pts2 = rng.normal(size=(20, 2))
    pts = pts2 @ basis + 5.0 * rng.normal(size=8)                  # not unit: normalised inside
    xy = project_2d(pts)
    assert xy.shape == (20, 2)
    # pairwise distance ranks are preserved for points in a plane (after normalisation the
    # layout bends, so compare with the normalised points' own distances)
    unit = pts / np.linalg.norm(pts, axis=1, keepdims=True)
    d_true = np.linalg.norm(unit[:, None] - unit[None], axis=-1)
    d_proj = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
    assert np.corrcoef(d_true.ravel(), d_proj.ravel())[0, 1] > 0.99
    assert np.array_equal(project_2d(pts), xy)                     # deterministic, signs fixed
    assert np.allclose(project_2d(-pts * 3), project_2d(-pts))     # scale-free


def test_projection_of_tiny_inputs():
    assert project_2d(np.eye(3)[:2]).shape == (2, 2)
    assert project_2d(np.ones((3, 1))).shape == (3, 2)
    assert project_2d(np.random.default_rng(0).normal(size=(6, 4)), "tsne").shape == (6, 2)


def test_plots_are_deterministic_pngs(results, tmp_path):
    bench, res = results
    p1 = plot_metrics_by_task(res, tmp_path / "a")
    assert p1.read_bytes()[:4] == b"\x89PNG"
    paths = plot_report(bench, res, tmp_path / "c")
    assert sorted(p.name for p in paths) == ["metrics_by_task.json", "metrics_by_task.png",
                                            "projection_embed-fake.png"]
    assert (tmp_path / "c" / "metrics_by_task.png").read_bytes() == p1.read_bytes()
    assert plot_metrics_by_task(Results({}, {}), tmp_path / "d") is None


def test_report_shows_a_saved_perception_report(tmp_path):
    """`bench report` reads what `bench detect` saved (perception) and recomputes the per-task
    decomposition from the results saved since, never reprinting the detect-time figures."""
    import evalkit
    from rich.console import Console

    from reasonaudio.evaluation.evaluate import evaluate_retrievers
    from reasonaudio.evaluation.report import decomposition, run_report
    from reasonaudio.evaluation.results import load_results, results_dir
    from reasonaudio.fileio import write_json
    from reasonaudio.views.results import print_report_outcome

    bench = evalkit.write_bench(tmp_path / "bench")
    fakes = [type(name, (cls,), {"name": name})(bench) for name, cls in
             (("oracle", evalkit.OracleFake), ("detected:yamnet", evalkit.BagFake),
              ("clap", evalkit.ConstantFake))]
    evaluate_retrievers(bench, fakes)
    write_json(results_dir(bench) / "detect-yamnet-zero-shot.json", {
        "name": "detected:yamnet", "optimistic": False,
        "perception": {"collars": {"onset_ms": 250, "offset_ms": 250, "offset_relative": 0.2},
                       "events_micro": {"precision": 0.25, "recall": 0.5, "f1": 1 / 3},
                       "tagging_micro": {"f1": 0.75}},
        "decomposition": {"overall": {"oracle": None, "detected": 0.123,  # as detect saved it
                                      "best_embedding_value": None, "best_embedding": None}}})
    outcome = run_report(bench, tmp_path / "plots")
    assert [d["name"] for d in outcome.detections] == ["detected:yamnet"]
    got = outcome.detections[0]["decomposition"]
    saved = load_results(bench).runs
    assert got == decomposition(load_results(bench), "detected:yamnet")
    assert got["overall"]["oracle"] == saved["oracle"].overall["acc@1"] == 1.0
    assert got["overall"]["detected"] == saved["detected:yamnet"].overall["acc@1"]
    assert got["overall"]["best_embedding"] == "clap"
    assert got["order"]["best_embedding_value"] == saved["clap"].per_task["order"]["acc@1"]
    console = Console(record=True, width=200)
    print_report_outcome(console, outcome)
    text = console.export_text()
    assert "perception of detected:yamnet" in text and "F1 0.333" in text and "tagging F1 0.750" in text
    table = text.split("best embedding", 1)[1]
    overall = next(line for line in table.splitlines() if line.strip().startswith("overall"))
    assert "1.000" in overall and "clap" in overall and "-" not in overall.split()[1:4]
    assert "0.123" not in text
