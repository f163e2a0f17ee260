"""Reading an embedded store another process holds open: from a copy of its files.

Qdrant Edge locks a shard's write-ahead log for as long as one process has it open, with no
read-only mode, so a second explorer on the same benchmark cannot open the shards the first one
reads. The pages only read, so the second one copies the collections' folders (sparsely: Edge's
memory-mapped files are mostly holes) into a temporary folder, opens that copy, and says so on
the pages it serves. The copy is the store as it was when copied; it is deleted on close.
Writers are not affected: a command that changes the store takes the store's writer lock, which a
reading explorer's shared lock refuses, so nothing changes under the copy while the original runs.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from reasonaudio.store.lock import LOCK_NAME

CHUNK = 1 << 20


def _extents(fd: int, size: int) -> list[tuple[int, int]]:
    """The (start, end) byte ranges of a file that hold data (the whole file where the OS cannot
    say where its holes are)."""
    if not hasattr(os, "SEEK_DATA"):
        return [(0, size)]
    out, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole from here
                break
            return [(0, size)]
        end = os.lseek(fd, start, os.SEEK_HOLE)
        out.append((start, end))
        pos = end
    return out


def sparse_copy_file(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` keeping its holes."""
    size = src.stat().st_size
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for start, end in _extents(fin.fileno(), size):
            fin.seek(start)
            fout.seek(start)
            left = end - start
            while left > 0:
                block = fin.read(min(CHUNK, left))
                if not block:
                    break
                fout.write(block)
                left -= len(block)
        fout.truncate(size)
    shutil.copystat(src, dst)


def sparse_copy_tree(src: Path, dst: Path) -> None:
    """Copy the folder ``src`` to ``dst`` (files sparsely), leaving out lock files."""
    dst.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        if entry.name == LOCK_NAME or entry.is_symlink():
            continue
        if entry.is_dir():
            sparse_copy_tree(entry, dst / entry.name)
        elif entry.is_file():
            sparse_copy_file(entry, dst / entry.name)


class StoreCopy:
    """An Edge store's folder copied to a temporary folder and opened there (read-only use)."""

    def __init__(self, root: Path) -> None:
        from reasonaudio.store.edge import EdgeStore

        self.folder = Path(tempfile.mkdtemp(prefix="reasonaudio-explorer-store-"))
        self.taken = time.strftime("%H:%M:%S")
        try:
            sparse_copy_tree(Path(root), self.folder / "edge")
            self.store: Any = EdgeStore(self.folder / "edge")
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def close(self) -> None:
        try:
            self.store.close()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
