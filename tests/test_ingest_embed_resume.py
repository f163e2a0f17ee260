"""Model ingest survives kill -9: a rerun ends with one point per clip and identical vectors."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from model_fixtures import copy_bench, stored_vectors, tiny_clap_path

N = 16

SCRIPT = textwrap.dedent("""
    import sys
    from reasonaudio.ingest import embed
    from reasonaudio.ingest.benchmark import load_benchmark
    from reasonaudio.store.open import open_store

    data, model_path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    real_put = embed.EmbeddingCache.put

    def put(self, key, array):  # one line per computed vector: the test kills on these
        real_put(self, key, array)
        print("vector", flush=True)

    embed.EmbeddingCache.put = put
    bench = load_benchmark(data)
    with open_store(bench.root) as store:
        real_upsert = store.upsert

        def upsert(name, points):
            real_upsert(name, points)
            print("upsert", len(points), flush=True)

        store.upsert = upsert
        embed.ingest_model(bench, store, "clap", model_path=model_path, limit=limit,
                           upsert_batch=4, progress=False)
    print("finished", flush=True)
""")


def _run(data: Path, env: dict, kill_after: int | None) -> bool:
    """Run the ingest; with ``kill_after``, SIGKILL it after that many output lines. True if it
    finished by itself."""
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(data), str(tiny_clap_path()), str(N)],
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


def test_kill_9_at_random_points_then_finish(small_bench_dir, tmp_path):
    from reasonaudio.ingest import embed
    from reasonaudio.ingest.benchmark import load_benchmark
    from reasonaudio.store.open import open_store

    env = dict(os.environ, REASONAUDIO_CACHE=str(tmp_path / "cache-killed"), HF_HUB_OFFLINE="1",
               PYTHONPATH=os.pathsep.join(sys.path))
    killed = copy_bench(small_bench_dir, tmp_path / "killed")
    rng = random.Random(7)
    for _ in range(3):  # each run does some work (cached or stored) before the kill
        finished = _run(killed, env, kill_after=rng.randint(1, 8))
        assert not finished
    assert _run(killed, env, kill_after=None)

    # reference: an uninterrupted in-process run with a cold cache of its own
    reference = copy_bench(small_bench_dir, tmp_path / "reference")
    os.environ["REASONAUDIO_CACHE"] = str(tmp_path / "cache-reference")
    try:
        bench = load_benchmark(reference)
        with open_store(bench.root) as store:
            summary = embed.ingest_model(bench, store, "clap", model_path=str(tiny_clap_path()),
                                         limit=N, progress=False)
        assert summary.embedded == N and summary.cache_hits == 0
    finally:
        os.environ.pop("REASONAUDIO_CACHE")

    got = stored_vectors(killed, "reasonaudio-clap")
    want = stored_vectors(reference, "reasonaudio-clap")
    assert sorted(got) == sorted(want) == [c.id for c in bench.clips[:N]]
    for cid in want:
        assert np.array_equal(got[cid], want[cid]), cid
    with open_store(killed) as store:
        meta = store.meta("reasonaudio-clap")
        assert meta.complete and store.count("reasonaudio-clap") == N
