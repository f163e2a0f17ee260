"""`bench eval` / `compare` / `report` through typer's CliRunner, with fake retrievers."""

from __future__ import annotations

import json

import evalkit
import pytest
from typer.testing import CliRunner

from reasonaudio.evaluation.metrics import METRICS
from reasonaudio.cli import app
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.retrievers import registry

pytestmark = pytest.mark.fast

runner = CliRunner()


@pytest.fixture()
def bench(tmp_path, monkeypatch):
    b = evalkit.write_bench(tmp_path / "bench")

    for name, cls in evalkit.FAKES.items():
        spec = registry.RetrieverSpec(name, lambda n, bench, store, options, _cls=cls: _cls(bench), "test")
        monkeypatch.setitem(registry._REGISTRY, name, spec)
    return b


def test_eval_json_trec_and_tables(bench, tmp_path):
    out = tmp_path / "res.json"
    res = runner.invoke(app, ["eval", "--data", str(bench.root), "-r", "oracle-fake", "-r", "bag-fake",
                              "--json", str(out), "--trec", str(tmp_path / "trec"), "-k", "5"])
    assert res.exit_code == 0, res.output
    assert "Acc@1 / nDCG@10" in res.output and "Multiple choice" in res.output
    doc = json.loads(out.read_text())
    assert set(doc) == {"data", "versions", "runs"}
    assert list(doc["runs"]) == ["oracle-fake", "bag-fake"]
    for entry in doc["runs"].values():
        assert list(entry["overall"]) == list(METRICS)
        assert list(entry["per_task"]) == list(TASKS)
    assert doc["runs"]["oracle-fake"]["overall"]["acc@1"] == 1.0
    lines = (tmp_path / "trec" / "bag-fake.trec").read_text().splitlines()
    assert len(lines) == 6 * 5 and lines[0].split()[1] == "Q0"


def test_compare_uses_saved_results_or_evaluates(bench):
    res = runner.invoke(app, ["compare", "oracle-fake", "constant-fake", "--data", str(bench.root)])
    assert res.exit_code == 0, res.output
    assert "evaluating now" in res.output
    assert "paired randomization" in res.output and "overall" in res.output
    again = runner.invoke(app, ["compare", "oracle-fake", "constant-fake", "--data", str(bench.root)])
    assert again.exit_code == 0 and "evaluating now" not in again.output


def test_report_tables_and_pngs(bench, tmp_path):
    assert runner.invoke(app, ["eval", "--data", str(bench.root), "-r", "oracle-fake",
                               "-r", "embed-fake", "-r", "constant-fake"]).exit_code == 0
    res = runner.invoke(app, ["report", "--data", str(bench.root), "--out", str(tmp_path / "plots")])
    assert res.exit_code == 0, res.output
    assert "All metrics" in res.output
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["failures.png", "metrics_by_task.png", "projection_embed-fake.png"]
    assert "Failures (Acc@1 = 0)" in res.output
    for p in (tmp_path / "plots").glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("args,msg", [
    (["report"], "no saved results"),
    (["report", "-r", "nope"], "no saved results for nope"),
    (["eval", "-r", "nope"], "unknown retriever"),
    (["eval", "-r", "oracle-fake", "-k", "0"], "'-k': must be an integer >= 1, got 0"),
])
def test_user_errors_are_one_line(bench, args, msg):
    res = runner.invoke(app, args + ["--data", str(bench.root)])
    assert res.exit_code == 2, res.output
    assert msg in res.output and "Traceback" not in res.output


def test_missing_benchmark_dir(tmp_path):
    res = runner.invoke(app, ["report", "--data", str(tmp_path / "none")])
    assert res.exit_code == 2 and "not found" in res.output


def test_report_projection_option_checked(bench):
    runner.invoke(app, ["eval", "--data", str(bench.root), "-r", "constant-fake"])
    res = runner.invoke(app, ["report", "--data", str(bench.root), "--projection", "umap"])
    assert res.exit_code == 2 and "--projection" in res.output
