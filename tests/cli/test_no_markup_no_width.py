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
