"""`bench build` / `bench info` through typer's runner, good and bad input."""

from __future__ import annotations

import numpy as np
import soundfile as sf
from typer.testing import CliRunner

from reasonaudio.cli import app

runner = CliRunner()


def one_line_error(result, *needles: str) -> None:
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    text = result.output.strip()
    assert "Traceback" not in text
    for needle in needles:
        assert needle in text, text


def test_build_and_info(tmp_path):
    out = tmp_path / "b"
    r = runner.invoke(app, ["build", "--out", str(out), "--clips", "200", "--queries", "25"])
    assert r.exit_code == 0, r.output
    assert "200 clips" in r.output and "sequential 120" in r.output
    r = runner.invoke(app, ["info", "--data", str(out)])
    assert r.exit_code == 0, r.output
    for word in ("events per clip", "negation", "hard negatives"):
        assert word in r.output


def test_missing_atom_folder(tmp_path):
    r = runner.invoke(app, ["build", "--out", str(tmp_path / "b"), "--atoms", str(tmp_path / "nope")])
    one_line_error(r, "nope")
    assert not (tmp_path / "b").exists()


def test_corrupt_atom_file_is_named(tmp_path):
    bank = tmp_path / "bank"
    for i in range(10):
        (bank / f"sound{chr(97 + i)}").mkdir(parents=True)
        sf.write(bank / f"sound{chr(97 + i)}" / "a.wav", np.zeros(8000, np.float32), 16000)
    (bank / "soundc" / "a.wav").write_bytes(b"RIFF not really a wav")
    r = runner.invoke(app, ["build", "--out", str(tmp_path / "b"), "--atoms", str(bank)])
    one_line_error(r, "a.wav")
    assert not (tmp_path / "b").exists()


def test_zero_clips(tmp_path):
    r = runner.invoke(app, ["build", "--out", str(tmp_path / "b"), "--clips", "0"])
    one_line_error(r, "--clips")


def test_too_few_clips_for_queries(tmp_path):
    r = runner.invoke(app, ["build", "--out", str(tmp_path / "b"), "--clips", "10", "--queries", "50"])
    one_line_error(r, "clips")


def test_seed_must_be_an_integer(tmp_path):
    r = runner.invoke(app, ["build", "--out", str(tmp_path / "b"), "--seed", "abc"])
    assert r.exit_code == 2 and "--seed" in r.output and "integer" in r.output


def test_info_on_a_missing_or_incomplete_directory(tmp_path):
    one_line_error(runner.invoke(app, ["info", "--data", str(tmp_path / "none")]), "not found")
    (tmp_path / "half").mkdir()
    one_line_error(runner.invoke(app, ["info", "--data", str(tmp_path / "half")]), "manifest.json")


def test_calibration_builds_are_made_by_build_and_kept_on_a_rerun(tmp_path):
    """`bench build --calibration-for DATA`: DATA-calibration (its bank, seed + 1) and that
    build's own; a rerun keeps both; DATA's bank and seed cannot be overridden; a folder holding
    something else is refused before either build is written."""
    from hostile import one_line_error as one_line

    from reasonaudio.dataset.view import load_benchmark

    data = tmp_path / "b"
    assert runner.invoke(app, ["build", "--out", str(data), "--clips", "40", "--queries", "10",
                               "--seed", "7"]).exit_code == 0
    args = ["build", "--calibration-for", str(data), "--clips", "30", "--queries", "5"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    calib, own = load_benchmark(tmp_path / "b-calibration"), load_benchmark(tmp_path / "b-calibration-calibration")
    assert (calib.seed, len(calib.clips), len(calib.queries)) == (8, 30, 5)
    assert (own.seed, len(own.clips), len(own.queries)) == (9, 30, 5)
    assert calib.manifest["parameters"]["atoms"] == load_benchmark(data).manifest["parameters"]["atoms"]
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and again.output.count("kept ") == 2, again.output
    one_line(runner.invoke(app, args + ["--seed", "3", "--atoms", "synthetic"]), "--calibration-for",
             "--seed", "--atoms")
    one_line(runner.invoke(app, args[:3] + ["--clips", "20"]), "b-calibration: holds another build",
             "seed 8, 20 clips, 100 queries", "--clips 20 --queries 100 --force`")
    assert len(load_benchmark(tmp_path / "b-calibration").clips) == 30  # kept as it was
    (tmp_path / "x-calibration").write_text("not a folder")
    one_line(runner.invoke(app, args + ["--out", str(tmp_path / "x")]), "x-calibration")
    assert not (tmp_path / "x").exists()
    one_line(runner.invoke(app, ["build", "--clips", "40"]), "--out")
