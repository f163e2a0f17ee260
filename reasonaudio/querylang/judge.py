"""Vectorised judge: evaluate logic against every clip of a corpus at once.

Holds per-label onset/offset arrays (integer ms, -1 where a clip lacks the label), one row per
occurrence (row k: each clip's (k+1)-th occurrence in onset order; one row when no label
repeats), so one query over 10,000 clips is a handful of numpy comparisons. It must agree with
:func:`reasonaudio.querylang.semantics.holds` clip by clip (a hypothesis test checks this).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap, labels)
from reasonaudio.querylang.semantics import OVERLAP_MIN_MS, lasts_ms, occurrences
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip


class ClipIndex:
    """Label -> event-time arrays over a fixed list of clips (the order of ``clips``)."""

    def __init__(self, clips: Sequence[Clip]) -> None:
        self.clip_ids: list[str] = [c.id for c in clips]
        self.n = len(clips)
        self._onset: dict[str, np.ndarray] = {}
        self._offset: dict[str, np.ndarray] = {}
        """label -> (occurrence rows, clips) arrays"""
        for i, clip in enumerate(clips):
            for label, occ in occurrences(clip.events).items():
                on, off = self._onset.get(label), self._offset.get(label)
                if on is None or len(on) < len(occ):
                    rows = len(occ) if on is None else len(occ) - len(on)
                    more = np.full((rows, self.n), -1, dtype=np.int64)
                    on = more if on is None else np.concatenate([on, more])
                    off = more.copy() if off is None else np.concatenate([off, more.copy()])
                    self._onset[label], self._offset[label] = on, off
                for k, (a, b) in enumerate(occ):
                    on[k, i], off[k, i] = a, b
        self._absent = np.full((1, self.n), -1, dtype=np.int64)

    def occurrences(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        """(rows, clips) onset and offset arrays of every occurrence (-1 where none)."""
        return self._onset.get(label, self._absent), self._offset.get(label, self._absent)

    def times(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        """The first occurrence's onset and offset per clip (-1 where the label is absent)."""
        on, off = self.occurrences(label)
        return on[0], off[0]

    def has(self, label: str) -> np.ndarray:
        return self.times(label)[0] >= 0

    def count(self, label: str) -> np.ndarray:
        """How many times the label occurs in each clip."""
        return (self.occurrences(label)[0] >= 0).sum(axis=0)

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


_FAR = np.iinfo(np.int64).max


@RELEVANT.register(Before)
def _before(node: Before, index: ClipIndex) -> np.ndarray:
    (_, off_a), (on_b, _) = index.occurrences(node.a), index.occurrences(node.b)
    last_off_a = off_a.max(axis=0)                               # absent rows are -1
    first_on_b = np.where(on_b >= 0, on_b, _FAR).min(axis=0)
    return index.has(node.a) & index.has(node.b) & (last_off_a <= first_on_b)


@RELEVANT.register(Overlap)
def _overlap(node: Overlap, index: ClipIndex) -> np.ndarray:
    (on_a, off_a), (on_b, off_b) = index.occurrences(node.a), index.occurrences(node.b)
    out = np.zeros(index.n, dtype=bool)
    for i in range(len(on_a)):
        for j in range(len(on_b)):
            shared = np.minimum(off_a[i], off_b[j]) - np.maximum(on_a[i], on_b[j])
            out |= (on_a[i] >= 0) & (on_b[j] >= 0) & (shared >= OVERLAP_MIN_MS)
    return index.has(node.a) & index.has(node.b) & out


@RELEVANT.register(Lasts)
def _lasts(node: Lasts, index: ClipIndex) -> np.ndarray:
    on, off = index.occurrences(node.label)
    every = np.all((on < 0) | lasts_ms(off - on, node.seconds), axis=0)
    return index.has(node.label) & every


@RELEVANT.register(Count)
def _count(node: Count, index: ClipIndex) -> np.ndarray:
    return index.count(node.label) == node.n


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


def benchmark_index(bench: BenchmarkView) -> ClipIndex:
    """The vectorised judge over a benchmark's corpus (built once per load, shared by stats,
    evaluation and every view)."""
    return bench.files.derived("clip_index", lambda: ClipIndex(bench.clips))


def hard_negatives(bench: BenchmarkView) -> dict[str, frozenset[str]]:
    """Query id -> its hard negatives: clips with every label the query mentions, not relevant
    (qrels are removed too, so a hard negative is never counted as relevant). Every query of the
    files: a view's query keeps its logic, so its hard negatives are the same in every view."""
    def make() -> dict[str, frozenset[str]]:
        index = benchmark_index(bench)
        return {q.id: frozenset(index.ids(index.hard_negatives(q.logic))) - bench.qrels.get(q.id, set())
                for q in bench.files.queries}

    return bench.files.derived("hard_negatives", make)
