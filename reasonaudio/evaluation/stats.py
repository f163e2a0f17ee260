"""Counts a reader wants before trusting a benchmark (``bench info``, the build summary, tests)."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from reasonaudio.querylang.judge import benchmark_index
from reasonaudio.dataset.benchmark import tasks_present
from reasonaudio.dataset.view import BenchmarkView


def benchmark_stats(bench: BenchmarkView) -> dict[str, Any]:
    """Counts a reader wants before trusting a benchmark (also used by tests and `--json`)."""
    clips, queries = bench.clips, bench.queries
    index = benchmark_index(bench)
    per_task: dict[str, dict[str, Any]] = {}
    for task in tasks_present([q.task for q in queries]):
        qs = [q for q in queries if q.task == task]
        rel = [len(bench.qrels.get(q.id, ())) for q in qs]
        hard = [int(index.hard_negatives(q.logic).sum()) for q in qs]
        per_task[task] = {
            "queries": len(qs),
            "relevant_median": statistics.median(rel) if rel else 0,
            "relevant_max": max(rel, default=0),
            "hard_negatives_median": statistics.median(hard) if hard else 0,
            "hard_negatives_max": max(hard, default=0),
            "without_relevant": sum(r == 0 for r in rel),
            "without_hard_negative": sum(h == 0 for h in hard),
        }
    return {
        "clips": len(clips),
        "clips_by_mode": dict(Counter(c.mode for c in clips)),
        "events_per_clip": dict(sorted(Counter(len(c.events) for c in clips).items())),
        "clip_seconds": {"min": min(c.duration for c in clips), "median": statistics.median(c.duration for c in clips),
                         "max": max(c.duration for c in clips)} if clips else {},
        "queries": len(queries),
        "classes": len(bench.labels),
        "per_task": per_task,
    }
