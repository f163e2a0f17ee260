"""Atom banks made of audio files: a folder in Scaper's layout, with an optional manifest.

Layout: ``ROOT/<label>/*.{wav,flac,ogg,mp3}``; the folder name is the label after normalisation
(lower-case, underscores to spaces, runs of spaces collapsed), so ``Dog_Barking/`` and
``dog barking/`` are one class. Hidden files and folders, files with other extensions and nested
sub-folders are ignored.

Optional manifest ``ROOT/atoms.jsonl`` (one JSON object a line) or ``ROOT/atoms.csv`` (header
row) with fields ``label, file`` (required; ``file`` relative to ROOT) and ``source, license``:
a row overrides the folder name of its file (its label, source and licence win) and may also add
files that lie outside label folders. Without a manifest, source is ``ROOT/<label>`` and the
licence is ``unknown``.

Every file is probed with ``soundfile.info`` when the bank opens: a missing, empty, unreadable or
non-audio file raises :class:`DataError` naming it. Labels where one is a run of words inside
another (``dog`` beside ``dog barking``) are refused as likely parent/child pairs (docs/benchmark.md).
"""

from __future__ import annotations

import csv
import hashlib
import re
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

import numpy as np
import soundfile as sf

from reasonaudio.dataset.atom import Atom
from reasonaudio.errors import DataError
from reasonaudio.fileio import iter_jsonl, sha256_file
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.fileio import open_text
from reasonaudio.output_dirs import ATOM_BANK

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")
MANIFEST_NAMES = (ATOM_BANK.marker, *ATOM_BANK.also)
"""the bank's optional manifest; a folder holding one is an atom bank no command writes into"""
UNKNOWN_LICENSE = "unknown"


def normalise_label(raw: str) -> str:
    """``Dog_Barking`` -> ``dog barking``: lower-case, underscores to spaces, single spaces."""
    return re.sub(r"\s+", " ", raw.replace("_", " ")).strip().lower()


def nested_label_pairs(labels: Iterable[str]) -> list[tuple[str, str]]:
    """(inner, outer) pairs where ``inner`` is a run of whole words inside ``outer``."""
    labels = sorted(set(labels))
    out = []
    for inner in labels:
        padded = f" {inner} "
        for outer in labels:
            if outer != inner and padded in f" {outer} ":
                out.append((inner, outer))
    return out


@dataclass(frozen=True)
class AudioInfo:
    sample_rate: int
    frames: int
    channels: int

    @property
    def duration(self) -> float:
        return self.frames / self.sample_rate


def probe_audio(path: Path, where: str = "") -> AudioInfo:
    """Sample rate, length and channels of an audio file, or a DataError naming it."""
    label = where or str(path)
    if not path.exists():
        raise DataError(f"{label}: file not found")
    if not path.is_file():
        raise DataError(f"{label}: not a regular file")
    if path.suffix.lower() not in AUDIO_EXTENSIONS:
        raise DataError(f"{label}: not an audio file (extension must be one of {', '.join(AUDIO_EXTENSIONS)})")
    if path.stat().st_size == 0:
        raise DataError(f"{label}: empty file")
    if path.suffix.lower() == ".mp3" and "MP3" not in sf.available_formats():
        raise DataError(f"{label}: this libsndfile ({sf.__libsndfile_version__}) cannot read mp3 "
                        "(needs 1.1.0 or later); convert it to flac or wav")
    try:
        info = sf.info(str(path))
    except Exception as exc:  # soundfile raises LibsndfileError/RuntimeError/TypeError
        raise DataError(f"{label}: unreadable or not audio ({_short(exc)})") from None
    if info.frames <= 0 or info.samplerate <= 0:
        raise DataError(f"{label}: audio file has no samples")
    return AudioInfo(int(info.samplerate), int(info.frames), int(info.channels))


def read_mono(path: Path, where: str = "") -> tuple[np.ndarray, int]:
    """Float32 mono samples (channels averaged) and the sample rate."""
    try:
        x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:
        raise DataError(f"{where or path}: unreadable or not audio ({_short(exc)})") from None
    if len(x) == 0:
        raise DataError(f"{where or path}: audio file has no samples")
    mono = x[:, 0] if x.shape[1] == 1 else x.mean(axis=1, dtype=np.float64).astype(np.float32)
    return np.ascontiguousarray(mono), int(sr)


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[-1][:200] if text else type(exc).__name__


def safe_relative(root: Path, rel: str, where: str) -> Path:
    """``root / rel`` if ``rel`` stays inside ``root`` (no absolute paths, ``..`` or escaping links)."""
    p = PurePosixPath(rel.replace("\\", "/"))
    if not rel or p.is_absolute() or ".." in p.parts or re.match(r"^[A-Za-z]:", rel):
        raise DataError(f"{where}: file {rel!r} must be a path relative to the bank folder, inside it")
    full = root / Path(*p.parts)
    try:
        full.resolve().relative_to(root.resolve())
    except ValueError:
        raise DataError(f"{where}: file {rel!r} resolves outside the bank folder") from None
    return full


class FileBank(AtomBank):
    """A bank whose atoms are files under ``root`` (``Atom.path`` relative to it)."""

    kind = "files"

    def __init__(self, root: Path, atoms: list[Atom]) -> None:
        self.root = Path(root)
        self._fingerprint: str | None = None
        super().__init__(atoms)

    def file_of(self, atom_id: str) -> Path:
        atom = self.by_id.get(atom_id)
        if atom is None:
            raise DataError(f"{self.root}: unknown atom id {atom_id!r}")
        return self.root / Path(*PurePosixPath(atom.path).parts)

    def load(self, atom_id: str) -> tuple[np.ndarray, int]:
        return read_mono(self.file_of(atom_id))

    def fingerprint(self) -> str:
        """sha256 over (atom id, label, path, sha256 of the file's bytes) of every atom: two banks
        with the same fingerprint hold the same recordings (:data:`FINGERPRINT_OF`). Hashed once
        per opened bank: a manifest, a label-map cache key and ``bench doctor`` each read it."""
        if self._fingerprint is None:
            h = hashlib.sha256()
            for a in self.atoms:
                h.update(f"{a.atom_id}\t{a.label}\t{a.path}\t{sha256_file(self.file_of(a.atom_id))}\n".encode())
            self._fingerprint = h.hexdigest()
        return self._fingerprint


FINGERPRINT_OF = "atom id, label, path and sha256 of every file"


def fetch_tools(root: Path) -> dict[str, Any] | None:
    """The tool versions the fetch that made this bank recorded (its ``fetch-report.json``)."""
    report = Path(root) / "fetch-report.json"
    try:
        tools = json.loads(report.read_text(encoding="utf-8")).get("tools") if report.is_file() else None
    except (OSError, ValueError, AttributeError):
        return None
    return tools if isinstance(tools, dict) else None


def _check_labels(labels: Iterable[str], where: str) -> None:
    pairs = nested_label_pairs(labels)
    if pairs:
        inner, outer = pairs[0]
        more = f" (and {len(pairs) - 1} more)" if len(pairs) > 1 else ""
        raise DataError(f"{where}: labels {inner!r} and {outer!r} look like a parent/child pair{more}; "
                        "a clip holding one would be ambiguous for the other; rename or drop one")


def _read_manifest(path: Path) -> list[dict[str, str]]:
    rows: list[dict[str, Any]] = []
    if path.suffix == ".jsonl":
        for lineno, obj in iter_jsonl(path):
            if not isinstance(obj, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object")
            rows.append({**obj, "_where": f"{path}:{lineno}"})
    else:
        with open_text(path, newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or not {"label", "file"} <= set(reader.fieldnames):
                raise DataError(f"{path}:1: header must name at least the columns label and file, "
                                f"got {reader.fieldnames}")
            for lineno, row in enumerate(reader, 2):
                rows.append({**row, "_where": f"{path}:{lineno}"})
    out = []
    for row in rows:
        where = row["_where"]
        for key in ("label", "file"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise DataError(f"{where}: field {key!r} is missing or empty")
        out.append({"label": row["label"], "file": row["file"].strip(),
                    "source": str(row.get("source") or "").strip(),
                    "license": str(row.get("license") or "").strip(), "where": where})
    return out


class FolderBank(FileBank):
    """Scaper-style folder of labelled audio files, with an optional manifest."""

    kind = "folder"
    spec: str | None = None
    """the portable name this bank was opened by (``fetched:packages``), recorded instead of its
    local path so that two users' manifests of one build are the same bytes"""

    def __init__(self, root: Path, atoms: list[Atom], manifest: str | None) -> None:
        super().__init__(root, atoms)
        self.manifest_name = manifest

    @classmethod
    def from_path(cls, path: str | Path, errors: list[str] | None = None) -> "FolderBank":
        """Open a folder bank. Bad files raise, or, when ``errors`` is a list, are skipped and
        their messages appended to it (``bench atoms check`` lists every bad file at once)."""
        root = Path(path).expanduser()
        if not root.exists():
            raise DataError(f"{root}: atom bank folder not found (expected ROOT/<label>/*.wav, "
                            "'synthetic' or 'fsd50k:PATH')")
        if not root.is_dir():
            raise DataError(f"{root}: atom bank must be a folder (ROOT/<label>/*.wav)")
        found = [root / n for n in MANIFEST_NAMES if (root / n).is_file()]
        if len(found) > 1:
            raise DataError(f"{root}: both atoms.jsonl and atoms.csv exist; keep one manifest")
        manifest = found[0] if found else None

        # file (relative posix path) -> (label, source, license, where)
        entries: dict[str, tuple[str, str, str, str]] = {}
        for sub in sorted(root.iterdir()):
            if sub.name.startswith(".") or not sub.is_dir():
                continue
            label = normalise_label(sub.name)
            for f in sorted(sub.iterdir()):
                if f.name.startswith(".") or (not f.is_file() and not f.is_symlink()):
                    continue
                if f.suffix.lower() not in AUDIO_EXTENSIONS:
                    continue
                rel = f.relative_to(root).as_posix()
                try:  # a link (or a linked label folder) may not lead outside the bank
                    safe_relative(root, rel, str(f))
                except DataError as exc:
                    if errors is None:
                        raise
                    errors.append(str(exc))
                    continue
                entries[rel] = (label, f"{root.name}/{sub.name}", UNKNOWN_LICENSE, rel)
        if manifest is not None:
            for row in _read_manifest(manifest):
                full = safe_relative(root, row["file"], row["where"])
                rel = full.relative_to(root).as_posix()
                label = normalise_label(row["label"])
                entries[rel] = (label, row["source"] or f"{root.name}/{rel}",
                                row["license"] or UNKNOWN_LICENSE, f"{row['where']} ({rel})")
        if not entries:
            raise DataError(f"{root}: no audio files (expected ROOT/<label>/*.wav|flac|ogg|mp3 "
                            "or a manifest atoms.jsonl / atoms.csv)")

        atoms = []
        for rel, (label, source, lic, where) in sorted(entries.items()):
            if not label or not re.search(r"[a-z]", label):
                raise DataError(f"{where}: label {label!r} is empty after normalisation")
            try:
                info = probe_audio(root / rel, str(root / rel) if where == rel else where)
            except DataError as exc:
                if errors is None:
                    raise
                errors.append(str(exc))
                continue
            atoms.append(Atom(atom_id=rel, label=label, path=rel, sample_rate=info.sample_rate,
                              duration=round(info.duration, 6), source=source, license=lic))
        if not atoms:
            raise DataError(f"{root}: no readable audio files")
        _check_labels({a.label for a in atoms}, str(root))
        return cls(root, atoms, manifest.name if manifest else None)

    def describe(self) -> dict[str, Any]:
        out = {"kind": self.kind, "spec": self.spec or str(self.root), "manifest": self.manifest_name,
               "n_classes": len(self.labels), "n_atoms": len(self.atoms),
               "fingerprint": self.fingerprint(), "fingerprint_of": FINGERPRINT_OF}
        tools = fetch_tools(self.root)
        return {**out, "tools": tools} if tools else out
