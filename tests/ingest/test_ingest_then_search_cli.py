"""`bench ingest --model ...` then `bench search --model ...` end to end (embedded Edge, offline)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from model_fixtures import copy_bench, tiny_clap_path
from reasonaudio.cli import app

runner = CliRunner()


def _invoke(args):
    return runner.invoke(app, args, env={"COLUMNS": "160"})


def test_ingest_then_search_with_tiny_clap(small_bench_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    data = copy_bench(small_bench_dir, tmp_path / "bench")
    path = str(tiny_clap_path())
    result = _invoke(["ingest", "--data", str(data), "--model", "clap", "--model-path", path,
                      "--limit", "8", "--batch-size", "4"])
    assert result.exit_code == 0, result.output
    assert "reasonaudio-clap" in result.output and "upserted now" in result.output

    result = _invoke(["search", "dog barking, then siren", "--data", str(data), "--model", "clap",
                      "--model-path", path, "-k", "3", "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)["hits"]
    assert len(hits) == 3 and all(h["id"].startswith("clip-") for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)

    query = json.loads((data / "queries.jsonl").read_text().splitlines()[0])["text"]
    result = _invoke(["search", query, "--data", str(data), "-r", "clap", "--model-path", path, "-k", "2"])
    assert result.exit_code == 0, result.output
    assert "clap: 2 hits" in result.output and "C1" in result.output


def test_two_stage_search_prints_captions(small_bench_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    data = copy_bench(small_bench_dir, tmp_path / "bench")
    name = "two-stage:oracle-caption+minilm"
    assert _invoke(["ingest", "--data", str(data), "--model", name, "--limit", "6"]).exit_code == 0
    result = _invoke(["search", "something for 2 seconds", "--data", str(data), "--model", name, "-k", "2"])
    assert result.exit_code == 0, result.output
    assert result.output.count("caption: ") == 2 and " for " in result.output


def test_user_errors_are_one_line_exit_2(small_bench_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    data = copy_bench(small_bench_dir, tmp_path / "bench")
    cases = [
        (["ingest", "--data", str(data), "--model", "clap"], "--model-path"),
        (["ingest", "--data", str(data), "--model", "minilm"], "no audio tower"),
        (["ingest", "--data", str(data), "--model", "nope"], "unknown model"),
        (["search", "dog", "--data", str(data), "--model", "clap", "--model-path", str(tiny_clap_path())],
         "bench ingest"),
    ]
    for args, needle in cases:
        result = _invoke(args)
        assert result.exit_code == 2, (args, result.output)
        assert needle in result.output and "Traceback" not in result.output
