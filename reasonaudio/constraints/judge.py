"""Vectorised judge: evaluate logic against every clip of a corpus at once.

Holds per-label onset/offset arrays (integer ms, -1 where a clip lacks the label), so one query
over 10,000 clips is a handful of numpy comparisons. It must agree with
:func:`reasonaudio.constraints.semantics.holds` clip by clip (a hypothesis test checks this).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from reasonaudio.constraints.logic import (And, Before, Has, Interpreter, Lasts, Node, Not, Or,
                                           Overlap, labels)
from reasonaudio.constraints.semantics import OVERLAP_MIN_MS, lasts_ms, to_ms
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

    def times(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        return self._onset.get(label, self._absent), self._offset.get(label, self._absent)

    def has(self, label: str) -> np.ndarray:
        return self.times(label)[0] >= 0

    def relevant(self, node: Node) -> np.ndarray:
        """Boolean mask over clips: where ``node`` holds."""
        return RELEVANT(node, self)

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


RELEVANT = Interpreter("vectorised judge (ClipIndex.relevant)")
"""node, ClipIndex -> boolean mask over its clips; one handler per node type."""


@RELEVANT.register(Has)
def _has(node: Has, index: ClipIndex) -> np.ndarray:
    return index.has(node.label)


@RELEVANT.register(Before)
def _before(node: Before, index: ClipIndex) -> np.ndarray:
    (_, off_a), (on_b, _) = index.times(node.a), index.times(node.b)
    return index.has(node.a) & index.has(node.b) & (off_a <= on_b)


@RELEVANT.register(Overlap)
def _overlap(node: Overlap, index: ClipIndex) -> np.ndarray:
    (on_a, off_a), (on_b, off_b) = index.times(node.a), index.times(node.b)
    shared = np.minimum(off_a, off_b) - np.maximum(on_a, on_b)
    return index.has(node.a) & index.has(node.b) & (shared >= OVERLAP_MIN_MS)


@RELEVANT.register(Lasts)
def _lasts(node: Lasts, index: ClipIndex) -> np.ndarray:
    on, off = index.times(node.label)
    return index.has(node.label) & lasts_ms(off - on, node.seconds)


@RELEVANT.register(Not)
def _not(node: Not, index: ClipIndex) -> np.ndarray:
    return ~index.relevant(node.arg)


@RELEVANT.register(And)
def _and(node: And, index: ClipIndex) -> np.ndarray:
    out = np.ones(index.n, dtype=bool)
    for arg in node.args:
        out &= index.relevant(arg)
    return out


@RELEVANT.register(Or)
def _or(node: Or, index: ClipIndex) -> np.ndarray:
    out = np.zeros(index.n, dtype=bool)
    for arg in node.args:
        out |= index.relevant(arg)
    return out


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
