"""An atom bank drawn from a local FSD50K copy (docs/atom-banks.md): single-leaf clips, one class per leaf.

FSD50K labels are *smeared*: a clip labelled ``Bark`` also carries ``Dog``,
``Domestic_animals_and_pets`` and ``Animal``. A clip is usable as an atom when its label set is
exactly one leaf plus (some of) that leaf's ancestors: it then holds one kind of sound.

The hierarchy comes from the AudioSet ontology JSON when one lies in the copy (``ontology.json``
in ROOT, ``FSD50K.ground_truth/`` or ``FSD50K.metadata/``). Without it, it is inferred from the
ground truth itself: A is an ancestor of B when every clip labelled B is also labelled A and A has
more clips than B (smearing makes this exact for true ancestors). When A and B label exactly the
same clips, the one listed later in the rows (FSD50K lists a clip's leaves before their ancestors)
is taken as the ancestor. Leaves are vocabulary labels that are nobody's ancestor.

Classes are leaves, so no two classes are parent and child. FSD50K has 144 leaves, so asking for
more classes (the default 200 follows the paper's bank size) gives every usable leaf and a warning.
Classes are ranked by how many usable clips they have (capped at ``files``), then by name; a class
whose label, after normalisation, equals or nests inside an already chosen one is skipped. Clips
within a class are taken in sha256(fname) order (deterministic, unbiased), keeping those of 0.5 to
30 s, up to ``files`` per class. Licences come from ``FSD50K.metadata/*_clips_info_FSD50K.json``.

Labels: parenthetical notes dropped (``Zipper_(clothing)`` -> ``zipper``), the first alternative
of ``_and_`` / ``_or_`` names kept (``Male_speech_and_man_speaking`` -> ``male speech``), so the
query parser never meets "and"/"or" inside a label; underscores and hyphens become spaces.

Spec: ``fsd50k:PATH`` or ``fsd50k:PATH?classes=N&files=K``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reasonaudio.dataset.atom import Atom
from reasonaudio.errors import DataError
from reasonaudio.atoms.folder import FileBank, probe_audio
from reasonaudio.fileio import open_text, read_text

log = logging.getLogger("reasonaudio.atoms")

GT = "FSD50K.ground_truth"
META = "FSD50K.metadata"
SPLITS = {"dev": "FSD50K.dev_audio", "eval": "FSD50K.eval_audio"}
ONTOLOGY_PLACES = ("ontology.json", f"{GT}/ontology.json", f"{META}/ontology.json")
MIN_SECONDS, MAX_SECONDS = 0.5, 30.0


def fsd50k_label(raw: str) -> str:
    """``Vehicle_horn_and_car_horn_and_honking`` -> ``vehicle horn``; ``Hi-hat`` -> ``hi hat``."""
    text = re.sub(r"\([^)]*\)", " ", raw)
    text = re.split(r"_and_|_or_| and | or ", text)[0]
    text = re.sub(r"[_\-]+", " ", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def spdx_license(url: str) -> str:
    """Creative Commons URL -> short id (``CC-BY-3.0``, ``CC0-1.0``); other text kept as is."""
    m = re.search(r"creativecommons\.org/(licenses|publicdomain)/([a-z+\-]+)/(\d+\.\d+)", url or "")
    if not m:
        return url.strip() if url and url.strip() else "unknown"
    kind, name, version = m.groups()
    if kind == "publicdomain":
        return f"CC0-{version}" if name == "zero" else f"PDM-{version}"
    return f"CC-{name.upper()}-{version}"


@dataclass(frozen=True)
class Row:
    fname: str
    labels: tuple[str, ...]
    split: str
    where: str


def _read_vocabulary(path: Path) -> dict[str, str]:
    """label -> mid, in file order."""
    if not path.is_file():
        raise DataError(f"{path}: FSD50K vocabulary not found (is this an FSD50K copy?)")
    out: dict[str, str] = {}
    with open_text(path, newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh), 1):
            if not row or (lineno == 1 and row[0].strip().lower() in ("index", "")):
                continue
            if len(row) < 3:
                raise DataError(f"{path}:{lineno}: expected index,label,mid")
            out[row[1].strip()] = row[2].strip()
    if not out:
        raise DataError(f"{path}: empty vocabulary")
    return out


def _read_ground_truth(path: Path, split: str, vocab: dict[str, str]) -> list[Row]:
    rows = []
    with open_text(path, newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or not {"fname", "labels"} <= set(reader.fieldnames):
            raise DataError(f"{path}:1: header must contain fname and labels, got {reader.fieldnames}")
        for lineno, r in enumerate(reader, 2):
            labels = tuple(x.strip() for x in (r.get("labels") or "").split(",") if x.strip())
            unknown = [x for x in labels if x not in vocab]
            if unknown:
                raise DataError(f"{path}:{lineno}: label {unknown[0]!r} is not in vocabulary.csv")
            fname = (r.get("fname") or "").strip()
            if not re.fullmatch(r"[0-9A-Za-z_\-]+", fname):
                raise DataError(f"{path}:{lineno}: field fname must be a Freesound id, got {fname!r}")
            rows.append(Row(fname, labels, split, f"{path}:{lineno}"))
    return rows


def _ontology_ancestors(path: Path, vocab: dict[str, str]) -> dict[str, set[str]]:
    try:
        nodes = json.loads(read_text(path))
        children = {n["id"]: list(n.get("child_ids", [])) for n in nodes}
    except (json.JSONDecodeError, TypeError, KeyError) as exc:
        raise DataError(f"{path}: not an AudioSet ontology JSON (list of {{id, child_ids}}): {exc}") from None
    mid_to_label = {mid: label for label, mid in vocab.items()}
    anc: dict[str, set[str]] = {label: set() for label in vocab}
    for label, mid in vocab.items():
        stack, seen = list(children.get(mid, [])), set()
        while stack:
            m = stack.pop()
            if m in seen:
                continue
            seen.add(m)
            if m in mid_to_label:
                anc[mid_to_label[m]].add(label)
            stack.extend(children.get(m, []))
    return anc


def _inferred_ancestors(rows: list[Row], vocab: dict[str, str]) -> dict[str, set[str]]:
    labels = list(vocab)
    index = {label: i for i, label in enumerate(labels)}
    m = np.zeros((len(rows), len(labels)), dtype=np.float32)
    pos_sum = np.zeros(len(labels))
    for r_i, row in enumerate(rows):
        for p, label in enumerate(row.labels):
            m[r_i, index[label]] = 1.0
            pos_sum[index[label]] += p / max(1, len(row.labels) - 1)
    co = (m.T @ m).astype(np.int64)
    count = np.diag(co)
    mean_pos = pos_sum / np.maximum(count, 1)
    anc: dict[str, set[str]] = {label: set() for label in labels}
    for b in range(len(labels)):
        if count[b] == 0:
            continue
        for a in range(len(labels)):
            if a == b or co[a, b] != count[b]:
                continue
            if count[a] > count[b] or (count[a] == count[b] and mean_pos[a] > mean_pos[b]):
                anc[labels[b]].add(labels[a])
    return anc


def _read_licences(root: Path) -> dict[str, tuple[str, str]]:
    """fname -> (licence, uploader) from the clips-info JSONs that exist."""
    out: dict[str, tuple[str, str]] = {}
    for split in SPLITS:
        path = root / META / f"{split}_clips_info_FSD50K.json"
        if not path.is_file():
            continue
        try:
            info = json.loads(read_text(path))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(info, dict):
            raise DataError(f"{path}: expected an object keyed by fname")
        for fname, rec in info.items():
            if isinstance(rec, dict):
                lic = rec.get("license") or rec.get("licence") or ""
                out[str(fname)] = (spdx_license(str(lic)), str(rec.get("uploader") or ""))
    return out


def parse_spec(path: str | Path) -> tuple[Path, dict[str, int]]:
    """``PATH?classes=N&files=K`` -> (PATH, options)."""
    text = str(path)
    opts: dict[str, int] = {}
    if "?" in text:
        text, _, query = text.rpartition("?")
        for part in query.split("&"):
            key, _, value = part.partition("=")
            if key not in ("classes", "files") or not value.isdigit() or int(value) < 1:
                raise DataError(f"fsd50k spec option {part!r}: expected classes=N or files=K (N, K >= 1)")
            opts[key] = int(value)
    return Path(text).expanduser(), opts


def _read_splits(root: Path, vocab: dict[str, str]) -> tuple[list[str], list[Row]]:
    """The splits that have audio and a ground truth, and every ground truth's rows (all are
    read for the hierarchy, audio or not)."""
    splits = [s for s, d in SPLITS.items() if (root / d).is_dir() and (root / GT / f"{s}.csv").is_file()]
    if not splits:
        raise DataError(f"{root}: needs {GT}/dev.csv with {SPLITS['dev']}/ or {GT}/eval.csv with "
                        f"{SPLITS['eval']}/")
    rows: list[Row] = []
    for split in SPLITS:  # every ground truth read for the hierarchy, audio or not
        gt = root / GT / f"{split}.csv"
        if gt.is_file():
            rows += _read_ground_truth(gt, split, vocab)
    return splits, rows


def _single_leaf_rows(rows: list[Row], splits: list[str], leaves: set[str],
                      anc: dict[str, set[str]]) -> dict[str, list[Row]]:
    """leaf -> the rows (of a split with audio) labelled with that one leaf and only its
    ancestors, in sha256(fname) order."""
    candidates: dict[str, list[Row]] = {}
    for row in rows:
        if row.split not in splits:
            continue
        label_set = set(row.labels)
        found = label_set & leaves
        if len(found) != 1:
            continue
        leaf = next(iter(found))
        if label_set <= {leaf} | anc[leaf]:
            candidates.setdefault(leaf, []).append(row)
    for rows_of in candidates.values():
        rows_of.sort(key=lambda r: hashlib.sha256(r.fname.encode()).hexdigest())
    return candidates


def _choose_classes(root: Path, candidates: dict[str, list[Row]], n_classes: int, files_per_class: int,
                    errors: list[str] | None) -> tuple[list[str], list[Atom]]:
    """(chosen labels, their atoms): leaves ranked by usable clips (capped at ``files_per_class``)
    then name, a label that equals or nests inside a chosen one skipped, a class without a usable
    clip left out, until ``n_classes``."""
    licences = _read_licences(root)
    ranked = sorted(candidates, key=lambda lb: (-min(len(candidates[lb]), files_per_class), lb))
    atoms: list[Atom] = []
    chosen: list[str] = []
    for leaf in ranked:
        if len(chosen) >= n_classes:
            break
        label = fsd50k_label(leaf)
        if not label or any(f" {label} " in f" {c} " or f" {c} " in f" {label} " for c in chosen):
            log.warning("FSD50K class %s skipped: label %r clashes with a chosen class", leaf, label)
            continue
        picked = _class_atoms(root, candidates[leaf], label, licences, files_per_class, errors)
        if picked:
            chosen.append(label)
            atoms += picked
    return chosen, atoms


def _class_atoms(root: Path, rows: list[Row], label: str, licences: dict[str, tuple[str, str]],
                 files_per_class: int, errors: list[str] | None) -> list[Atom]:
    """Up to ``files_per_class`` atoms of one class: its rows in order, keeping audio of 0.5 to
    30 s; a missing or bad file raises, or with an ``errors`` list is reported there and skipped."""
    picked = []
    for row in rows:
        rel = f"{SPLITS[row.split]}/{row.fname}.wav"
        try:
            info = probe_audio(root / rel, f"{root / rel} ({row.where})")
        except DataError as exc:
            if errors is None:
                raise
            errors.append(str(exc))
            continue
        if not MIN_SECONDS <= info.duration <= MAX_SECONDS:
            continue
        lic, uploader = licences.get(row.fname, ("unknown", ""))
        source = f"FSD50K {row.split}, freesound.org/s/{row.fname}" + (f" by {uploader}" if uploader else "")
        picked.append(Atom(atom_id=f"fsd50k-{row.fname}", label=label, path=rel,
                           sample_rate=info.sample_rate, duration=round(info.duration, 6),
                           source=source, license=lic))
        if len(picked) >= files_per_class:
            break
    return picked


class FSD50KBank(FileBank):
    kind = "fsd50k"

    def __init__(self, root: Path, atoms: list[Atom], info: dict[str, Any]) -> None:
        super().__init__(root, atoms)
        self.info = info

    @classmethod
    def from_path(cls, path: str | Path, n_classes: int = 200, files_per_class: int = 3,
                  errors: list[str] | None = None) -> "FSD50KBank":
        """Pick the bank from a local copy. A missing or bad audio file raises, or, when
        ``errors`` is a list, is skipped (the next clip of its class is tried) and reported there."""
        root, opts = parse_spec(path)
        n_classes = opts.get("classes", n_classes)
        files_per_class = opts.get("files", files_per_class)
        if not root.is_dir():
            raise DataError(f"{root}: FSD50K folder not found")
        vocab = _read_vocabulary(root / GT / "vocabulary.csv")
        splits, rows = _read_splits(root, vocab)
        onto = next((root / p for p in ONTOLOGY_PLACES if (root / p).is_file()), None)
        anc = _ontology_ancestors(onto, vocab) if onto else _inferred_ancestors(rows, vocab)
        is_ancestor = set().union(*anc.values())
        leaves = {label for label in vocab if label not in is_ancestor}
        candidates = _single_leaf_rows(rows, splits, leaves, anc)
        chosen, atoms = _choose_classes(root, candidates, n_classes, files_per_class, errors)
        if len(chosen) < 2:
            raise DataError(f"{root}: only {len(chosen)} FSD50K classes have single-leaf clips with audio; "
                            "need at least 2")
        if len(chosen) < n_classes:
            log.warning("FSD50K copy at %s gives %d usable leaf classes, fewer than the %d asked for",
                        root, len(chosen), n_classes)
        spec = f"fsd50k:{root}"
        if opts:
            spec += "?" + "&".join(f"{k}={v}" for k, v in sorted(opts.items()))
        info = {"kind": cls.kind, "spec": spec, "requested_classes": n_classes,
                "files_per_class": files_per_class, "splits": splits,
                "hierarchy": f"ontology ({onto.relative_to(root)})" if onto else "inferred from ground truth",
                "leaves": len(leaves)}
        return cls(root, atoms, info)

    def describe(self) -> dict[str, Any]:
        return {**self.info, "n_classes": len(self.labels), "n_atoms": len(self.atoms),
                "fingerprint": self.fingerprint()}
