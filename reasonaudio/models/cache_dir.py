"""Where models keep derived files on disk, and safe extraction of bundled archives.

One cache root for the whole package (:func:`reasonaudio.runtime.cache_root`:
``REASONAUDIO_CACHE`` or the XDG cache), so a user can find and delete everything the models
wrote. Archive extraction follows docs/real-atoms.md: entries that would escape the destination
(absolute paths, ``..``, links) are refused, sizes are capped, and the result appears in one
rename, so an interrupted extraction never looks complete.
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from reasonaudio.errors import ModelError
from reasonaudio.runtime import cache_root  # noqa: F401  (the models' callers read it here)

DEFAULT_MAX_ENTRY_BYTES = 256 << 20
DEFAULT_MAX_TOTAL_BYTES = 512 << 20
DEFAULT_MAX_ENTRIES = 64


def _checked_name(name: str, archive: Path) -> PurePosixPath:
    """The entry's relative path, or ModelError when it could escape the destination."""
    if "\\" in name or "\x00" in name:
        raise ModelError(f"{archive}: refusing archive entry {name!r} (backslash or NUL in path)")
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ModelError(f"{archive}: refusing archive entry {name!r} (absolute path)")
    if any(part == ".." for part in path.parts):
        raise ModelError(f"{archive}: refusing archive entry {name!r} ('..' escapes the destination)")
    return path


def extract_zip_safely(archive: Path, dest: Path, *, max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
                       max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
                       max_entries: int = DEFAULT_MAX_ENTRIES) -> Path:
    """Extract ``archive`` into ``dest`` (created atomically; must not exist yet) and return it.

    Sizes are checked twice: the declared sizes before anything is written, and the bytes actually
    read while writing (a forged header cannot inflate past the cap).
    """
    archive, dest = Path(archive), Path(dest)
    try:
        zf = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{archive}: cannot open as a zip archive ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > max_entries:
            raise ModelError(f"{archive}: {len(infos)} entries, more than the cap of {max_entries}")
        total = 0
        for info in infos:
            _checked_name(info.filename, archive)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ModelError(f"{archive}: refusing archive entry {info.filename!r} (symbolic link)")
            if info.file_size > max_entry_bytes:
                raise ModelError(f"{archive}: entry {info.filename!r} is {info.file_size} bytes, "
                                 f"over the cap of {max_entry_bytes}")
            total += info.file_size
        if total > max_total_bytes:
            raise ModelError(f"{archive}: {total} bytes uncompressed, over the cap of {max_total_bytes}")

        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
        try:
            written = 0
            root = tmp.resolve()
            for info in infos:
                rel = _checked_name(info.filename, archive)
                target = (tmp / rel).resolve()
                if root != target and root not in target.parents:
                    raise ModelError(f"{archive}: refusing archive entry {info.filename!r} "
                                     "(resolves outside the destination)")
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                entry_written = 0
                with zf.open(info) as src, open(target, "wb") as out:
                    while block := src.read(1 << 20):
                        entry_written += len(block)
                        written += len(block)
                        if entry_written > max_entry_bytes or written > max_total_bytes:
                            raise ModelError(f"{archive}: entry {info.filename!r} inflates past "
                                             "the size cap")
                        out.write(block)
            try:
                tmp.rename(dest)
            except OSError:
                if not dest.is_dir():
                    raise
                shutil.rmtree(tmp, ignore_errors=True)  # a concurrent extraction won the race
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return dest
