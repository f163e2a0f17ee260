"""A seeded model of imperfect hearing: each clip's true events degraded at a severity level.

The perception ladder (:mod:`reasonaudio.experiments.perception_ladder`) runs the oracle's logic on
events degraded by this model, so the question "how good must hearing be?" has an answer on
any benchmark without a tagger. One :class:`Level` holds four error rates; for each clip:

1. **misses**: each true occurrence is lost with probability ``miss``;
2. **boundary error**: each kept occurrence's onset and offset move independently by up to
   ``jitter_ms`` (uniform), kept inside the clip and at least :data:`MIN_EVENT_MS` long;
3. **merged or split occurrences**: with probability ``merge_split`` an occurrence of at
   least :data:`SPLIT_MIN_MS` is split in two around a gap of
   :data:`~reasonaudio.dataset.clip.REPEAT_GAP_MS` at its middle (a detector that loses the
   sound for a moment hears it twice); occurrences of one label left less than
   ``REPEAT_GAP_MS`` apart are merged into one (what a detector's gap merging does), so a
   repeated sound drawn closer by jitter is heard once;
4. **false alarms**: each of :data:`FALSE_ALARM_SLOTS` slots fires with probability
   ``false_alarm`` and adds an event of a label the clip does not hold, drawn with
   probability :data:`CONFUSION` from the labels **acoustically similar** to one of the
   clip's true labels (:func:`similar_labels`: labels sharing a content word, such as "dog
   barking" and "dog howling", the sound family a tagger confuses) and otherwise from the
   whole bank; it lasts 0.5 to 3 s at a uniform place.

Every random number comes from one stream per clip, ``numpy.random.default_rng([seed,
sha256(clip id)])``, drawn in the same order at every level (common random numbers): an
occurrence missed at a level is missed at every more severe level, so the ladder's curves
move by the level, not by new draws. Level 0 (all rates 0) returns every clip unchanged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from reasonaudio.seeds import seeded_rng
from reasonaudio.querylang.semantics import occurrences
from reasonaudio.dataset.clip import REPEAT_GAP_MS, Clip, Event

MIN_EVENT_MS = 100
SPLIT_MIN_MS = 1500
FALSE_ALARM_SLOTS = 3
CONFUSION = 0.7
FALSE_ALARM_MS = (500, 3000)
_STOP = frozenset("a an and the of on in with by at to from for".split())


@dataclass(frozen=True)
class Level:
    """One rung of the ladder: the error rates of the perception model."""

    miss: float = 0.0
    false_alarm: float = 0.0
    jitter_ms: int = 0
    merge_split: float = 0.0

    @classmethod
    def severity(cls, s: float) -> "Level":
        """The default ladder's level of severity ``s`` in [0, 1]: misses and false alarms at
        rate ``s``, boundaries moved by up to ``2 s`` seconds, merges and splits at ``s / 2``."""
        return cls(miss=s, false_alarm=s, jitter_ms=int(round(2000 * s)), merge_split=s / 2)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


DEFAULT_SEVERITIES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6)


def similar_labels(labels: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """label -> the other labels sharing a content word with it, sorted (its sound family)."""
    words = {lab: {w for w in lab.lower().replace("-", " ").split() if w not in _STOP}
             for lab in labels}
    return {lab: tuple(sorted(o for o in labels if o != lab and words[lab] & words[o]))
            for lab in labels}


def _rng(seed: int, clip_id: str) -> np.random.Generator:
    return seeded_rng(seed, clip_id)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for on, off in sorted(spans):
        if out and on - out[-1][1] < REPEAT_GAP_MS:
            out[-1] = (out[-1][0], max(out[-1][1], off))
        else:
            out.append((on, off))
    return out


def degrade(clip: Clip, level: Level, seed: int, labels: Sequence[str],
            similar: dict[str, tuple[str, ...]]) -> Clip:
    """``clip`` as the perception model at ``level`` hears it (module docstring)."""
    rng = _rng(seed, clip.id)
    end = int(round(clip.duration * 1000))
    heard: dict[str, list[tuple[int, int]]] = {}
    for label, occ in sorted(occurrences(clip.events).items()):
        for on, off in occ:
            u_miss, u_on, u_off, u_split = rng.random(4)
            if u_miss < level.miss:
                continue
            on = int(round(on + (2 * u_on - 1) * level.jitter_ms))
            off = int(round(off + (2 * u_off - 1) * level.jitter_ms))
            on, off = max(0, min(on, end - MIN_EVENT_MS)), min(end, max(off, MIN_EVENT_MS))
            if off - on < MIN_EVENT_MS:
                off = min(end, on + MIN_EVENT_MS)
            if u_split < level.merge_split and off - on >= SPLIT_MIN_MS:
                mid = (on + off) // 2
                heard.setdefault(label, []).extend([(on, mid - REPEAT_GAP_MS // 2),
                                                    (mid + REPEAT_GAP_MS // 2, off)])
            else:
                heard.setdefault(label, []).append((on, off))
    true_labels = sorted({e.label for e in clip.events})
    for _ in range(FALSE_ALARM_SLOTS):
        u_fire, u_conf, u_pick, u_len, u_at = rng.random(5)
        if u_fire >= level.false_alarm:
            continue
        source = true_labels[int(u_pick * len(true_labels))] if true_labels else None
        family = [x for x in similar.get(source, ()) if x not in heard] if source else []
        pool = family if family and u_conf < CONFUSION else [x for x in labels if x not in heard]
        if not pool:
            continue
        label = pool[int(u_pick * len(pool)) % len(pool)]
        length = int(FALSE_ALARM_MS[0] + u_len * (FALSE_ALARM_MS[1] - FALSE_ALARM_MS[0]))
        length = min(length, end)
        on = int(u_at * (end - length))
        heard[label] = [(on, on + length)]
    events = [Event(label, on / 1000, off / 1000, "perceived", 0.0)
              for label, spans in heard.items() for on, off in _merged(spans)]
    events.sort(key=lambda e: (e.onset, e.label))
    return Clip(clip.id, clip.mode, clip.duration, clip.sample_rate, tuple(events))
