"""`bench parse`: JSON exactly, a readable tree, and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.benchmark import write_manifest

pytestmark = pytest.mark.fast

LABELS = ["dog barking", "siren", "rain", "thunder", "church bell", "bell"]


@pytest.fixture()
def bench_dir(tmp_path: Path) -> Path:
    """The two files `load_benchmark(DIR).labels` needs: manifest.json and atoms.jsonl."""
    d = tmp_path / "bench"
    d.mkdir()
    (d / "atoms.jsonl").write_text("".join(
        json.dumps({"atom_id": f"a{i}", "label": lab, "path": f"{i}.wav", "sample_rate": 16000,
                    "duration": 1.0, "source": "test", "license": "CC0-1.0"}) + "\n"
        for i, lab in enumerate(LABELS)))
    (d / "qrels").mkdir()
    for name in ("corpus.jsonl", "queries.jsonl", "choices.jsonl", "qrels/test.tsv"):
        (d / name).write_text("")  # not read by parse; present so the manifest can hash them
    write_manifest(d, {"seed": 0})
    return d


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_json_is_exactly_the_logic(bench_dir) -> None:
    r = run("parse", "dog barking but no siren", "--data", str(bench_dir), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out) == {"logic", "resolved"}
    assert out["logic"] == {"op": "and", "args": [
        {"op": "has", "label": "dog barking"}, {"op": "not", "arg": {"op": "has", "label": "siren"}}]}
    assert [(x["text"], x["labels"], x["kind"], x["score"]) for x in out["resolved"]] == [
        ("dog barking", ["dog barking"], "exact", 1.0), ("siren", ["siren"], "exact", 1.0)]
    assert r.stdout.count("\n") == 1


def test_tree_output(bench_dir) -> None:
    r = run("parse", "Dogs barking for 10 s, then rain and thunder at the same time",
            "--data", str(bench_dir))
    assert r.exit_code == 0, r.output
    for piece in ("dogs barking", "dog barking lasts 10 s", "dog barking before rain",
                  "rain overlaps thunder", "all of"):
        assert piece in r.stdout


def test_labels_file(tmp_path) -> None:
    f = tmp_path / "labels.txt"
    f.write_text("# my labels\nrain\n\nthunder\n")
    r = run("parse", "thunder after rain", "--labels", str(f), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["logic"] == {"op": "before", "a": "rain", "b": "thunder"}


@pytest.mark.parametrize("text,needle", [
    ("", "empty"),
    ("cat then rain", "unknown sound 'cat'"),
    ("7 then rain", "a number where a sound belongs"),
    ("rain then thunder then rain", "contradictory"),
    ("no rain and thunder", "ambiguous"),
])
def test_bad_queries_exit_2_with_one_line(bench_dir, text, needle) -> None:
    r = run("parse", text, "--data", str(bench_dir), "--json")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


def test_missing_vocabulary_source(tmp_path) -> None:
    r = run("parse", "rain")
    assert r.exit_code == 2 and "--data" in r.stderr
    r = run("parse", "rain", "--data", str(tmp_path / "nope"))
    assert r.exit_code == 2 and "not found" in r.stderr
    r = run("parse", "rain", "--labels", str(tmp_path / "nope.txt"))
    assert r.exit_code == 2 and "not found" in r.stderr
