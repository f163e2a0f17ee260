"""``--engine ray`` under a noisy condition and for ``bench detect``'s frame pass (issue 25):
the render tasks render with the local engine's ConditionRenderer, reinstated per worker from the
benchmark and its condition, so a Ray ``snr5`` ingest of YAMNet equals the local one bit for bit;
the frame pass through Ray returns the local reader's rows and fills the same caches.

The Ray modules' one local Ray (conftest's ``local_ray``: 2 CPUs, a 500 MB object store, no
dashboard), shut down after the last of them, after which no Ray process of this test process
may be left."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from model_fixtures import copy_bench, stored_vectors
from ray_helpers import POOL, cache_rows

ray = pytest.importorskip("ray", reason="the ray extra is part of the test install")
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray at a time (xdist_schedule.py)

TONAL = ("sine tone", "string pluck", "square buzz", "sawtooth drone", "major chord", "beeping",
         "drum hits", "vowel", "cowbell")
"""synthetic classes no background bed sounds like (the build's tagger check admits the beds)"""
N_CLIPS = 12
"""two Ray blocks of 6, one per actor: each check holds clip by clip, and every clip is rendered
and tagged once per engine and condition, so more clips only cost time"""
CONDITION = "snr5"


@pytest.fixture(scope="module")
def noisy_build(tmp_path_factory) -> Path:
    """A 12-clip build of a folder bank of tonal synthetic classes, conditions clean and snr5
    recorded (with the bed check) in its manifest. Read-only."""
    from reasonaudio.atoms.registry import open_bank
    from reasonaudio.generator.build import BuildParams, build_benchmark

    root = tmp_path_factory.mktemp("tonal-bank")
    bank = open_bank("synthetic")
    for label in [lab for lab in bank.labels if any(word in lab for word in TONAL)][:20]:
        x, sr = bank.load(bank.by_label[label][0].atom_id)
        (root / label.replace(" ", "_")).mkdir()
        sf.write(str(root / label.replace(" ", "_") / "a.wav"), x, sr, subtype="PCM_16")
    out = tmp_path_factory.mktemp("bench") / "noisy"
    build_benchmark(out, BuildParams(atoms=str(root), seed=0, n_clips=N_CLIPS, n_queries=5,
                                     conditions=f"clean,{CONDITION}"))
    return out


def _bench(data: Path):
    from reasonaudio.dataset.view import load_benchmark

    return load_benchmark(data).with_condition(CONDITION)


def _engine():
    from reasonaudio.ingest.ray_engine import RayEngine, RayOptions

    return RayEngine(RayOptions(**POOL))


def _ingest(data: Path, cache_dir: Path, engine=None):
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.open import open_store

    bench = _bench(data)
    with open_store(bench.root, write=True) as store:
        return ingest_model(bench, store, "yamnet", IngestOptions(cache_dir=cache_dir, engine=engine))


def test_a_noisy_yamnet_ingest_through_ray_equals_the_local_one_bit_for_bit(local_ray, noisy_build,
                                                                             tmp_path):
    from reasonaudio.store.open import open_store

    name = f"reasonaudio-yamnet.{CONDITION}"
    local_dir = copy_bench(noisy_build, tmp_path / "local")
    ray_dir = copy_bench(noisy_build, tmp_path / "ray")
    want = _ingest(local_dir, tmp_path / "cache-local")
    got = _ingest(ray_dir, tmp_path / "cache-ray", engine=_engine())
    assert got.collection == want.collection == name
    assert (got.upserted, got.embedded, got.cache_hits) == (want.upserted, want.embedded,
                                                            want.cache_hits) == (N_CLIPS, N_CLIPS, 0)
    assert got.adjustments == want.adjustments
    vec_got, vec_want = stored_vectors(ray_dir, name), stored_vectors(local_dir, name)
    assert sorted(vec_got) == sorted(vec_want) and len(vec_got) == N_CLIPS
    for cid in vec_want:
        assert np.array_equal(vec_got[cid], vec_want[cid]), cid  # bit for bit
    with open_store(ray_dir) as a, open_store(local_dir) as b:
        assert a.meta(name) == b.meta(name) and a.meta(name).complete  # the condition recorded
        assert a.meta(name).extra["condition"]["condition"]["name"] == CONDITION
        pa = {f.clip_id: f.payload for f in a.scroll(name, fields=True)}
        assert pa == {f.clip_id: f.payload for f in b.scroll(name, fields=True)}
    # the frames and the clip -> audio hash index are keyed by the noisy audio, as locally
    assert cache_rows(tmp_path / "cache-ray") == cache_rows(tmp_path / "cache-local")
    # and the noisy audio is not the clean audio: a clean ingest into the same cache computes
    # anew (a property of the cache's keys, so on the local engine: the clean Ray path is
    # test_ray_engine's, and a Ray job here would only add its actors' start-up)
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model

    clean = load_benchmark(ray_dir)
    with open_store(clean.root, write=True) as store:
        again = ingest_model(clean, store, "yamnet", IngestOptions(cache_dir=tmp_path / "cache-ray"))
    assert again.collection == "reasonaudio-yamnet" and again.cache_hits == 0
    assert not np.array_equal(stored_vectors(ray_dir, "reasonaudio-yamnet")["clip-00001"],
                              vec_got["clip-00001"])


def test_the_detect_frame_pass_through_ray_equals_the_local_reader(local_ray, noisy_build, tmp_path):
    """Cold caches: Ray renders (under snr5) and tags every clip; rows, how each was served and
    every cache row equal the local reader's. Warm: every clip comes from the index, Ray is not
    even started."""
    from reasonaudio.detect.clip_frames import clip_frames, load_tagger

    tagger = load_tagger()
    bench = _bench(noisy_build)
    want = clip_frames(bench, tagger=tagger, cache_dir=tmp_path / "cache-local")
    engine = _engine()
    got = clip_frames(bench, tagger=tagger, cache_dir=tmp_path / "cache-ray", engine=engine)
    assert sorted(got.probs) == sorted(want.probs) and len(got.probs) == N_CLIPS
    for cid in want.probs:
        assert np.array_equal(got.probs[cid], want.probs[cid]), cid
    keys = ("clips", "from_index", "rendered", "cached_rows", "tagged")
    assert {k: getattr(got.stats, k) for k in keys} == {k: getattr(want.stats, k) for k in keys}
    assert got.stats.tagged == N_CLIPS and engine.startup["actors"]  # the pool did the work
    assert cache_rows(tmp_path / "cache-ray") == cache_rows(tmp_path / "cache-local")
    warm_engine = _engine()
    warm = clip_frames(bench, tagger=tagger, cache_dir=tmp_path / "cache-ray", engine=warm_engine)
    assert warm.stats.from_index == N_CLIPS and warm.stats.tagged == 0
    assert "ray_start_s" not in warm_engine.startup
    for cid in want.probs:
        assert np.array_equal(warm.probs[cid], want.probs[cid]), cid


def test_detect_ray_flags_without_the_ray_engine_are_one_line_exit_2(noisy_build):
    from typer.testing import CliRunner

    from reasonaudio.cli import app

    result = CliRunner().invoke(app, ["detect", "--data", str(noisy_build), "--workers", "2"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: --workers needs --engine ray"]
