"""Audio-language captioners (Qwen2-Audio, Qwen2.5-Omni's thinker) through tiny random-weight
twins: processor / chat template, prompt, greedy generation, windows, batch independence, caption
cache, and `bench ingest` / `bench eval` of two-stage:CAPTIONER+minilm offline."""

from __future__ import annotations

import json

import numpy as np
import pytest
from model_fixtures import tiny_omni_path, tiny_qwen2_audio_path
from typer.testing import CliRunner

from reasonaudio.errors import ModelError
from reasonaudio.models.batching import run_all
from reasonaudio.models.captioners import ModelCaptioner, captioner_names, get_captioner
from reasonaudio.models.registry import get_record, load_model

NAME = "qwen2-audio-7b-instruct"
SR = 16_000
TWINS = {NAME: tiny_qwen2_audio_path, "qwen2.5-omni-7b": tiny_omni_path}


def _model(batch_size=3):
    return load_model(NAME, model_path=str(tiny_qwen2_audio_path()), batch_size=batch_size)


def _waves(seconds, seed=0):
    rng = np.random.default_rng(seed)
    return [(0.1 * rng.standard_normal(int(SR * s))).astype(np.float32) for s in seconds]


def test_record_and_captioner_names():
    r = get_record(NAME)
    assert r.kind == "captioner" and r.paradigm == "two-stage" and r.sample_rate == SR
    assert r.window_seconds == 30.0 and "Describe the sounds" in r.document_prompt
    assert NAME in captioner_names() and "oracle-caption" in captioner_names()


def test_prompt_windows_and_generation_are_recorded_and_deterministic():
    m = _model()
    assert m.sample_rate == SR and m.max_seconds == 5.0
    assert m.chat.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>")
    assert "<|audio_bos|><|AUDIO|><|audio_eos|>" in m.chat and m.chat.endswith("<|im_start|>assistant\n")
    policy = m.identity()["policy"]
    assert policy["decoding"] == "greedy" and policy["max_new_tokens"] == 24  # the twin's generation_config
    assert policy["windows"]["window_seconds"] == 5.0 and m.identity()["dtype"] == "fp32"
    (long,) = _waves([12.0])
    units = m.audio_units(long)
    assert len(units) == 3  # 0-5 s, 5-10 s, 7-12 s (the last aligned to the end)
    rows = run_all(m.run_units, m.unit_batch, m.pad_unit, [units], m.unit_key)[0]
    assert rows.shape == (3, 24) and rows.dtype == np.int64
    caption = m.caption(rows)
    assert isinstance(caption, str) and caption
    assert caption == m.caption(run_all(m.run_units, m.unit_batch, m.pad_unit, [units], m.unit_key)[0])


@pytest.mark.parametrize("name", list(TWINS))
def test_captions_are_bit_identical_whatever_the_batch(name):
    def _model(batch_size):
        return load_model(name, model_path=str(TWINS[name]()), batch_size=batch_size)

    m = _model(batch_size=3)
    waves = _waves([0.7, 2.0, 6.5, 1.3, 3.9], seed=1)
    units = [m.audio_units(w) for w in waves]
    together = run_all(m.run_units, m.unit_batch, m.pad_unit, units, m.unit_key)
    alone = [run_all(m.run_units, m.unit_batch, m.pad_unit, [u], m.unit_key)[0] for u in units]
    reversed_ = run_all(m.run_units, m.unit_batch, m.pad_unit, units[::-1], m.unit_key)[::-1]
    other = _model(batch_size=3)
    for a, b, c in zip(together, alone, reversed_):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    again = run_all(other.run_units, other.unit_batch, other.pad_unit, [other.audio_units(w) for w in waves],
                    other.unit_key)
    assert all(np.array_equal(a, b) for a, b in zip(together, again))


def test_captioner_errors_are_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelError) as err:
        get_captioner(NAME)
    assert "Qwen/Qwen2-Audio-7B-Instruct" in str(err.value) and "--captioner-path" in str(err.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="cannot load a Qwen2-Audio"):
        get_captioner(NAME, model_path=str(tmp_path / "empty"))
    with pytest.raises(ModelError, match="takes no --captioner-path"):
        get_captioner("oracle-caption", model_path=str(tmp_path))
    with pytest.raises(ModelError, match="unknown captioner"):
        get_captioner("nope")
    from reasonaudio.ingest.pipelines import open_pipeline

    with pytest.raises(ModelError, match="is a captioner"):
        open_pipeline(NAME)


def test_omni_thinker_captions_match_its_own_audio_path():
    import torch

    m = load_model("qwen2.5-omni-7b", model_path=str(tiny_omni_path()), batch_size=2)
    from reasonaudio.models.audio_llm import PROMPT

    assert m.identity()["policy"]["prompt"] == PROMPT  # the same prompt as Qwen2-Audio's
    assert PROMPT in get_record(NAME).document_prompt
    assert PROMPT[:60] in get_record("qwen2.5-omni-7b").document_prompt
    assert "Describe the sounds" in m.audio_prompt and m.audio_prompt.endswith("<|im_start|>assistant\n")
    (wave,) = _waves([2.0], seed=4)
    (unit,) = m.audio_units(wave)
    rows = run_all(m.run_units, m.unit_batch, m.pad_unit, [[unit]], m.unit_key)[0]
    ids = torch.tensor([unit[1]])
    with torch.inference_mode():
        ref = m.thinker.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                 input_features=torch.from_numpy(unit[2][None]),
                                 feature_attention_mask=torch.from_numpy(unit[3][None]),
                                 do_sample=False, max_new_tokens=m.max_new_tokens, pad_token_id=m.pad_id)
    want = [int(t) for t in ref[0, len(unit[1]):]]
    got = [int(t) for t in rows[0] if t != -1]
    assert got == want[: len(got)] and (len(got) == m.max_new_tokens or want[len(got)] in m.eos_ids)


@pytest.mark.parametrize("name", list(TWINS))
def test_cli_two_stage_ingest_eval_and_cached_rerun(name, tiny_bench_dir, tmp_path, monkeypatch):
    from model_fixtures import copy_bench

    from reasonaudio.cli import app
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.pipelines import TwoStagePipeline
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.render.clips import bench_renderer
    from reasonaudio.store.open import open_store

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = copy_bench(tiny_bench_dir, tmp_path / "bench")
    captioner_name = name
    name = f"two-stage:{captioner_name}+minilm"
    path = str(TWINS[captioner_name]())
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", "--data", str(data), "--model", name, "--captioner-path", path],
                          env={"COLUMNS": "160"})
    assert first.exit_code == 0, first.output
    out = tmp_path / "results.json"
    ev = runner.invoke(app, ["eval", "--data", str(data), "-r", name, "--json", str(out)],
                       env={"COLUMNS": "160"})
    assert ev.exit_code == 0, ev.output
    assert name in json.dumps(json.loads(out.read_text()))

    bench = load_benchmark(data)
    ids = [c.id for c in bench.clips]
    with open_store(bench.root) as store:
        collection = f"reasonaudio-two-stage-{captioner_name}-minilm"
        caps = {f.clip_id: f.payload["caption"] for f in store.retrieve(collection, ids, fields=True)}
        assert set(caps) == set(ids) and all(caps.values())
        meta = store.meta(collection)
        cap_ident = meta.extra["identity"]["captioner"]["model"]
        assert "Describe the sounds" in cap_ident["policy"]["prompt"]
        assert cap_ident["policy"]["decoding"] == "greedy"
        again = ingest_model(bench, store, name, IngestOptions(captioner_path=path, force=True))
        assert again.model_calls == 0 and again.cache_hits == len(ids)  # captions and vectors cached
        caps2 = {f.clip_id: f.payload["caption"] for f in store.retrieve(collection, ids, fields=True)}
        assert caps2 == caps
    # the captions are exactly what the captioner makes of each clip alone (batch of one)
    captioner = get_captioner(captioner_name, model_path=path)
    assert isinstance(captioner, ModelCaptioner)
    pipe = TwoStagePipeline(captioner, load_model("minilm"), cache_enabled=False)
    pipe.attach_renderer(bench_renderer(bench))
    clip = bench.clips[3]
    assert pipe.captions([clip]) == {clip.id: caps[clip.id]}
