"""One set of atom-bank rules, applied up front by `atoms check`, `build` and `ingest`
(issue 14, item 6), and folder banks closed to links leading outside (item 9)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from hostile import bench, one_line_error
from reasonaudio.errors import DataError
from reasonaudio.atoms.rules import validate_bank
from reasonaudio.atoms.registry import open_bank

LABELS = [f"sound {c}" for c in "abcdefghij"]


def tone(path: Path, seconds: float = 1.5, freq: float = 440.0, subtype: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * 16_000)) / 16_000
    sf.write(path, (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32), 16_000, subtype=subtype)
    return path


def make_bank(root: Path, labels=LABELS) -> Path:
    for i, label in enumerate(labels):
        tone(root / label / "a.wav", 1.0 + 0.3 * i, 200 + 50 * i)
    return root


def poison(path: Path) -> None:
    """Rewrite ``path`` as float WAV with NaN and infinite samples (same length)."""
    x, sr = sf.read(path, dtype="float32")
    x[100:200] = np.nan
    x[300] = np.inf
    sf.write(path, x, sr, subtype="FLOAT")


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_nan_atom_refused_by_check_and_by_build(tmp_path, cache):
    root = make_bank(tmp_path / "bank")
    poison(root / "sound c" / "a.wav")
    r = bench("atoms", "check", root)
    assert r.exit_code == 2 and "NaN or infinite" in r.stderr and "sound c/a.wav" in r.stderr
    one_line_error(bench("build", "--out", tmp_path / "b", "--atoms", root, "--clips", "20",
                         "--queries", "5"), "sound c/a.wav", "NaN or infinite")
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("bad", ['say "hi"', "a>b", "x|y", "back\\slash"])
def test_label_a_payload_cannot_hold_refused_by_check_and_by_build(tmp_path, cache, bad):
    root = make_bank(tmp_path / "bank", LABELS[:9] + [bad])
    r = bench("atoms", "check", root)
    assert r.exit_code == 2 and "cannot be stored in a Qdrant payload" in r.stderr
    one_line_error(bench("build", "--out", tmp_path / "b", "--atoms", root, "--clips", "20",
                         "--queries", "5"), "cannot be stored in a Qdrant payload")
    assert not (tmp_path / "b").exists()


def test_ingest_refuses_a_bad_label_before_touching_the_store(tmp_path, cache):
    from hostile import small_build

    data = small_build(tmp_path / "d", clips=20, queries=5)
    path = data / "atoms.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["label"] = 'a "quoted" label'
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    one_line_error(bench("ingest", "--data", data, "--model", "none", "--no-verify"),
                   "atoms.jsonl", "cannot be stored in a Qdrant payload")
    edge = data / "qdrant" / "edge"
    assert not edge.exists() or not [p for p in edge.iterdir() if p.is_dir()]


def test_render_refuses_an_atom_that_went_bad_after_the_build(tmp_path, cache):
    root = make_bank(tmp_path / "bank")
    r = bench("build", "--out", tmp_path / "b", "--atoms", root, "--clips", "20", "--queries", "5")
    assert r.exit_code == 0, r.output
    corpus = [json.loads(x) for x in (tmp_path / "b" / "corpus.jsonl").read_text().splitlines()]
    clip = corpus[0]
    poison(root / clip["events"][0]["atom_id"])
    one_line_error(bench("render", clip["_id"], "--data", tmp_path / "b", "-o", tmp_path / "x.wav"),
                   clip["events"][0]["atom_id"], "NaN or infinite")
    assert not (tmp_path / "x.wav").exists()


def test_a_validated_bank_is_not_decoded_again_until_a_file_changes(tmp_path, cache):
    root = make_bank(tmp_path / "bank")
    bank = open_bank(str(root))
    calls = []
    load = bank.load
    bank.load = lambda atom_id: calls.append(atom_id) or load(atom_id)
    validate_bank(bank)
    assert len(calls) == len(bank.atoms)
    validate_bank(bank)
    assert len(calls) == len(bank.atoms)  # remembered
    path = root / "sound d" / "a.wav"
    poison(path)
    os.utime(path, ns=(1, 1))  # a different mtime whatever the clock's resolution
    bank = open_bank(str(root))
    with pytest.raises(DataError, match="sound d/a.wav.*NaN"):
        validate_bank(bank)


def test_links_leading_outside_a_folder_bank_are_refused(tmp_path, cache):
    root = make_bank(tmp_path / "bank")
    outside = tone(tmp_path / "elsewhere" / "secret.wav")
    (root / "sound a" / "link.wav").symlink_to(outside)
    one_line_error(bench("build", "--out", tmp_path / "b", "--atoms", root, "--clips", "20",
                         "--queries", "5"), "link.wav", "outside the bank folder")
    r = bench("atoms", "check", root)
    assert r.exit_code == 2 and "link.wav" in r.stderr and "outside the bank folder" in r.stderr
    (root / "sound a" / "link.wav").unlink()
    (root / "sound k").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    one_line_error(bench("build", "--out", tmp_path / "b", "--atoms", root, "--clips", "20",
                         "--queries", "5"), "secret.wav", "outside the bank folder")
    inside = root / "sound b" / "again.wav"
    inside.symlink_to(root / "sound b" / "a.wav")  # a link inside the bank is fine
    (root / "sound k").unlink()
    assert open_bank(str(root)).by_id["sound b/again.wav"]
