"""The embedding cache: arrays on disk keyed by content hash, one file per model identity.

Everything computed from audio is keyed by the sha256 of the rendered samples, everything computed
from text by the text's sha256, so a rerun (or another build with the same audio) recomputes
nothing, and a change of weights or policy can never be served stale vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import sqlite3
import threading
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from reasonaudio.errors import DataError, ModelError
from reasonaudio.models.cache_dir import cache_root

CACHE_SCHEMA = 1


def audio_hash(wave: np.ndarray) -> str:
    """sha256 of the rendered float32 samples: the cache key of everything computed from audio."""
    return hashlib.sha256(np.ascontiguousarray(wave, dtype=np.float32).tobytes()).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def identity_digest(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _pack(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return zlib.compress(buf.getvalue(), 1)


def _unpack(blob: bytes) -> np.ndarray:
    return np.load(io.BytesIO(zlib.decompress(blob)), allow_pickle=False)


class EmbeddingCache:
    """Arrays on disk keyed by content hash, one SQLite file per (model, exact weights, policy).

    The namespace is a digest of the model's identity, so a new revision or window policy can
    never be served stale vectors. SQLite in WAL mode: a ``kill -9`` loses at most the rows not
    yet committed, never the file.
    """

    def __init__(self, label: str, identity: dict[str, Any], root: Path | None = None,
                 enabled: bool = True) -> None:
        self.enabled = enabled
        self.identity = identity
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")
        self.path = Path(root or cache_root()) / "embeddings" / f"{slug}-{identity_digest(identity)}.sqlite"
        self.hits = 0
        self.misses = 0
        self._pending: list[tuple[str, bytes]] = []
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()  # the render thread asks contains() while the main thread writes
        if enabled:
            self._open()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None,
                                 check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS arrays (k TEXT PRIMARY KEY, v BLOB NOT NULL)")
            want = json.dumps({"schema": CACHE_SCHEMA, "identity": self.identity}, sort_keys=True, default=str)
            row = db.execute("SELECT v FROM meta WHERE k='identity'").fetchone()
            if row is None:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('identity', ?)", (want,))
            elif row[0] != want:
                raise ModelError(f"{self.path}: embedding cache made for another model identity; "
                                 "delete the file")
        except sqlite3.DatabaseError as exc:
            raise ModelError(f"{self.path}: unreadable embedding cache ({exc}); delete the file") from None
        self._db = db

    def _blob(self, key: str) -> bytes | None:
        with self._lock:
            if self._db is None:
                return None
            row = self._db.execute("SELECT v FROM arrays WHERE k=?", (key,)).fetchone()
            if row is not None:
                return row[0]
            for k, blob in self._pending:
                if k == key:
                    return blob
            return None

    def contains(self, key: str) -> bool:
        """Whether ``key`` is cached (no hit counted; safe from the render thread)."""
        return self.enabled and self._blob(key) is not None

    def get(self, key: str) -> np.ndarray | None:
        blob = self._blob(key) if self.enabled else None
        if blob is None:
            self.misses += 1
            return None
        self.hits += 1
        return _unpack(blob)

    def put(self, key: str, array: np.ndarray) -> None:
        if self.enabled:
            packed = _pack(array)
            with self._lock:
                self._pending.append((key, packed))
            if len(self._pending) >= 256:
                self.commit()

    def commit(self) -> None:
        with self._lock:
            if self._db is None or not self._pending:
                return
            with contextlib.suppress(sqlite3.OperationalError):
                self._db.execute("BEGIN")
            try:
                self._db.executemany("INSERT OR REPLACE INTO arrays VALUES (?, ?)", self._pending)
                self._db.execute("COMMIT")
            except sqlite3.OperationalError as exc:  # disk full, read-only: the user's disk, not a bug
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                raise DataError(f"{self.path}: cannot write the embedding cache ({exc}); free "
                                "space, or pass --no-cache") from None
            self._pending.clear()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self.commit()
                self._db.close()
                self._db = None
