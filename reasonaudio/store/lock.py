"""An inter-process reader/writer lock on a folder: an embedded store's, and a benchmark's.

A benchmark's writer lock (:func:`writes_benchmark`) is the same lock on the benchmark folder,
held alone by every command that writes into a benchmark (``bench interleave``, ``formulate``,
``eval``, ``tune``, ``detect``), so two of them never mix their files: the second
is refused with the first one's pid and command.

Qdrant Edge and qdrant-client's local mode keep their files under the benchmark, and nothing in
either stops a second process from deleting a collection the first is loading (a search that
found a collection ``loading`` used to rebuild it under a running ingest). So every embedded
store holds this lock for as long as it is open:

- readers share it; a writer (``bench ingest``, or a reader the moment it needs to write, e.g.
  to load the payload collection on first search) holds it alone;
- nobody waits: a conflict is a :class:`StoreError` naming the holder (pid and command);
- POSIX record locks (``fcntl``): the kernel drops them when the holder dies, kill -9 included,
  so a crashed command never leaves a stale lock; a shared lock becomes exclusive atomically.

POSIX locks belong to a process, not a file descriptor (closing any descriptor of the file
drops them all), so each process opens each lock file once and counts its users here.
"""

from __future__ import annotations

import fcntl
import functools
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import StoreError, echo

LOCK_NAME = ".reasonaudio.lock"
_FLOCK = "hhqqixxxx"
"""struct flock on Linux (l_type, l_whence, l_start, l_len, l_pid), for F_GETLK."""


@dataclass
class _Held:
    fd: int
    readers: int = 0
    writers: int = 0
    exclusive: bool = False


_HELD: dict[str, _Held] = {}
"""lock file path -> this process's descriptor and users."""


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    args = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    for i, arg in enumerate(args):  # "python .../bench ingest ..." -> "bench ingest ..."
        if Path(arg).name == "bench" or "reasonaudio.cli" in arg:
            return " ".join(["bench", *args[i + 1:]])
    if len(args) > 2 and args[1] == "-c":  # python -c CODE ARGS: the code is not the point
        args = [Path(args[0]).name, "-c", "...", *args[3:]]
    return " ".join(args)


def _who(fd: int) -> str | None:
    """Another process's lock on ``fd``'s file: ``pid N (command)``, or None if there is none."""
    try:
        probe = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        l_type, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, probe))
    except OSError:
        return None
    if l_type == fcntl.F_UNLCK:
        return None
    command = _command(pid)
    return f"pid {pid}" + (f" ({echo(command)})" if command else "")


def holder(folder: Path) -> str | None:
    """Who else holds the lock of the store in ``folder``, or None if nobody does."""
    path = Path(folder) / LOCK_NAME
    if not path.exists():
        return None
    held = _HELD.get(str(path.resolve()))
    if held is not None:  # never open a second descriptor: closing it would drop our lock
        return _who(held.fd)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return _who(fd)
    finally:
        os.close(fd)


class StoreLock:
    """One store object's share of the lock on ``folder`` (shared or exclusive)."""

    def __init__(self, folder: Path, what: str) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.what = what
        """the store, for messages (e.g. ``Qdrant Edge store``)"""
        self.mode: str | None = None
        """None (not held), "read" or "write"."""

    def acquire(self, write: bool = False) -> "StoreLock":
        """Take the lock shared (``write=False``) or alone; a StoreError names who is in the way."""
        if self.mode == "write" or (self.mode == "read" and not write):
            return self
        key = str(self.path.resolve()) if self.path.exists() else str(self.path.absolute())
        held = _HELD.get(key)
        if held is None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot open the store's lock file "
                                 f"({exc.strerror})") from None
            key = str(self.path.resolve())
            held = _HELD.setdefault(key, _Held(fd))
            if held.fd != fd:
                os.close(fd)
        want_exclusive = write or held.writers > 0
        if want_exclusive and not held.exclusive or (held.readers + held.writers == 0):
            self._set(held, exclusive=want_exclusive, write=write)
        if self.mode == "read":
            held.readers -= 1
        if write:
            held.writers += 1
        else:
            held.readers += 1
        self.mode = "write" if write else "read"
        self._key = key
        return self

    def _set(self, held: _Held, exclusive: bool, write: bool) -> None:
        try:
            fcntl.lockf(held.fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except OSError:
            who = _who(held.fd) or "another process"
            if held.readers + held.writers == 0:
                _HELD.pop(str(self.path.resolve()), None)
                os.close(held.fd)
            if exclusive:
                raise StoreError(f"{self.folder}: the {self.what} is in use by {who}; cannot write "
                                 "to it while another process reads or writes it (wait for it "
                                 "to finish)") from None
            raise StoreError(f"{self.folder}: the {self.what} is being written by {who}; wait "
                             "for it to finish") from None
        held.exclusive = exclusive
        if exclusive:  # say who writes, for tools that only read the file
            os.ftruncate(held.fd, 0)
            os.pwrite(held.fd, f"{os.getpid()} {_command(os.getpid())}\n".encode(), 0)

    def require_write(self) -> None:
        """Make this store's share exclusive before it changes anything (no-op if it already is)."""
        if self.mode != "write":
            self.acquire(write=True)

    def release(self) -> None:
        """This store's share back; the process's lock drops (or turns shared) with its last user."""
        if self.mode is None:
            return
        held = _HELD.get(self._key)
        self.mode, mode = None, self.mode
        if held is None:
            return
        if mode == "write":
            held.writers -= 1
        else:
            held.readers -= 1
        if held.readers + held.writers <= 0:
            del _HELD[self._key]
            os.close(held.fd)  # drops the process's lock
        elif held.writers == 0 and held.exclusive:
            fcntl.lockf(held.fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # downgrading never conflicts
            held.exclusive = False


F = TypeVar("F", bound=Callable[..., Any])


def writes_benchmark(func: F) -> F:
    """``func(BENCH, ...)`` (a benchmark, or its folder) runs holding that benchmark's writer
    lock alone; another process holding it is a StoreError naming it (pid and command)."""
    @functools.wraps(func)
    def holding(bench: BenchmarkView | str | os.PathLike[str], *args: Any, **kwargs: Any) -> Any:
        root = Path(bench if isinstance(bench, (str, os.PathLike)) else bench.root)
        if not root.is_dir() or not (os.access(root, os.W_OK) or (root / LOCK_NAME).is_file()):
            return func(bench, *args, **kwargs)  # missing: func says so; read-only: no writer
        lock = StoreLock(root, "benchmark").acquire(write=True)
        try:
            return func(bench, *args, **kwargs)
        finally:
            lock.release()
    return holding  # type: ignore[return-value]
