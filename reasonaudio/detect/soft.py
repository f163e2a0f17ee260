"""A soft score of the query logic over the detected timeline, so every clip gets a rank.

The hard filter (the oracle's translator on the detected payload) says which clips satisfy the
logic as perceived; within and after them clips are ordered by this score in [0, 1]:

| logic | soft value |
|---|---|
| ``has(x)`` | ``p(x)``: the label's peak track score, calibrated so its ``on`` threshold maps to 0.5: ``p = peak ** (ln 0.5 / ln on)`` (monotone, 0 -> 0, 1 -> 1) |
| ``not A`` | ``1 - soft(A)`` |
| ``and(A, B, ...)`` | product |
| ``or(A, B, ...)`` | max |
| ``before(x, y)`` | ``p(x) p(y) sigmoid((onset(y) - offset(x)) / 0.5 s)`` |
| ``overlap(x, y)`` | ``p(x) p(y) sigmoid((shared - 0.5 s) / 0.5 s)``, shared = min(offsets) - max(onsets) |
| ``lasts(x, N)`` | ``p(x) exp(-max(0, abs(dur(x) - N) - tol(N)) / 1 s)``, tol as the judge's |
| ``count(x, n)`` | ``p(x) exp(-abs(c(x) - n))``, c = the detected occurrences (payload ``count``; 1 for a label without one) |

Times come from the detected event when the label was detected, else from the frames around
the label's peak where its score stays at least half the peak (``events.track_summary``).
A label with no such frames (peak under the stored floor) has ``p = 0``. YAMNet's int8 outputs
take few distinct values (logit steps of about 0.76), so peaks tie often: the retriever adds
1e-3 times the same score computed with the mean of each label's 3 best frames as ``peak``,
which breaks most ties by evidence instead of by clip id.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from reasonaudio.constraints.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap)
from reasonaudio.constraints.semantics import OVERLAP_MIN_MS, duration_excess_ms

TIME_SCALE_MS = 500.0
DURATION_SCALE_MS = 1000.0
SEMANTICS = ("has = peak score calibrated so the label's threshold maps to 0.5; not = 1 - p; "
             "and = product; or = max; before/overlap = p(x) p(y) sigmoid(margin / 0.5 s); "
             "lasts = p(x) exp(-excess over the tolerance / 1 s); count = p(x) exp(-|occurrences - n|); ties: + 1e-3 x the same with "
             "the 3-best-frame mean as peak")
TIE_WEIGHT = 1e-3


def calibrated(peak: np.ndarray, threshold: float) -> np.ndarray:
    thr = min(max(float(threshold), 1e-4), 0.9999)
    return np.power(np.clip(peak, 0.0, 1.0), np.log(0.5) / np.log(thr))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60.0, 60.0)))


class SoftIndex:
    """Per-label presence and times over a fixed list of clips (the order of ``clip_ids``)."""

    def __init__(self, clip_ids: Sequence[str], presence: Mapping[str, np.ndarray],
                 onset: Mapping[str, np.ndarray], offset: Mapping[str, np.ndarray],
                 counts: Mapping[str, np.ndarray] | None = None) -> None:
        self.clip_ids = list(clip_ids)
        self.n = len(self.clip_ids)
        self._p, self._on, self._off = dict(presence), dict(onset), dict(offset)
        self._count = dict(counts or {})
        """label -> detected occurrences per clip where a label repeats (1 elsewhere)"""
        self._zero = np.zeros(self.n)
        self._one = np.ones(self.n)

    @classmethod
    def from_payloads(cls, payloads: Sequence[Mapping], thresholds: Mapping[str, float],
                      default_threshold: float, stat: str = "peak") -> "SoftIndex":
        """From detected payloads (``events``, ``track``): detected events win over summaries.
        ``stat``: ``peak`` (the track's max) or ``top3`` (the mean of its 3 best frames)."""
        col = 3 if stat == "top3" else 0
        n = len(payloads)
        peak: dict[str, np.ndarray] = {}
        on: dict[str, np.ndarray] = {}
        off: dict[str, np.ndarray] = {}

        def arrays(label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            if label not in peak:
                peak[label] = np.zeros(n)
                on[label] = np.zeros(n)
                off[label] = np.zeros(n)
            return peak[label], on[label], off[label]

        for i, pl in enumerate(payloads):
            for label, row in (pl.get("track") or {}).items():
                p_, on_, off_ = arrays(label)
                p_[i], on_[i], off_[i] = float(row[col] if len(row) > col else row[0]), row[1], row[2]
            conf = pl.get("confidence") or {}
            for e in pl.get("events") or ():
                p_, on_, off_ = arrays(e["label"])
                if col == 0:
                    p_[i] = max(p_[i], float(conf.get(e["label"], 0.0)))
                on_[i], off_[i] = round(float(e["onset"]) * 1000), round(float(e["offset"]) * 1000)
        presence = {lab: calibrated(pk, thresholds.get(lab, default_threshold))
                    for lab, pk in peak.items()}
        counts: dict[str, np.ndarray] = {}
        for i, pl in enumerate(payloads):
            for label, c in (pl.get("count") or {}).items():
                counts.setdefault(label, np.ones(n))[i] = float(c)
        return cls([str(pl["clip_id"]) for pl in payloads], presence, on, off, counts)

    def p(self, label: str) -> np.ndarray:
        return self._p.get(label, self._zero)

    def times(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        return self._on.get(label, self._zero), self._off.get(label, self._zero)

    def count(self, label: str) -> np.ndarray:
        return self._count.get(label, self._one)

    def score(self, node: Node) -> np.ndarray:
        """Soft value of ``node`` for every clip, in [0, 1]."""
        return SCORE(node, self)


SCORE = Interpreter("soft score (SoftIndex.score)")
"""node, SoftIndex -> soft value per clip in [0, 1]; one handler per node type."""


@SCORE.register(Has)
def _has(node: Has, index: SoftIndex) -> np.ndarray:
    return index.p(node.label)


@SCORE.register(Before)
def _before(node: Before, index: SoftIndex) -> np.ndarray:
    (_, off_a), (on_b, _) = index.times(node.a), index.times(node.b)
    return index.p(node.a) * index.p(node.b) * _sigmoid((on_b - off_a) / TIME_SCALE_MS)


@SCORE.register(Overlap)
def _overlap(node: Overlap, index: SoftIndex) -> np.ndarray:
    (on_a, off_a), (on_b, off_b) = index.times(node.a), index.times(node.b)
    shared = np.minimum(off_a, off_b) - np.maximum(on_a, on_b)
    return (index.p(node.a) * index.p(node.b)
            * _sigmoid((shared - OVERLAP_MIN_MS) / TIME_SCALE_MS))


@SCORE.register(Lasts)
def _lasts(node: Lasts, index: SoftIndex) -> np.ndarray:
    on, off = index.times(node.label)
    excess = duration_excess_ms(off - on, node.seconds)
    return index.p(node.label) * np.exp(-np.maximum(excess, 0.0) / DURATION_SCALE_MS)


@SCORE.register(Count)
def _count(node: Count, index: SoftIndex) -> np.ndarray:
    return index.p(node.label) * np.exp(-np.abs(index.count(node.label) - node.n))


@SCORE.register(Not)
def _not(node: Not, index: SoftIndex) -> np.ndarray:
    return 1.0 - index.score(node.arg)


@SCORE.register(And)
def _and(node: And, index: SoftIndex) -> np.ndarray:
    out = np.ones(index.n)
    for arg in node.args:
        out = out * index.score(arg)
    return out


@SCORE.register(Or)
def _or(node: Or, index: SoftIndex) -> np.ndarray:
    out = np.zeros(index.n)
    for arg in node.args:
        out = np.maximum(out, index.score(arg))
    return out
