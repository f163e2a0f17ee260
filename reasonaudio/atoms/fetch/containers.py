"""Readers for the archives and containers that hold the recordings, with docs/real-atoms.md's safety rules.

Only the entries a recipe names are read. Every entry name is checked before it is used
(absolute paths, ``..``, backslashes and NUL are refused), links and special files are refused,
and every read is capped in bytes, checked against the declared size *and* the bytes actually
produced, so a forged header cannot inflate past the cap. Output paths are always inside the
destination the caller gives.

Formats:

* ``.deb``: an ``ar`` archive holding ``data.tar.{xz,gz,bz2,zst}``; read with Python's ``tarfile``
  (zstd through ``dpkg-deb --fsys-tarfile`` when present, as an argument list, never a shell).
* npm ``.tgz`` and any tar: the same streaming member reader.
* zip (PyPI wheels, ``.pk3``, 0 A.D. ``public.zip``): ``zipfile``, one entry at a time.
* Qt ``.rcc`` (GCompris): magic ``qres``, big-endian header, tree of 14/22-byte nodes, UTF-16BE
  names, data blocks with a u32 size; zlib blocks start with a 4-byte uncompressed size.
* OpenTTD ``opensfx.cat``: little-endian (offset, size) pairs, count = first offset / 8; each entry
  is a u8 name length, the name, then a RIFF/WAV.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import shutil
import stat
import struct
import subprocess
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Iterable, Iterator

from reasonaudio.atoms.fetch.errors import FetchError, UnsafeEntryError

MAX_ENTRY_BYTES = 64 << 20
"""Cap for one sound file read out of a container."""
MAX_MEMBER_BYTES = 512 << 20
"""Cap for one member written out of a package (the FluidR3 soundfont is 148 MB)."""
MAX_CONTAINER_BYTES = 256 << 20
"""Cap for an ``.rcc`` or ``.cat`` file read whole into memory."""
MAX_CAT_ENTRIES = 4096
MAX_RCC_NODES = 1 << 20
MAX_RCC_DEPTH = 64


# --- names and paths --------------------------------------------------------------------------

def check_member_name(name: str, where: str) -> str:
    """The entry's relative POSIX path (leading ``./`` dropped) or :class:`UnsafeEntryError`."""
    if not isinstance(name, str) or not name.strip("/."):
        raise UnsafeEntryError(f"{where}: refusing entry {name!r} (empty name)")
    if "\\" in name or "\x00" in name:
        raise UnsafeEntryError(f"{where}: refusing entry {name!r} (backslash or NUL in path)")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UnsafeEntryError(f"{where}: refusing entry {name!r} (absolute path)")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafeEntryError(f"{where}: refusing entry {name!r} ('..' escapes the destination)")
    if not parts:
        raise UnsafeEntryError(f"{where}: refusing entry {name!r} (empty name)")
    return "/".join(parts)


def _stripped(name: str) -> str:
    """A member name as a recipe would spell it, for reporting refused entries by their target."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    return "/".join(parts)


def safe_join(dest: Path, rel: str, where: str) -> Path:
    """``dest / rel`` after checking ``rel`` and that the result stays inside ``dest``."""
    rel = check_member_name(rel, where)
    root = Path(dest).resolve()
    target = (root / rel).resolve()
    if target == root or root not in target.parents:
        raise UnsafeEntryError(f"{where}: refusing entry {rel!r} (resolves outside the destination)")
    return target


def _copy_capped(src: IO[bytes], out: IO[bytes], cap: int, where: str, name: str) -> int:
    written = 0
    while block := src.read(1 << 20):
        written += len(block)
        if written > cap:
            raise UnsafeEntryError(f"{where}: entry {name!r} inflates past the size cap of {cap} bytes")
        out.write(block)
    return written


# --- ar (.deb) --------------------------------------------------------------------------------

class _Slice(io.RawIOBase):
    """A read-only window ``[start, start + size)`` of an open binary file."""

    def __init__(self, fh: IO[bytes], start: int, size: int) -> None:
        self._fh, self._start, self._size, self._pos = fh, start, size, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray) -> int:  # type: ignore[override]
        n = min(len(buf), self._size - self._pos)
        if n <= 0:
            return 0
        self._fh.seek(self._start + self._pos)
        data = self._fh.read(n)
        buf[:len(data)] = data
        self._pos += len(data)
        return len(data)


def ar_members(path: Path) -> list[tuple[str, int, int]]:
    """``(name, data offset, size)`` of every member of an ``ar`` archive (a ``.deb``)."""
    where = str(path)
    out = []
    with open(path, "rb") as fh:
        if fh.read(8) != b"!<arch>\n":
            raise FetchError(f"{where}: not a Debian package (no ar magic)")
        total = os.fstat(fh.fileno()).st_size
        pos = 8
        while pos + 60 <= total:
            fh.seek(pos)
            header = fh.read(60)
            if header[58:60] != b"`\n":
                raise FetchError(f"{where}: corrupt ar header at byte {pos}")
            name = header[:16].decode("ascii", "replace").strip().rstrip("/")
            try:
                size = int(header[48:58].decode("ascii").strip())
            except ValueError:
                raise FetchError(f"{where}: corrupt ar member size at byte {pos}") from None
            if size < 0 or pos + 60 + size > total:
                raise FetchError(f"{where}: ar member {name!r} runs past the end of the file")
            out.append((name, pos + 60, size))
            pos += 60 + size + (size & 1)
    return out


def _open_deb_tar(path: Path, stack: list) -> tarfile.TarFile:
    where = str(path)
    members = [m for m in ar_members(path) if m[0].startswith("data.tar")]
    if len(members) != 1:
        raise FetchError(f"{where}: expected one data.tar member, found {len(members)}")
    name, start, size = members[0]
    fh = open(path, "rb")
    stack.append(fh)
    raw = io.BufferedReader(_Slice(fh, start, size), buffer_size=1 << 20)
    if name == "data.tar":
        stream: IO[bytes] = raw
    elif name.endswith(".xz") or name.endswith(".lzma"):
        stream = lzma.LZMAFile(raw)
    elif name.endswith(".gz"):
        stream = gzip.GzipFile(fileobj=raw)
    elif name.endswith(".bz2"):
        stream = bz2.BZ2File(raw)
    elif name.endswith(".zst"):
        stream = _zstd_stream(path, raw, stack)
    else:
        raise FetchError(f"{where}: unsupported package compression {name!r}")
    stack.append(stream)
    return tarfile.open(fileobj=stream, mode="r|")


def _zstd_stream(path: Path, raw: IO[bytes], stack: list) -> IO[bytes]:
    try:
        import zstandard  # type: ignore[import-not-found]

        return zstandard.ZstdDecompressor().stream_reader(raw)
    except ImportError:
        pass
    exe = shutil.which("dpkg-deb")
    if exe is None:
        raise FetchError(f"{path}: data.tar.zst needs the 'zstandard' Python package or dpkg-deb")
    proc = subprocess.Popen([exe, "--fsys-tarfile", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    stack.append(proc)
    assert proc.stdout is not None
    return proc.stdout


@dataclass
class MemberResult:
    """What became of one wanted member: its extracted path, or the reason it was refused."""
    name: str
    path: Path | None = None
    error: str | None = None


def extract_members(archive: Path, wanted: Iterable[str], dest: Path, *,
                    kind: str | None = None,
                    max_member_bytes: int = MAX_MEMBER_BYTES) -> dict[str, MemberResult]:
    """Extract the ``wanted`` regular files of a ``.deb`` or tar(.gz) into ``dest``, one pass.

    Returns one :class:`MemberResult` per wanted name; names never seen get ``error="not in
    package"``. Reading stops once every wanted file is extracted (a compressed stream is not
    unpacked past its last wanted member). Links, devices, absolute or ``..`` names and oversize
    members are refused per member (the rest still extract). ``kind`` is ``deb`` or ``tar``;
    guessed from the suffix.
    """
    archive, dest = Path(archive), Path(dest)
    where = str(archive)
    want = {check_member_name(w, f"{where} (recipe path)") for w in wanted}
    results: dict[str, MemberResult] = {w: MemberResult(w) for w in want}
    kind = kind or ("deb" if archive.suffix == ".deb" else "tar")
    stack: list = []
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if kind == "deb":
            tf = _open_deb_tar(archive, stack)
        else:
            try:
                tf = tarfile.open(archive, mode="r|*")
            except (tarfile.TarError, OSError) as exc:
                raise FetchError(f"{where}: cannot open as a tar archive ({exc})") from None
        stack.append(tf)
        try:
            for member in tf:
                try:
                    rel = check_member_name(member.name, where)
                except UnsafeEntryError as exc:
                    target = _stripped(member.name)
                    if target in results and results[target].path is None:
                        results[target].error = str(exc)
                    continue
                if rel not in results:
                    continue
                res = results[rel]
                if member.issym() or member.islnk():
                    res.error = (f"{where}: refusing entry {rel!r} (link to "
                                 f"{member.linkname!r}; links are not followed)")
                    continue
                if not member.isfile():
                    res.error = f"{where}: refusing entry {rel!r} (not a regular file)"
                    continue
                if member.size > max_member_bytes:
                    res.error = (f"{where}: entry {rel!r} is {member.size} bytes, over the cap of "
                                 f"{max_member_bytes}")
                    continue
                target_path = safe_join(dest, rel, where)
                target_path.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(member)
                if src is None:
                    res.error = f"{where}: cannot read entry {rel!r}"
                    continue
                with open(target_path, "wb") as out:
                    _copy_capped(src, out, max_member_bytes, where, rel)
                res.path, res.error = target_path, None
                if all(r.path is not None for r in results.values()):
                    break  # every wanted file is out: the rest of the stream need not be unpacked
        except (tarfile.TarError, EOFError, lzma.LZMAError, OSError, zlib.error) as exc:
            raise FetchError(f"{where}: corrupt archive ({exc})") from None
    finally:
        for obj in reversed(stack):
            if isinstance(obj, subprocess.Popen):
                obj.kill()
                obj.wait()
            else:
                try:
                    obj.close()
                except Exception:  # closing a half-read stream must not hide the real error
                    pass
    for res in results.values():
        if res.path is None and res.error is None:
            res.error = f"{where}: no entry {res.name!r} in the package"
    return results


# --- zip --------------------------------------------------------------------------------------

def read_zip_entry(archive: Path, entry: str, max_bytes: int = MAX_ENTRY_BYTES) -> bytes:
    """The bytes of one regular-file entry of a zip (wheel, ``.pk3``), with checks and a cap."""
    where = str(archive)
    name = check_member_name(entry, f"{where} (recipe entry)")
    try:
        zf = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as exc:
        raise FetchError(f"{where}: cannot open as a zip archive ({exc})") from None
    with zf:
        matches = [i for i in zf.infolist() if i.filename == name]
        if not matches:
            raise FetchError(f"{where}: no entry {name!r} in the archive")
        if len(matches) > 1:
            raise UnsafeEntryError(f"{where}: entry {name!r} appears {len(matches)} times")
        info = matches[0]
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise UnsafeEntryError(f"{where}: refusing entry {name!r} (symbolic link)")
        if info.is_dir():
            raise FetchError(f"{where}: entry {name!r} is a directory")
        if info.flag_bits & 0x1:
            raise FetchError(f"{where}: entry {name!r} is encrypted")
        if info.file_size > max_bytes:
            raise UnsafeEntryError(f"{where}: entry {name!r} is {info.file_size} bytes, over the cap "
                                   f"of {max_bytes}")
        out = io.BytesIO()
        try:
            with zf.open(info) as src:
                _copy_capped(src, out, max_bytes, where, name)
        except (zipfile.BadZipFile, zlib.error, OSError) as exc:
            raise FetchError(f"{where}: cannot read entry {name!r} ({exc})") from None
        return out.getvalue()


def zip_names(archive: Path) -> list[str]:
    """Every regular-file name in a zip (for exploring a package; unsafe names left out)."""
    with zipfile.ZipFile(archive) as zf:
        out = []
        for info in zf.infolist():
            try:
                out.append(check_member_name(info.filename, str(archive)))
            except UnsafeEntryError:
                continue
        return out


# --- Qt resource files (.rcc) -----------------------------------------------------------------

def _read_capped(path: Path, cap: int) -> bytes:
    size = Path(path).stat().st_size
    if size > cap:
        raise UnsafeEntryError(f"{path}: {size} bytes, over the cap of {cap}")
    return Path(path).read_bytes()


class RccArchive:
    """A compiled Qt resource file; :meth:`read` returns one file's bytes by its resource path."""

    DIR, ZLIB, ZSTD = 0x02, 0x01, 0x04

    def __init__(self, data: bytes, where: str = "<rcc>") -> None:
        self.where = where
        self.data = data
        if len(data) < 20 or data[:4] != b"qres":
            raise FetchError(f"{where}: not a Qt resource file (no 'qres' magic)")
        self.version, self.tree, self.payload, self.names = struct.unpack(">IIII", data[4:20])
        if self.version not in (1, 2, 3):
            raise FetchError(f"{where}: unsupported rcc format version {self.version}")
        self.node_size = 14 if self.version == 1 else 22
        for field, off in (("tree", self.tree), ("data", self.payload), ("names", self.names)):
            if off >= len(data):
                raise FetchError(f"{where}: rcc {field} offset {off} is past the end of the file")

    @classmethod
    def open(cls, path: Path, max_bytes: int = MAX_CONTAINER_BYTES) -> "RccArchive":
        return cls(_read_capped(path, max_bytes), str(path))

    def _u(self, fmt: str, off: int) -> tuple:
        end = off + struct.calcsize(fmt)
        if off < 0 or end > len(self.data):
            raise FetchError(f"{self.where}: rcc structure points past the end of the file")
        return struct.unpack(fmt, self.data[off:end])

    def _node(self, index: int) -> tuple[int, int, int, int]:
        """(name offset, flags, a, b): a, b = child count, first child (dirs) or -, data offset."""
        if not 0 <= index < MAX_RCC_NODES:
            raise FetchError(f"{self.where}: rcc node index {index} out of range")
        off = self.tree + index * self.node_size
        name_off, flags = self._u(">IH", off)
        if flags & self.DIR:
            count, first = self._u(">II", off + 6)
            return name_off, flags, count, first
        _country_lang, data_off = self._u(">II", off + 6)
        return name_off, flags, 0, data_off

    def _name(self, name_off: int) -> str:
        (length,) = self._u(">H", self.names + name_off)
        start = self.names + name_off + 6
        raw = self.data[start:start + 2 * length]
        if len(raw) != 2 * length:
            raise FetchError(f"{self.where}: rcc name runs past the end of the file")
        return raw.decode("utf-16-be", "replace")

    def _children(self, index: int) -> Iterator[tuple[str, int]]:
        _n, flags, count, first = self._node(index)
        if not flags & self.DIR:
            return
        if count > MAX_RCC_NODES or first + count > MAX_RCC_NODES:
            raise FetchError(f"{self.where}: rcc directory with {count} children is implausible")
        for child in range(first, first + count):
            yield self._name(self._node(child)[0]), child

    def _find(self, path: str) -> int:
        rel = check_member_name(path.lstrip("/") if path.startswith("/") else path,
                                f"{self.where} (recipe entry)")
        index = 0
        for depth, part in enumerate(rel.split("/")):
            if depth > MAX_RCC_DEPTH:
                raise FetchError(f"{self.where}: rcc path {path!r} is too deep")
            for name, child in self._children(index):
                if name == part:
                    index = child
                    break
            else:
                raise FetchError(f"{self.where}: no entry {path!r} in the resource file")
        return index

    def list(self) -> list[str]:
        """Every file's resource path (``/a/b.ogg``); unsafe names and cycles are skipped."""
        out: list[str] = []
        seen: set[int] = set()
        stack: list[tuple[int, str, int]] = [(0, "", 0)]
        while stack:
            index, prefix, depth = stack.pop()
            if index in seen or depth > MAX_RCC_DEPTH:
                continue
            seen.add(index)
            for name, child in self._children(index):
                if not name or "/" in name or name in (".", ".."):
                    continue
                flags = self._node(child)[1]
                if flags & self.DIR:
                    stack.append((child, f"{prefix}/{name}", depth + 1))
                else:
                    out.append(f"{prefix}/{name}")
        return sorted(out)

    def read(self, path: str, max_bytes: int = MAX_ENTRY_BYTES) -> bytes:
        """The (decompressed) bytes of the file at ``path``, capped at ``max_bytes``."""
        _n, flags, _c, data_off = self._node(self._find(path))
        if flags & self.DIR:
            raise FetchError(f"{self.where}: entry {path!r} is a directory")
        (size,) = self._u(">I", self.payload + data_off)
        start = self.payload + data_off + 4
        if size > len(self.data) - start:
            raise FetchError(f"{self.where}: entry {path!r} runs past the end of the file")
        blob = self.data[start:start + size]
        if flags & self.ZSTD:
            try:
                import zstandard  # type: ignore[import-not-found]
            except ImportError:
                raise FetchError(f"{self.where}: entry {path!r} is zstd-compressed; install the "
                                 "'zstandard' Python package") from None
            reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob))
            out = io.BytesIO()
            _copy_capped(reader, out, max_bytes, self.where, path)
            return out.getvalue()
        if flags & self.ZLIB:
            if len(blob) < 4:
                raise FetchError(f"{self.where}: entry {path!r} has a truncated zlib header")
            (declared,) = struct.unpack(">I", blob[:4])
            if declared > max_bytes:
                raise UnsafeEntryError(f"{self.where}: entry {path!r} declares {declared} bytes, "
                                       f"over the cap of {max_bytes}")
            dec = zlib.decompressobj()
            try:
                out_bytes = dec.decompress(blob[4:], max_bytes + 1)
            except zlib.error as exc:
                raise FetchError(f"{self.where}: entry {path!r} is corrupt ({exc})") from None
            if len(out_bytes) > max_bytes or dec.unconsumed_tail:
                raise UnsafeEntryError(f"{self.where}: entry {path!r} inflates past the size cap "
                                       f"of {max_bytes} bytes")
            return out_bytes
        if size > max_bytes:
            raise UnsafeEntryError(f"{self.where}: entry {path!r} is {size} bytes, over the cap "
                                   f"of {max_bytes}")
        return blob


# --- OpenTTD sound catalogue (opensfx.cat) ----------------------------------------------------

@dataclass(frozen=True)
class CatEntry:
    index: int
    name: str
    offset: int
    size: int


class OpenSfxCat:
    """OpenTTD's sound catalogue: numbered entries, each a name and a RIFF/WAV."""

    def __init__(self, data: bytes, where: str = "<cat>") -> None:
        self.where, self.data = where, data
        if len(data) < 8:
            raise FetchError(f"{where}: too short for a sound catalogue")
        (first,) = struct.unpack("<I", data[:4])
        first &= 0x7FFFFFFF
        count = first // 8
        if count <= 0 or count > MAX_CAT_ENTRIES or first > len(data):
            raise FetchError(f"{where}: implausible catalogue table ({count} entries)")
        self.entries: list[CatEntry] = []
        for i in range(count):
            off, size = struct.unpack("<II", data[8 * i:8 * i + 8])
            off &= 0x7FFFFFFF
            if off < first or size < 1 or off + size > len(data):
                raise FetchError(f"{where}: entry #{i} points outside the file")
            name_len = data[off]
            name = data[off + 1:off + 1 + name_len].split(b"\x00", 1)[0].decode("latin-1")
            self.entries.append(CatEntry(i, name, off, size))

    @classmethod
    def open(cls, path: Path, max_bytes: int = MAX_CONTAINER_BYTES) -> "OpenSfxCat":
        return cls(_read_capped(path, max_bytes), str(path))

    def read(self, index: int | str, max_bytes: int = MAX_ENTRY_BYTES) -> bytes:
        """The RIFF/WAV bytes of entry ``index`` (an int, ``"38"``, ``"#38"`` or ``"38.wav"``)."""
        i = parse_cat_index(index, self.where)
        if not 0 <= i < len(self.entries):
            raise FetchError(f"{self.where}: no entry #{i} (the catalogue has {len(self.entries)})")
        e = self.entries[i]
        start = e.offset + 1 + self.data[e.offset]
        end = e.offset + e.size
        blob = self.data[start:end]
        if blob[:4] != b"RIFF" or len(blob) < 12:
            raise FetchError(f"{self.where}: entry #{i} is not a RIFF/WAV")
        (riff_size,) = struct.unpack("<I", blob[4:8])
        blob = blob[:min(len(blob), riff_size + 8)]
        if len(blob) > max_bytes:
            raise UnsafeEntryError(f"{self.where}: entry #{i} is {len(blob)} bytes, over the cap "
                                   f"of {max_bytes}")
        return blob


def parse_cat_index(value: int | str, where: str) -> int:
    if isinstance(value, int):
        return value
    text = str(value).strip().lstrip("#")
    if text.endswith(".wav"):
        text = text[:-4]
    if not text.isdigit():
        raise FetchError(f"{where}: catalogue entry {value!r} is not a number")
    return int(text)
