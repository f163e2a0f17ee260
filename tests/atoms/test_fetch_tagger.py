"""The YAMNet quality check (with a fake tagger: deterministic, offline, fast), the soundfont
phrase, and audio conversion details."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from test_fetch_fixtures import FakeClients, tone
from typer.testing import CliRunner

from reasonaudio.atoms.fetch import convert
from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.recipes import Render, Trim
from reasonaudio.atoms.fetch.soundfont import phrase_midi, render_wav
from reasonaudio.atoms.registry import open_bank
from reasonaudio.atoms.tagger_check import label_words, match_rank, run_tagger_check, tag_matches

NAMES = ("Dog", "Bark", "Cattle, bovinae", "Bagpipes", "Siren", "Music", "Silence", "Animal")


class FakeTagger:
    """Scores depend on the tone's pitch: low tones 'sound like' dogs, high ones like sirens."""

    class_names = NAMES
    revision = "fake-1"

    def frame_scores_many(self, waves, sample_rate):
        out = []
        for w in waves:
            spectrum = np.abs(np.fft.rfft(w[:sample_rate]))
            peak = np.argmax(spectrum) * sample_rate / (2 * (len(spectrum) - 1))
            s = np.full(len(NAMES), 0.1, dtype=np.float32)
            if peak < 400:
                s[[0, 1, 7]] = [0.9, 0.8, 0.7]
            else:
                s[[4, 5]] = [0.95, 0.6]
            out.append(np.stack([s, s * 0.5]))
        return out


def make_bank(root: Path, rows: list[tuple[str, float, list[str] | None]]) -> Path:
    lines = []
    for label, freq, tags in rows:
        folder = root / label.replace(" ", "_")
        folder.mkdir(parents=True)
        sf.write(str(folder / "a.wav"), 0.5 * np.sin(2 * np.pi * freq * np.arange(48_000) / 48_000),
                 48_000, subtype="PCM_16")
        row = {"label": label, "file": f"{folder.name}/a.wav", "source": "test", "license": "CC0-1.0"}
        if tags is not None:
            row["expected_tags"] = tags
        lines.append(json.dumps(row))
    (root / "atoms.jsonl").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.parametrize("tag, name, ok", [
    ("bark", "Bark", True), ("dog", "Domestic animals, pets", False), ("bagpipe", "Bagpipes", True),
    ("pipe", "Bagpipes", False), ("cat", "Cat", True), ("rustl", "Rustling leaves", True),
    ("bow-wow", "Bow-wow", True), ("siren", "Civil defense siren", True),
])
def test_tag_matches(tag: str, name: str, ok: bool) -> None:
    assert tag_matches(tag, name) is ok


def test_match_rank_and_label_words() -> None:
    top = [("Music", 0.9), ("Dog", 0.8), ("Bark", 0.7)]
    assert match_rank(["bark", "dog"], top) == 2
    assert match_rank(["siren"], top) is None
    assert label_words("hammering on an anvil") == ("hammering", "anvil")


def test_tagger_check_over_a_folder_bank(tmp_path: Path) -> None:
    root = make_bank(tmp_path / "bank", [("dog barking", 200.0, ["dog", "bark"]),
                                         ("siren", 900.0, ["siren"]),
                                         ("cow mooing", 900.0, ["cattle", "moo"]),
                                         ("sheep bleating", 200.0, None)])
    bank = open_bank(str(root))
    rep = run_tagger_check(bank, str(root), tagger=FakeTagger(), root=root, k=3)
    by = {c.label: c for c in rep.labels}
    assert by["dog barking"].confirmed and by["dog barking"].best.rank == 1
    assert by["siren"].confirmed
    assert not by["cow mooing"].confirmed
    assert by["sheep bleating"].expected_from in ("recipe", "label words")
    assert rep.rate == pytest.approx(2 / 4)
    data = rep.to_json()
    assert data["unconfirmed"] == ["cow mooing", "sheep bleating"]
    assert data["confirmed"] == 2 and data["top_k"] == 3
    assert data["labels"][0]["top"][0][0] in NAMES


def test_cli_check_with_tagger(tmp_path: Path, monkeypatch) -> None:
    from reasonaudio.cli import app
    from reasonaudio.atoms import tagger_check

    root = make_bank(tmp_path / "bank", [("dog barking", 200.0, ["dog"]), ("siren", 900.0, ["bark"])])
    monkeypatch.setattr(tagger_check, "_load_tagger", lambda name: FakeTagger())
    runner = CliRunner()
    res = runner.invoke(app, ["atoms", "check", str(root), "--tagger", "yamnet", "--json", "--top-k", "2"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["bank"]["classes"] == 2
    assert out["tagger"]["confirmed"] == 1 and out["tagger"]["unconfirmed"] == ["siren"]
    res = runner.invoke(app, ["atoms", "check", str(root), "--tagger", "yamnet", "--top-k", "2"])
    assert res.exit_code == 0
    assert "1 of 2 classes confirmed" in res.output and "unconfirmed: siren" in res.output
    monkeypatch.undo()
    res = runner.invoke(app, ["atoms", "check", str(root), "--tagger", "nope"])
    assert res.exit_code == 2 and "unknown tagger" in res.output


def test_phrase_midi_is_deterministic_and_well_formed() -> None:
    a = phrase_midi(Render(0, 46, -12))
    assert a == phrase_midi(Render(0, 46, -12)) and a != phrase_midi(Render(0, 46, 0))
    assert a[:4] == b"MThd" and a[14:18] == b"MTrk" and a.endswith(b"\xff\x2f\x00")
    drum = phrase_midi(Render(128, 0, 0, 54))
    assert bytes([0x99, 54, 100]) in drum          # note-on, channel 10
    bank16 = phrase_midi(Render(16, 25))
    assert bytes([0xB0, 0, 16]) in bank16           # bank select


def test_render_uses_argument_list_and_reports_failure(tmp_path: Path) -> None:
    clients = FakeClients()
    sf2 = tmp_path / "x.sf2"
    sf2.write_bytes(b"x")
    wav = render_wav(sf2, Render(0, 46), clients)
    assert wav[:4] == b"RIFF"
    argv = clients.calls[0]
    assert argv[0] == "fluidsynth" and "-F" in argv and str(sf2) in argv

    def failing(argv, cwd):
        from reasonaudio.atoms.fetch.process import Completed
        return Completed(1, "", "fluidsynth: error: bad soundfont")

    with pytest.raises(FetchError, match="bad soundfont"):
        render_wav(sf2, Render(0, 46), failing)


def test_convert_resamples_mixes_down_and_trims() -> None:
    out = convert.convert(tone(0.5, 44_100, lead=0.5, tail=0.5, channels=2), Trim(), 0.0, "t")
    wave, sr = sf.read(__import__("io").BytesIO(out.wav_bytes))
    assert sr == 48_000 and wave.ndim == 1
    assert out.source_sample_rate == 44_100 and out.source_channels == 2
    assert 0.5 <= out.duration <= 0.55
    cropped = convert.convert(tone(2.0, 22_050, lead=0.0, tail=0.0), Trim(0.5, 1.0), 0.0, "t")
    assert abs(cropped.duration - 0.5) < 0.02
    loud = convert.convert(tone(0.5, 22_050), Trim(), 20.0, "t")
    assert loud.peak_guard_db < 0                       # gain would clip: guarded
    with pytest.raises(FetchError, match="silent"):
        convert.convert(_silence(), Trim(), 0.0, "t")
    with pytest.raises(FetchError, match="cannot decode"):
        convert.convert(b"not audio at all", Trim(), 0.0, "t")
    with pytest.raises(FetchError, match="past the end"):
        convert.convert(tone(0.5, 22_050), Trim(10.0, None), 0.0, "t")


def _silence() -> bytes:
    import io

    buf = io.BytesIO()
    sf.write(buf, np.zeros(22_050, np.float32), 22_050, format="WAV", subtype="PCM_16")
    return buf.getvalue()
