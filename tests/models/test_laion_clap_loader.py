"""The laion-clap loader against a stand-in ``laion_clap`` package (the real one pins numpy<2).

What is checked is our side of the contract: every audio row handed over is exactly one 10 s
window at 48 kHz (so the package never crops or hits LAION-AI/CLAP#182), short clips are
repeat-padded, long clips are windowed and pooled, text batches never have one row.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from reasonaudio.errors import ModelError
from reasonaudio.models.laion_clap import repeat_pad
from reasonaudio.models.registry import load_model

FAKE = textwrap.dedent("""
    import numpy as np
    CALLS = {"audio": [], "text": [], "ckpt": None}

    class CLAP_Module:
        def __init__(self, enable_fusion=False, amodel="HTSAT-tiny", device=None):
            assert enable_fusion is False
        def load_ckpt(self, ckpt=None):
            CALLS["ckpt"] = ckpt
        def get_audio_embedding_from_data(self, x, use_tensor=False):
            x = x.numpy()
            CALLS["audio"].append(x.shape)
            assert x.shape[1] == 480000, x.shape
            out = np.zeros((x.shape[0], 512), np.float32)
            out[:, 0] = 1.0
            out[:, 1] = x[:, :1000].std(axis=1)
            import torch
            return torch.from_numpy(out)
        def get_text_embedding(self, texts):
            CALLS["text"].append(len(texts))
            assert len(texts) >= 2
            out = np.zeros((len(texts), 512), np.float32)
            out[:, 2] = [len(t) + 1 for t in texts]
            return out
""")


@pytest.fixture()
def fake_laion(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "laion_clap"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(FAKE)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "laion_clap", raising=False)
    ckpt = tmp_path / "630k-audioset-best.pt"
    ckpt.write_bytes(b"fake checkpoint")
    yield ckpt
    sys.modules.pop("laion_clap", None)


def test_every_row_is_one_ten_second_window(fake_laion):
    import laion_clap

    m = load_model("laion-clap", model_path=str(fake_laion), batch_size=3)
    assert laion_clap.CALLS["ckpt"] == str(fake_laion) and m.revision.startswith("sha256:")
    rng = np.random.default_rng(0)
    waves = [(0.1 * rng.standard_normal(int(48_000 * s))).astype(np.float32) for s in (2.5, 10.0, 25.0)]
    vecs = m.embed_audio(waves)
    assert vecs.shape == (3, 512) and np.allclose(np.linalg.norm(vecs, axis=1), 1)
    assert all(shape == (3, 480_000) for shape in laion_clap.CALLS["audio"])  # fixed shape
    assert sum(s[0] for s in laion_clap.CALLS["audio"]) == 6  # 1 + 1 + 3 windows + 1 padding row
    text = m.embed_text(["one"])
    assert text.shape == (1, 512) and min(laion_clap.CALLS["text"]) >= 2
    assert m.policy()["window_seconds"] == 10.0 and m.policy()["int16_round_trip"]


def test_repeat_pad_tiles_whole_copies_then_zeros():
    out = repeat_pad(np.array([1, 2, 3], np.float32), 8)
    assert out.tolist() == [1, 2, 3, 1, 2, 3, 0, 0]
    assert repeat_pad(np.arange(10, dtype=np.float32), 4).tolist() == [0, 1, 2, 3]


def test_missing_checkpoint_is_a_clear_error(fake_laion, tmp_path):
    with pytest.raises(ModelError, match="checkpoint .* not found"):
        load_model("laion-clap", model_path=str(tmp_path / "none.pt"))
