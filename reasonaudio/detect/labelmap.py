"""Which tagger outputs stand for each bank label: zero-shot (AudioSet classes) or enrolled.

- ``zero-shot``: the detector never sees the bank's atoms. Each label gets up to ``top_k``
  AudioSet classes. Candidates are the classes its expected AudioSet tags match (the real-sound
  recipes carry them; :func:`reasonaudio.ingest.tagger_check.expected_tags`); without tags, every
  class. Candidates are ranked by the cosine similarity of the label text to the class name under
  the offline text embedder (all-MiniLM-L6-v2), so a loose tag (``bell``) does not drag in
  ``Bellow`` or ``Belly laugh``. The label's track is the max over its classes' frame scores.
- ``enrolled``: the bank's own atom files are tagged in isolation; each label's signature is
  its atom's max-pooled score vector restricted to its ``top_k`` strongest classes, and the
  track is the frame's projection onto it (1.0 = as strong as the atom alone). An optimistic
  perception bound: the detector has heard the very recordings the clips are mixed from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

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

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "labels": {
            lab: {"classes": [self.class_names[c] for c in cls], "weights": [round(w, 4) for w in ws],
                  "source": src}
            for lab, cls, ws, src in zip(self.labels, self.classes, self.weights, self.sources)}}

    def truncated(self, k: int) -> "LabelMap":
        """The same map with at most ``k`` classes per label (the strongest / most similar)."""
        return LabelMap(self.mode, self.labels, tuple(c[:k] for c in self.classes),
                        tuple(w[:k] for w in self.weights), self.sources, self.class_names)

    def digest(self) -> str:
        import hashlib
        import json

        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:16]

    def tracks(self, probs: np.ndarray) -> np.ndarray:
        """(frames, 521) probabilities -> (frames, labels) score tracks in [0, 1]."""
        out = np.zeros((len(probs), len(self.labels)), dtype=np.float32)
        if not len(probs):
            return out
        for j, (cls, ws) in enumerate(zip(self.classes, self.weights)):
            idx = list(cls)
            if self.mode == "enrolled":
                sig = np.asarray(ws, dtype=np.float32)
                out[:, j] = np.clip(probs[:, idx] @ sig / float(sig @ sig), 0.0, 1.0)
            else:
                out[:, j] = probs[:, idx].max(axis=1)
        return out


def _text_vectors(texts: Sequence[str], embedder: Any) -> np.ndarray:
    vecs = np.asarray(embedder.embed_text(list(texts)), dtype=np.float32)
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def zero_shot_map(labels: Sequence[str], class_names: Sequence[str],
                  tags: dict[str, tuple[tuple[str, ...], str]], *, top_k: int = 3,
                  embedder: Any = None) -> LabelMap:
    """Label -> its ``top_k`` AudioSet classes (tag candidates ranked by text similarity)."""
    from reasonaudio.ingest.tagger_check import tag_matches

    if embedder is None:
        from reasonaudio.models.registry import load_model

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
                          if any(tag_matches(t, name) for t in label_tags)]
        if not candidates:
            candidates, source = list(range(len(class_names))), "all classes"
        ranked = sorted(candidates, key=lambda c: (-float(sims[i, c]), c))[:top_k]
        classes.append(tuple(int(c) for c in ranked))
        weights.append(tuple(float(sims[i, c]) for c in ranked))
        sources.append(source)
    return LabelMap("zero-shot", tuple(labels), tuple(classes), tuple(weights), tuple(sources),
                    tuple(class_names))


def enrolled_map(bank: Any, labels: Sequence[str], tagger: Any, *, top_k: int = 5) -> LabelMap:
    """Signatures from tagging each label's atom files alone (max over frames, then atoms)."""
    from reasonaudio.models import yamnet

    names = tuple(tagger.tagger.class_names)
    classes, weights, sources = [], [], []
    for label in labels:
        pooled = np.zeros(len(names), dtype=np.float32)
        for atom in bank.by_label.get(label, ()):
            wave, sr = bank.load(atom.atom_id)
            wave16 = yamnet.resample(wave, int(sr))
            rows = tagger.run_units(tagger.audio_units(wave16))
            pooled = np.maximum(pooled, tagger.frames(rows).max(axis=0))
        ranked = sorted(range(len(names)), key=lambda c: (-float(pooled[c]), c))[:top_k]
        classes.append(tuple(int(c) for c in ranked))
        weights.append(tuple(max(float(pooled[c]), 1e-3) for c in ranked))
        sources.append("atoms")
    return LabelMap("enrolled", tuple(labels), tuple(classes), tuple(weights), tuple(sources), names)


def bank_tags(bank: Any) -> dict[str, tuple[tuple[str, ...], str]]:
    from reasonaudio.ingest.tagger_check import expected_tags

    root = getattr(bank, "root", None)
    return expected_tags(bank, Path(root) if root is not None else None)


def build_label_map(mode: str, bank: Any, labels: Sequence[str], tagger: Any, *,
                    top_k: int | None = None, embedder: Any = None) -> LabelMap:
    from reasonaudio.errors import DataError

    if mode == "zero-shot":
        return zero_shot_map(labels, tagger.tagger.class_names, bank_tags(bank),
                             top_k=top_k or max(TOP_K_CHOICES[mode]), embedder=embedder)
    if mode == "enrolled":
        return enrolled_map(bank, labels, tagger, top_k=top_k or max(TOP_K_CHOICES[mode]))
    raise DataError(f"--mode: unknown detection mode {mode!r} (known: {', '.join(MODES)})")
