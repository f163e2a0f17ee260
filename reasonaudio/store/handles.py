"""Process-wide, reference-counted handles to stores that lock their folder.

Qdrant Edge locks a shard's write-ahead log and qdrant-client's local mode locks its folder, so
one process may open each only once. Every store object of the process shares the one handle;
it is closed when its last user releases it, or at interpreter exit (before teardown, when the
libraries' own finalisers fail noisily).
"""

from __future__ import annotations

import atexit
import contextlib
from typing import Any, Callable, Generic, TypeVar

H = TypeVar("H")
"""the kind of handle (an Edge shard, a qdrant-client)"""


class SharedHandles(Generic[H]):
    def __init__(self, close: Callable[[H], None]) -> None:
        self._open: dict[str, list[Any]] = {}
        """key -> [handle, number of users]"""
        self._close = close
        atexit.register(self.close_all)

    def __contains__(self, key: str) -> bool:
        return key in self._open

    def peek(self, key: str) -> H:
        """The open handle for ``key`` (the caller already counts as a user)."""
        return self._open[key][0]

    def acquire(self, key: str, open_: Callable[[], H]) -> H:
        """The handle for ``key`` (opened with ``open_`` if none is), counting one more user."""
        entry = self._open.get(key)
        if entry is None:
            entry = self._open[key] = [open_(), 0]
        entry[1] += 1
        return entry[0]

    def release(self, key: str) -> None:
        """One user fewer; the last one closes the handle."""
        entry = self._open.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del self._open[key]
            self._close(entry[0])

    def drop(self, key: str) -> None:
        """Close the handle whatever its users (its collection was deleted)."""
        entry = self._open.pop(key, None)
        if entry is not None:
            self._close(entry[0])

    def close_all(self) -> None:
        """Exit path: close everything, reporting nothing (there is no one left to tell)."""
        while self._open:
            _, (handle, _users) = self._open.popitem()
            with contextlib.suppress(Exception):
                self._close(handle)
