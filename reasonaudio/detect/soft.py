"""A soft score of the query logic over the detected timeline, so every clip gets a rank.

The soft semantics are written once, as a Qdrant score formula (:mod:`reasonaudio.store.formula`,
table there and in docs/qdrant.md); this module supplies the evidence the formula reads and
evaluates the same formula with numpy (the Python soft score the differential test compares
Qdrant's with).

Evidence per label: ``p(x)``, the label's peak track score calibrated so its ``on`` threshold
maps to 0.5 (``p = peak ** (ln 0.5 / ln on)``, monotone, 0 -> 0, 1 -> 1); ``p3(x)``, the same
for the mean of its 3 best frames; and onset/offset, from the detected event when the label was
detected, else from the frames around the label's peak where its score stays at least half the
peak (``events.track_summary``). A label with no such frames (peak under the stored floor) has
``p = 0``, and so has one whose calibrated presence is under ``formula.PRESENCE_FLOOR`` (1e-47:
no ranking or returned score can tell it from 0). YAMNet's int8 outputs take few distinct
values (logit steps of about 0.76), so peaks tie often: the ranking adds 1e-3 times the same
score computed with ``p3``, which breaks most ties by evidence instead of by clip id.
``bench detect`` writes this evidence into the detected payload (:meth:`SoftIndex.payload`) as
the float maps the formula reads.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from reasonaudio.logic import Node
from reasonaudio.store.formula import (
    DURATION, ONSET, OFFSET, ORDER, PRESENCE, PRESENCE_TOP3, TIE_WEIGHT, clip_orders, evaluate,
    no_evidence_below_floor, soft_expr, soft_formula, soft_payload,
)
from reasonaudio.store.payload import COUNT_FIELD

SEMANTICS = ("has = peak score calibrated so the label's threshold maps to 0.5; not = 1 - p; "
             "and = product; or = max; before/overlap = p(x) p(y) sigmoid(margin / 0.5 s); "
             "lasts = p(x) exp(-excess over the tolerance / 1 s); count = p(x) exp(-|occurrences - n|); "
             "ties: + 1e-3 x the same with "
             "the 3-best-frame mean as peak, then clip id (+ 1e-30 x clip order)")
__all__ = ["SEMANTICS", "TIE_WEIGHT", "SoftIndex", "calibrated"]


def calibrated(peak: np.ndarray, threshold: float) -> np.ndarray:
    """``peak ** (ln 0.5 / ln threshold)``, by the C library's ``pow`` per distinct peak: numpy's
    float64 ``power`` and ``log`` take other SIMD paths on AVX-512 machines, and the evidence must
    be the same bytes on every CPU."""
    thr = min(max(float(threshold), 1e-4), 0.9999)
    exponent = math.log(0.5) / math.log(thr)
    values, where = np.unique(np.clip(np.asarray(peak, dtype=np.float64), 0.0, 1.0), return_inverse=True)
    powers = np.array([math.pow(float(v), exponent) for v in values], dtype=np.float64)
    return powers[where].reshape(np.shape(peak))


class SoftIndex:
    """Per-label presence and times over a fixed list of clips (the order of ``clip_ids``).

    Times are integer milliseconds here (as detected); the formula reads seconds."""

    def __init__(self, clip_ids: Sequence[str], presence: Mapping[str, np.ndarray],
                 onset: Mapping[str, np.ndarray], offset: Mapping[str, np.ndarray],
                 counts: Mapping[str, np.ndarray] | None = None,
                 presence_top3: Mapping[str, np.ndarray] | None = None) -> None:
        self.clip_ids = list(clip_ids)
        self.n = len(self.clip_ids)
        self._zero = np.zeros(self.n)
        self._p, self._p3, self._on, self._off = {}, {}, {}, {}
        top3 = presence_top3 if presence_top3 is not None else presence
        for label, p in presence.items():  # evidence under the floor is none (formula.PRESENCE_FLOOR)
            (self._p[label], self._p3[label], self._on[label],
             self._off[label]) = no_evidence_below_floor(
                p, top3.get(label, p), onset.get(label, self._zero), offset.get(label, self._zero))
        self._count = dict(counts or {})
        """label -> detected occurrences per clip where a label repeats (1 elsewhere)"""
        self._one = np.ones(self.n)
        orders = clip_orders(self.clip_ids)
        self._order = np.array([orders[c] for c in self.clip_ids])
        """each clip's place in clip-id order (the formulas' tie term reads it)"""

    @classmethod
    def from_payloads(cls, payloads: Sequence[Mapping], thresholds: Mapping[str, float],
                      default_threshold: float) -> "SoftIndex":
        """From detected payloads (``events``, ``confidence``, ``track``): detected events win
        over track summaries for the times; the peak is the larger of the track's and the
        event's confidence, the top-3 reading the track's 3-best-frame mean."""
        n = len(payloads)
        peak: dict[str, np.ndarray] = {}
        top3: dict[str, np.ndarray] = {}
        on: dict[str, np.ndarray] = {}
        off: dict[str, np.ndarray] = {}

        def arrays(label: str) -> tuple[np.ndarray, ...]:
            if label not in peak:
                for d in (peak, top3, on, off):
                    d[label] = np.zeros(n)
            return peak[label], top3[label], on[label], off[label]

        for i, pl in enumerate(payloads):
            for label, row in (pl.get("track") or {}).items():
                p_, p3_, on_, off_ = arrays(label)
                p_[i], on_[i], off_[i] = float(row[0]), row[1], row[2]
                p3_[i] = float(row[3] if len(row) > 3 else row[0])
            conf = pl.get("confidence") or {}
            for e in pl.get("events") or ():
                p_, _, on_, off_ = arrays(e["label"])
                p_[i] = max(p_[i], float(conf.get(e["label"], 0.0)))
                on_[i], off_[i] = round(float(e["onset"]) * 1000), round(float(e["offset"]) * 1000)
        cal = lambda d: {lab: calibrated(v, thresholds.get(lab, default_threshold))  # noqa: E731
                         for lab, v in d.items()}
        counts: dict[str, np.ndarray] = {}
        for i, pl in enumerate(payloads):
            for label, c in (pl.get(COUNT_FIELD) or {}).items():
                counts.setdefault(label, np.ones(n))[i] = float(c)
        return cls([str(pl["clip_id"]) for pl in payloads], cal(peak), on, off, counts,
                   presence_top3=cal(top3))

    def p(self, label: str) -> np.ndarray:
        return self._p.get(label, self._zero)

    def times(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        return self._on.get(label, self._zero), self._off.get(label, self._zero)

    def count(self, label: str) -> np.ndarray:
        return self._count.get(label, self._one)

    def column(self, key: str) -> np.ndarray:
        """A formula variable (``soft_p."x"`` etc.) for every clip; zeros without evidence."""
        if key == ORDER:
            return self._order
        field, _, quoted = key.partition(".")
        label = quoted[1:-1]
        if field == PRESENCE:
            return self.p(label)
        if field == COUNT_FIELD:
            # the payload holds a count only where a label repeats; the formula reads a missing
            # one as 0 and takes max(count, 1), so 1 here reads the same
            return self.count(label)
        if field == PRESENCE_TOP3:
            return self._p3.get(label, self._zero)
        on, off = self.times(label)
        if field == ONSET:
            return on / 1000.0
        if field == OFFSET:
            return off / 1000.0
        if field == DURATION:
            return off / 1000.0 - on / 1000.0
        raise KeyError(f"not a soft field: {key!r}")

    def score(self, node: Node) -> np.ndarray:
        """Soft value of ``node`` for every clip, in [0, 1] (the formula, evaluated here)."""
        return evaluate(soft_expr(node), self.column, self.n)

    def ranking_score(self, node: Node) -> np.ndarray:
        """What ``soft:TAGGER`` ranks by: the score plus 1e-3 x its top-3 reading, rescaled."""
        return evaluate(soft_formula(node), self.column, self.n)

    def payload(self, i: int) -> dict[str, Any]:
        """The soft-evidence payload fields of clip ``i`` (store.formula.soft_payload)."""
        fields = {}
        for label in self._p:
            p, p3 = float(self._p[label][i]), float(self._p3[label][i])
            on, off = float(self._on[label][i]), float(self._off[label][i])
            if p or p3 or on or off:
                fields[label] = (p, p3, on / 1000.0, off / 1000.0)
        return soft_payload(fields, float(self._order[i]))
