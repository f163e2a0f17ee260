"""The trained detector's pooled-layer branch (``DetectorConfig.pooled_dim``, the recipe's
``--pooled-dim``), on a synthetic network (no builds):

- the exact numpy detector computes the torch network's function with the branch, prior included;
- the configuration round-trips; without the branch it is written as before (no keys), so
  older model directories load unchanged, and a network without it reads no pooled codes;
- a detector with the branch refuses inputs read without the pooled codes, in one line;
- the codes' scale comes from exact integer sums: the same for any order of the clips;
- the pooled codes are YAMNet's pooled layer as integers, one row per YAMNet frame.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from reasonaudio.models.yamnet import EMBEDDING_DIM, N_CLASSES

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")


def _cfg(pooled_dim=6, prior=((3, 7), (100,), (5, 6, 520))):
    from reasonaudio.detect.detector_model import DetectorConfig

    rng = np.random.default_rng(1)
    return DetectorConfig(labels=("a", "b", "c"), hidden=8, yamnet_dim=8, logit_scale=0.05,
                          logit_zero=128.0, mel_mean=tuple(rng.uniform(50, 150, 64).round(3)),
                          mel_std=tuple(rng.uniform(5, 20, 64).round(3)), prior_classes=prior,
                          pooled_dim=pooled_dim, pooled_scale=0.02 if pooled_dim else 0.0)


def _inputs(seed=2, n_yamnet=5, n_det=27, pooled=True):
    from reasonaudio.detect.detector_features import ClipInputs

    rng = np.random.default_rng(seed)
    codes = rng.integers(-40, 200, (n_yamnet, EMBEDDING_DIM)).astype(np.int16) if pooled else None
    return ClipInputs(rows=rng.integers(0, 256, (n_yamnet, N_CLASSES)).astype(np.uint8),
                      mel=rng.integers(0, 1600, (n_det, 64)).astype(np.uint16), pooled=codes)


def _torch_logits(model, cfg, inputs):
    import torch

    from reasonaudio.detect.detector_model import mel_input, patch_index, phases, yamnet_input

    n = len(inputs.mel)
    args = (torch.tensor(yamnet_input(inputs, cfg)[None], dtype=torch.float32),
            torch.tensor(mel_input(inputs.mel, cfg)[None], dtype=torch.float32),
            torch.tensor(patch_index(n, len(inputs.rows))[None]), torch.tensor(phases(n)[None]),
            torch.ones(1, n))
    with torch.no_grad():
        return model(*args)[0].numpy()


@pytest.mark.parametrize("prior", [(), ((3, 7), (100,), (5, 6, 520))])
def test_exact_detector_computes_the_torch_network_with_its_pooled_branch(prior):
    import torch

    from reasonaudio.detect.detector_model import ExactDetector, torch_module, weight_shapes

    cfg = _cfg(prior=prior)
    torch.manual_seed(0)
    model = torch_module(cfg)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    assert set(state) == set(weight_shapes(cfg)) and state["pool.weight"].shape == (6, EMBEDDING_DIM)
    exact = ExactDetector(cfg, state)
    exact.check()
    inputs = _inputs()
    got = exact.logits(inputs)
    np.testing.assert_allclose(got, _torch_logits(model, cfg, inputs), atol=1e-4)
    # the branch is read: other pooled codes give other outputs
    other = _inputs()
    other = type(other)(other.rows, other.mel, np.roll(other.pooled, 1, axis=0))
    assert np.abs(exact.logits(other) - got).max() > 1e-6


def test_config_round_trips_and_no_branch_is_written_as_before():
    from reasonaudio.detect.detector_model import DetectorConfig, ExactDetector, torch_module

    cfg = _cfg()
    assert DetectorConfig.from_json(cfg.to_json()) == cfg
    plain = _cfg(pooled_dim=0)
    assert "pooled_dim" not in plain.to_json() and "pooled_scale" not in plain.to_json()
    assert DetectorConfig.from_json(plain.to_json()) == plain
    state = {k: v.detach().numpy() for k, v in torch_module(plain).state_dict().items()}
    assert not any(k.startswith("pool.") for k in state)
    # without the branch, pooled codes are not needed
    assert ExactDetector(plain, state).logits(_inputs(pooled=False)).shape == (27, 3)
    with pytest.raises(ValueError, match="pooled_scale"):
        ExactDetector(DetectorConfig.from_json({**cfg.to_json(), "pooled_scale": 0.0}),
                      {k: v.detach().numpy() for k, v in torch_module(cfg).state_dict().items()}).check()


def test_a_pooled_detector_refuses_inputs_without_the_pooled_codes():
    from reasonaudio.detect.detector_model import ExactDetector, torch_module

    cfg = _cfg()
    state = {k: v.detach().numpy() for k, v in torch_module(cfg).state_dict().items()}
    with pytest.raises(ValueError, match="pooled=True") as exc:
        ExactDetector(cfg, state).logits(_inputs(pooled=False))
    assert "\n" not in str(exc.value)


def test_the_pooled_scale_is_exact_and_order_free():
    from reasonaudio.detect.detector_model import pooled_statistics

    rng = np.random.default_rng(5)
    clips = [rng.integers(-50, 250, (int(n), 16)).astype(np.int16) for n in rng.integers(1, 9, 12)]
    scale = pooled_statistics(clips)
    assert scale == pooled_statistics(clips[::-1])
    flat = np.concatenate([c.ravel() for c in clips]).astype(np.float64)
    assert scale == pytest.approx(1 / flat.std(), rel=1e-5)


def test_pooled_codes_are_yamnet_s_pooled_layer_as_integers():
    from reasonaudio.detect.clip_frames import load_tagger
    from reasonaudio.detect.detector_features import pooled_codes

    tagger = load_tagger()

    rng = np.random.default_rng(0)
    wave = (0.1 * rng.standard_normal(16000 * 3)).astype(np.float32)
    patches = tagger.tagger.input_codes(wave)
    codes = pooled_codes(tagger, patches)
    rows, emb = tagger.tagger.patch_codes_and_embeddings(patches)
    assert codes.dtype == np.int16 and codes.shape == (len(patches), EMBEDDING_DIM)
    assert np.array_equal(codes, emb) and np.array_equal(rows, tagger.tagger.patch_codes(patches))


TINY = dict(epochs=3, hidden=8, yamnet_dim=8, pooled_dim=8, batch_clips=8, lr=1e-2, warmup_steps=5)


def test_a_pooled_detector_trains_and_detects_end_to_end(tmp_path, monkeypatch):
    """``--pooled-dim``: training reads the pooled codes (cached by audio), the card records the
    branch, the same seed gives the same bytes, and ``bench detect --mode trained`` and the
    by-example perceiver read the codes for it."""
    from reasonaudio.atoms.registry import open_bank
    from reasonaudio.detect.collection import DetectOptions, run_detection
    from reasonaudio.detect.perceive_examples import DetectorPerceiver
    from reasonaudio.detect.trained import trained_map
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.train.detector import DetectorRecipe, train_detector
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.store.open import open_store

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    for name, seed, clips in (("train", 11, 40), ("eval", 21, 16), ("calib", 22, 16)):
        build_benchmark(tmp_path / name, BuildParams(atoms="synthetic:8", seed=seed, n_clips=clips,
                                                     n_queries=6))
    first = train_detector([tmp_path / "train"], tmp_path / "model", DetectorRecipe(**TINY))
    again = train_detector([tmp_path / "train"], tmp_path / "again", DetectorRecipe(**TINY))
    assert first.weights_sha256 == again.weights_sha256
    assert first.card["recipe"]["pooled_dim"] == 8 and first.card["network"]["pooled_scale"] > 0
    assert list((tmp_path / "cache").rglob("*yamnet-pooled*"))
    bench = load_benchmark(tmp_path / "eval")
    with open_store(bench.root) as store:
        res = run_detection(bench, store, DetectOptions(mode="trained", calibration=tmp_path / "calib",
                                                        model_path=tmp_path / "model"))
    assert res.name == "detected:yamnet-trained" and res.perception.total("events").f1 >= 0
    bank = open_bank("synthetic:8")
    atom = bank.atoms[0]
    wave, sr = bank.load(atom.atom_id)
    heard = DetectorPerceiver(trained_map(tmp_path / "model", bench.labels)).hear(wave, sr)
    assert heard.label is None or heard.label in bench.labels
