"""Embedded stores hold an inter-process lock (issue 14, item 3): a writer excludes others, a
reader never rebuilds what another process is writing, and the error names the holder.

Each test runs a second, real process that takes the lock and then waits on its stdin: the
handshake (a line it prints, a line we send) makes the interleaving exact, with no sleeps.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hostile import bench, one_line_error, small_build
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.store.collections import PAYLOAD_COLLECTION
from reasonaudio.store.open import embedded_path, open_store

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import sys
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.progress import Hooks
from reasonaudio.store.collections import PAYLOAD_COLLECTION, ingest_payload
from reasonaudio.store.open import open_store

role, data, backend = sys.argv[1:4]
bench = load_benchmark(data)
paused = []

def pause(what):
    print(what, flush=True)
    sys.stdin.readline()

def progress(done, total):
    if 0 < done < total and not paused:
        paused.append(done)
        pause("loading")          # mid-load: the collection says state=loading

if role == "ingest":               # `bench ingest --model none --force`, stopped half way
    with open_store(bench.root, backend, write=True) as store:
        hooks = Hooks(on_progress=lambda _label, done, total: progress(done, total))
        result = ingest_payload(bench, store, force=True, batch_size=16, hooks=hooks)
        print("done", store.count(PAYLOAD_COLLECTION), flush=True)
elif role == "read":               # a reader with the store open (an eval, a search)
    with open_store(bench.root, backend) as store:
        pause("reading")
elif role == "write":              # a writer that will be killed
    with open_store(bench.root, backend, write=True) as store:
        pause("writing")
"""


def _child(role: str, data: Path, backend: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, role, str(data), backend],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    return proc


def _expect(proc: subprocess.Popen, word: str, timeout: float = 120) -> None:
    """The child's next line (a handshake, not a timing assumption; the timeout only stops a
    broken child from hanging the suite)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        proc.kill()
        pytest.fail(f"child printed nothing in {timeout} s (expected {word!r})")
    line = proc.stdout.readline().strip()
    assert line == word, (line, proc.stderr.read() if proc.poll() is not None else "")


def _resume(proc: subprocess.Popen) -> str:
    out, err = proc.communicate("\n", timeout=120)
    assert proc.returncode == 0, err
    return out


@pytest.fixture()
def data(tmp_path) -> Path:
    return small_build(tmp_path / "b", clips=80, queries=10)


@pytest.mark.parametrize("backend", ["edge", "local"])
def test_search_never_rebuilds_a_collection_another_process_is_loading(data, backend):
    label = load_benchmark(data).labels[0]
    proc = _child("ingest", data, backend)
    try:
        _expect(proc, "loading")
        if backend == "edge":
            meta = embedded_path(data, "edge") / PAYLOAD_COLLECTION / "collection.json"
            assert json.loads(meta.read_text())["state"] == "loading"
        r = bench("search", label, "--data", data, "--backend", backend)
        one_line_error(r, f"pid {proc.pid}", "being written")
        out = _resume(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.split() == ["done", "80"]  # the ingest finished, undisturbed
    r = bench("search", label, "--data", data, "--backend", backend, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["hits"]


def test_writer_refused_while_another_process_reads(data):
    assert bench("ingest", "--data", data, "--model", "none").exit_code == 0
    proc = _child("read", data, "edge")
    try:
        _expect(proc, "reading")
        r = bench("ingest", "--data", data, "--model", "none", "--force")
        one_line_error(r, f"pid {proc.pid}", "in use by")
        _resume(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    with open_store(data) as store:  # the reader's collection is intact
        assert store.count(PAYLOAD_COLLECTION) == 80
    assert bench("ingest", "--data", data, "--model", "none", "--force").exit_code == 0


def test_holder_names_the_command(data):
    proc = _child("write", data, "edge")
    try:
        _expect(proc, "writing")
        from reasonaudio.errors import StoreError

        with pytest.raises(StoreError) as err:
            open_store(data)
        assert f"pid {proc.pid} (python" in str(err.value) and " -c ... write " in str(err.value)
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_writer_leaves_no_stale_lock(data):
    proc = _child("write", data, "edge")
    _expect(proc, "writing")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with open_store(data, write=True) as store:  # the kernel dropped the dead writer's lock
        assert store.collections() == []


def test_one_process_shares_its_lock_between_stores(data):
    with open_store(data) as reader, open_store(data, write=True) as writer:
        writer.collections()
        reader.collections()
    with open_store(data, write=True):
        pass
