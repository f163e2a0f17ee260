"""Small file helpers: canonical JSON lines, hashes, and atomic directory/file writes.

Canonical JSON (sorted keys off, fixed separators, no NaN) keeps same-seed builds byte-identical.
Atomic writes build into a temporary sibling and rename, so an interrupted command never leaves
an artefact that looks complete.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from reasonaudio.errors import DataError
from reasonaudio.output_dirs import OutputKind, check_output_dir, check_replaceable_file
from reasonaudio.types import Pathlike


WRITE_ERRNOS = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
                errno.EFBIG: "file too large for the device or the file-size limit",
                errno.EROFS: "read-only file system", errno.EACCES: "permission denied",
                errno.EPERM: "operation not permitted", errno.ENOTDIR: "a parent is not a folder",
                errno.EISDIR: "is a folder", errno.ENOENT: "no such file or folder",
                errno.EEXIST: "already exists"}
"""Write failures the user's disk or paths cause (not bugs): each becomes a one-line DataError."""


def write_error(exc: OSError, path: Path | str) -> DataError:
    """A one-line DataError for a failed write, naming the file (the one the OS named, if any)."""
    reason = WRITE_ERRNOS.get(exc.errno or 0, exc.strerror)
    if exc.filename and Path(exc.filename) != Path(path):
        return DataError(f"{exc.filename}: {reason} (while writing {path})")
    return DataError(f"{path}: cannot write ({reason})")


def check_parent(dest: Path) -> None:
    """A DataError when something on the way to ``dest`` exists but is not a folder."""
    for parent in Path(dest).absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise DataError(f"{dest}: cannot write ({parent} is not a folder)")
            return


@contextlib.contextmanager
def writing(path: Pathlike) -> Iterator[None]:
    """Map a user-caused OSError (full disk, read-only folder, bad path) in the block to a DataError."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        raise write_error(exc, path) from None


@contextlib.contextmanager
def reading_text(path: Pathlike) -> Iterator[None]:
    """Map undecodable bytes in a text file read in the block to a DataError naming the file."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset "
                        f"{exc.start} of the chunk read)") from None


TEXT_ENCODING = "utf-8-sig"
"""How every text file a user hands us is read: UTF-8, a leading byte-order mark (which Windows
editors write) skipped. CRLF line ends are accepted the same way by the readers' line splitting."""


def read_text(path: Pathlike) -> str:
    """A whole UTF-8 text file (a BOM skipped); undecodable bytes are a DataError naming the file."""
    with reading_text(path):
        return Path(path).read_text(encoding=TEXT_ENCODING)


@contextlib.contextmanager
def open_text(path: Pathlike, newline: str | None = None) -> Iterator[Any]:
    """A UTF-8 text file open for reading line by line, as :func:`read_text` reads it (a BOM
    skipped; undecodable bytes a DataError naming the file)."""
    with reading_text(path), open(path, encoding=TEXT_ENCODING, newline=newline) as fh:
        yield fh


def dumps(obj: object) -> str:
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
    lineno = 0
    try:
        with open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.decode(TEXT_ENCODING if lineno == 1 else "utf-8")
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
                yield lineno, value
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}:{lineno}: not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} "
                        f"at column {exc.start + 1})") from None


def read_jsonl(path: Path) -> list[Any]:
    return [value for _, value in iter_jsonl(path)]


def read_json(path: Path) -> Any:
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None


def write_json(path: Path, obj: object) -> None:
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


def partial_prefix(dest: Path) -> str:
    """Name start of ``dest``'s work folders: ``.NAME.partial-PID-...`` (PID: the writer)."""
    return f".{Path(dest).name}.partial-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_partials(dest: Path) -> list[Path]:
    """Work folders of ``dest`` left by writers that died (killed builds): their PID is gone,
    or they predate PIDs in the name. A live writer's folder is never listed."""
    dest = Path(dest)
    if not dest.parent.is_dir():
        return []
    prefix = partial_prefix(dest)
    out = []
    for path in sorted(dest.parent.glob(f"{glob.escape(prefix)}*")):
        pid = path.name[len(prefix):].split("-", 1)[0]
        if not (pid.isdigit() and _alive(int(pid))) and path.is_dir() and not path.is_symlink():
            out.append(path)
    return out


def remove_stale_partials(dest: Path) -> list[Path]:
    """Remove :func:`stale_partials` of ``dest``; returns what was removed (for the caller to say)."""
    removed = []
    for path in stale_partials(dest):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    return removed


def clear_stale_partials(dest: Path, what: str, notify: Callable[[str], None] | None = None) -> list[Path]:
    """What every atomic folder writer (build, export, training) does before it starts: remove
    the work folders of ``dest`` that killed writers left (:func:`remove_stale_partials`), saying
    each through ``notify`` ("removed X, left by an interrupted WHAT of NAME")."""
    removed = remove_stale_partials(dest)
    for stale in removed:
        if notify:
            notify(f"removed {stale}, left by an interrupted {what} of {Path(dest).name}")
    return removed


@contextlib.contextmanager
def atomic_dir(dest: Path, kind: OutputKind, force: bool = False, protect: Sequence[Path | str] = (),
               owned: Sequence[Path | str] = ()) -> Iterator[Path]:
    """Yield a temporary sibling of ``dest``; on success it replaces ``dest`` in one rename.

    What may be written or replaced is :func:`reasonaudio.output_dirs.check_output_dir`'s rule
    for ``kind`` (checked on entry and again just before the rename, so a folder that appeared or
    changed meanwhile is not swept away)."""
    dest = Path(dest)
    check_output_dir(dest, kind, force, protect, owned)
    check_parent(dest)
    with writing(dest):
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=partial_prefix(dest) + f"{os.getpid()}-", dir=dest.parent))
    try:
        with writing(dest):
            yield tmp
            _plain_mode(tmp, directory=True)
            check_output_dir(dest, kind, force, protect, owned)
            if dest.exists():
                old = dest.with_name(f"{partial_prefix(dest)}{os.getpid()}-old")
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
    """Open a temporary sibling for writing; rename over ``dest`` only after a clean close.

    A ``dest`` that exists and is not a regular file (a folder, a device, a FIFO) is refused, on
    entry and again before the rename (:func:`reasonaudio.output_dirs.check_replaceable_file`)."""
    dest = Path(dest)
    check_replaceable_file(dest)
    check_parent(dest)
    with writing(dest):
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with writing(dest):
            with open(tmp, mode, **kwargs) as fh:
                yield fh
            _plain_mode(tmp, directory=False)
            check_replaceable_file(dest)
            os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
