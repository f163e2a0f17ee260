"""Distinct recordings (reasonaudio/atoms/distinct.py): one recording saved twice, at another gain,
rate or offset, is one recording; independent recordings of a label are two; the bank check and
its CLI report both counts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from reasonaudio.atoms.check import check_bank
from reasonaudio.atoms.distinct import (
    MAX_COMPARED, SAME_AUDIO, SharedAudio, comparable, compare_recordings, distinct_count, peak_correlation,
)
from reasonaudio.cli import app

pytestmark = pytest.mark.fast

runner = CliRunner()


def _sound(seed: int, seconds: float = 1.5, sr: int = 16_000) -> np.ndarray:
    """Noise bursts under a decaying envelope: a recording no other seed resembles."""
    rng = np.random.default_rng(seed)
    n = int(seconds * sr)
    return (0.3 * rng.standard_normal(n) * np.exp(-np.arange(n) / (0.4 * sr))).astype(np.float32)


def test_peak_correlation_is_one_for_a_copy_at_another_gain_offset_and_rate():
    x = _sound(1)
    shifted = np.concatenate([np.zeros(1234, np.float32), 0.25 * x])
    a = comparable(x, 16_000)
    assert peak_correlation(a, comparable(shifted, 16_000)) == pytest.approx(1.0, abs=1e-3)
    import soxr
    at_48k = soxr.resample(x.astype(np.float64), 16_000, 48_000)
    assert peak_correlation(a, comparable(at_48k, 48_000)) > 0.95


def test_peak_correlation_is_symmetric_bounded_and_zero_for_silence():
    a, b = comparable(_sound(1), 16_000), comparable(_sound(2, 0.7), 16_000)
    r = peak_correlation(a, b)
    assert 0.0 <= r < 0.2 and r == pytest.approx(peak_correlation(b, a), abs=1e-12)
    assert peak_correlation(a, np.zeros(500)) == 0.0


def test_distinct_count_joins_chains_of_shared_pairs():
    ids = ["a", "b", "c", "d"]
    assert distinct_count(ids, []) == 4
    chain = [SharedAudio("x", "a", "b", 0.9), SharedAudio("x", "b", "c", 0.8)]
    assert distinct_count(ids, chain) == 2
    assert distinct_count(ids, chain + [SharedAudio("x", "d", "a", 1.0)]) == 1


def test_compare_recordings_counts_and_skips_large_labels():
    waves = {"dog/1": _sound(1), "dog/2": _sound(1) * 0.5, "dog/3": _sound(3),
             "cat/1": _sound(4), "rain/1": _sound(5)}
    groups = {"dog": ["dog/1", "dog/2", "dog/3"], "cat": ["cat/1"], "rain": ["rain/1"],
              "many": [f"many/{i}" for i in range(MAX_COMPARED + 1)]}
    seen = []

    def samples(i):
        seen.append(i)
        return comparable(waves[i], 16_000)

    rep = compare_recordings(groups, samples)
    assert rep.by_recordings == {3: 1, 1: 2, MAX_COMPARED + 1: 1}
    assert rep.by_distinct == {2: 1, 1: 2}
    assert [(s.label, s.first, s.second) for s in rep.shared] == [("dog", "dog/1", "dog/2")]
    assert rep.shared[0].correlation >= SAME_AUDIO
    assert rep.not_compared == ["many"] and not any(i.startswith("many") for i in seen)
    assert json.loads(json.dumps(rep.to_json()))["labels_by_distinct_recordings"] == {"1": 2, "2": 1}


def _bank(root: Path) -> Path:
    for label, name, wave, sr in (("dog", "a", _sound(1), 16_000), ("dog", "b", 0.4 * _sound(1), 16_000),
                                  ("cat", "a", _sound(2), 16_000), ("cat", "b", _sound(3), 22_050),
                                  ("rain", "a", _sound(4), 16_000)):
        (root / label).mkdir(parents=True, exist_ok=True)
        sf.write(root / label / f"{name}.wav", wave, sr)
    return root


def test_bank_check_warns_about_shared_audio_and_counts_distinct(tmp_path):
    rep = check_bank(str(_bank(tmp_path / "bank")))
    assert rep.ok
    assert rep.recordings.by_recordings == {2: 2, 1: 1} and rep.recordings.by_distinct == {1: 2, 2: 1}
    assert [w for w in rep.warnings if "share their audio" in w] == [
        "dog: recordings dog/a.wav and dog/b.wav share their audio (peak correlation 1.00): an "
        "unseen-recordings split would test a heard recording"]
    assert check_bank(str(tmp_path / "bank"), decode=False).recordings is None


def test_cli_prints_both_counts_and_json_holds_them(tmp_path):
    root = _bank(tmp_path / "bank")
    res = runner.invoke(app, ["atoms", "check", str(root)])
    assert res.exit_code == 0, res.output
    assert "labels by recordings" in res.output and "labels by distinct recordings" in res.output
    assert "share their audio" in res.output
    res = runner.invoke(app, ["atoms", "check", str(root), "--json"])
    rec = json.loads(res.stdout)["bank"]["recordings"]
    assert rec["labels_by_recordings"] == {"1": 1, "2": 2}
    assert rec["labels_by_distinct_recordings"] == {"1": 2, "2": 1}
    assert [s["label"] for s in rec["shared_audio"]] == ["dog"]


def test_cli_fetched_bank_not_fetched_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    res = runner.invoke(app, ["atoms", "check", "fetched:packages-second"])
    assert res.exit_code == 2
    assert "not fetched yet (run `bench atoms fetch packages --second-recordings`)" in res.output
    assert "Traceback" not in res.output


def test_cli_checks_a_split_part(tmp_path):
    root = _bank(tmp_path / "bank")
    res = runner.invoke(app, ["atoms", "check", f"split:test:{root}", "--json"])
    assert res.exit_code == 0, res.output
    bank = json.loads(res.stdout)["bank"]
    assert bank["classes"] == 2 and bank["recordings"]["labels_by_recordings"] == {"1": 2}
