"""User text never reaches the console as rich markup, and no output depends on console width.

Every string a user supplies (query text, paths, retriever names) is printed as plain text: a
``[/]`` or ``[red]`` in it is shown as typed, never read as markup (which crashed with a
traceback, sometimes after the work was done, or silently changed what was shown).
"""

from __future__ import annotations

import evalkit
import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.retrievers import registry

runner = CliRunner()


def no_traceback(result) -> str:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


@pytest.mark.parametrize("path", ["no[/]such", "[red]nope[/red]", "[bold]x"])
def test_paths_with_markup_are_shown_as_typed(tmp_path, path):
    r = runner.invoke(app, ["info", "--data", str(tmp_path / path)])
    assert r.exit_code == 2
    out = no_traceback(r)
    assert path in out and len(out.strip().splitlines()) == 1


def test_build_into_a_folder_with_markup_prints_its_summary(tmp_path):
    out = tmp_path / "q[/]x"
    r = runner.invoke(app, ["build", "--out", str(out), "--clips", "200", "--queries", "25"])
    assert r.exit_code == 0, r.output
    assert str(out) in no_traceback(r) and (out / "manifest.json").is_file()


@pytest.mark.parametrize("text", ["[/]", "dog barking [/] siren", "[red]siren[/red]", "[bold]"])
def test_parse_and_search_read_markup_as_text(small_bench_dir, text):
    for cmd in (["parse", text, "--data", str(small_bench_dir)],
                ["search", text, "--data", str(small_bench_dir)]):
        r = runner.invoke(app, cmd)
        assert r.exit_code in (0, 2), r.output
        no_traceback(r)


def test_retriever_names_with_markup_in_tables(tmp_path, monkeypatch):
    bench = evalkit.write_bench(tmp_path / "bench")
    name = "odd[/]name[red]"
    spec = registry.RetrieverSpec(name, lambda n, b, s, o: evalkit.ConstantFake(b), "test")
    monkeypatch.setitem(registry._REGISTRY, name, spec)
    r = runner.invoke(app, ["eval", "--data", str(bench.root), "-r", name])
    assert r.exit_code == 0, r.output
    assert name in no_traceback(r)


@pytest.mark.parametrize("columns", ["30", "80", "300"])
def test_summaries_do_not_depend_on_console_width(tmp_path, columns):
    """Lines of text are never cut at the console width (CI has no terminal and no COLUMNS)."""
    out = tmp_path / ("a-rather-long-folder-name-" * 4) / "b"
    r = runner.invoke(app, ["build", "--out", str(out), "--clips", "200", "--queries", "25"],
                      env={"COLUMNS": columns})
    assert r.exit_code == 0, r.output
    assert "sequential 120" in r.output and str(out) in r.output


def test_colon_words_in_user_text_are_not_read_as_emoji(tmp_path, capsys):
    """``split:train:fetched:...`` (a bank spec) or a folder named ``a:train:b`` is printed as
    typed: the consoles read no ``:name:`` emoji codes (rich's default turned ``:train:`` into
    a tram in ``bench train-detector``'s summary)."""
    from reasonaudio.commands.app import console
    from reasonaudio.train.detector import DetectorTrainResult
    from reasonaudio.views.detector import print_detector_summary

    out = tmp_path / "q:train:x"
    r = runner.invoke(app, ["build", "--out", str(out), "--clips", "200", "--queries", "25"])
    assert r.exit_code == 0, r.output
    assert str(out) in no_traceback(r) and "\U0001F68B" not in r.output
    card = {"training_builds": [{"seed": 13, "counts": {"clips": 9}, "atoms": "split:train:fetched:x"}],
            "data": {"labels": 2, "clips_train": 8, "frames_train": 80, "clips_val": 1},
            "validation": [], "timings_s": {}, "threads": 2}
    print_detector_summary(console, DetectorTrainResult(tmp_path / "m:train:", "ab" * 8, [], {}, {}, card))
    printed = capsys.readouterr().out
    assert "bank split:train:fetched:x" in printed and "m:train:" in printed, printed
