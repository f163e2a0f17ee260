"""Omni embedders (Qwen2.5-Omni thinker based) through a tiny random-weight twin: recipes,
prompts, windows, last-token pooling against the model's own multimodal forward, batch
independence, and `bench ingest` / `bench eval` offline."""

from __future__ import annotations

import json

import numpy as np
import pytest
from model_fixtures import copy_bench, tiny_omni_path
from typer.testing import CliRunner

from reasonaudio.errors import ModelError
from reasonaudio.models.omni import RECIPES
from reasonaudio.models.registry import RECORDS, availability, get_record, load_model

SR = 16_000


def _model(name="lco-embedding-omni-3b", batch_size=3):
    return load_model(name, model_path=str(tiny_omni_path()), batch_size=batch_size)


def _waves(seconds, seed=0):
    rng = np.random.default_rng(seed)
    return [(0.1 * rng.standard_normal(int(SR * s))).astype(np.float32) for s in seconds]


def test_every_loadable_omni_record_has_a_recipe_and_states_its_format():
    omni = [r for r in RECORDS if r.paradigm == "omni"]
    assert len(omni) >= 5
    for r in omni:
        assert r.kind == "omni" and r.sample_rate == SR and r.window_seconds and r.hop_seconds
        assert "{text}" in r.query_prompt or not r.loadable
        assert "{audio}" in r.document_prompt or not r.loadable
        assert r.loadable == (r.name in RECIPES)
        if r.query_prompt and RECIPES.get(r.name):
            assert RECIPES[r.name].query_prefix in r.query_prompt
    nemotron = get_record("omni-embed-nemotron-3b")
    ok, why = availability(nemotron)
    assert not ok and "trust_remote_code" in why
    with pytest.raises(ModelError, match="cannot be loaded by this testbed"):
        load_model("omni-embed-nemotron-3b")


def test_prompts_follow_the_recipe_and_are_recorded():
    lco = _model()
    assert lco.audio_prompt.endswith("<|audio_bos|><|AUDIO|><|audio_eos|>\nSummarize the above audio "
                                     "in one word:<|im_end|>\n<|im_start|>assistant\n")
    tev = _model("omniembed-v0.1")
    assert tev.audio_prompt.endswith("<|audio_eos|><|im_end|>\n<|endoftext|>")
    policy = tev.identity()["policy"]
    assert "Query: {text}" in policy["query_prompt"] and policy["recipe"]["append_eos"] is True
    assert policy["window_seconds"] == 5.0 and tev.identity()["dtype"] == "fp32"
    assert tev.identity() != _model("e5-omni-3b").identity()


def test_matches_the_thinkers_own_forward_and_is_batch_independent():
    import torch

    m = _model(batch_size=3)
    waves = _waves([0.6, 2.5, 7.3, 1.1, 4.0], seed=2)
    together = m.embed_audio(waves)
    assert together.shape == (5, 32) and np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    assert np.array_equal(together, np.concatenate([m.embed_audio([w]) for w in waves]))
    assert np.array_equal(m.embed_audio(waves[::-1])[::-1], together)
    assert len(m.audio_units(waves[2])) == 2  # 7.3 s: 0-5 s and 2.3-7.3 s
    # one window through the thinker's own audio merge (input_features + placeholder scatter)
    (unit,) = m.audio_units(waves[1])
    with torch.inference_mode():
        ref = m.model(input_ids=torch.tensor([unit[1]]), input_features=torch.from_numpy(unit[2][None]),
                      feature_attention_mask=torch.from_numpy(unit[3][None]),
                      attention_mask=torch.ones((1, len(unit[1])), dtype=torch.long)).last_hidden_state[0, -1]
    ref = torch.nn.functional.normalize(ref, dim=-1).numpy()
    assert np.allclose(ref, together[1], atol=1e-5)
    q = m.embed_queries(["dog barking", "rain, then a siren"])
    assert np.array_equal(q[1:], m.embed_queries(["rain, then a siren"]))
    assert not np.allclose(q[0], m.embed_text(["dog barking"])[0])  # the query suffix matters


def test_missing_weights_and_bad_folders(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelError) as err:
        load_model("e5-omni-7b")
    assert "Haon-Chen/e5-omni-7B" in str(err.value) and "--model-path" in str(err.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="cannot load a Qwen2.5-Omni thinker"):
        load_model("e5-omni-3b", model_path=str(tmp_path / "empty"))


def test_cli_ingest_eval_and_cached_rerun(tiny_bench_dir, tmp_path, monkeypatch):
    from reasonaudio.cli import app
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.open import open_store

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = copy_bench(tiny_bench_dir, tmp_path / "bench")
    name, path = "e5-omni-3b", str(tiny_omni_path())
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", "--data", str(data), "--model", name, "--model-path", path],
                          env={"COLUMNS": "160"})
    assert first.exit_code == 0, first.output
    out = tmp_path / "results.json"
    ev = runner.invoke(app, ["eval", "--data", str(data), "-r", name, "--model-path", path,
                             "--json", str(out)], env={"COLUMNS": "160"})
    assert ev.exit_code == 0, ev.output
    assert name in json.dumps(json.loads(out.read_text()))
    bench = load_benchmark(data)
    with open_store(bench.root) as store:
        again = ingest_model(bench, store, name, IngestOptions(model_path=path, force=True))
        assert again.model_calls == 0 and again.cache_hits == len(bench.clips)
        policy = store.meta(again.collection).extra["identity"]["policy"]
        assert policy["recipe"]["query_prefix"] == "Query: " and policy["kind"] == "sliding-windows"
