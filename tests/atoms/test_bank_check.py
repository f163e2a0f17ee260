"""`bench atoms check`: the library report and the CLI on good and bad banks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf
from typer.testing import CliRunner

import pytest

from reasonaudio.cli import app
from reasonaudio.atoms.check import check_bank

pytestmark = pytest.mark.fast

runner = CliRunner()


def _bank(root: Path) -> Path:
    for label, seconds, sr in (("rain", 1.0, 16_000), ("rain", 3.0, 22_050), ("car_horn", 0.5, 16_000)):
        d = root / label
        d.mkdir(parents=True, exist_ok=True)
        t = np.arange(int(seconds * sr)) / sr
        sf.write(d / f"{len(list(d.iterdir()))}.wav", 0.1 * np.sin(2 * np.pi * 300 * t), sr)
    return root


def test_report_on_a_good_folder(tmp_path):
    r = check_bank(str(_bank(tmp_path / "b")))
    assert r.ok and r.n_classes == 2 and r.n_files == 3
    assert r.durations == (0.5, 1.0, 3.0)
    assert r.sample_rates == {16_000: 2, 22_050: 1} and r.licences == {"unknown": 3}
    assert r.to_json()["classes"] == 2


def test_report_collects_every_bad_file(tmp_path):
    root = _bank(tmp_path / "b")
    (root / "rain" / "bad.wav").write_bytes(b"RIFF....WAVEnope")
    (root / "car_horn" / "empty.flac").write_bytes(b"")
    r = check_bank(str(root))
    assert not r.ok and r.n_files == 3
    assert len(r.errors) == 2
    assert any("bad.wav" in e for e in r.errors) and any("empty.flac: empty file" in e for e in r.errors)


def test_report_warns_about_parser_words(tmp_path):
    root = _bank(tmp_path / "b")
    (root / "rain").rename(root / "rain_without_thunder")
    r = check_bank(str(root), decode=False)
    assert r.ok and not r.decoded
    assert any("query language" in w for w in r.warnings)


def test_cli_good_synthetic():
    res = runner.invoke(app, ["atoms", "check", "synthetic:12"])
    assert res.exit_code == 0, res.output
    assert "classes" in res.output and "12" in res.output and "CC0-1.0" in res.output


def test_cli_good_folder_quick(tmp_path):
    res = runner.invoke(app, ["atoms", "check", str(_bank(tmp_path / "b")), "--quick"])
    assert res.exit_code == 0, res.output
    assert "16000 Hz" in res.output and "metadata only" in res.output


def test_cli_bad_file_exit_2(tmp_path):
    root = _bank(tmp_path / "b")
    (root / "rain" / "corrupt.ogg").write_bytes(b"OggS" + b"\x00" * 40)
    res = runner.invoke(app, ["atoms", "check", str(root)])
    assert res.exit_code == 2
    assert "corrupt.ogg" in res.output and "error:" in res.output


def test_cli_missing_folder_and_bad_spec(tmp_path):
    res = runner.invoke(app, ["atoms", "check", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "not found" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["atoms", "check", "synthetic:lots"])
    assert res.exit_code == 2 and "synthetic:N" in res.output
    res = runner.invoke(app, ["atoms", "check", f"fsd50k:{tmp_path}"])
    assert res.exit_code == 2 and "vocabulary" in res.output
