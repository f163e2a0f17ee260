"""How well the detector hears: event-based precision / recall / F1 per label (sed_eval style).

A detected event matches the true event of the same label in the same clip when its onset is
within ``ONSET_COLLAR_MS`` (250 ms) of the true onset and its offset within
``max(250 ms, 20% of the true event's length)`` of the true offset (DCASE's event-based
metric with its usual collars; each clip holds a label at most once on both sides, so the
matching is one-to-one by construction). A detected event that does not match is a false
positive, a true event without a match a false negative. ``tagging`` counts the same per clip
without the times (was the label heard at all?), so timing and hearing can be read apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from reasonaudio.querylang.semantics import occurrences
from reasonaudio.dataset.clip import Clip
from reasonaudio.types import MillisecondsLike

ONSET_COLLAR_MS = 250
OFFSET_COLLAR_MS = 250
OFFSET_COLLAR_RELATIVE = 0.2


def matches(truth: tuple[MillisecondsLike, MillisecondsLike],
            found: tuple[MillisecondsLike, MillisecondsLike]) -> np.bool_ | np.ndarray:
    """Whether ``found`` (onset, offset) ms matches ``truth`` within the collars: of ints, a
    bool; of integer arrays, element-wise (the calibration's search scores every detection and
    shift at once by this same rule)."""
    (t_on, t_off), (f_on, f_off) = truth, found
    offset_collar = np.maximum(OFFSET_COLLAR_MS, OFFSET_COLLAR_RELATIVE * (t_off - t_on))
    return (np.abs(f_on - t_on) <= ONSET_COLLAR_MS) & (np.abs(f_off - t_off) <= offset_collar)


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        d = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / d if d else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": round(self.precision, 4),
                "recall": round(self.recall, 4), "f1": round(self.f1, 4)}


@dataclass
class PerceptionReport:
    events: dict[str, Counts] = field(default_factory=dict)
    """label -> event-based counts (times within the collars)"""
    tagging: dict[str, Counts] = field(default_factory=dict)
    """label -> clip-level counts (label heard or not)"""

    def total(self, which: str = "events") -> Counts:
        out = Counts()
        for c in getattr(self, which).values():
            out.tp, out.fp, out.fn = out.tp + c.tp, out.fp + c.fp, out.fn + c.fn
        return out

    def macro_f1(self, which: str = "events") -> float:
        table = [c for c in getattr(self, which).values() if c.tp + c.fn > 0]
        return sum(c.f1 for c in table) / len(table) if table else 0.0

    def worst(self, n: int = 10) -> list[str]:
        """Labels with true events, lowest event F1 first (then most true events, then name)."""
        having = [lab for lab, c in self.events.items() if c.tp + c.fn > 0]
        return sorted(having, key=lambda lab: (self.events[lab].f1, -(self.events[lab].tp +
                                                                        self.events[lab].fn), lab))[:n]

    def to_json(self) -> dict[str, Any]:
        return {"collars": {"onset_ms": ONSET_COLLAR_MS, "offset_ms": OFFSET_COLLAR_MS,
                            "offset_relative": OFFSET_COLLAR_RELATIVE},
                "events_micro": self.total("events").to_json(),
                "events_macro_f1": round(self.macro_f1("events"), 4),
                "tagging_micro": self.total("tagging").to_json(),
                "tagging_macro_f1": round(self.macro_f1("tagging"), 4),
                "per_label": {lab: {"events": self.events[lab].to_json(),
                                    "tagging": self.tagging[lab].to_json()}
                              for lab in sorted(self.events)}}


def spans(events: Iterable[Any]) -> dict[str, tuple[int, int]]:
    """label -> (first onset, last offset) in ms: the one interval of a label that occurs once,
    the span of its occurrences when it repeats (what the span-policy detector reports)."""
    return {label: (occ[0][0], max(off for _, off in occ))
            for label, occ in occurrences(events).items()}


def perception(truth: Iterable[Clip], detected: Mapping[str, Clip],
               labels: Sequence[str] = ()) -> PerceptionReport:
    """Compare each true clip with the detected clip of the same id."""
    report = PerceptionReport({lab: Counts() for lab in labels}, {lab: Counts() for lab in labels})
    for clip in truth:
        ref = spans(clip.events)
        det = clip.id in detected and spans(detected[clip.id].events) or {}
        for label in set(ref) | set(det):
            ev = report.events.setdefault(label, Counts())
            tg = report.tagging.setdefault(label, Counts())
            r, d = ref.get(label), det.get(label)
            if r is not None and d is not None:
                tg.tp += 1
                if matches(r, d):
                    ev.tp += 1
                else:
                    ev.fp += 1
                    ev.fn += 1
            elif r is not None:
                tg.fn += 1
                ev.fn += 1
            else:
                tg.fp += 1
                ev.fp += 1
    return report
