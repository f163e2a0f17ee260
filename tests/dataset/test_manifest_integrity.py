"""Loading a benchmark checks its manifest's format and every file's sha256 (issue 14, item 4).

Each case edits a copy of a real build and expects one line naming the file that differs,
exit 2; ``--no-verify`` loads edited files on purpose and says so in one line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hostile import bench, one_line_error, small_build
from reasonaudio.errors import DataError
from reasonaudio.dataset.view import load_benchmark


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return small_build(tmp_path_factory.mktemp("integrity") / "b")


@pytest.fixture()
def copy(built, tmp_path) -> Path:
    dst = tmp_path / "b"
    shutil.copytree(built, dst)
    return dst


def _cut_half(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")


def test_intact_build_loads_and_verifies(built):
    b = load_benchmark(built)
    assert b.verified and len(b.queries) == 10 and b.qrels


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv",
                                  "choices.jsonl", "atoms.jsonl"])
def test_cut_file_is_named(copy, name):
    _cut_half(copy / name)
    with pytest.raises(DataError, match=name.replace("/", ".")):
        load_benchmark(copy)
    one_line_error(bench("ingest", "--data", copy, "--model", "none"), name)
    assert not (copy / "qdrant").exists()  # refused before anything was written


def test_same_size_edit_is_caught_by_the_hash(copy):
    path = copy / "corpus.jsonl"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("clip-00001", "clip-0000X", 1), encoding="utf-8")
    with pytest.raises(DataError, match="sha256 differs"):
        load_benchmark(copy)


def test_empty_queries_refused_even_without_verification(copy):
    (copy / "queries.jsonl").write_text("")
    one_line_error(bench("eval", "--data", copy, "-r", "random"), "queries.jsonl")
    with pytest.raises(DataError, match="no queries"):
        load_benchmark(copy, verify=False).queries


def test_header_only_qrels_refused_even_without_verification(copy):
    (copy / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n")
    one_line_error(bench("eval", "--data", copy, "-r", "random"), "test.tsv")
    with pytest.raises(DataError, match="no relevance judgements"):
        load_benchmark(copy, verify=False).qrels


@pytest.mark.parametrize("manifest, needle", [
    ({}, "missing field 'format'"),
    ([], "expected a JSON object, got list"),
    (None, "expected a JSON object, got null"),
    ("x", "expected a JSON object, got str"),
    ("999", "format_version 999"),
    ("seed-abc", "field 'seed' must be int"),
    ("files-null", "field 'files' must be dict"),
    ("params-list", "field 'parameters' must be a JSON object"),
])
def test_bad_manifest_is_named(copy, manifest, needle):
    path = copy / "manifest.json"
    good = json.loads(path.read_text())
    if manifest == "999":
        manifest = {**good, "format_version": 999}
    elif manifest == "seed-abc":
        manifest = {**good, "seed": "abc"}
    elif manifest == "files-null":
        manifest = {**good, "files": None}
    elif manifest == "params-list":
        manifest = {**good, "parameters": []}
    path.write_text(json.dumps(manifest))
    for verify in (True, False):  # format rules hold with --no-verify too
        with pytest.raises(DataError, match="manifest.json") as err:
            load_benchmark(copy, verify=verify)
        assert needle in str(err.value)
    for cmd in (["info"], ["eval", "-r", "random"], ["ingest", "--model", "none"],
                ["search", "dog", "-r", "random"]):
        one_line_error(bench(*cmd, "--data", copy, "--no-verify"), "manifest.json", needle)


def test_no_verify_loads_an_edited_file_and_says_so(copy):
    path = copy / "choices.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")  # an edit made on purpose
    one_line_error(bench("info", "--data", copy), "choices.jsonl", "--no-verify")
    r = bench("info", "--data", copy, "--no-verify")
    assert r.exit_code == 0, r.output
    warnings = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(warnings) == 1 and "not verified" in warnings[0] and "--no-verify" in warnings[0]
    assert len(load_benchmark(copy, verify=False).choices) == len(lines) - 1


def test_no_verify_ingest_keys_the_collection_to_the_file_not_the_manifest(copy):
    from reasonaudio.fileio import sha256_file
    from reasonaudio.store.collections import corpus_fingerprint

    path = copy / "corpus.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # blank line added
    assert corpus_fingerprint(load_benchmark(copy, verify=False)) == sha256_file(path)


def test_build_refuses_zero_queries(tmp_path):
    one_line_error(bench("build", "--out", tmp_path / "b", "--clips", "20", "--queries", "0"),
                   "--queries")
    assert not (tmp_path / "b").exists()


def test_saved_results_go_stale_when_files_are_edited_under_no_verify(copy):
    from reasonaudio.evaluation.evaluate import evaluate_retrievers
    from reasonaudio.evaluation.results import load_result

    evaluate_retrievers(load_benchmark(copy), ["random"])
    assert load_result(load_benchmark(copy), "random") is not None
    assert load_result(load_benchmark(copy, verify=False), "random") is not None  # nothing edited
    path = copy / "choices.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    assert load_result(load_benchmark(copy, verify=False), "random") is None
