"""Corrupt input and hostile output targets around `bench build` and the loaders (issue 14,
items 5, 8 and 9): one line naming the file and the cause, exit 2, nothing half-written."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hostile import bench, one_line_error, small_build
from reasonaudio.errors import DataError
from reasonaudio.dataset.view import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return small_build(tmp_path_factory.mktemp("hostile") / "b")


@pytest.fixture()
def copy(built, tmp_path) -> Path:
    dst = tmp_path / "b"
    shutil.copytree(built, dst)
    return dst


# --- item 5: corrupt files ---------------------------------------------------------------------

@pytest.mark.parametrize("name, attr", [("corpus.jsonl", "clips"), ("queries.jsonl", "queries"),
                                        ("choices.jsonl", "choices"), ("atoms.jsonl", "atoms"),
                                        ("qrels/test.tsv", "qrels")])
def test_invalid_utf8_in_a_benchmark_file_is_named(copy, name, attr):
    path = copy / name
    data = path.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:cut] + b"\xff\xfe broken \xc3(\n" + data[cut:])
    with pytest.raises(DataError, match="not valid UTF-8") as err:
        getattr(load_benchmark(copy, verify=False), attr)
    assert name.split("/")[-1] in str(err.value)
    r = bench("eval", "--data", copy, "-r", "random", "--no-verify")
    one_line_error(r, name.split("/")[-1], "not valid UTF-8")


def test_invalid_utf8_in_the_manifest_is_named(copy):
    (copy / "manifest.json").write_bytes(b'{"seed": "\xff"}')
    one_line_error(bench("info", "--data", copy), "manifest.json", "not valid UTF-8")


def test_events_null_is_named(copy):
    path = copy / "corpus.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[3]["events"] = None
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    one_line_error(bench("ingest", "--data", copy, "--model", "none", "--no-verify"),
                   "corpus.jsonl:4", "'events' must be a list")


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_invalid_utf8_in_a_bank_manifest_is_named(tmp_path, suffix):
    import numpy as np
    import soundfile as sf

    root = tmp_path / "bank"
    for label in ("a", "b"):
        (root / label).mkdir(parents=True)
        sf.write(root / label / "x.wav", np.zeros(1600), 16000)
    head = b'{"label": "a", "file": "a/x.wav"}\n' if suffix == "jsonl" else b"label,file\na,a/x.wav\n"
    (root / f"atoms.{suffix}").write_bytes(head + b"\xff\xfe\n")
    one_line_error(bench("atoms", "check", root), f"atoms.{suffix}", "not valid UTF-8")
    one_line_error(bench("build", "--out", tmp_path / "out", "--atoms", root), f"atoms.{suffix}")
    assert not (tmp_path / "out").exists()


def test_out_below_a_file_is_one_line(tmp_path):
    one_line_error(bench("build", "--out", "/dev/null/x", "--clips", "20", "--queries", "5"),
                   "/dev/null/x", "not a folder")


def _limited_file_size(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
    return apply


def _bench_subprocess(args: list[str], limit: int, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", "from reasonaudio.cli import main; main()", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited_file_size(limit))


def test_full_disk_during_build_is_one_line_and_leaves_nothing(tmp_path):
    """A file-size limit stands in for a full disk: the write fails part way through the corpus."""
    r = _bench_subprocess(["build", "--out", "b", "--clips", "200", "--queries", "20"],
                          limit=20_000, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "cannot write" in r.stderr and "b" in r.stderr
    assert sorted(os.listdir(tmp_path)) == []  # no benchmark, no partial folder


def test_full_disk_during_render_is_one_line(built, tmp_path):
    r = _bench_subprocess(["render", "clip-00000", "--data", str(built), "-o", "x.wav"],
                          limit=1_000, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "x.wav" in r.stderr and "cannot write" in r.stderr
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_refused_writes_are_one_line(tmp_path, monkeypatch, code):
    """A read-only folder (we run as root in CI, so chmod cannot make one): the OS's refusal."""
    import tempfile

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    one_line_error(bench("build", "--out", tmp_path / "ro" / "b", "--clips", "20", "--queries", "5"),
                   "ro/b", "cannot write")
    assert not (tmp_path / "ro" / "b").exists()


# --- item 8: --force replaces only a previous benchmark or an empty folder ---------------------

def test_force_refuses_an_unrelated_folder(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "notes.txt").write_text("mine")
    one_line_error(bench("build", "--out", victim, "--force", "--clips", "20", "--queries", "5"),
                   "victim", "not a previous benchmark")
    assert (victim / "notes.txt").read_text() == "mine"


def test_force_refuses_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("x")
    one_line_error(bench("build", "--out", ".", "--force", "--clips", "20", "--queries", "5"),
                   "current folder")
    one_line_error(bench("build", "--out", "..", "--force", "--clips", "20", "--queries", "5"),
                   "current folder")
    assert (tmp_path / "keep.txt").exists()


def test_force_refuses_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    one_line_error(bench("build", "--out", tmp_path / "f", "--force", "--clips", "20", "--queries", "5"),
                   "not a folder")


def test_force_replaces_an_empty_folder_and_a_previous_benchmark(copy, tmp_path):
    (tmp_path / "empty").mkdir()
    r = bench("build", "--out", tmp_path / "empty", "--force", "--clips", "20", "--queries", "5")
    assert r.exit_code == 0, r.output
    (copy / "results").mkdir()  # what eval leaves inside a benchmark goes with it
    r = bench("build", "--out", copy, "--force", "--clips", "20", "--queries", "5")
    assert r.exit_code == 0, r.output
    assert load_benchmark(copy).manifest["counts"]["clips"] == 20 and not (copy / "results").exists()


# --- item 9: stale partials, absurd sizes, long echoes, usage errors -------------------------

def test_stale_partials_are_removed_on_the_next_build_saying_so(tmp_path):
    dead = tmp_path / ".b.partial-999999999-abc"      # a killed build (no such process)
    older = tmp_path / ".b.partial-k2j3h4"            # an older build's name, without a pid
    live = tmp_path / f".b.partial-{os.getpid()}-xyz"  # a build still running
    other = tmp_path / ".c.partial-999999999-abc"     # another target's
    for d in (dead, older, live, other):
        d.mkdir()
        (d / "corpus.jsonl").write_text("")
    r = bench("build", "--out", tmp_path / "b", "--clips", "20", "--queries", "5")
    assert r.exit_code == 0, r.output
    assert not dead.exists() and not older.exists() and live.exists() and other.exists()
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note: removed")]
    assert len(notes) == 2 and any(dead.name in n for n in notes)


def test_absurd_size_is_refused_up_front():
    one_line_error(bench("build", "--out", "never", "--clips", "2000000000", "--queries", "10"),
                   "--clips 2,000,000,000", "memory")
    assert not Path("never").exists()


def test_size_estimate_against_available_memory():
    from reasonaudio.generator.guard import BYTES_PER_CLIP, check_size

    check_size(1000, available=1000 * BYTES_PER_CLIP)
    with pytest.raises(DataError, match="at most about 999 clips"):
        check_size(1000, available=999 * BYTES_PER_CLIP + 1)


def test_usage_errors_are_one_line():
    for args in (["build", "--out", "x", "--clips", "abc"], ["build"], ["nosuch"],
                 ["atoms", "check"], ["atoms", "fetch", "packages", "--bogus"], ["--bogus"]):
        r = bench(*args)
        assert r.exit_code == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "--help" in lines[0], r.stderr


def test_long_user_text_is_truncated_in_the_error(built):
    r = bench("parse", "q" * 100_000, "--data", built)
    line = one_line_error(r)
    assert len(line) < 1_000 and "characters" in line


def test_edge_refuses_to_map_a_shard_on_a_nearly_full_disk(built, tmp_path, monkeypatch):
    """Edge writes through memory maps: on a full disk it dies of SIGBUS, so it is not started."""
    import shutil as _shutil
    from collections import namedtuple

    data = tmp_path / "d"
    _shutil.copytree(built, data)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(_shutil, "disk_usage", lambda p: usage(1 << 30, (1 << 30) - (8 << 20), 8 << 20))
    one_line_error(bench("ingest", "--data", data, "--model", "none"), "8 MiB free", "SIGBUS")
    r = bench("search", load_benchmark(data).labels[0], "--data", data, "-r", "random")
    assert r.exit_code == 2 and "Traceback" not in r.output  # notices, then the one error line
    assert r.stderr.strip().splitlines()[-1].startswith("error: ") and "8 MiB free" in r.stderr
    edge = data / "qdrant" / "edge"
    assert not edge.exists() or not [p for p in edge.iterdir() if p.is_dir()]
    monkeypatch.setenv("REASONAUDIO_MIN_FREE_MB", "4")
    assert bench("ingest", "--data", data, "--model", "none").exit_code == 0


def test_build_reports_progress(tmp_path):
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.progress import Hooks

    calls = []
    build_benchmark(tmp_path / "b", BuildParams(n_clips=1200, n_queries=300),
                    hooks=Hooks(on_progress=lambda label, done, total: calls.append((done, total))))
    assert calls[-1] == (1200, 1200) and len(calls) >= 3
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
