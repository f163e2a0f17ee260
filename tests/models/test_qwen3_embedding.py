"""Qwen3-Embedding through its tiny random-weight twin: loader, instruction, last-token pooling,
batch independence, and `bench ingest` / `bench eval` of a two-stage pipeline offline."""

from __future__ import annotations

import json

import numpy as np
import pytest
from model_fixtures import copy_bench, tiny_qwen3_embedding_path
from typer.testing import CliRunner

from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.errors import ModelError
from reasonaudio.models.registry import get_record, load_model

NAME = "qwen3-embedding-0.6b"
TEXTS = ["dog barking for 2 seconds", "rain",
         "siren for 5 seconds while rain for 12 seconds, then thunder for 3 seconds, then a car "
         "horn for 1 second while footsteps for 4 seconds", "x", "keyboard typing"]


def _model(batch_size=4):
    return load_model(NAME, model_path=str(tiny_qwen3_embedding_path()), batch_size=batch_size)


def test_records_cover_three_sizes():
    dims = {n: get_record(n).dimension for n in
            ("qwen3-embedding-0.6b", "qwen3-embedding-4b", "qwen3-embedding-8b")}
    assert dims == {"qwen3-embedding-0.6b": 1024, "qwen3-embedding-4b": 2560, "qwen3-embedding-8b": 4096}
    r = get_record(NAME)
    assert r.hub_id == "Qwen/Qwen3-Embedding-0.6B" and r.paradigm == "two-stage"
    assert "Instruct:" in r.query_prompt and "bf16" in r.dtypes


def test_last_token_pooling_matches_an_unpadded_forward_and_is_batch_independent():
    import torch

    m = _model()
    together = m.embed_text(TEXTS)
    assert together.shape == (5, 32) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-6)
    alone = np.concatenate([m.embed_text([t]) for t in TEXTS])
    assert np.array_equal(together, alone)
    assert np.array_equal(m.embed_text(TEXTS[::-1])[::-1], together)
    assert np.array_equal(_model(batch_size=4).embed_text(TEXTS[2:3]), together[2:3])
    ids = m._ids(TEXTS[2])
    assert ids[-1] == m.tokenizer.convert_tokens_to_ids("<|endoftext|>")
    with torch.inference_mode():
        ref = m.model(input_ids=torch.tensor([ids])).last_hidden_state[0, -1]
    ref = torch.nn.functional.normalize(ref, dim=-1).numpy()
    assert np.allclose(ref, together[2], atol=1e-5)


def test_queries_get_the_instruction_documents_do_not():
    m = _model()
    q = m.embed_queries(["rain"])[0]
    d = m.embed_text(["rain"])[0]
    assert not np.allclose(q, d)
    wrapped = m.embed_text(["Instruct: " + m.task + "\nQuery:rain"])[0]
    assert np.array_equal(q, wrapped)
    ident = m.identity()
    assert ident["dtype"] == "fp32" and ident["policy"]["pooling"] == "last token"
    assert ident["revision"].startswith("sha256:")


def test_dtype_is_recorded_and_checked():
    m = load_model(NAME, model_path=str(tiny_qwen3_embedding_path()), dtype="bf16", batch_size=2)
    assert m.identity()["dtype"] == "bf16" and m.identity() != _model().identity()
    v = m.embed_text(["rain", "dog"])
    assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-3)
    with pytest.raises(ModelError, match="--dtype"):
        load_model(NAME, model_path=str(tiny_qwen3_embedding_path()), dtype="int8")
    with pytest.raises(ModelError, match="fp32 only"):
        load_model("minilm", dtype="bf16")


def test_missing_weights_name_the_hub_id_and_model_path(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelError) as err:
        load_model("qwen3-embedding-8b")
    assert "Qwen/Qwen3-Embedding-8B" in str(err.value) and "--model-path" in str(err.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="cannot load a Qwen3"):
        load_model(NAME, model_path=str(tmp_path / "empty"))


def test_cli_ingest_eval_and_cached_rerun(small_bench_dir, tmp_path, monkeypatch):
    from reasonaudio.cli import app

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = copy_bench(small_bench_dir, tmp_path / "bench")
    name = f"two-stage:oracle-caption+{NAME}"
    path = str(tiny_qwen3_embedding_path())
    runner = CliRunner()
    args = ["ingest", "--data", str(data), "--model", name, "--model-path", path, "--batch-size", "8"]
    first = runner.invoke(app, args, env={"COLUMNS": "160"})
    assert first.exit_code == 0, first.output
    assert "upserted now" in first.output
    out = tmp_path / "results.json"
    ev = runner.invoke(app, ["eval", "--data", str(data), "-r", name, "--model-path", path,
                             "--json", str(out)], env={"COLUMNS": "160"})
    assert ev.exit_code == 0, ev.output
    results = json.loads(out.read_text())
    assert name in json.dumps(results)

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.open import open_store

    bench = load_benchmark(data)
    with open_store(bench.root) as store:
        again = ingest_model(bench, store, name, IngestOptions(model_path=path, force=True))
        assert again.embedded == 0 and again.cache_hits == len(bench.clips)
        meta = store.meta(again.collection)
        ident = meta.extra["identity"]["embedder"]
        assert ident["policy"]["query_template"].startswith("Instruct:") and ident["dtype"] == "fp32"


def test_a_collection_keeps_its_dtype(small_bench_dir, tmp_path, monkeypatch):
    from model_fixtures import copy_bench

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.errors import StoreError
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.retrievers.two_stage import build_two_stage
    from reasonaudio.store.open import open_store

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    bench = load_benchmark(copy_bench(small_bench_dir, tmp_path / "bench"))
    name, path = f"two-stage:oracle-caption+{NAME}", str(tiny_qwen3_embedding_path())
    with open_store(bench.root) as store:
        first = ingest_model(bench, store, name, IngestOptions(model_path=path, limit=6))
        assert first.upserted == 6 and store.meta(first.collection).pooling.endswith(", fp32")
        with pytest.raises(StoreError, match="made differently"):
            ingest_model(bench, store, name, IngestOptions(model_path=path, limit=6, dtype="bf16"))
        with pytest.raises(StoreError, match="embedded in fp32.*--dtype fp32"):
            build_two_stage(name, bench, store, RetrieverOptions(model_path=path, dtype="bf16"))
        assert build_two_stage(name, bench, store, RetrieverOptions(model_path=path)).search("rain", 2)
