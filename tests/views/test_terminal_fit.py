"""Output that fits a terminal (issue 27, item 6): `bench models` in 80 columns and 60 lines,
result tables with every number whole at 80 columns, one not-run line in the demo, one error
prefix, the SPDX licence. Every test sets the width itself (CI has no terminal, no COLUMNS)."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from hostile import small_build
from reasonaudio.cli import app
from reasonaudio.models.registry import RECORDS, names

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _at(columns: int, *args: object):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": str(columns)})


def _fits(text: str, columns: int, *paths: Path) -> list[str]:
    """Every line within ``columns``, but lines naming one of ``paths`` (plain text lines are
    never cut, by design: a path is printed whole whatever the width)."""
    lines = text.splitlines()
    too_wide = [ln for ln in lines if len(ln) > columns and not any(str(p) in ln for p in paths)]
    assert not too_wide, too_wide[:3]
    return lines


def test_bench_models_fits_80_columns_and_60_lines():
    r = _at(80, "models")
    assert r.exit_code == 0, r.output
    lines = _fits(r.stdout, 80)
    assert len(lines) <= 60, len(lines)
    for record in RECORDS:  # one line each, name, paradigm and dimension whole
        row = [ln for ln in lines if ln.startswith(" ") and ln.split()[:1] == [record.name]]
        assert len(row) == 1, record.name
        assert record.paradigm in row[0] and (str(record.dimension) in row[0] or not record.dimension)
        assert re.search(r"\b(yes|no)\b", row[0])
    assert "bench models NAME" in r.stdout and "--wide" in r.stdout


def test_bench_models_name_shows_every_field_and_the_whole_reason():
    r = _at(80, "models", "ms-clap-2023")
    assert r.exit_code == 0, r.output
    _fits(r.stdout, 80)
    flat = " ".join(r.stdout.split())
    for field in ("hub_id", "revision", "licence", "pooling", "notes", "loads here"):
        assert field in flat, field
    assert "no loader here" in flat  # the end of the long reason, not cut


def test_bench_models_wide_and_json_and_unknown():
    wide = _at(300, "models", "--wide")
    assert wide.exit_code == 0 and "laion/clap-htsat-unfused" in wide.stdout and "GPU mem" in wide.stdout
    one = json.loads(_at(80, "models", "yamnet", "--json").stdout)
    assert [m["name"] for m in one] == ["yamnet"]
    assert len(json.loads(_at(80, "models", "--json").stdout)) == len(names())
    bad = _at(80, "models", "no-such-model")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: unknown model")


LONG = "oracle-caption-plus-minilm-retriever-with-a-long-name"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    data = small_build(tmp_path_factory.mktemp("fit") / "b", clips=60, queries=15)
    assert _at(200, "ingest", "--data", data, "--model", "none").exit_code == 0
    assert _at(200, "eval", "--data", data, "-r", "oracle", "-r", "bag-of-sounds", "-r", "random"
               ).exit_code == 0
    run = data.parent / "r.trec"
    shutil.copy(data / "results" / "runs" / "random.trec", run)
    assert _at(200, "eval", "--data", data, "--run", f"{LONG}={run}").exit_code == 0
    return data


def _figures(data: Path) -> set[str]:
    """Every figure the tables show: per task and overall Acc@1, nDCG@10 and MC; every metric
    overall."""
    out = set()
    for path in (data / "results").glob("*.json"):
        doc = json.loads(path.read_text())
        out |= {f"{v:.3f}" for v in doc["overall"].values()}
        for values in doc["per_task"].values():
            out |= {f"{values[m]:.3f}" for m in ("acc@1", "ndcg@10", "mc_acc") if m in values}
    return out


def _numbers_whole(text: str, figures: set[str]) -> None:
    assert not re.search(r"\d…|…\d|\d\.…", text), [ln for ln in text.splitlines() if "…" in ln][:3]
    shown = set(re.findall(r"\d\.\d{3}", text))
    assert figures <= shown, sorted(figures - shown)[:5]


def test_bench_report_at_80_columns_shows_every_number_whole(evaluated, tmp_path):
    r = _at(80, "report", "--data", evaluated, "--out", tmp_path / "rep")
    assert r.exit_code == 0, r.output
    _fits(r.stdout, 80, tmp_path, evaluated)  # its first line names the benchmark's folder
    _numbers_whole(r.stdout, _figures(evaluated))
    assert "oracle-caption" in r.stdout  # the long name folds onto more lines, it is not dropped
    failures = r.stdout.split("Failures (Acc@1 = 0)", 1)[1]  # the breakdown, names whole
    assert all(name in failures.splitlines() for name in ("oracle", "bag-of-sounds", "random"))


def test_bench_eval_at_80_columns_shows_every_number_whole(evaluated):
    r = _at(80, "eval", "--data", evaluated, "-r", "oracle", "-r", "bag-of-sounds", "-r", "random",
            "--run", f"{LONG}={evaluated.parent / 'r.trec'}")
    assert r.exit_code == 0, r.output
    _fits(r.stdout, 80, evaluated.parent)
    _numbers_whole(r.stdout, _figures(evaluated))


def test_wide_tables_keep_one_line_cells(evaluated):
    from reasonaudio.evaluation.results import load_results
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.views.results import eval_table

    results = load_results(load_benchmark(evaluated))
    c = Console(width=250, record=True, file=open("/dev/null", "w"))
    c.print(eval_table(results, 250))
    assert re.search(r"\d\.\d{3} / \d\.\d{3}", c.export_text())


def test_the_demo_says_what_it_did_not_run_in_one_line():
    from reasonaudio.mainjob import MainJobResult
    from reasonaudio.views.mainjob import print_main_job

    not_run = {f"model-{i}": f"reason {i}" for i in range(13)}
    c = Console(width=80, record=True, file=open("/dev/null", "w"))
    print_main_job(c, MainJobResult(not_run=not_run))
    text = c.export_text()
    lines = [ln for ln in text.splitlines() if "not run here" in ln]
    assert len(lines) == 1 and "13 learned retrievers" in lines[0], text
    assert "bench models" in " ".join(text.split())


def test_one_error_prefix_for_user_and_usage_errors(tmp_path):
    for args in (["build", "--out", tmp_path / "x", "--clips", "abc"], ["--bogus"],
                 ["models", "no-such-model"], ["report", "--data", tmp_path / "none"]):
        r = _at(80, *args)
        assert r.exit_code == 2, r.output
        assert r.stderr.startswith("error: ") and len(r.stderr.strip().splitlines()) == 1, r.stderr
    help_ = _at(80, "atoms")  # a group without a command still shows its help
    assert "Usage:" in help_.output and "error:" not in help_.output


def test_pyproject_licence_is_an_spdx_expression_and_ranx_is_a_test_extra():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "Apache-2.0"
    assert any(req.startswith("ranx") for req in meta["project"]["optional-dependencies"]["test"])


# --- names break at the name grammar's places, at 80 columns (issue 44) ---------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from reasonaudio.models.names import BREAK_AFTER, BREAK_BEFORE, BREAK_LAST, name_spans  # noqa: E402

READABLE = ["oracle", "bag-of-sounds", "random", "clap@paraphrase", "oracle-without:negation",
            "two-stage:oracle-caption+minilm", "two-stage:yamnet-caption+minilm",
            "detected:yamnet-enrolled", "soft:yamnet", "two-stage:oracle-caption+bm25",
            "hybrid:two-stage:yamnet-caption+minilm,soft:yamnet-enrolled",
            "rrf:two-stage:oracle-caption+minilm,two-stage:oracle-caption+bm25",
            "dbsf:two-stage:yamnet-caption+minilm,soft:yamnet"]
"""names whose every piece between two break places is at most 16 characters"""
TASK_NAMES = ("negation", "order", "overlap", "duration", "mix")


def _allowed(name: str, i: int) -> bool:
    """Whether a line may end before ``name[i]`` (0 and len: the name's own ends)."""
    return i in (0, len(name)) or name[i - 1] in BREAK_AFTER or name[i] in BREAK_BEFORE


@given(st.lists(st.sampled_from(["two", "stage", "oracle", "caption", "qwen2", "audio", "7b",
                                 "minilm", "soft", "yamnet", "x"]), min_size=1, max_size=8),
       st.lists(st.sampled_from(list(BREAK_AFTER + BREAK_BEFORE + BREAK_LAST)), min_size=8,
                max_size=8),
       st.integers(1, 40))
def test_name_lines_break_only_where_the_grammar_allows(words, seps, width):
    name = "".join(w + s for w, s in zip(words, seps))[:-1] or words[0]
    spans = name_spans(name, width)
    assert spans and name[:spans[0][0]].strip() == name[spans[-1][1]:].strip() == ""
    for a, b in spans:  # every character but a dropped space, each line within the width
        assert 0 < b - a <= width and name[a] != " "
    pieces_fit = all(len(p) <= width for p in re.split(r"(?<=[:+,])|(?=[@ ])", name))
    for (_, end), (start, _) in zip(spans, spans[1:]):
        if pieces_fit:
            assert _allowed(name, end), (name, width, spans)
        assert name[end:start].strip() == ""  # only a dropped space between two lines


def _table_names_whole(text: str, names: list[str]) -> None:
    """Each piece of a name the table's body (under its header rule) shows starts and ends where
    a line of it may."""
    body = text.split("──", 1)[1]
    for word in body.split():
        places = [(name, m.start()) for name in names for m in re.finditer(re.escape(word), name)]
        if len(word) >= 3 and places and not word.replace(".", "").isdigit():
            assert any(_allowed(n, i) and _allowed(n, i + len(word)) for n, i in places), \
                (word, places)


def _synthetic_results(names: list[str]):
    from reasonaudio.evaluation.results import Results, RetrieverResult

    def result(k: int, name: str) -> RetrieverResult:
        per_query = {f"q{i:03d}": {m: float((i * 7 + k) % 3 == 0) for m in
                                   ("acc@1", "ndcg@10", "recall@10", "mrr", "hnsr@10", "tfr@10", "mc_acc")}
                     for i in range(30)}
        return RetrieverResult(name, per_query, {q: TASK_NAMES[i % 5] for i, q in enumerate(per_query)})

    return Results({}, {}, {n: result(k, n) for k, n in enumerate(names)})


def _render(renderable, width: int = 80) -> str:
    c = Console(width=width, record=True, file=open("/dev/null", "w"), color_system=None)
    c.print(renderable)
    return c.export_text()


def test_result_tables_break_names_at_the_grammar_at_80_columns():
    from reasonaudio.views.results import detail_table, eval_table, mc_table

    results = _synthetic_results(READABLE)
    for table in (eval_table(results, 80), mc_table(results), detail_table(results)):
        text = _render(table)
        _fits(text, 80)
        _table_names_whole(text, READABLE)
        for name in READABLE:  # every piece of every name is there
            for piece in re.split(r"(?<=[:+,])|(?=@)", name):
                assert piece in text, (piece, name)


def test_the_spectrum_keeps_names_readable_at_80_columns():
    from reasonaudio.evaluation.report import spectrum
    from reasonaudio.views.results import spectrum_table

    s = spectrum(_synthetic_results(READABLE))
    assert s is not None and len(s.rows) >= 8
    text = _render(spectrum_table(s, 80))
    _fits(text, 80)
    lines = text.splitlines()
    for rung, r in s.rows:  # each name on one line of its own when it fits one
        head = f"{rung}: {r.name}"
        if len(head) <= 70:
            assert any(ln.strip().startswith(head) for ln in lines), head
    _table_names_whole(text, READABLE)
    wide = _render(spectrum_table(s, 200), 200)  # with room, names sit beside their figures
    assert any(ln.strip().startswith("learned: two-stage:oracle-caption+minilm") and "0." in ln
               for ln in wide.splitlines())


def test_the_failure_breakdown_fits_80_columns():
    from reasonaudio.evaluation.failures import KIND_NAMES, KINDS, Breakdown, FailureRecord
    from reasonaudio.views.failures import failures_table

    records = tuple(FailureRecord(n, f"q{i}", TASK_NAMES[i % 5], KIND_NAMES[(i + k) % len(KIND_NAMES)], "c")
                    for k, n in enumerate(READABLE) for i in range(k % 7 + 3))
    b = Breakdown(tuple(READABLE), TASK_NAMES, records, {n: {t: 6 for t in TASK_NAMES} for n in READABLE})
    text = _render(failures_table(b))
    _fits(text, 80)
    for name in READABLE:  # each name whole, on a line of its own
        assert any(ln.strip() == name for ln in text.splitlines()), name
    blocks: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip() in READABLE:
            blocks[line.strip()] = []
        elif blocks:
            blocks[next(reversed(blocks))].append(line)
    for name in READABLE:  # each block: its failures over all tasks and per task, then per kind
        failed = sum(1 for r in records if r.retriever == name)
        assert blocks[name][0].split()[:2] == ["failed", f"{failed}/30"], (name, blocks[name])
        for kind in {r.kind for r in records if r.retriever == name}:
            short = next(x.header for x in KINDS if x.name == kind)
            row = next(ln for ln in blocks[name] if ln.startswith(short))
            assert row[len(short):].split()[0] == str(
                sum(1 for r in records if r.retriever == name and r.kind == kind)), row
