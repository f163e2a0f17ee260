"""Hardening round 2 (issue 27, items 3 and 4): each hostile input ends in one line and exit 2, at
the shared mechanism (a .npy header checked against the file, one weight check for every loader,
weights written by Python, one BOM-tolerant text reader, one-line warnings (case-blind redaction: test_store_server_answers.py),
the free-space guard's setting, stale work folders cleared by every folder writer, a row-order-free
fingerprint of precomputed vectors)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hostile import bench, one_line_error, small_build

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return small_build(tmp_path_factory.mktemp("round2") / "b", clips=40, queries=10)


def _copy(built: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "b"
    shutil.copytree(built, dst, ignore=shutil.ignore_patterns("results", "qdrant"))
    return dst


def _ids(data: Path, kind: str = "corpus") -> list[str]:
    rows = [json.loads(line) for line in (data / f"{kind}.jsonl").read_text().splitlines() if line]
    return [r.get("id") or r.get("_id") for r in rows]


# --- item 3: tracebacks ------------------------------------------------------------------------

def test_npy_header_claiming_huge_shape_is_one_line(built, tmp_path):
    """A header of 10^12 rows in a 1 KiB file: refused from the header, nothing allocated."""
    data = _copy(built, tmp_path)
    path = tmp_path / "huge.npy"
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(
            fh, {"descr": "<f4", "fortran_order": False, "shape": (10**12, 8)})
        fh.write(b"\0" * 1024)
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(_ids(data)) + "\n")
    line = one_line_error(bench("ingest", "--data", data, "--vectors", path, "--ids", ids,
                                "--name", "huge"), "huge.npy", "1000000000000")
    assert "bytes" in line
    assert not (data / "qdrant").exists() or not any((data / "qdrant").rglob("*vectors-huge*"))


def test_corrupt_safetensors_under_model_path_is_one_line(built, tmp_path):
    """`--model clap --model-path` with a cut model.safetensors: the loaders' one weight check."""
    from model_fixtures import tiny_clap_path

    bad = tmp_path / "clap"
    shutil.copytree(tiny_clap_path(), bad)
    weights = bad / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    data = _copy(built, tmp_path)
    one_line_error(bench("ingest", "--data", data, "--model", "clap", "--model-path", bad),
                   "cannot load a CLAP checkpoint", str(bad))


def test_every_loader_shares_the_weight_check():
    """The trained loader's check is the shared one: a SafetensorError becomes a ModelError."""
    from safetensors import SafetensorError

    from reasonaudio.errors import ModelError
    from reasonaudio.models.base import loading_weights

    with pytest.raises(ModelError, match="^w: cannot load \\(header too short\\)$"):
        with loading_weights("w: cannot load"):
            raise SafetensorError("header too short\nmore")
    with pytest.raises(ZeroDivisionError):  # a bug keeps its traceback
        with loading_weights("w"):
            1 / 0


_SAVE_SCRIPT = """
import sys, types
from pathlib import Path
from reasonaudio.errors import ReasonAudioError
from reasonaudio.train.card import save_model_dir
from reasonaudio.train.model import DualEncoder, ModelConfig

bench_root = Path(sys.argv[2])
ns = types.SimpleNamespace
opts = ns(seed=0, threads=1, device="cpu", to_json=lambda: {"device": "cpu", "hard_negatives": True,
          "hard_weight": 1.0})
bench = ns(root=bench_root, seed=0, manifest={})
data = ns(held_out_labels=(), template_set="all")
result = ns(data_stats={"examples": 1}, perception={}, history=[], best_epoch=1, epochs_run=1,
            steps=1, timings={}, step_losses=[])
feats = ns(scale=1.0, zero_point=0)
try:
    save_model_dir(Path(sys.argv[1]), DualEncoder(ModelConfig(n_sounds=3)), opts, bench, data,
                   result, feats)
except ReasonAudioError as exc:
    print("user error:", exc)
    sys.exit(2)
"""


def test_full_disk_while_saving_a_trained_model_is_one_line(built, tmp_path):
    """A file-size limit stands in for a full disk: the weights are the file that cannot be
    written (config.json fits), and nothing that looks like a model is left."""
    import resource
    import signal

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", _SAVE_SCRIPT, str(tmp_path / "m"), str(built)],
                       env=env, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "cannot write" in r.stdout, r.stdout
    assert sorted(os.listdir(tmp_path)) == []


def test_saved_weights_are_the_bytes_save_file_writes(tmp_path):
    """Writing the weights through Python keeps the file byte-identical to safetensors' own."""
    import torch
    from safetensors.torch import save, save_file

    state = {"a": torch.arange(12, dtype=torch.float32).reshape(3, 4), "b": torch.ones(2)}
    save_file(state, str(tmp_path / "x"), metadata={"format": "f"})
    assert (tmp_path / "x").read_bytes() == save(state, metadata={"format": "f"})


# --- item 4: smaller --------------------------------------------------------------------------

def test_python_warnings_become_one_line(built):
    """The mechanism, for any warning a library raises under a command."""
    import warnings

    from typer.testing import CliRunner

    from reasonaudio.cli import app

    @app.command("warn-once-for-test", hidden=True)
    def _warn() -> None:
        warnings.warn("something odd\nsecond line", UserWarning)

    try:
        r = CliRunner().invoke(app, ["warn-once-for-test"])
    finally:
        app.registered_commands = [c for c in app.registered_commands if c.name != "warn-once-for-test"]
    assert r.exit_code == 0, r.output
    assert r.stderr.splitlines() == ["warning: something odd\\nsecond line"]


@pytest.mark.parametrize("fmt", ["trec", "json"])
def test_a_run_file_with_a_bom_reads_like_one_without(built, tmp_path, fmt):
    data = _copy(built, tmp_path)
    queries, clips = _ids(data, "queries"), _ids(data)
    scores = {q: {c: float(len(clips) - j) for j, c in enumerate(clips[:5])} for q in queries}
    if fmt == "trec":
        text = "".join(f"{q} Q0 {c} {j} {s} t\r\n" for q, per in scores.items()
                       for j, (c, s) in enumerate(per.items(), 1))
    else:
        text = json.dumps(scores)
    (tmp_path / "plain.run").write_text(text, encoding="utf-8")
    (tmp_path / "bom.run").write_text(text, encoding="utf-8-sig")
    assert (tmp_path / "bom.run").read_bytes()[:3] == b"\xef\xbb\xbf"
    got = {}
    for name in ("plain", "bom"):
        r = bench("eval", "--data", data, "--run", f"{name}={tmp_path / (name + '.run')}",
                  "--json", tmp_path / f"{name}.json")
        assert r.exit_code == 0, r.output
        got[name] = json.loads((tmp_path / f"{name}.json").read_text())["runs"][name]["overall"]
    assert got["bom"] == got["plain"]


def test_ids_files_with_a_bom_and_crlf_are_read(built, tmp_path):
    from reasonaudio.ingest.vector_files import read_ids

    ids = _ids(built)
    path = tmp_path / "ids.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(ids).encode() + b"\r\n")
    assert read_ids(path, "clip") == ids


def test_one_text_reader_skips_a_bom_everywhere(tmp_path):
    from reasonaudio.fileio import iter_jsonl, open_text, read_json, read_text

    (tmp_path / "a.json").write_text('{"a": 1}', encoding="utf-8-sig")
    (tmp_path / "a.jsonl").write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8-sig")
    assert read_json(tmp_path / "a.json") == {"a": 1}
    assert [v for _, v in iter_jsonl(tmp_path / "a.jsonl")] == [{"a": 1}, {"b": 2}]
    assert read_text(tmp_path / "a.json") == '{"a": 1}'
    with open_text(tmp_path / "a.jsonl") as fh:
        assert fh.readline() == '{"a": 1}\n'


@pytest.mark.parametrize("value", ["-5", "-0.5", "inf", "nan", "1e308"])
def test_a_min_free_setting_that_would_disable_the_guard_is_refused(built, tmp_path, monkeypatch, value):
    monkeypatch.setenv("REASONAUDIO_MIN_FREE_MB", value)
    data = _copy(built, tmp_path)
    one_line_error(bench("ingest", "--data", data, "--model", "none"), "REASONAUDIO_MIN_FREE_MB")


def test_min_free_zero_still_turns_the_guard_off_on_purpose(monkeypatch):
    from reasonaudio.store.space import min_free_bytes

    monkeypatch.setenv("REASONAUDIO_MIN_FREE_MB", "0")
    assert min_free_bytes() == 0


def _stale(dest: Path) -> tuple[Path, Path]:
    dead = dest.parent / f".{dest.name}.partial-999999999-abc"  # a killed writer's
    live = dest.parent / f".{dest.name}.partial-{os.getpid()}-xyz"  # a writer still running
    for d in (dead, live):
        d.mkdir(parents=True)
        (d / "half-written").write_text("")
    return dead, live


def test_an_export_clears_work_folders_of_killed_exports_saying_so(built, tmp_path):
    pytest.importorskip("pyarrow")
    dest = tmp_path / "hf"
    dead, live = _stale(dest)
    r = bench("export", "--data", built, "--to", dest, "--format", "hf", "--audio", "none")
    assert r.exit_code == 0, r.output
    assert not dead.exists() and live.exists() and dest.is_dir()
    assert f"removed {dead}, left by an interrupted export of hf" in r.output


def test_a_training_clears_work_folders_of_killed_trainings(tmp_path):
    from reasonaudio.errors import DataError
    from reasonaudio.progress import Hooks
    from reasonaudio.train.trainer import TrainOptions, train_model

    dest = tmp_path / "model"
    dead, live = _stale(dest)
    said: list[str] = []
    with pytest.raises(DataError):  # no training build there: it stops after the cleaning
        train_model(tmp_path / "no-such-build", dest, TrainOptions(), hooks=Hooks(on_notify=said.append))
    assert not dead.exists() and live.exists()
    assert said == [f"removed {dead}, left by an interrupted training of model"]


def test_the_same_vectors_in_another_row_order_are_the_same_collection(built, tmp_path):
    data = _copy(built, tmp_path)
    ids = _ids(data)
    vectors = np.random.default_rng(0).normal(size=(len(ids), 8)).astype(np.float32)
    np.save(tmp_path / "a.npy", vectors)
    (tmp_path / "a.txt").write_text("\n".join(ids) + "\n")
    order = np.random.default_rng(1).permutation(len(ids))
    np.save(tmp_path / "b.npy", vectors[order])
    (tmp_path / "b.txt").write_text("\n".join(ids[i] for i in order) + "\n")
    for name in ("a", "b"):
        r = bench("ingest", "--data", data, "--vectors", tmp_path / f"{name}.npy",
                  "--ids", tmp_path / f"{name}.txt", "--name", "mine")
        assert r.exit_code == 0, r.output
    # other vectors still need --force
    np.save(tmp_path / "c.npy", vectors[::-1].copy())
    one_line_error(bench("ingest", "--data", data, "--vectors", tmp_path / "c.npy",
                         "--ids", tmp_path / "a.txt", "--name", "mine"), "other vectors", "--force")
