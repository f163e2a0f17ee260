"""Baselines that go through the same store as the oracle: ``random`` and ``bag-of-sounds``.

- ``random``: every clip gets a uniform score from a generator seeded by the benchmark seed and
  a hash of the query text, so a run is reproducible and queries differ. Chance level.
- ``bag-of-sounds``: ground-truth labels, no reasoning. A clip scores the number of sounds the
  query mentions (``logic.labels``, positively or negated) that it contains; negation, order,
  overlap and duration are ignored. It cannot tell a hard negative from a positive, which is
  what the benchmark is built to expose. Clips with none of the sounds are not returned.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from qdrant_client.http import models

from reasonaudio.logic import Node, labels
from reasonaudio.retrievers.base import Hit, rank
from reasonaudio.retrievers.oracle import PayloadRetriever, _Lru
from reasonaudio.seeds import seeded_rng


class RandomRetriever(PayloadRetriever):
    name = "random"

    @property
    def clip_ids(self) -> list[str]:
        """Every clip id in the payload collection, ascending (read once)."""
        if not hasattr(self, "_ids"):
            self._ids = self.store.matching_ids(self.collection)
            self._pos = {cid: i for i, cid in enumerate(self._ids)}
        return self._ids

    def _scores(self, text: str) -> np.ndarray:
        rng = seeded_rng(self.bench.seed, text)
        return rng.random(len(self.clip_ids))

    def search(self, text: str, k: int) -> list[Hit]:
        scores = self._scores(text)
        order = np.lexsort((np.arange(len(scores)), -scores))[:k]  # score desc, then id asc
        return [Hit(self.clip_ids[i], float(scores[i])) for i in order]

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        scores = self._scores(text)
        self.clip_ids  # noqa: B018 (fills _pos)
        return [float(scores[self._pos[c]]) if c in self._pos else float("-inf") for c in clip_ids]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "seed": self.bench.seed,
                "scores": "uniform, seeded by benchmark seed + sha256(query text)"}


class BagOfSoundsRetriever(PayloadRetriever):
    name = "bag-of-sounds"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counts = _Lru()

    def counts(self, logic: Node) -> dict[str, int]:
        """Clip id -> how many of the mentioned sounds it contains (clips with none left out)."""
        mentioned = labels(logic)

        def run() -> dict[str, int]:
            flt = models.Filter(should=[models.FieldCondition(key="labels",
                                                              match=models.MatchValue(value=lab))
                                        for lab in mentioned])
            want = set(mentioned)
            return {f.clip_id: len(want.intersection((f.payload or {}).get("labels", ())))
                    for f in self.store.scroll(self.collection, flt, fields=("labels",))}

        return self._counts.get_or(mentioned, run)

    def search_logic(self, logic: Node, k: int) -> list[Hit]:
        return rank(self.counts(logic), k)

    def search(self, text: str, k: int) -> list[Hit]:
        return self.search_logic(self.parse(text), k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        counts = self.counts(self.parse(text))
        return [float(counts.get(c, 0)) for c in clip_ids]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "scores": "number of mentioned sounds present"}
