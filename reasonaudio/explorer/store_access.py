"""The explorer's one way into the benchmark's store: opened read-only on first use, never a 500.

A store that cannot be opened (none yet, a writer holding it, a server that does not answer) is a
note the pages that read it show; the pages that do not read it never notice. An Edge store whose
shards another process holds open (a second ``bench serve`` on the same benchmark: Edge locks a
shard's log and has no read-only mode) is read from a copy of its files (``store_copy``), and
the note says so and when the copy was taken.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from reasonaudio.errors import ReasonAudioError, StoreError, error_line
from reasonaudio.explorer.store_copy import StoreCopy
from reasonaudio.store.base import Store
from reasonaudio.store.open import embedded_path, open_store, resolve_backend

T = TypeVar("T")


class StoreAccess:
    """The store of one benchmark as the pages read it; callers hold ``lock``."""

    def __init__(self, root: Path, backend: str | None, url: str | None, lock: threading.RLock) -> None:
        self.root = root
        self.backend = backend
        self.url = url
        self.lock = lock
        self._store: Any = None
        self._copy: Any = None
        self.error: str | None = None
        """why the store cannot be read (None: it can)"""
        self.copy_note: str | None = None
        """set when the pages read a copy of the store (another process holds its shards)"""
        self._collections: list[tuple[str, Any]] | None = None

    def open(self) -> Store | None:
        """The store, opened read-only on first use (None, with :attr:`error`, when it cannot)."""
        if self._store is None and self.error is None:
            backend, _ = resolve_backend(self.backend, self.url)
            folder = embedded_path(self.root, backend)
            if backend != "server" and not folder.is_dir():  # opening would create it
                self.error = (f"no {backend} store in {folder.parent} yet "
                              "(bench ingest --data DIR --model none makes one)")
                return None
            try:
                self._store = open_store(self.root, self.backend, self.url)
            except ReasonAudioError as exc:
                self.error = error_line(exc)  # shown on pages: redacted
        return self._store

    def note(self) -> str | None:
        """What the pages say about the store: why it cannot be read, or that a copy is read."""
        self.open()
        return self.error or self.copy_note

    def read(self, call: Callable[[Any], T], empty: T) -> T:
        """``call(store)``; a store error switches to a copy once (Edge shards held elsewhere) and
        tries again, else it becomes :attr:`error` and ``empty`` is returned."""
        store = self.open()
        if store is None:
            return empty
        try:
            return call(store)
        except StoreError as exc:
            if self._switch_to_copy(exc):
                try:
                    return call(self._store)
                except ReasonAudioError as again:
                    exc = again  # type: ignore[assignment]
            self.error = error_line(exc)
            return empty

    def attempt(self, call: Callable[[], T]) -> T:
        """``call()`` (a retriever's search on :meth:`live`), again on the copy after a store error
        that switches to one; any other error is raised."""
        try:
            return call()
        except StoreError as exc:
            if self._switch_to_copy(exc):
                return call()
            raise

    def _switch_to_copy(self, exc: Exception) -> bool:
        if self._copy is not None or getattr(self._store, "backend", None) != "edge":
            return False
        try:
            self._copy = StoreCopy(embedded_path(self.root, "edge"))
        except (OSError, ReasonAudioError):
            return False
        self._store.close()
        self._store = self._copy.store
        self.copy_note = (f"another process holds this store open ({error_line(exc)}); these pages read "
                          f"a copy of its files taken at {self._copy.taken}")
        return True

    def live(self) -> LockedStore:
        """The store a retriever is built on: each call goes to the store the pages read now (the
        copy, once there is one), holding ``lock``."""
        return LockedStore(lambda: self._store, self.lock)

    def collections(self) -> list[tuple[str, Any]]:
        """(collection name, meta) of every complete collection (listed once)."""
        if self._collections is not None:
            return self._collections
        store = self.open()
        out = []
        for name in self.read(lambda s: sorted(s.collections()), []) if store is not None else ():
            try:
                meta = store.meta(name)
            except ReasonAudioError:
                continue
            if meta.complete:
                out.append((name, meta))
        self._collections = out
        return out

    def payloads(self, collection: str, fields: Sequence[str], clip_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """clip id -> the payload ``fields`` of those clips in ``collection`` (none when unreadable)."""
        found = self.read(lambda s: s.retrieve(collection, list(clip_ids), fields=tuple(fields)), [])
        return {str((f.payload or {}).get("clip_id", "")): dict(f.payload or {}) for f in found}

    def close(self) -> None:
        if self._copy is not None:
            self._copy.close()
        elif self._store is not None:
            self._store.close()
        self._store = self._copy = None


class LockedStore:
    """A store whose every call holds ``lock``: a retriever is built (its weights loaded) without
    holding the catalog's lock, so pages answer meanwhile, yet it reads the store one call at a
    time, as every page does. ``store`` is a callable: the store of the moment."""

    def __init__(self, store: Callable[[], Store | None], lock: threading.Lock) -> None:
        self._store = store
        self._lock = lock

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._store(), name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return getattr(self._store(), name)(*args, **kwargs)

        return call
