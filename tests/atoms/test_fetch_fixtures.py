"""Builders for the fetch tests: tiny packages and containers written by the test, plus a fake
stand-in for apt-get / pip / npm / fluidsynth. No network, no real packages.

(Imported by the other ``test_fetch_*`` modules; the one test here checks the builders.)
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
import tarfile
import zipfile
import zlib
from pathlib import Path
from typing import Sequence

import numpy as np
import soundfile as sf

from reasonaudio.atoms.fetch.process import Completed


def tone(seconds: float = 0.6, sr: int = 22_050, freq: float = 440.0, lead: float = 0.3,
         tail: float = 0.2, fmt: str = "WAV", channels: int = 1) -> bytes:
    """A sine burst with silence before and after (so trimming is visible)."""
    n = int(seconds * sr)
    t = np.arange(n) / sr
    burst = 0.5 * np.sin(2 * np.pi * freq * t).astype(np.float32)
    wave = np.concatenate([np.zeros(int(lead * sr), np.float32), burst,
                           np.zeros(int(tail * sr), np.float32)])
    if channels > 1:
        wave = np.stack([wave] * channels, axis=1)
    buf = io.BytesIO()
    subtype = "PCM_16" if fmt == "WAV" else ("VORBIS" if fmt == "OGG" else None)
    sf.write(buf, wave, sr, format=fmt, subtype=subtype)
    return buf.getvalue()


# --- ar / deb ---------------------------------------------------------------------------------

def write_ar(path: Path, members: Sequence[tuple[str, bytes]]) -> Path:
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        header = (f"{name:<16}" + f"{0:<12}" + f"{0:<6}" + f"{0:<6}" + f"{100644:<8}"
                  + f"{len(data):<10}" + "`\n").encode()
        assert len(header) == 60
        out += header + data + (b"\n" if len(data) % 2 else b"")
    path.write_bytes(bytes(out))
    return path


def tar_bytes(members: Sequence[tuple[str, bytes | None, str | None]], mode: str = "w:gz") -> bytes:
    """Members as (name, data or None, symlink target or None)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tf.addfile(info)
            else:
                info.size = len(data or b"")
                tf.addfile(info, io.BytesIO(data or b""))
    return buf.getvalue()


def manual_deb(path: Path, members: Sequence[tuple[str, bytes | None, str | None]],
               compression: str = "gz") -> Path:
    """A .deb assembled by hand (so it can hold entries dpkg-deb would never build)."""
    mode = {"gz": "w:gz", "xz": "w:xz", "bz2": "w:bz2", "": "w"}[compression]
    data = tar_bytes(members, mode)
    control = tar_bytes([("./control", b"Package: x\n", None)])
    name = "data.tar" + (f".{compression}" if compression else "")
    return write_ar(path, [("debian-binary", b"2.0\n"), ("control.tar.gz", control), (name, data)])


def dpkg_deb(tmp: Path, name: str, version: str, files: dict[str, bytes],
             links: dict[str, str] | None = None) -> Path:
    """A real .deb built with ``dpkg-deb --build`` (the test is skipped where it is missing)."""
    root = tmp / f"{name}-root"
    shutil.rmtree(root, ignore_errors=True)
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: all\nMaintainer: Test <t@example.org>\n"
        "Description: tiny test package\n")
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for rel, dest in (links or {}).items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(dest)
    out = tmp / f"{name}_{version.replace(':', '%3a')}_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(out)],
                   check=True, capture_output=True)
    return out


# --- zip --------------------------------------------------------------------------------------

def zip_bytes(entries: dict[str, bytes], symlinks: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, target)
    return buf.getvalue()


# --- Qt rcc -----------------------------------------------------------------------------------

def rcc_bytes(files: dict[str, bytes], compress: Sequence[str] = (), version: int = 3,
              evil: str | None = None) -> bytes:
    """A Qt resource file holding ``files`` (paths like ``/a/b.ogg``), in the layout Qt writes.

    ``evil``: ``dotdot`` adds a child named ``..``; ``cycle`` makes a directory its own child;
    ``bomb`` declares a huge uncompressed size.
    """
    tree: dict = {}
    for path, data in files.items():
        node = tree
        parts = path.strip("/").split("/")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = (path, data)
    if evil == "dotdot":
        tree[".."] = ("/..", b"escaped")
    names = bytearray()
    name_off: dict[str, int] = {}

    def name_at(n: str) -> int:
        if n not in name_off:
            name_off[n] = len(names)
            enc = n.encode("utf-16-be")
            names.extend(struct.pack(">HI", len(n), zlib.crc32(n.encode()) & 0xFFFFFFFF) + enc)
        return name_off[n]

    payload = bytearray()
    nodes: list[bytes] = []
    node_size = 14 if version == 1 else 22
    nodes.append(b"")
    # breadth-first: children of each directory get consecutive indices
    pending = [(0, "", tree)]
    while pending:
        idx, name, obj = pending.pop(0)
        children = sorted(obj.items()) if isinstance(obj, dict) else []
        first = len(nodes)
        for cname, cobj in children:
            nodes.append(b"")
            if isinstance(cobj, dict):
                pending.append((len(nodes) - 1, cname, cobj))
        rec = struct.pack(">IH", name_at(name), 0x02) + struct.pack(">II", len(children),
                                                                      idx if evil == "cycle" and idx == 0 else first)
        nodes[idx] = rec + (b"\0" * 8 if version >= 2 else b"")
        for cidx, (cname, cobj) in enumerate(children, first):
            if isinstance(cobj, tuple):
                path, data = cobj
                flags = 0
                blob = data
                if path in compress or evil == "bomb":
                    flags = 0x01
                    declared = (1 << 30) if evil == "bomb" else len(data)
                    blob = struct.pack(">I", declared) + zlib.compress(data)
                off = len(payload)
                payload.extend(struct.pack(">I", len(blob)) + blob)
                frec = struct.pack(">IH", name_at(cname), flags) + struct.pack(">HHI", 0, 0, off)
                nodes[cidx] = frec + (b"\0" * 8 if version >= 2 else b"")
    header_len = 20 + (4 if version >= 3 else 0)
    tree_bytes = b"".join(nodes)
    assert all(len(n) == node_size for n in nodes)
    tree_off = header_len
    data_off = tree_off + len(tree_bytes)
    names_off = data_off + len(payload)
    header = b"qres" + struct.pack(">IIII", version, tree_off, data_off, names_off)
    if version >= 3:
        header += struct.pack(">I", 0)
    return header + tree_bytes + bytes(payload) + bytes(names)


# --- OpenTTD cat ------------------------------------------------------------------------------

def cat_bytes(entries: Sequence[tuple[str, bytes]], bad_offset: bool = False) -> bytes:
    count = len(entries)
    table = bytearray()
    body = bytearray()
    base = 8 * count
    for name, wav in entries:
        raw = name.encode("latin-1") + b"\0"
        blob = bytes([len(raw)]) + raw + wav
        off = base + len(body)
        table += struct.pack("<II", (off | 0x80000000), len(blob) + (10_000 if bad_offset else 0))
        body += blob
    return bytes(table + body)


# --- fake registry clients --------------------------------------------------------------------

class FakeClients:
    """Answers ``apt-get download``, ``pip download``, ``npm pack`` and ``fluidsynth`` offline.

    ``debs``: name -> (version, path of a prepared .deb); ``wheels``/``npms``: name -> path.
    """

    def __init__(self, debs: dict[str, tuple[str, Path]] | None = None,
                 wheels: dict[str, Path] | None = None, npms: dict[str, Path] | None = None) -> None:
        self.debs, self.wheels, self.npms = debs or {}, wheels or {}, npms or {}
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], cwd: Path) -> Completed:
        argv = list(argv)
        self.calls.append(argv)
        if argv[:2] == ["apt-get", "download"]:  # one or more NAME[=VERSION]: all or nothing
            found = []
            for spec in [a for a in argv[2:] if not a.startswith("-")]:
                name, _, version = spec.partition("=")
                if name not in self.debs:
                    return Completed(100, "", f"E: Unable to locate package {name}")
                have, path = self.debs[name]
                if version and version != have:
                    return Completed(100, "", f"E: Version '{version}' for '{name}' was not found")
                found.append((name, have, path))
            for name, have, path in found:
                shutil.copy(path, Path(cwd) / f"{name}_{have.replace(':', '%3a')}_all.deb")
            return Completed(0, "", "")
        if len(argv) > 3 and argv[1:4] == ["-m", "pip", "download"]:
            name, _, version = argv[-1].partition("==")
            dest = Path(argv[argv.index("-d") + 1])
            if name not in self.wheels:
                return Completed(1, "", f"ERROR: No matching distribution found for {argv[-1]}")
            shutil.copy(self.wheels[name], dest / self.wheels[name].name)
            return Completed(0, "", "")
        if argv[:2] == ["npm", "pack"]:
            name = argv[-1].rsplit("@", 1)[0]
            if name not in self.npms:
                return Completed(1, "", "npm ERR! 404 Not Found")
            shutil.copy(self.npms[name], Path(cwd) / self.npms[name].name)
            return Completed(0, self.npms[name].name, "")
        if argv[0] == "fluidsynth":
            out = Path(argv[argv.index("-F") + 1])
            midi = Path(argv[-1]).read_bytes()
            freq = 200 + (zlib.crc32(midi) % 600)
            out.write_bytes(tone(1.0, 44_100, freq, lead=0.05, tail=0.5, channels=2))
            return Completed(0, "", "")
        return Completed(127, "", f"{argv[0]}: not found")

    def count(self, prefix: str) -> int:
        return sum(1 for c in self.calls if " ".join(c).find(prefix) >= 0)


def recipe_lines(packages: Sequence[dict], atoms: Sequence[dict]) -> str:
    out = [json.dumps({"record": "package", **p}) for p in packages]
    out += [json.dumps({"record": "atom", "category": "test", "license": "CC0-1.0",
                        "expected_tags": [], **a}) for a in atoms]
    return "\n".join(out) + "\n"


def test_builders_round_trip(tmp_path: Path) -> None:
    from reasonaudio.atoms.fetch.containers import OpenSfxCat, RccArchive

    data = rcc_bytes({"/a/b.ogg": b"hello", "/a/c/d.wav": b"world" * 50},
                     compress=["/a/c/d.wav"])
    rcc = RccArchive(data)
    assert rcc.list() == ["/a/b.ogg", "/a/c/d.wav"]
    assert rcc.read("/a/c/d.wav") == b"world" * 50
    cat = OpenSfxCat(cat_bytes([("one", tone()), ("two", tone(freq=880))]))
    assert [e.name for e in cat.entries] == ["one", "two"]
