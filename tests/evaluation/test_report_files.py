"""`bench report` lists every file it writes, so the main job's step line counts what is on disk
(issue 44: "7 PNG files" where 5 were written), and the failure breakdown it writes beside the
plots agrees with the saved per-query values."""

from __future__ import annotations

import json

import evalkit
import pytest

from reasonaudio.evaluation.report import REPORT_FILE, run_report
from reasonaudio.mainjob import report_summary


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """evalkit's fakes saved clean and under snr5 (so the report writes its data files too:
    conditions.json beside metrics_vs_snr.png); the hand-made bench cannot render, which the
    saved results do not need."""
    from reasonaudio.evaluation.evaluate import evaluate_retrievers
    from reasonaudio.dataset.view import load_benchmark

    root = tmp_path_factory.mktemp("files")
    bench, _ = evalkit.evaluated_fakes(root / "bench")
    noisy = load_benchmark(root / "bench").with_condition("snr5")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("reasonaudio.render.clips.check_renders", lambda bench: None)
        evaluate_retrievers(noisy, [evalkit.OracleFake(noisy), evalkit.ConstantFake(noisy)])
    return bench, run_report(bench, root / "plots"), root / "plots"


def test_the_report_lists_every_file_it_wrote(reported):
    _, outcome, folder = reported
    on_disk = {p.name for p in folder.iterdir()} - {REPORT_FILE}
    assert sorted(p.name for p in outcome.paths) == sorted(on_disk)
    assert {"metrics_by_task.png", "failures.png", "failures.json", "metrics_vs_snr.png",
            "conditions.json"} <= on_disk
    pngs = sum(1 for name in on_disk if name.endswith(".png"))
    others = len(on_disk) - pngs
    assert report_summary(outcome.paths, folder) == f"{pngs} PNG files and {others} data files in {folder}"
    listed = json.loads((folder / REPORT_FILE).read_text())["plots"]
    assert sorted(listed) == sorted(on_disk)


def test_the_written_breakdown_counts_the_saved_zeros(reported):
    bench, outcome, folder = reported
    doc = json.loads((folder / "failures.json").read_text())
    for name, r in outcome.results.runs.items():
        for task in doc["tasks"]:
            zeros = sorted(q for q, v in r.per_query.items()
                           if r.task_of[q] == task and v["acc@1"] == 0)
            written = sorted(q for qs in doc["retrievers"][name][task]["failures"].values() for q in qs)
            assert written == zeros, (name, task)
    assert any(doc["retrievers"]["constant-fake"][t]["failures"] for t in doc["tasks"])


def test_without_the_plotting_extra_the_tables_print_and_one_line_says_why(reported, monkeypatch,
                                                                          tmp_path):
    """No matplotlib: `bench report` still prints every table, writes no plot folder and says in
    one line that plots need the `plots` extra (it printed nothing at all)."""
    from typer.testing import CliRunner

    from reasonaudio.cli import app
    from reasonaudio.evaluation import report

    bench, _, _ = reported
    monkeypatch.setattr(report, "available", lambda extra: extra != "plots")
    out = tmp_path / "plots"
    done = CliRunner().invoke(app, ["report", "--data", str(bench.root), "--out", str(out),
                                    "--no-verify"])
    assert done.exit_code == 0, done.output
    said = [line for line in done.output.splitlines() if "plots not written" in line]
    assert len(said) == 1 and "reasonaudio[plots]" in said[0]
    assert "oracle" in done.output and not out.exists()
