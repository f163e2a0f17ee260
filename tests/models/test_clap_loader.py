"""CLAP loading by path (tiny random-weight checkpoint), windows, pooling, determinism, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from model_fixtures import tiny_clap, tiny_clap_path
from reasonaudio.errors import ModelError
from reasonaudio.models.registry import load_model
from reasonaudio.models.windowing import WindowPolicy, pool_windows

SR = 16_000


def _waves(seconds, seed=0):
    rng = np.random.default_rng(seed)
    return [(0.1 * rng.standard_normal(int(SR * s))).astype(np.float32) for s in seconds]


def test_loads_by_path_offline_and_records_identity():
    m = tiny_clap()
    assert m.sample_rate == SR and m.dimension == 16
    assert m.window == WindowPolicy(2.0, 2.0, "mean-l2")
    ident = m.identity()
    assert ident["revision"].startswith("sha256:") and ident["model"] == "clap"
    assert ident["policy"]["feature_extractor"] == {"truncation": "rand_trunc", "padding": "repeatpad"}
    assert ident["policy"]["last_window"] == "aligned to the clip end"


def test_vectors_are_unit_deterministic_and_independent_of_batch_neighbours():
    m = tiny_clap()
    waves = _waves([0.4, 2.0, 3.3, 7.1, 1.2])
    together = m.embed_audio(waves)
    assert together.shape == (5, 16) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    alone = np.concatenate([m.embed_audio([w]) for w in waves])
    assert np.array_equal(together, alone)
    assert np.array_equal(m.embed_audio(waves[::-1])[::-1], together)
    assert np.array_equal(m.embed_audio(waves), together)  # no randomness anywhere


def test_long_clip_is_mean_of_its_windows():
    m = tiny_clap()
    (wave,) = _waves([5.0], seed=3)
    spans = m.window.spans(len(wave), SR)
    assert spans == [(0, 32000), (32000, 64000), (48000, 80000)]
    rows = m.window_rows([wave[a:b] for a, b in spans] + [np.zeros(32000, np.float32)])[:3]
    want = pool_windows(rows, [3])[0]
    assert np.allclose(m.embed_audio([wave])[0], want, atol=1e-6)


def test_text_tower_shapes_and_padding_independence():
    m = tiny_clap()
    texts = ["dog barking", "rain, then thunder while a siren wails for a long time", "x"]
    vecs = m.embed_text(texts)
    assert vecs.shape == (3, 16)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    assert np.array_equal(m.embed_text(texts[1:2]), vecs[1:2])


def test_missing_weights_offline_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    with pytest.raises(ModelError) as err:
        load_model("clap")
    msg = str(err.value)
    assert "'clap'" in msg and "laion/clap-htsat-unfused" in msg and "--model-path" in msg
    with pytest.raises(ModelError, match="does not exist"):
        load_model("clap", model_path=str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="cannot load a CLAP checkpoint"):
        load_model("clap", model_path=str(tmp_path / "empty"))


def test_bad_device_and_empty_wave():
    with pytest.raises(ModelError, match="--device"):
        load_model("clap", model_path=str(tiny_clap_path()), device="tpu")
    with pytest.raises(ModelError, match="empty"):
        tiny_clap().embed_audio([np.zeros(0, np.float32)])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 400_000), window=st.integers(1, 50_000), hop_frac=st.floats(0.1, 1.0))
def test_window_spans_cover_every_sample_deterministically(n, window, hop_frac):
    policy = WindowPolicy(window / 1000, max(1, int(window * hop_frac)) / 1000)
    spans = policy.spans(n, 1000)
    assert spans == policy.spans(n, 1000)
    assert spans[0][0] == 0 and spans[-1][1] == n
    assert all(b - a == min(n, window) for a, b in spans)
    assert all(a2 <= b1 for (_, b1), (a2, _) in zip(spans, spans[1:]))  # no gaps
    assert all(a1 < a2 for (a1, _), (a2, _) in zip(spans, spans[1:]))


def test_window_policy_rejects_bad_values():
    with pytest.raises(ModelError):
        WindowPolicy(10, 0)
    with pytest.raises(ModelError, match="skip audio"):
        WindowPolicy(10, 12)
    with pytest.raises(ModelError):
        WindowPolicy(10, 5, "max")
