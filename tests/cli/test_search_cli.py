"""`bench search` and `bench ingest --model none`: JSON exactly, the explained table, the
acceptance query "X but no Y", and one-line errors (exit 2, no traceback) for bad input."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
from store_helpers import write_fake_benchmark
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.view import load_benchmark


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def built(small_bench_dir, tmp_path_factory):
    dest = tmp_path_factory.mktemp("search") / "small"
    shutil.copytree(small_bench_dir, dest)  # the shared fixture is read-only; stores write here
    return dest


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return write_fake_benchmark(tmp_path_factory.mktemp("searchfake") / "b", n_clips=120,
                                n_queries=5, seed=2)


def _x_and_y(bench):
    """X: the most frequent sound; Y: a sound co-occurring with X in some but not all clips."""
    counts = Counter(label for c in bench.clips for label in c.labels)
    x = counts.most_common(1)[0][0]
    with_x = [set(c.labels) for c in bench.clips if x in c.labels]
    co = Counter(label for labels in with_x for label in labels if label != x)
    y = next(label for label, n in co.most_common() if n < len(with_x))
    return x, y


def test_x_but_no_y_returns_only_clips_with_x_without_y(built):
    bench = load_benchmark(built)
    x, y = _x_and_y(bench)
    r = run("search", f"{x} but no {y}", "--data", built, "--retriever", "oracle", "-k", "1000",
            "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out) == {"logic", "hits", "resolved"}
    assert out["logic"] == {"op": "and", "args": [{"op": "has", "label": x},
                                                  {"op": "not", "arg": {"op": "has", "label": y}}]}
    ids = [h["id"] for h in out["hits"]]
    want = sorted(c.id for c in bench.clips if x in c.labels and y not in c.labels)
    assert ids == want and ids
    assert all(set(h) == {"id", "score"} and h["score"] == 1.0 for h in out["hits"])


def test_table_shows_logic_timelines_and_checks(built):
    bench = load_benchmark(built)
    x, y = _x_and_y(bench)
    r = run("search", f"{x} but no {y}", "--data", built, "-k", "3")
    assert r.exit_code == 0, r.output
    for piece in ("logic", f"has({x})", f"!has({y})", "C1", "C2", "█", "✓"):
        assert piece in r.stdout, piece
    assert "✗" not in r.stdout  # the oracle's hits satisfy every constraint


def test_bag_of_sounds_shows_failing_constraints(built):
    bench = load_benchmark(built)
    x, y = _x_and_y(bench)
    r = run("search", f"{x} but no {y}", "--data", built, "-r", "bag-of-sounds", "-k", "5")
    assert r.exit_code == 0, r.output
    assert "✗" in r.stdout  # its best clips contain both: the negation fails, and it says so


@pytest.mark.parametrize("retriever", ["oracle", "bag-of-sounds", "random"])
def test_json_is_exactly_logic_and_hits(fake, retriever):
    r = run("search", "dog barking then siren", "--data", fake, "-r", retriever, "-k", "4",
            "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert r.stdout.count("\n") == 1 and list(out) == ["logic", "hits", "resolved"]
    assert out["logic"] == {"op": "before", "a": "dog barking", "b": "siren"}
    assert len(out["hits"]) <= 4 and all(list(h) == ["id", "score"] for h in out["hits"])


def test_ingest_payload_is_idempotent(fake):
    r = run("ingest", "--data", fake, "--model", "none", "--backend", "local")
    assert r.exit_code == 0, r.output
    assert "120 points" in r.stdout and "120 points written" in r.stdout
    r = run("ingest", "--data", fake, "--model", "none", "--backend", "local")
    assert r.exit_code == 0 and "already complete" in r.stdout
    r = run("search", "rain", "--data", fake, "--backend", "local", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"]


@pytest.mark.parametrize("args,needle", [
    (["search", ""], "empty"),
    (["search", "purple elephant"], "unknown sound 'purple elephant'"),
    (["search", "cat then rain"], "unknown sound 'cat'"),
    (["search", "7 then rain"], "a number where a sound belongs"),
    (["search", "rain then thunder then rain"], "contradictory"),
    (["search", "rain", "--qdrant-url", "http://127.0.0.1:9"], "cannot reach Qdrant server"),
    (["search", "rain", "--backend", "server"], "needs --qdrant-url"),
    (["search", "rain", "--backend", "sqlite"], "unknown backend"),
    (["search", "rain", "-r", "oracel"], "did you mean oracle"),
    (["ingest", "--model", "none", "--qdrant-url", "http://127.0.0.1:9"], "cannot reach"),
])
def test_bad_input_is_one_line_exit_2(fake, monkeypatch, args, needle):
    monkeypatch.delenv("QDRANT_URL", raising=False)
    r = run(*args, "--data", fake)
    assert r.exit_code == 2, r.output
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_missing_collection_on_local_names_the_command(tmp_path, monkeypatch):
    monkeypatch.delenv("QDRANT_URL", raising=False)
    d = write_fake_benchmark(tmp_path / "b", n_clips=20, n_queries=2)
    r = run("search", "rain", "--data", d, "--backend", "local")
    assert r.exit_code == 2
    assert "collection 'reasonaudio-payload' not found" in r.stderr
    assert "bench ingest --data" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_qdrant_url_from_environment(fake, monkeypatch):
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("QDRANT_API_KEY", "s3cret-key")
    r = run("search", "rain", "--data", fake)
    assert r.exit_code == 2 and "cannot reach Qdrant server at http://127.0.0.1:9" in r.stderr
    assert "s3cret-key" not in r.stderr + r.stdout


@pytest.mark.parametrize("retriever", ["oracle", "bag-of-sounds", "oracle-without:negation"])
def test_search_parses_its_text_once(built, monkeypatch, retriever):
    """`bench search` parses the text to show it, and the retriever keeps that parse."""
    from reasonaudio.querylang import parser

    calls = []
    real = parser._parse
    monkeypatch.setattr(parser, "_parse", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    x, y = _x_and_y(load_benchmark(built))
    r = run("search", f"{x} but no {y}", "--data", built, "-r", retriever, "--strict", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["hits"] and calls == [f"{x} but no {y}"]
