"""``bench sweep perception``: the oracle's logic over events heard worse and worse.

For each :class:`~reasonaudio.experiments.perception_model.Level` (the seeded model of imperfect
hearing in :mod:`reasonaudio.experiments.perception_model`) every clip's true events are degraded,
and then:

- **perception** is measured against the truth exactly as ``bench detect``'s report does
  (:func:`reasonaudio.detect.event_metrics.perception`, the same collars): event-based and
  tagging micro F1;
- **retrieval** runs the oracle's logic on the degraded events the way ``detected:TAGGER``
  runs it on a tagger's: the exact filter (the vectorised judge, which the Qdrant filter
  equals) admits clips, admitted clips rank first, and every clip is ordered by the soft score
  of the same logic (:class:`reasonaudio.detect.soft.SoftIndex`, every heard event with
  presence 1): ``score = [admitted] + soft``, ties by clip id. Rank metrics read the first
  ``depth`` clips against the benchmark's true qrels and hard negatives; multiple choice
  compares the positive's and the hard negative's scores.

Level 0 hears every event exactly, so it is the oracle (1.000 on every task). Per task and
baseline (a retriever whose result is saved, e.g. ``bag-of-sounds`` or the best learned one),
the **crossing** is the event F1 at which perceived logic's Acc@1 reaches the baseline's: the
ladder read from its worst level up, linearly interpolated between the last level below the
baseline and the first at or above it, above which no level falls below it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from reasonaudio.dataset.benchmark import Choice, multiple_choice
from reasonaudio.evaluation.metrics import METRICS, OVERALL, aggregate, query_metrics
from reasonaudio.experiments.perception_model import DEFAULT_SEVERITIES, Level, degrade, similar_labels
from reasonaudio.evaluation.results import fingerprint, load_results
from reasonaudio.models.names import is_embedding
from reasonaudio.querylang.judge import ClipIndex, hard_negatives
from reasonaudio.querylang.semantics import occurrences
from reasonaudio.dataset.benchmark import ALL_TASKS
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.detect.event_metrics import (OFFSET_COLLAR_MS, OFFSET_COLLAR_RELATIVE,
                                              ONSET_COLLAR_MS, perception)
from reasonaudio.detect.soft import SoftIndex
from reasonaudio.errors import ReasonAudioError
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.provenance import versions

FORMAT = "reasonaudio-perception-ladder/1"
LADDER_METRICS = ("acc@1", "ndcg@10", "mc_acc")
DEPTH = 100


@dataclass
class Ladder:
    """Every level's perception and retrieval, and the crossings against the baselines."""

    seed: int
    levels: list[dict[str, Any]]
    crossings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """baseline -> task -> {"baseline_acc@1", "event_f1" (None: never reached), "reached"}"""
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "data": self.data, "seed": self.seed,
                "model": "reasonaudio.experiments.perception_model (docs/detection.md, perception ladder)",
                "collars": {"onset_ms": ONSET_COLLAR_MS, "offset_ms": OFFSET_COLLAR_MS,
                            "offset_relative": OFFSET_COLLAR_RELATIVE},
                "ranking": "[admitted by the exact logic] + soft score of the logic, ties by clip "
                           f"id; rank metrics at depth {DEPTH} against the true qrels",
                "levels": self.levels, "crossings": self.crossings, "versions": versions()}


def parse_levels(text: str) -> list[Level]:
    """``--levels``: comma-separated severities in [0, 1] (``Level.severity``), or levels
    written ``miss:false_alarm:jitter_ms:merge_split``; a one-line error otherwise."""
    out = []
    for item in (t.strip() for t in text.split(",")):
        parts = item.split(":")
        try:
            if len(parts) == 1:
                s = float(parts[0])
                if not 0.0 <= s <= 1.0:
                    raise ValueError
                out.append(Level.severity(s))
            elif len(parts) == 4:
                miss, fa, jitter, ms = float(parts[0]), float(parts[1]), int(parts[2]), float(parts[3])
                if not (0 <= miss <= 1 and 0 <= fa <= 1 and jitter >= 0 and 0 <= ms <= 1):
                    raise ValueError
                out.append(Level(miss, fa, jitter, ms))
            else:
                raise ValueError
        except ValueError:
            raise ReasonAudioError(f"--levels: {item!r} is neither a severity in [0, 1] nor "
                                   "miss:false_alarm:jitter_ms:merge_split (rates in [0, 1])") from None
    if not out:
        raise ReasonAudioError("--levels: give at least one level")
    return out


def default_levels() -> list[Level]:
    return [Level.severity(s) for s in DEFAULT_SEVERITIES]


def _soft_index(clips: Sequence[Clip]) -> SoftIndex:
    """Every heard event as evidence of presence 1 with its times (first occurrence) and count."""
    n = len(clips)
    p: dict[str, np.ndarray] = {}
    on: dict[str, np.ndarray] = {}
    off: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    for i, clip in enumerate(clips):
        for label, occ in occurrences(clip.events).items():
            for d in (p, on, off):
                d.setdefault(label, np.zeros(n))
            p[label][i], on[label][i], off[label][i] = 1.0, occ[0][0], occ[0][1]
            if len(occ) > 1:
                counts.setdefault(label, np.ones(n))[i] = len(occ)
    return SoftIndex([c.id for c in clips], p, on, off, counts)


def retrieval(bench: BenchmarkView, heard: Sequence[Clip]) -> dict[str, dict[str, float]]:
    """Per-query metrics of the oracle's logic over the ``heard`` clips (module docstring)."""
    index, soft = ClipIndex(heard), _soft_index(heard)
    ids = np.array([c.id for c in heard])
    pos = {cid: i for i, cid in enumerate(ids)}
    hard = hard_negatives(bench)
    choices: dict[str, list[Choice]] = {}
    for c in bench.choices:
        choices.setdefault(c.query_id, []).append(c)
    per_query: dict[str, dict[str, float]] = {}
    for q in bench.queries:
        score = index.relevant(q.logic).astype(np.float64) + soft.score(q.logic)
        order = np.lexsort((np.arange(len(ids)), -score))[:DEPTH]  # ids are in clip-id order
        values = query_metrics(list(ids[order]), bench.qrels.get(q.id, set()), hard.get(q.id, frozenset()))
        mc = multiple_choice(choices.get(q.id, ()), lambda c: (score[pos[c.positive]], score[pos[c.negative]])
                             if c.positive in pos and c.negative in pos else None)
        if q.id in mc:
            values["mc_acc"] = mc[q.id]
        per_query[q.id] = values
    return per_query


def run_level(bench: BenchmarkView, level: Level, seed: int, similar: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    clips = sorted(bench.clips, key=lambda c: c.id)
    heard = [degrade(c, level, seed, bench.labels, similar) for c in clips]
    report = perception(clips, {c.id: c for c in heard}, bench.labels)
    agg = aggregate(retrieval(bench, heard), {q.id: q.task for q in bench.queries}, ALL_TASKS, METRICS)
    pick = lambda d: {m: round(d[m], 6) for m in LADDER_METRICS if m in d}  # noqa: E731
    return {"params": level.to_json(),
            "event_f1": round(report.total("events").f1, 6),
            "tagging_f1": round(report.total("tagging").f1, 6),
            "per_task": {t: pick(v) for t, v in agg.per_task.items()},
            "overall": pick(agg.overall)}


def crossing(levels: Sequence[dict[str, Any]], task: str, target: float) -> dict[str, Any]:
    """The event F1 at which the ladder's Acc@1 on ``task`` (or ``overall``) reaches ``target``
    (module docstring)."""
    def acc(lv: dict[str, Any]) -> float:
        return (lv["overall"] if task == OVERALL else lv["per_task"].get(task, {})).get("acc@1", 0.0)

    points = sorted((lv["event_f1"], acc(lv)) for lv in levels)
    above = [i for i in range(len(points)) if all(a >= target for _, a in points[i:])]
    if not above:
        return {"baseline_acc@1": target, "event_f1": None, "reached": "never"}
    i = above[0]
    if i == 0:
        return {"baseline_acc@1": target, "event_f1": points[0][0], "reached": "at every level"}
    (f0, a0), (f1, a1) = points[i - 1], points[i]
    f = f1 if a1 == a0 else f0 + (target - a0) * (f1 - f0) / (a1 - a0)
    return {"baseline_acc@1": target, "event_f1": round(f, 4), "reached": "interpolated"}


CONTROL = "bag-of-sounds"


def saved_baselines(bench: BenchmarkView, names: Sequence[str] = ()) -> dict[str, dict[str, float]]:
    """name -> task (and ``overall``) -> Acc@1 of saved results: ``names``, or by default
    bag-of-sounds and the best learned embedding retriever (overall Acc@1) when saved."""
    results = load_results(bench)
    if names:
        missing = [n for n in names if n not in results.runs]
        if missing:
            raise ReasonAudioError(f"no saved results for {', '.join(missing)} on this benchmark "
                                   f"(run `bench eval --data {bench.root} -r NAME` first)")
        chosen = list(names)
    else:
        learned = [r for r in results.runs.values() if is_embedding(r.name)]
        best = max(learned, key=lambda r: (r.overall.get("acc@1", 0.0), r.name)) if learned else None
        chosen = [n for n in (CONTROL, best.name if best else None) if n and n in results.runs]
    return {n: {**{t: v["acc@1"] for t, v in results.runs[n].per_task.items()},
                OVERALL: results.runs[n].overall["acc@1"]} for n in chosen}


def sweep_perception(bench: BenchmarkView, levels: Sequence[Level] | None = None, seed: int = 0,
                     baselines: dict[str, dict[str, float]] | None = None,
                     hooks: Hooks = SILENT) -> Ladder:
    """The ladder over ``levels`` (default: :data:`DEFAULT_SEVERITIES`); ``baselines``: name ->
    task -> Acc@1 of a saved result, for the crossings."""
    levels = list(levels) if levels is not None else default_levels()
    similar = similar_labels(bench.labels)
    progress = hooks.counter("perception ladder")
    rows = []
    for i, level in enumerate(levels):
        rows.append(run_level(bench, level, seed, similar))
        progress(i + 1, len(levels))
    crossings = {name: {t: crossing(rows, t, acc) for t, acc in per_task.items()}
                 for name, per_task in (baselines or {}).items()}
    data = {"fingerprint": fingerprint(bench), "seed": bench.seed, "n_clips": len(bench.clips),
            "n_queries": len(bench.queries)}
    return Ladder(seed, rows, crossings, data)
