"""The trained detector's training-time augmentations (``DetectorRecipe``'s ``gain_db``,
``band_shift``, ``mel_dropout``, ``yamnet_dropout``; ``train.detector.augment``), on synthetic
batches (no tagger, no builds):

- deterministic: the same generator seed gives the same tensors, another seed other ones;
- each does what it says: a gain moves every band of a clip by the same number of codes; a band
  shift moves the raw codes across bands (edge repeated); mel dropout leaves a clip's track whole
  or at the training mean; YAMNet dropout zeroes classes of a clip, the same in every frame;
  padding stays zero and the targets never change;
- off by default: the default recipe draws nothing and its card names no augmentation (the
  enrolled model's recipe and bytes stay); out-of-range values are a one-line error.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from reasonaudio.errors import DataError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")

B, NY, ND, NM = 3, 4, 20, 64


def _cfg():
    from reasonaudio.detect.detector_model import DetectorConfig

    rng = np.random.default_rng(0)
    return DetectorConfig(labels=("a", "b"), mel_mean=tuple(rng.uniform(50, 150, NM).round(3)),
                          mel_std=tuple(rng.uniform(5, 20, NM).round(3)), logit_scale=0.1, logit_zero=128)


def _batch():
    import torch

    g = torch.Generator().manual_seed(7)
    logits = torch.randn(B, NY, 521, generator=g)
    mel = torch.randn(B, ND, NM, generator=g)
    mask = torch.ones(B, ND)
    mask[2, 15:] = 0.0
    mel[2, 15:] = 0.0
    targets = (torch.rand(B, ND, 2, generator=g) > 0.5).float()
    index = torch.zeros(B, ND, 2, dtype=torch.long)
    phase = torch.zeros(B, ND, dtype=torch.long)
    return logits, mel, index, phase, mask, targets


def _aug(seed, **kw):
    import torch

    from reasonaudio.train.detector import DetectorRecipe, augment

    return augment(_batch(), _cfg(), DetectorRecipe(**kw), torch.Generator().manual_seed(seed), 2.5)


ALL = dict(gain_db=6.0, band_shift=2, mel_dropout=0.5, yamnet_dropout=0.3)


def test_same_seed_same_tensors_other_seed_other_ones():
    first, again, other = _aug(1, **ALL), _aug(1, **ALL), _aug(2, **ALL)
    for a, b in zip(first, again):
        assert a.numpy().tobytes() == b.numpy().tobytes()
    assert any(a.numpy().tobytes() != c.numpy().tobytes() for a, c in zip(first, other))


def test_gain_moves_every_band_of_a_clip_by_the_same_codes():
    import torch

    cfg = _cfg()
    before, after = _batch(), _aug(3, gain_db=6.0)
    std = torch.tensor(cfg.mel_std)
    moved = (after[1] - before[1]) * std  # in codes
    for i in range(B):
        n = int(before[4][i].sum())
        step = moved[i, :n]
        assert torch.allclose(step, step[0, 0].expand_as(step), atol=1e-3)
        assert abs(float(step[0, 0])) <= 6.0 * 2.5 + 1e-3
        assert float(moved[i, n:].abs().sum()) == 0.0  # padding stays zero
    assert torch.equal(after[0], before[0]) and torch.equal(after[5], before[5])


def test_band_shift_moves_raw_codes_across_bands():
    import torch

    cfg = _cfg()
    mean, std = torch.tensor(cfg.mel_mean), torch.tensor(cfg.mel_std)
    before, after = _batch(), _aug(4, band_shift=2)
    raw_b, raw_a = before[1] * std + mean, after[1] * std + mean
    shifts = set()
    for i in range(B):
        n = int(before[4][i].sum())
        found = [s for s in range(-2, 3)
                 if torch.allclose(raw_a[i, :n, 2:-2], raw_b[i, :n, 2 - s:NM - 2 - s], atol=1e-3)]
        assert len(found) == 1
        s = found[0]
        shifts.add(s)
        edge = 0 if s >= 0 else NM - 1
        if s:  # the bands shifted in from outside repeat the edge band
            assert torch.allclose(raw_a[i, :n, edge], raw_b[i, :n, edge], atol=1e-3)
    assert torch.equal(after[5], before[5])
    assert _aug(4, band_shift=2)[1].numpy().tobytes() == after[1].numpy().tobytes()


def test_mel_dropout_keeps_or_blanks_a_whole_track():
    import torch

    before = _batch()
    blanked = kept = 0
    for seed in range(6):
        after = _aug(seed, mel_dropout=0.5)
        for i in range(B):
            if float(after[1][i].abs().sum()) == 0.0:
                blanked += 1
            else:
                assert torch.equal(after[1][i], before[1][i])
                kept += 1
    assert blanked and kept
    assert all(float(_aug(s, mel_dropout=1.0)[1].abs().sum()) == 0.0 for s in range(3))


def test_yamnet_dropout_zeroes_the_same_classes_in_every_frame():
    before, after = _batch(), _aug(5, yamnet_dropout=0.3)
    zero = after[0] == 0
    assert bool((zero == zero[:, :1]).all())  # per clip and class, not per frame
    share = float(zero[:, 0].float().mean())
    assert 0.2 < share < 0.4
    kept = ~zero
    assert bool((after[0][kept] == before[0][kept]).all())


def test_off_by_default_and_out_of_range_is_one_line():
    from reasonaudio.train.detector import AUGMENTATIONS, DetectorRecipe

    recipe = DetectorRecipe()
    assert not recipe.augments
    assert not set(AUGMENTATIONS) & set(recipe.to_json())
    assert DetectorRecipe(gain_db=3.0).to_json()["gain_db"] == 3.0
    for bad in (dict(gain_db=-1.0), dict(band_shift=-1), dict(mel_dropout=1.5), dict(yamnet_dropout=1.0)):
        with pytest.raises(DataError) as e:
            DetectorRecipe(**bad).check()
        assert "\n" not in str(e.value) and "augmentation" in str(e.value)
