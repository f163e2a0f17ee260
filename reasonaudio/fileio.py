"""Small file helpers: canonical JSON lines, hashes, and atomic directory/file writes.

Canonical JSON (sorted keys off, fixed separators, no NaN) keeps same-seed builds byte-identical.
Atomic writes build into a temporary sibling and rename, so an interrupted command never leaves
an artefact that looks complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

from reasonaudio.errors import DataError


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def write_jsonl(path: Path, rows: Iterable[Any]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(dumps(row))
            fh.write("\n")


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line; a bad line is a DataError naming path:line."""
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None


def read_jsonl(path: Path) -> list[Any]:
    return [value for _, value in iter_jsonl(path)]


def read_json(path: Path) -> Any:
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None


def write_json(path: Path, obj: Any) -> None:
    """Indented JSON, written atomically (a reader never sees half a file)."""
    with atomic_file(Path(path), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False) + "\n")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _plain_mode(path: Path, directory: bool) -> None:
    """mkstemp/mkdtemp create 0600/0700; give the published artefact the usual umask mode."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_umask())


@contextlib.contextmanager
def atomic_dir(dest: Path, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of ``dest``; on success it replaces ``dest`` in one rename."""
    dest = Path(dest)
    if dest.exists() and not overwrite:
        raise DataError(f"{dest}: already exists (pass --force to replace it)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
    try:
        yield tmp
        _plain_mode(tmp, directory=True)
        if dest.exists():
            old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
            dest.rename(old)
            tmp.rename(dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_file(dest: Path, mode: str = "w", **kwargs: Any) -> Iterator[Any]:
    """Open a temporary sibling for writing; rename over ``dest`` only after a clean close."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with open(tmp, mode, **kwargs) as fh:
            yield fh
        _plain_mode(tmp, directory=False)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
