"""What the Ray tests share: a local Ray sized for a 2-core machine, the processes a run leaves,
and the cache rows two runs filled."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

LOCAL_RAY = dict(num_cpus=2, object_store_memory=500 * 1024 * 1024, include_dashboard=False)
"""The tests' Ray: 2 logical CPUs, a 500 MB object store, no dashboard; its system config is the
engine's own local Ray's (workers at the test process's priority)."""
POOL = dict(workers=2, cpus_per_worker=0.5, render_cpus=0.5, batch_clips=8)
"""Two model actors and a render task on 2 CPUs; small batches so a job has many."""


@contextlib.contextmanager
def started_local_ray(*by_value: ModuleType) -> Iterator[Any]:
    """A local Ray (:data:`LOCAL_RAY`), shut down afterwards; no Ray process of this test
    process may be left then. ``by_value``: modules Ray pickles by value (test helpers the
    workers cannot import)."""
    import ray
    import ray.cloudpickle

    before = ray_processes(descendants(os.getpid()))
    for module in by_value:
        ray.cloudpickle.register_pickle_by_value(module)
    from reasonaudio.ingest.ray_engine import LOCAL_SYSTEM_CONFIG

    ray.init(log_to_driver=False, runtime_env={"env_vars": {"OMP_WAIT_POLICY": "PASSIVE"}},
             _system_config=LOCAL_SYSTEM_CONFIG, **LOCAL_RAY)
    try:
        yield ray
    finally:
        ray.shutdown()
        left = wait_gone(ray_processes(descendants(os.getpid())) - before)
        assert not left, f"Ray processes left behind: {sorted(left)}"


class SharedRay:
    """The one local Ray of the Ray test modules (they run one after another, on one worker:
    tests/xdist_schedule.py): :meth:`get` starts it for the first test that asks and hands it to
    the tests after it; :meth:`stop` shuts it down (conftest: before a test of a module that does
    not use it, and at the session's end), checking that none of its processes is left."""

    def __init__(self) -> None:
        self._started: contextlib.AbstractContextManager | None = None
        self._ray: Any = None

    def get(self, module: ModuleType) -> Any:
        """The running Ray, started if need be; ``module`` (a test module the workers cannot
        import) is pickled by value."""
        if self._started is None:
            started = started_local_ray()
            self._ray = started.__enter__()
            self._started = started
        self._ray.cloudpickle.register_pickle_by_value(module)
        return self._ray

    def stop(self) -> None:
        started, self._started, self._ray = self._started, None, None
        if started is not None:
            started.__exit__(None, None, None)


SHARED = SharedRay()


def descendants(root: int) -> set[int]:
    """Pids of every live process below ``root`` (read from /proc: no extra dependency)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] == "Z":  # a zombie is gone, only not yet reaped
            continue
        parents[int(entry)] = int(fields[1])
    out: set[int] = set()
    frontier = {root}
    while frontier:
        kids = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in out}
        out |= kids
        frontier = kids
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def ray_processes(pids: set[int]) -> set[int]:
    return {p for p in pids if any(k in cmdline(p) for k in ("ray::", "raylet", "gcs_server", "ray/"))}


def niceness(pid: int) -> int:
    """A process's nice value (``/proc/PID/stat``'s 19th field)."""
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[16])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids: set[int], seconds: float = 30.0) -> set[int]:
    """The pids still alive after waiting up to ``seconds`` for them to exit."""
    deadline = time.monotonic() + seconds
    left = {p for p in pids if alive(p)}
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = {p for p in left if alive(p)}
    return left


def cache_rows(cache_dir: Path) -> dict[str, dict[str, bytes]]:
    """Every embedding cache file under ``cache_dir``: file name -> key -> stored bytes."""
    out: dict[str, dict[str, bytes]] = {}
    for path in sorted((Path(cache_dir) / "embeddings").glob("*.sqlite")):
        db = sqlite3.connect(str(path))
        try:
            out[path.name] = dict(db.execute("SELECT k, v FROM arrays").fetchall())
        finally:
            db.close()
    return out

