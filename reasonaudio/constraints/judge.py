"""Vectorised judge: evaluate logic against every clip of a corpus at once.

Holds per-label onset/offset arrays (integer ms, -1 where a clip lacks the label), so one query
over 10,000 clips is a handful of numpy comparisons. It must agree with
:func:`reasonaudio.constraints.semantics.holds` clip by clip (a hypothesis test checks this).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from reasonaudio.constraints.logic import And, Before, Has, Lasts, Node, Not, Or, Overlap, labels
from reasonaudio.constraints.semantics import OVERLAP_MIN_MS, duration_tolerance_ms, to_ms
from reasonaudio.dataset.benchmark import Benchmark
from reasonaudio.dataset.clip import Clip


class ClipIndex:
    """Label -> event-time arrays over a fixed list of clips (the order of ``clips``)."""

    def __init__(self, clips: Sequence[Clip]) -> None:
        self.clip_ids: list[str] = [c.id for c in clips]
        self.n = len(clips)
        self._onset: dict[str, np.ndarray] = {}
        self._offset: dict[str, np.ndarray] = {}
        for i, clip in enumerate(clips):
            for e in clip.events:
                if e.label not in self._onset:
                    self._onset[e.label] = np.full(self.n, -1, dtype=np.int64)
                    self._offset[e.label] = np.full(self.n, -1, dtype=np.int64)
                self._onset[e.label][i] = to_ms(e.onset)
                self._offset[e.label][i] = to_ms(e.offset)
        self._absent = np.full(self.n, -1, dtype=np.int64)

    def _times(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        return self._onset.get(label, self._absent), self._offset.get(label, self._absent)

    def has(self, label: str) -> np.ndarray:
        return self._times(label)[0] >= 0

    def relevant(self, node: Node) -> np.ndarray:
        """Boolean mask over clips: where ``node`` holds."""
        if isinstance(node, Has):
            return self.has(node.label)
        if isinstance(node, Before):
            (_, off_a), (on_b, _) = self._times(node.a), self._times(node.b)
            return self.has(node.a) & self.has(node.b) & (off_a <= on_b)
        if isinstance(node, Overlap):
            (on_a, off_a), (on_b, off_b) = self._times(node.a), self._times(node.b)
            shared = np.minimum(off_a, off_b) - np.maximum(on_a, on_b)
            return self.has(node.a) & self.has(node.b) & (shared >= OVERLAP_MIN_MS)
        if isinstance(node, Lasts):
            on, off = self._times(node.label)
            # Same integer arithmetic as semantics.lasts_ms (microseconds), vectorised.
            target_us = int(round(node.seconds * 1_000_000))
            tol_us = int(round(duration_tolerance_ms(node.seconds) * 1000))
            return self.has(node.label) & (np.abs((off - on) * 1000 - target_us) <= tol_us)
        if isinstance(node, Not):
            return ~self.relevant(node.arg)
        if isinstance(node, And):
            out = np.ones(self.n, dtype=bool)
            for arg in node.args:
                out &= self.relevant(arg)
            return out
        if isinstance(node, Or):
            out = np.zeros(self.n, dtype=bool)
            for arg in node.args:
                out |= self.relevant(arg)
            return out
        raise TypeError(f"not a logic node: {node!r}")

    def contains_all(self, node: Node) -> np.ndarray:
        """Clips that contain every label the logic mentions, positively or negated."""
        out = np.ones(self.n, dtype=bool)
        for label in labels(node):
            out &= self.has(label)
        return out

    def hard_negatives(self, node: Node) -> np.ndarray:
        """docs/benchmark.md: clips with every mentioned label that are not relevant."""
        return self.contains_all(node) & ~self.relevant(node)

    def ids(self, mask: np.ndarray) -> list[str]:
        return [self.clip_ids[i] for i in np.flatnonzero(mask)]


def benchmark_index(bench: Benchmark) -> ClipIndex:
    """The vectorised judge over a benchmark's corpus (built once, shared by stats and evaluation)."""
    return bench.derived("clip_index", lambda: ClipIndex(bench.clips))


def hard_negatives(bench: Benchmark) -> dict[str, frozenset[str]]:
    """Query id -> its hard negatives: clips with every label the query mentions, not relevant
    (qrels are removed too, so a hard negative is never counted as relevant)."""
    def make() -> dict[str, frozenset[str]]:
        index = benchmark_index(bench)
        return {q.id: frozenset(index.ids(index.hard_negatives(q.logic))) - bench.qrels.get(q.id, set())
                for q in bench.queries}

    return bench.derived("hard_negatives", make)
