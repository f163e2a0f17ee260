"""Which tagger outputs stand for each bank label: zero-shot (AudioSet classes) or enrolled.

- ``zero-shot``: the detector never sees the bank's atoms. Each label gets up to ``top_k``
  AudioSet classes. Candidates are the classes its expected AudioSet tags match (the real-sound
  recipes carry them; :func:`reasonaudio.atoms.tagger_check.expected_tags`); without tags, every
  class. Candidates are ranked by the cosine similarity of the label text to the class name under
  the offline text embedder (all-MiniLM-L6-v2), so a loose tag (``bell``) does not drag in
  ``Bellow`` or ``Belly laugh``. The label's track is the max over its classes' frame scores.
- ``enrolled``: the bank's own atom files are tagged in isolation; each label's signature is
  its ``top_k`` most distinctive classes (atom profile minus the bank's mean profile), and the
  track is the frame's weighted score on them, scaled so the atom alone scores 1.0. An optimistic
  perception bound: the detector has heard the very recordings the clips are mixed from.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from reasonaudio.atoms.bank import AtomBank
from reasonaudio.detect.events import YAMNET_GRID
from reasonaudio.errors import DataError
from reasonaudio.fileio import write_json
from reasonaudio.atoms.tagger_check import expected_tags
from reasonaudio.models import yamnet
from reasonaudio.models.base import EmbedderProtocol
from reasonaudio.models.cache_dir import cache_root
from reasonaudio.models.registry import load_model
from reasonaudio.models.yamnet_embedder import FrameTagger

MODES = ("zero-shot", "enrolled")
TOP_K_CHOICES = {"zero-shot": (1, 2, 3), "enrolled": (1, 3, 5)}
"""classes per label (zero-shot) or signature size (enrolled) the calibration chooses among"""


@dataclass(frozen=True)
class LabelMap:
    """label -> the tagger classes (indices) and weights that make its score track."""

    mode: str
    labels: tuple[str, ...]
    classes: tuple[tuple[int, ...], ...]
    weights: tuple[tuple[float, ...], ...]
    """zero-shot: the text similarities (shown, not used); enrolled: the signature scores"""
    sources: tuple[str, ...]
    """where each label's candidates came from: atoms.jsonl | recipe | all classes | atoms"""
    class_names: tuple[str, ...] = field(repr=False, default=())
    profiles: tuple[tuple[float, ...], ...] = ()
    """enrolled: the atom profile's scores on the signature classes (the track's scale)"""
    grid = YAMNET_GRID
    """the tracks' frames: YAMNet's (``events.FrameGrid``)"""
    choice_grid = None
    """calibration stops at event F1 (``detect.calibrate``, step 3 is for trained detectors)"""
    reader = None
    """what the tracks are made from: None, the tagger's decoded frames (``detect.clip_frames``)"""

    @property
    def top_k_choices(self) -> tuple[int, ...]:
        """what calibration chooses ``top_k`` among"""
        return TOP_K_CHOICES[self.mode]

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "labels": {
            lab: {"classes": [self.class_names[c] for c in cls], "weights": [round(w, 4) for w in ws],
                  "source": src}
            for lab, cls, ws, src in zip(self.labels, self.classes, self.weights, self.sources)}}

    def truncated(self, k: int) -> "LabelMap":
        """The same map with at most ``k`` classes per label (the strongest / most similar)."""
        return LabelMap(self.mode, self.labels, tuple(c[:k] for c in self.classes),
                        tuple(w[:k] for w in self.weights), self.sources, self.class_names,
                        tuple(p[:k] for p in self.profiles))

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:16]

    def tracks(self, probs: np.ndarray) -> np.ndarray:
        """(frames, 521) probabilities -> (frames, labels) score tracks in [0, 1]."""
        out = np.zeros((len(probs), len(self.labels)), dtype=np.float32)
        if not len(probs):
            return out
        for j, (cls, ws) in enumerate(zip(self.classes, self.weights)):
            idx = list(cls)
            if self.mode == "enrolled":
                # weighted sums in a fixed order, not BLAS (whose kernels sum in a CPU's own order)
                sig = [np.float32(w) for w in ws]
                prof = [np.float32(p) for p in self.profiles[j]] if self.profiles else sig
                score = np.zeros(len(probs), dtype=np.float32)
                scale = np.float32(0)
                for c, w, p in zip(idx, sig, prof):
                    score += probs[:, c] * w
                    scale += p * w
                out[:, j] = np.clip(score / max(scale, np.float32(1e-6)), 0.0, 1.0)
            else:
                out[:, j] = probs[:, idx].max(axis=1)
        return out


WORD_ENDINGS = ("", "s", "es", "ing", "ling", "ed", "er", "ers")
"""what may follow a tag inside a class-name word: ``bagpipe`` ~ ``Bagpipes``, ``rustl`` ~
``Rustling``, but ``bell`` !~ ``Belly laugh`` / ``Bellow`` and ``car`` !~ ``Carnatic music``"""


def tag_names_class(tag: str, class_name: str) -> bool:
    """Whether an expected tag names an AudioSet class: the tag's words start words of the name
    and its last word is completed by at most an inflection (:data:`WORD_ENDINGS`). Stricter
    than ``tagger_check.tag_matches`` (a word-start prefix), which is right for confirming an
    atom from its top-5 classes but lets ``bell`` pull in ``Belly laugh`` as a label's class."""
    tag = tag.strip().lower()
    return bool(tag) and _tag_pattern(tag).search(class_name.lower()) is not None


@functools.lru_cache(maxsize=4096)
def _tag_pattern(tag: str) -> re.Pattern[str]:
    """The compiled pattern of one (stripped, lower-case) tag: a map tests every tag against all
    521 class names, more patterns than ``re``'s own cache keeps."""
    endings = "|".join(re.escape(e) for e in WORD_ENDINGS if e)
    return re.compile(r"(?<![a-z0-9])" + re.escape(tag) + rf"(?:{endings})?(?![a-z0-9])")


def _text_vectors(texts: Sequence[str], embedder: EmbedderProtocol) -> np.ndarray:
    vecs = np.asarray(embedder.embed_text(list(texts)), dtype=np.float32)
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def zero_shot_map(labels: Sequence[str], class_names: Sequence[str],
                  tags: dict[str, tuple[tuple[str, ...], str]], *, top_k: int = 3,
                  embedder: EmbedderProtocol | None = None) -> LabelMap:
    """Label -> its ``top_k`` AudioSet classes (tag candidates ranked by text similarity)."""
    if embedder is None:
        embedder = load_model("minilm")
    label_vecs = _text_vectors(labels, embedder)
    class_vecs = _text_vectors([n.lower() for n in class_names], embedder)
    sims = label_vecs @ class_vecs.T
    classes, weights, sources = [], [], []
    for i, label in enumerate(labels):
        label_tags, source = tags.get(label, ((), "label words"))
        candidates = []
        if source != "label words":  # tags written for the tagger, not the label's own words
            candidates = [c for c, name in enumerate(class_names)
                          if any(tag_names_class(t, name) for t in label_tags)]
        if not candidates:
            candidates, source = list(range(len(class_names))), "all classes"
        ranked = sorted(candidates, key=lambda c: (-float(sims[i, c]), c))[:top_k]
        classes.append(tuple(int(c) for c in ranked))
        weights.append(tuple(float(sims[i, c]) for c in ranked))
        sources.append(source)
    return LabelMap("zero-shot", tuple(labels), tuple(classes), tuple(weights), tuple(sources),
                    tuple(class_names))


def enrolled_map(bank: AtomBank, labels: Sequence[str], tagger: FrameTagger, *, top_k: int = 5) -> LabelMap:
    """Signatures from tagging each label's atom files alone.

    A label's atom profile is its max-over-frames score vector (max over its atoms). Classes that
    every atom excites (``Speech``, ``Music``, ``Animal``) say little about which atom sounds, so
    the signature keeps the ``top_k`` classes with the largest *distinctive* score, the profile
    minus the mean profile of the bank's labels; weights are those distinctive scores."""
    names = tuple(tagger.tagger.class_names)
    profiles = np.zeros((len(labels), len(names)), dtype=np.float32)
    for i, label in enumerate(labels):
        for atom in bank.by_label.get(label, ()):
            wave, sr = bank.load(atom.atom_id)
            rows = tagger.run_units(tagger.audio_units(yamnet.resample(wave, int(sr))))
            profiles[i] = np.maximum(profiles[i], tagger.frames(rows).max(axis=0))
    distinct = profiles - profiles.mean(axis=0, keepdims=True)
    classes, weights = [], []
    for i in range(len(labels)):
        ranked = sorted(range(len(names)), key=lambda c: (-float(distinct[i, c]), c))[:top_k]
        ranked = [c for c in ranked if distinct[i, c] > 0] or ranked[:1]
        classes.append(tuple(int(c) for c in ranked))
        weights.append(tuple(max(float(distinct[i, c]), 1e-3) for c in ranked))
        # the track divides by <profile, weights> so the atom alone scores 1.0
    profiles_kept = [tuple(float(profiles[i, c]) for c in cls) for i, cls in enumerate(classes)]
    return LabelMap("enrolled", tuple(labels), tuple(classes), tuple(weights),
                    tuple("atoms" for _ in labels), names, tuple(profiles_kept))


def bank_tags(bank: AtomBank) -> dict[str, tuple[tuple[str, ...], str]]:
    root = getattr(bank, "root", None)
    return expected_tags(bank, Path(root) if root is not None else None)


def _cache_file(mode: str, bank: AtomBank, labels: Sequence[str], tagger: FrameTagger, top_k: int | None,
                tags: dict[str, tuple[tuple[str, ...], str]] | None, cache_dir: Path | None) -> Path:
    key = {"mode": mode, "labels": list(labels), "tagger": tagger.revision, "top_k": top_k,
           "tags": tags, "text": "minilm" if mode == "zero-shot" else None,
           "bank": bank.describe() if mode == "enrolled" else None, "schema": 3}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return Path(cache_dir or cache_root()) / "detect" / f"labelmap-{mode}-{digest}.json"


def build_label_map(mode: str, bank: AtomBank, labels: Sequence[str], tagger: FrameTagger, *,
                    top_k: int | None = None, embedder: EmbedderProtocol | None = None,
                    cache_dir: Path | None = None) -> LabelMap:
    """The label map for ``mode``, kept in the cache (``detect/labelmap-*.json``) keyed by
    everything it depends on, so a rerun loads neither the text embedder nor the atoms."""
    if mode not in MODES:
        raise DataError(f"--mode: unknown detection mode {mode!r} (known: {', '.join(MODES)})")
    k = top_k or max(TOP_K_CHOICES[mode])
    tags = bank_tags(bank) if mode == "zero-shot" else None
    path = _cache_file(mode, bank, labels, tagger, k, tags, cache_dir)
    names = tuple(tagger.tagger.class_names)
    if path.is_file():
        try:
            obj = json.loads(path.read_text())
            return LabelMap(mode, tuple(labels), tuple(tuple(int(c) for c in x) for x in obj["classes"]),
                            tuple(tuple(float(w) for w in x) for x in obj["weights"]),
                            tuple(obj["sources"]), names,
                            tuple(tuple(float(v) for v in x) for x in obj.get("profiles", [])))
        except (KeyError, TypeError, ValueError, json.JSONDecodeError):
            pass  # rebuilt and rewritten below
    if mode == "zero-shot":
        made = zero_shot_map(labels, names, tags or {}, top_k=k, embedder=embedder)
    else:
        made = enrolled_map(bank, labels, tagger, top_k=k)
    write_json(path, {"classes": [list(c) for c in made.classes],
                      "weights": [list(w) for w in made.weights], "sources": list(made.sources),
                      "profiles": [list(p) for p in made.profiles]})
    return made
