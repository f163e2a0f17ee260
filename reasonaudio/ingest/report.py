"""Rich summaries of a benchmark: after `bench build` and for `bench info`."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from reasonaudio.dataset.benchmark import TASKS, Benchmark


def benchmark_stats(bench: Benchmark) -> dict[str, Any]:
    """Counts a reader wants before trusting a benchmark (also used by tests and `--json`)."""
    clips, queries = bench.clips, bench.queries
    index = bench.clip_index
    per_task: dict[str, dict[str, Any]] = {}
    for task in TASKS:
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


def print_info(console: Console, bench: Benchmark) -> dict[str, Any]:
    stats = benchmark_stats(bench)
    m = bench.manifest
    console.print(f"[bold]{bench.root}[/]  seed {m.get('seed')}  atoms "
                  f"{m.get('parameters', {}).get('atoms')} ({stats['classes']} classes)")
    modes = stats["clips_by_mode"]
    secs = stats["clip_seconds"]
    console.print(f"clips: {stats['clips']}  (sequential {modes.get('sequential', 0)}, overlap "
                  f"{modes.get('overlap', 0)});  clip length {secs.get('min', 0):.1f} / "
                  f"{secs.get('median', 0):.1f} / {secs.get('max', 0):.1f} s (min / median / max)")

    hist = Table(title="events per clip", show_header=True)
    hist.add_column("events", justify="right")
    hist.add_column("clips", justify="right")
    hist.add_column("")
    most = max(stats["events_per_clip"].values(), default=1)
    for n, count in stats["events_per_clip"].items():
        hist.add_row(str(n), str(count), "█" * max(1, round(30 * count / most)))
    console.print(hist)

    table = Table(title="queries per task", caption="relevant, hard negatives: median / max per query")
    for col in ("task", "queries", "relevant", "hard negatives", "none relevant", "no hard neg."):
        table.add_column(col, justify="right" if col != "task" else "left")
    for task, row in stats["per_task"].items():
        table.add_row(task, str(row["queries"]),
                      f"{row['relevant_median']:g} / {row['relevant_max']}",
                      f"{row['hard_negatives_median']:g} / {row['hard_negatives_max']}",
                      _flag(row["without_relevant"]), _flag(row["without_hard_negative"]))
    console.print(table)
    return stats


def _flag(n: int) -> str:
    return "0" if n == 0 else f"[bold red]{n}[/]"


def print_build_summary(console: Console, out: Path, manifest: dict[str, Any]) -> None:
    counts = manifest["counts"]
    modes = counts["clips_by_mode"]
    tasks = ", ".join(f"{t} {n}" for t, n in counts["queries_by_task"].items())
    console.print(f"[green]built[/] {out}: {counts['clips']} clips (sequential {modes['sequential']}, "
                  f"overlap {modes['overlap']}), {counts['queries']} queries ({tasks}), "
                  f"{counts['qrels']} relevant pairs, {counts['classes']} classes, seed {manifest['seed']}")
    for what, n in manifest.get("adjustments", {}).items():
        console.print(f"[yellow]adjusted[/] {n} x {what}")
