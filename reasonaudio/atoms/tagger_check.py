"""Does an audio tagger hear what the labels say?  ``bench atoms check SOURCE --tagger yamnet``.

Each atom is run through the offline YAMNet tagger (:class:`reasonaudio.models.yamnet.YamnetTagger`,
521 AudioSet classes). A label is *confirmed* when one of its expected AudioSet tags is among the
tagger's top ``k`` (default 5) classes for at least one of the label's files. Scores are pooled
over the 0.96 s frames by max, so a short event inside a longer file still counts.

Expected tags come, in order of preference, from the bank's own ``atoms.jsonl`` (field
``expected_tags``, written by ``bench atoms fetch``), from the shipped recipe book by label, or
from the label's own words. A tag matches an AudioSet class name when it occurs there as whole
stem starting a word, case-insensitively (``bark`` matches ``Bark``, ``bagpipe`` matches
``Bagpipes``, ``pipe`` does not): the research data's tags are stems such as ``rustl``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from reasonaudio.errors import DataError
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.fetch.recipes import load_recipes
from reasonaudio.models.yamnet import YamnetTagger, pool_frames
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.fileio import read_text

TAGGERS = ("yamnet",)
DEFAULT_TOP_K = 5
_STOP = frozenset("a an the of on in with from into and or by".split())


@dataclass(frozen=True)
class AtomTagging:
    atom_id: str
    top: tuple[tuple[str, float], ...]
    rank: int | None
    """1-based rank of the first top-k class matching an expected tag, None when none does"""


@dataclass
class LabelCheck:
    label: str
    expected: tuple[str, ...]
    expected_from: str
    atoms: list[AtomTagging] = field(default_factory=list)

    @property
    def best(self) -> AtomTagging | None:
        ranked = [a for a in self.atoms if a.rank is not None]
        if ranked:
            return min(ranked, key=lambda a: (a.rank, a.atom_id))
        return self.atoms[0] if self.atoms else None

    @property
    def confirmed(self) -> bool:
        return any(a.rank is not None for a in self.atoms)

    def to_json(self) -> dict[str, Any]:
        best = self.best
        return {"label": self.label, "confirmed": self.confirmed,
                "rank": best.rank if best else None, "expected_tags": list(self.expected),
                "expected_from": self.expected_from, "atom_id": best.atom_id if best else None,
                "top": [[n, round(s, 4)] for n, s in (best.top if best else ())]}


@dataclass
class TaggerReport:
    source: str
    tagger: str
    revision: str
    k: int
    pool: str
    labels: list[LabelCheck]

    @property
    def confirmed(self) -> list[LabelCheck]:
        return [c for c in self.labels if c.confirmed]

    @property
    def unconfirmed(self) -> list[LabelCheck]:
        return [c for c in self.labels if not c.confirmed]

    @property
    def rate(self) -> float:
        return len(self.confirmed) / len(self.labels) if self.labels else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "tagger": self.tagger, "revision": self.revision,
                "top_k": self.k, "pool": self.pool, "classes": len(self.labels),
                "confirmed": len(self.confirmed), "confirmation_rate": round(self.rate, 4),
                "unconfirmed": [c.label for c in self.unconfirmed],
                "labels": [c.to_json() for c in self.labels]}


def tag_matches(tag: str, class_name: str) -> bool:
    """Case-insensitive match at the start of a word, so stems work: ``bark`` ~ ``Bark``,
    ``bagpipe`` ~ ``Bagpipes``, ``rustl`` ~ ``Rustling leaves``; ``pipe`` !~ ``Bagpipes``."""
    pattern = r"(?<![a-z0-9])" + re.escape(tag.strip().lower())
    return re.search(pattern, class_name.lower()) is not None


def match_rank(expected: Sequence[str], top: Sequence[tuple[str, float]]) -> int | None:
    for i, (name, _score) in enumerate(top, 1):
        if any(tag_matches(t, name) for t in expected):
            return i
    return None


def label_words(label: str) -> tuple[str, ...]:
    """Fallback expected tags: the label's content words (``dog barking`` -> dog, barking)."""
    return tuple(w for w in re.findall(r"[a-z0-9-]+", label.lower()) if w not in _STOP)


def expected_tags(bank: AtomBank, root: Path | None) -> dict[str, tuple[tuple[str, ...], str]]:
    """label -> (expected tags, where they came from)."""
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    manifest = root / "atoms.jsonl" if root is not None else None
    if manifest is not None and manifest.is_file():
        for line in read_text(manifest).splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            tags = row.get("expected_tags") if isinstance(row, dict) else None
            if isinstance(tags, list) and tags and isinstance(row.get("label"), str):
                out.setdefault(row["label"], (tuple(str(t) for t in tags), "atoms.jsonl"))
    missing = [lab for lab in bank.labels if lab not in out]
    if missing:
        try:
            recipes = load_recipes().by_label()
        except DataError:
            recipes = {}
        for lab in missing:
            if lab in recipes and recipes[lab].expected_tags:
                out[lab] = (recipes[lab].expected_tags, "recipe")
            else:
                out[lab] = (label_words(lab), "label words")
    return out


def _load_tagger(name: str) -> YamnetTagger:
    if name != "yamnet":
        raise DataError(f"--tagger: unknown tagger {name!r} (known: {', '.join(TAGGERS)})")
    return YamnetTagger()


def run_tagger_check(bank: AtomBank, source: str, *, tagger: YamnetTagger | None = None,
                     tagger_name: str = "yamnet", k: int = DEFAULT_TOP_K, pool: str = "max",
                     root: Path | None = None, labels: Iterable[str] | None = None,
                     hooks: Hooks = SILENT, batch: int = 16) -> TaggerReport:
    """Tag every atom of ``bank`` (or of ``labels``) and decide per label."""
    if k < 1:
        raise DataError(f"--top-k: must be at least 1, got {k}")
    tagger = tagger if tagger is not None else _load_tagger(tagger_name)
    names = tagger.class_names
    wanted = list(bank.labels) if labels is None else [lab for lab in bank.labels if lab in set(labels)]
    tags = expected_tags(bank, root)
    checks = {lab: LabelCheck(lab, *tags[lab]) for lab in wanted}
    atoms = [a for lab in wanted for a in bank.by_label[lab]]
    report = hooks.progress
    report("tagging", 0, len(atoms))
    for start in range(0, len(atoms), batch):
        chunk = atoms[start:start + batch]
        waves, rates = zip(*(bank.load(a.atom_id) for a in chunk))
        groups: dict[int, list[int]] = {}
        for i, sr in enumerate(rates):
            groups.setdefault(int(sr), []).append(i)
        frames: list[Any] = [None] * len(chunk)
        for sr, idx in groups.items():
            for i, f in zip(idx, tagger.frame_scores_many([waves[i] for i in idx], sr)):
                frames[i] = f
        for atom, f in zip(chunk, frames):
            scores = pool_frames(f, pool)
            order = sorted(range(len(names)), key=lambda i: (-float(scores[i]), names[i]))[:k]
            top = tuple((names[i], float(scores[i])) for i in order)
            check = checks[atom.label]
            check.atoms.append(AtomTagging(atom.atom_id, top, match_rank(check.expected, top)))
        report("tagging", min(start + batch, len(atoms)), len(atoms))
    revision = str(getattr(tagger, "revision", ""))
    return TaggerReport(source, tagger_name, revision, k, pool, [checks[lab] for lab in wanted])
