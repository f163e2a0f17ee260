"""Folder banks (Scaper layout + optional manifest) on small generated fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.errors import DataError
from reasonaudio.atoms.folder import FolderBank, nested_label_pairs, normalise_label
from reasonaudio.atoms.registry import open_bank
from reasonaudio.render.clips import Renderer


def tone(path: Path, seconds: float = 0.8, sr: int = 16_000, freq: float = 440.0,
         channels: int = 1, fmt: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * sr)) / sr
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    data = x if channels == 1 else np.stack([x] * channels, axis=1)
    sf.write(path, data, sr, format=fmt)
    return path


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "bank"
    tone(root / "Dog_Barking" / "a.wav", 1.0, 16_000, 300)
    tone(root / "Dog_Barking" / "b.flac", 2.5, 44_100, 320)
    tone(root / "siren" / "s1.ogg", 1.5, 22_050, 900, fmt="OGG")
    tone(root / "church  bell" / "c.wav", 3.0, 48_000, 660, channels=2)
    (root / "siren" / "notes.txt").write_text("ignored")
    (root / ".hidden").mkdir()
    tone(root / ".hidden" / "x.wav")
    return root


def test_scaper_layout(folder):
    bank = open_bank(str(folder))
    assert isinstance(bank, FolderBank)
    assert bank.labels == ("church bell", "dog barking", "siren")
    assert [a.atom_id for a in bank.by_label["dog barking"]] == ["Dog_Barking/a.wav", "Dog_Barking/b.flac"]
    b = bank.by_id["Dog_Barking/b.flac"]
    assert b.sample_rate == 44_100 and abs(b.duration - 2.5) < 1e-3 and b.license == "unknown"
    x, sr = bank.load("church  bell/c.wav")
    assert x.ndim == 1 and x.dtype == np.float32 and sr == 48_000 and len(x) == 144_000
    d = bank.describe()
    assert d["kind"] == "folder" and d["n_classes"] == 3 and d["manifest"] is None
    assert d["fingerprint"] == FolderBank.from_path(folder).describe()["fingerprint"]


def test_same_label_after_normalisation_is_one_class(folder):
    tone(folder / "dog barking" / "c.wav")
    bank = FolderBank.from_path(folder)
    assert len(bank.by_label["dog barking"]) == 3
    assert normalise_label("  Car__Horn ") == "car horn"


def test_renders_from_a_folder_bank(folder):
    bank = FolderBank.from_path(folder)
    clip = Clip("c", "overlap", 4.0, 48_000, (Event("dog barking", 0.0, 3.0, "Dog_Barking/a.wav", 0.0),
                                               Event("siren", 1.0, 4.0, "siren/s1.ogg", -3.0)))
    x = Renderer(bank).render(clip)
    assert len(x) == 192_000 and np.sqrt(np.mean(x[:48_000] ** 2)) > 1e-3


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_manifest_overrides_folder_names(folder, kind):
    tone(folder / "loose" / "rain.wav", 1.2)
    tone(folder / "flat.wav", 0.9)  # outside a label folder: only the manifest can add it
    rows = [{"label": "Heavy_Rain", "file": "loose/rain.wav", "source": "freesound 123", "license": "CC-BY-4.0"},
            {"label": "thunder", "file": "flat.wav", "source": "", "license": "CC0-1.0"}]
    if kind == "jsonl":
        (folder / "atoms.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    else:
        (folder / "atoms.csv").write_text("label,file,source,license\n" +
                                          "".join(f"{r['label']},{r['file']},{r['source']},{r['license']}\n" for r in rows))
    bank = FolderBank.from_path(folder)
    assert "loose" not in bank.labels
    rain = bank.by_id["loose/rain.wav"]
    assert (rain.label, rain.source, rain.license) == ("heavy rain", "freesound 123", "CC-BY-4.0")
    assert bank.by_id["flat.wav"].label == "thunder"
    assert bank.describe()["manifest"] == f"atoms.{kind}"


def test_manifest_bad_rows(folder):
    m = folder / "atoms.jsonl"
    m.write_text(json.dumps({"label": "x", "file": "../outside.wav"}) + "\n")
    with pytest.raises(DataError, match="inside it"):
        FolderBank.from_path(folder)
    m.write_text(json.dumps({"label": "x", "file": "/etc/passwd"}) + "\n")
    with pytest.raises(DataError, match="inside it"):
        FolderBank.from_path(folder)
    m.write_text(json.dumps({"label": "x", "file": "missing/gone.wav"}) + "\n")
    with pytest.raises(DataError, match=r"atoms\.jsonl:1 \(missing/gone\.wav\): file not found"):
        FolderBank.from_path(folder)
    m.write_text(json.dumps({"file": "siren/s1.ogg"}) + "\n")
    with pytest.raises(DataError, match="'label' is missing"):
        FolderBank.from_path(folder)
    m.write_text("{not json\n")
    with pytest.raises(DataError, match=r"atoms\.jsonl:1: invalid JSON"):
        FolderBank.from_path(folder)
    m.unlink()
    (folder / "atoms.csv").write_text("name,path\nx,y.wav\n")
    with pytest.raises(DataError, match="header"):
        FolderBank.from_path(folder)
    (folder / "atoms.jsonl").write_text("")
    with pytest.raises(DataError, match="keep one manifest"):
        FolderBank.from_path(folder)


def test_corrupt_file_is_named(folder):
    bad = folder / "siren" / "broken.wav"
    bad.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunkjunk")
    with pytest.raises(DataError, match=r"broken\.wav: unreadable or not audio"):
        FolderBank.from_path(folder)


def test_non_audio_file_with_audio_extension_is_named(folder):
    (folder / "siren" / "text.flac").write_text("this is not audio at all\n" * 10)
    with pytest.raises(DataError, match=r"text\.flac: unreadable or not audio"):
        FolderBank.from_path(folder)


def test_empty_file_is_named(folder):
    (folder / "siren" / "empty.wav").write_bytes(b"")
    with pytest.raises(DataError, match=r"empty\.wav: empty file"):
        FolderBank.from_path(folder)


def test_zero_sample_file_is_named(folder):
    sf.write(folder / "siren" / "nothing.wav", np.zeros(0), 16_000)
    with pytest.raises(DataError, match=r"nothing\.wav: audio file has no samples"):
        FolderBank.from_path(folder)


def test_missing_and_empty_folders(tmp_path):
    with pytest.raises(DataError, match="not found"):
        open_bank(str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no audio files"):
        open_bank(str(tmp_path / "empty"))
    (tmp_path / "file.wav").write_text("x")
    with pytest.raises(DataError, match="must be a folder"):
        open_bank(str(tmp_path / "file.wav"))


def test_parent_child_labels_are_refused(folder):
    tone(folder / "bell" / "b.wav")
    with pytest.raises(DataError, match="'bell' and 'church bell'"):
        FolderBank.from_path(folder)
    assert nested_label_pairs(["dog", "dog barking", "hotdog"]) == [("dog", "dog barking")]


def test_fingerprint_covers_the_bytes_not_only_the_sizes(folder):
    before = open_bank(str(folder)).fingerprint()
    path = folder / "Dog_Barking" / "a.wav"
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01  # one sample's low bit: same size, other sound
    path.write_bytes(bytes(data))
    assert open_bank(str(folder)).fingerprint() != before


def test_a_fetched_bank_is_recorded_the_same_from_any_cache(folder, tmp_path, monkeypatch):
    import shutil

    records = []
    for home in ("alice", "bob-with-a-longer-home"):
        cache = tmp_path / home / ".cache" / "reasonaudio"
        shutil.copytree(folder, cache / "atoms" / "packages")
        monkeypatch.setenv("REASONAUDIO_CACHE", str(cache))
        bank = open_bank("fetched:packages")
        records.append(json.dumps(bank.describe(), sort_keys=True))
        assert str(tmp_path) not in records[-1]
    assert records[0] == records[1] and '"spec": "fetched:packages"' in records[0]
    with pytest.raises(DataError, match="unknown fetched bank"):
        open_bank("fetched:nothing")
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "empty"))
    with pytest.raises(DataError, match="bench atoms fetch packages"):
        open_bank("fetched:packages")
