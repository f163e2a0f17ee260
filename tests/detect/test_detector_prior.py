"""The trained detector's zero-shot prior (``DetectorConfig.prior_classes``, the recipe's
``prior_top_k``), on a synthetic network (no tagger, no builds):

- the exact numpy detector computes the torch network's function, the prior included, and the
  prior adds ``scale * max(logit of the label's classes over the two patches) + bias``;
- the configuration round-trips through JSON; without a prior it is written as before (no key),
  so older model directories load unchanged; a prior naming a class outside YAMNet's is refused.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")


def _cfg(prior=((3, 7), (100,), (5, 6, 520))):
    from reasonaudio.detect.detector_model import DetectorConfig

    rng = np.random.default_rng(1)
    return DetectorConfig(labels=("a", "b", "c"), hidden=8, yamnet_dim=8, logit_scale=0.05,
                          logit_zero=128.0, mel_mean=tuple(rng.uniform(50, 150, 64).round(3)),
                          mel_std=tuple(rng.uniform(5, 20, 64).round(3)), prior_classes=prior)


def _inputs(seed=2, n_yamnet=5, n_det=27):
    from reasonaudio.detect.detector_features import ClipInputs

    rng = np.random.default_rng(seed)
    return ClipInputs(rows=rng.integers(0, 256, (n_yamnet, 521)).astype(np.uint8),
                      mel=rng.integers(0, 1600, (n_det, 64)).astype(np.uint16))


def _torch_logits(model, cfg, inputs):
    import torch

    from reasonaudio.detect.detector_model import mel_input, patch_index, phases, yamnet_logits

    n = len(inputs.mel)
    args = (torch.tensor(yamnet_logits(inputs.rows, cfg)[None], dtype=torch.float32),
            torch.tensor(mel_input(inputs.mel, cfg)[None], dtype=torch.float32),
            torch.tensor(patch_index(n, len(inputs.rows))[None]), torch.tensor(phases(n)[None]),
            torch.ones(1, n))
    with torch.no_grad():
        return model(*args)[0].numpy()


def test_exact_detector_computes_the_torch_network_with_its_prior():
    import torch

    from reasonaudio.detect.detector_model import (ExactDetector, patch_index, prior_track, torch_module,
                                                   weight_shapes, yamnet_logits)

    cfg = _cfg()
    torch.manual_seed(0)
    model = torch_module(cfg)
    with torch.no_grad():
        model.prior_scale.copy_(torch.tensor([0.3, -0.2, 1.1]))
        model.prior_bias.copy_(torch.tensor([0.5, 0.0, -0.7]))
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    assert set(state) == set(weight_shapes(cfg))
    exact = ExactDetector(cfg, state)
    exact.check()
    inputs = _inputs()
    got = exact.logits(inputs)
    np.testing.assert_allclose(got, _torch_logits(model, cfg, inputs), atol=1e-4)

    # the prior's part is scale * the track + bias: the same network without it differs by that
    logits = yamnet_logits(inputs.rows, cfg)
    idx = patch_index(len(inputs.mel), len(inputs.rows))
    track = prior_track(logits, cfg, idx)
    for t in (0, 6, 13, 26):
        for j, classes in enumerate(cfg.prior_classes):
            a, b = idx[t]
            assert track[t, j] == max(logits[a, list(classes)].max(), logits[b, list(classes)].max())
    bare = ExactDetector(_cfg(prior=()), {k: v for k, v in state.items() if not k.startswith("prior_")})
    np.testing.assert_allclose(got - bare.logits(inputs),
                               state["prior_scale"] * track + state["prior_bias"], atol=1e-9)


def test_config_round_trips_and_no_prior_is_written_as_before():
    from reasonaudio.detect.detector_model import DetectorConfig, ExactDetector, torch_module

    cfg = _cfg()
    assert DetectorConfig.from_json(cfg.to_json()) == cfg
    plain = _cfg(prior=())
    assert "prior_classes" not in plain.to_json()
    assert DetectorConfig.from_json(plain.to_json()) == plain
    bad = _cfg(prior=((3,), (521,), (1,)))
    state = {k: v.detach().numpy() for k, v in torch_module(_cfg()).state_dict().items()}
    with pytest.raises(ValueError, match="prior_classes"):
        ExactDetector(bad, state).check()
