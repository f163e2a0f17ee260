"""`bench demo` end to end on a tiny configuration, and its atom-bank fallback."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reasonaudio import mainjob
from reasonaudio.cli import app
from reasonaudio.errors import ReasonAudioError
from reasonaudio.mainjob import resolve_atoms
from reasonaudio.progress import Hooks


def test_auto_falls_back_to_synthetic_when_the_real_bank_cannot_be_fetched(monkeypatch, tmp_path):
    def no_network(*args, **kwargs):
        raise ReasonAudioError("apt-get download failed: no network")

    monkeypatch.setattr(mainjob, "published_bank", lambda dest=None: None)
    monkeypatch.setattr(mainjob, "fetch_packages", no_network)
    lines: list[str] = []
    assert resolve_atoms("auto", Hooks(on_notify=lines.append, on_warn=lines.append)) == "synthetic"
    said = "\n".join(lines)
    assert "no network" in said and "using the synthetic bank" in said
    assert resolve_atoms("synthetic", Hooks(on_notify=lines.append, on_warn=lines.append)) == "synthetic"
    assert resolve_atoms(str(tmp_path), Hooks(on_notify=lines.append, on_warn=lines.append)) == str(tmp_path)


DEMO_ARGS = ["--atoms", "synthetic", "--clips", "60", "--queries", "10",
             "--learned", "two-stage:oracle-caption+minilm"]


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory):
    """One small `bench demo` (the tests below read it; its tables as the view made them):
    (folder, CLI result, the headline tables printed)."""
    from reasonaudio.views import mainjob as view

    out = tmp_path_factory.mktemp("demo") / "demo"
    printed = []
    real = view.headline_table
    mp = pytest.MonkeyPatch()
    mp.setattr(view, "headline_table", lambda result: printed.append(real(result)) or printed[-1])
    try:
        r = CliRunner().invoke(app, ["demo", "--out", str(out), *DEMO_ARGS])
    finally:
        mp.undo()
    return out, r, printed


def test_demo_runs_end_to_end_and_reruns(small_demo):
    out, r, _ = small_demo
    args = ["demo", "--out", str(out), *DEMO_ARGS]
    assert r.exit_code == 0, r.output
    results = json.loads((out / "results.json").read_text())
    runs = results["runs"]
    assert set(runs) == {"oracle", "bag-of-sounds", "random", "two-stage:oracle-caption+minilm"}
    assert runs["oracle"]["overall"]["acc@1"] == 1.0 and runs["oracle"]["overall"]["ndcg@10"] == 1.0
    assert (out / "report" / "metrics_by_task.png").is_file()
    assert "main job steps" in r.output
    # at a glance: the steps, the comparison and where the rest is; the report's tables stay in
    # the report unless --verbose
    assert "bench serve --data" in r.output and "bench report --data" in r.output
    assert "Multiple choice (chance 0.5)" not in r.output and "paired randomization test" in r.output
    assert "bench demo --full" not in r.output  # a size of its own: no pointer to the other
    assert "this is a custom size (60 clips, 10 queries; calibration 60 and 60 clips)" in r.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "reusing" in again.output
    changed = CliRunner().invoke(app, args[:-2] + ["--seed", "1"])
    assert changed.exit_code == 2 and "other parameters" in changed.output


def test_the_demo_ends_with_the_readme_table_cell_for_cell(small_demo, monkeypatch):
    """The last table `bench demo` prints is the README's block made from its saved results by
    scripts/doc_figures.py (one generator), so a newcomer can check every cell on screen."""
    import importlib.util
    import io
    from pathlib import Path

    from rich.console import Console

    out, r, printed = small_demo
    assert r.exit_code == 0, r.output
    assert len(printed) == 1 and "as in the README" in r.output
    screen = Console(width=400, file=io.StringIO(), color_system=None)
    screen.print(printed[0])
    lines = [" ".join(line.replace("│", " ").replace("┃", " ").split())
             for line in screen.file.getvalue().splitlines()]
    root = Path(__file__).resolve().parents[2] / "scripts" / "doc_figures.py"
    spec = importlib.util.spec_from_file_location("doc_figures_demo_table", root)
    figures = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(__import__("sys").modules, spec.name, figures)
    spec.loader.exec_module(figures)
    block = figures.block_demo_results(figures.Context(None, {}, quick=figures.Saved.load(out / "bench")))
    rows = [row for row in block if row.startswith("| `")]
    assert len(rows) == 4
    for row in rows:
        cells = [c.strip().strip("`*") for c in row.strip("|").split("|")]
        assert " ".join(cells) in lines, (cells, lines)


def test_the_report_step_counts_the_files_it_wrote_by_kind(tmp_path):
    from reasonaudio.mainjob import report_summary

    paths = [tmp_path / n for n in ("a.png", "a.json", "b.png", "robustness.json", "c.png")]
    assert report_summary(paths, tmp_path) == f"3 PNG files and 2 data files in {tmp_path}"
    assert report_summary(paths[:1], tmp_path) == f"1 PNG file in {tmp_path}"


def test_the_demo_sizes_reach_the_main_job(monkeypatch):
    """`bench demo` runs the quick size into data/demo, `--full` the docs' size into
    data/demo-full (its calibration builds those `bench build --calibration-for` makes);
    --clips, --queries and --out override; the quick size is clean only, the full and custom
    ones add snr5, and --noisy none is the clean-only job at any size."""
    from reasonaudio.generator import calibration

    seen = []
    monkeypatch.setattr(mainjob, "run_main_job", lambda params, hooks: seen.append(params) or mainjob.MainJobResult())
    for args in (["demo"], ["demo", "--full"], ["demo", "--full", "--clips", "900", "--out", "x",
                                                 "--noisy", "none"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 0, r.output
    quick, full, given = seen
    assert (str(quick.out), quick.n_clips, quick.n_queries) == ("data/demo", 600, 200)
    assert quick.noisy_condition is None and full.noisy_condition == "snr5"
    assert quick.size.calibration_clips < full.size.calibration_clips
    assert (str(full.out), full.n_clips, full.n_queries) == ("data/demo-full", 2000, 500)
    assert (full.size.calibration_clips, full.size.calibration_queries) == (calibration.CLIPS, calibration.QUERIES)
    assert (full.size.nested_clips, full.size.nested_queries) == (calibration.NESTED_CLIPS,
                                                                  calibration.NESTED_QUERIES)
    assert (str(given.out), given.n_clips, given.n_queries, given.noisy_condition) == ("x", 900, 500, None)
    assert given.size.name == "custom" and given.size.noisy == "snr5"
    from reasonaudio.demo_sizes import DEMO_SIZES
    from reasonaudio.views.mainjob import where_the_rest_is

    said = "\n".join(where_the_rest_is(mainjob.MainJobResult(size=DEMO_SIZES["quick"]), verbose=False))
    assert "`bench demo --full` runs the size the docs' figures are measured on (2,000 clips" in said
    assert "under snr5 too" in said
    full_said = "\n".join(where_the_rest_is(mainjob.MainJobResult(size=DEMO_SIZES["full"]), verbose=False))
    assert "--full" not in full_said and "custom" not in full_said


def test_a_size_given_by_numbers_is_its_own(monkeypatch):
    """`bench demo --clips N --queries M` runs a custom size, labelled with its numbers, whose
    calibration builds follow one rule: `bench build --calibration-for`'s (the full size's), each
    at most the size's own; never a named size's label or calibration by the numbers it has
    (2,000 / 500 was labelled full and calibrated as quick; --full with the quick's numbers the
    other way round)."""
    from reasonaudio.demo_sizes import DEMO_SIZES, custom_size
    from reasonaudio.views.mainjob import where_the_rest_is

    seen = []
    monkeypatch.setattr(mainjob, "run_main_job", lambda params, hooks: seen.append(params) or mainjob.MainJobResult())
    for args in (["--clips", "2000", "--queries", "500"], ["--full", "--clips", "600", "--queries", "200"],
                 ["--clips", "60", "--queries", "10"], ["--queries", "40"]):
        r = CliRunner().invoke(app, ["demo", *args])
        assert r.exit_code == 0, r.output
    full, quick = DEMO_SIZES["full"], DEMO_SIZES["quick"]
    as_full, as_quick, small, some = (p.size for p in seen)
    for size, (clips, queries) in ((as_full, (2000, 500)), (as_quick, (600, 200)), (small, (60, 10)),
                                   (some, (quick.clips, 40))):
        assert size.name == "custom" and (size.clips, size.queries) == (clips, queries)
        assert size.calibration_clips == min(full.calibration_clips, clips)
        assert size.calibration_queries == min(full.calibration_queries, queries)
        assert size.nested_clips == min(full.nested_clips, size.calibration_clips)
        assert size.nested_queries == min(full.nested_queries, size.calibration_queries)
    assert [str(p.out) for p in seen] == [str(quick.out), str(full.out), str(quick.out), str(quick.out)]
    assert (as_quick.calibration_clips, as_quick.nested_clips) != (quick.calibration_clips, quick.nested_clips)
    assert (small.calibration_clips, small.calibration_queries, small.nested_clips) == (60, 10, 60)
    said = "\n".join(where_the_rest_is(mainjob.MainJobResult(size=as_full), verbose=False))
    assert "this is a custom size (2,000 clips, 500 queries; calibration 500 and 200 clips)" in said
    assert "quick size" not in said and custom_size(2000, 500) == as_full
    for named in DEMO_SIZES.values():  # the named records keep the rule's caps too
        assert named.calibration_clips <= named.clips and named.nested_clips <= named.calibration_clips


def test_a_folder_holding_the_other_size_says_which(tmp_path, monkeypatch):
    """`bench demo --full` over a quick demo's folder is refused, saying it holds the quick one
    and the command that reuses it, with every option that selects that build: --out, the size
    (--full, or --clips and --queries), --atoms, --seed (the sizes made small: the rule reads the
    records, not their numbers). The command, run, reuses the build."""
    import re
    import shlex
    from dataclasses import replace

    import pytest

    from reasonaudio.demo_sizes import DEMO_SIZES
    from reasonaudio.errors import DataError
    from reasonaudio.mainjob import MainJobParams, prepare_benchmark

    for name, clips in (("quick", 60), ("full", 80)):
        monkeypatch.setitem(DEMO_SIZES, name, replace(DEMO_SIZES[name], clips=clips, queries=10))
    quick = MainJobParams.sized("quick", out=tmp_path / "q", atoms="synthetic", seed=3)
    assert len(prepare_benchmark(quick).clips) == quick.n_clips
    hints = {}
    with pytest.raises(DataError, match=re.escape(f"(the quick demo's: `bench demo --out {tmp_path / 'q'} "
                                                  "--atoms synthetic --seed 3` reuses it)")) as err:
        prepare_benchmark(MainJobParams.sized("full", out=tmp_path / "q", atoms="synthetic", seed=3))
    hints["quick"] = err.value
    with pytest.raises(DataError, match=r"other parameters \(the quick demo's: `bench demo --out \S+ "
                                        r"--atoms synthetic --seed 3` reuses it\); pass another --out"):
        prepare_benchmark(MainJobParams.sized("quick", out=tmp_path / "q", atoms="synthetic", seed=1))
    custom = MainJobParams.sized("quick", out=tmp_path / "c", n_clips=70, n_queries=10, atoms="synthetic")
    prepare_benchmark(custom)
    with pytest.raises(DataError, match=re.escape(f"(a custom-size demo's: `bench demo --clips 70 --queries 10 "
                                                  f"--out {tmp_path / 'c'} --atoms synthetic` reuses it)")) as err:
        prepare_benchmark(MainJobParams.sized("quick", out=tmp_path / "c", atoms="synthetic"))
    hints["custom"] = err.value
    seen = []
    monkeypatch.setattr(mainjob, "run_main_job", lambda params, hooks: seen.append(params) or mainjob.MainJobResult())
    for which, made in (("quick", quick), ("custom", custom)):
        command = re.search(r"`(bench demo [^`]*)`", str(hints[which])).group(1)
        assert CliRunner().invoke(app, shlex.split(command)[1:]).exit_code == 0
        notes: list[str] = []
        prepare_benchmark(seen[-1], Hooks(on_notify=notes.append))
        assert seen[-1] == made and any("reusing" in n for n in notes), (which, notes)


def test_the_readme_states_the_sizes_the_records_hold():
    """README.md's words about the two sizes are the records' numbers."""
    from pathlib import Path

    from reasonaudio.dataset.benchmark import TASKS
    from reasonaudio.demo_sizes import DEMO_SIZES

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    quick, full = DEMO_SIZES["quick"], DEMO_SIZES["full"]
    assert f"builds a benchmark of {quick.clips:,} clips and {quick.queries:,} queries" in readme
    assert f"asks {quick.queries // len(TASKS)} queries per task" in readme
    assert f"`bench demo --full` runs the same steps on {full.clips:,} clips and {full.queries:,} queries" in readme
