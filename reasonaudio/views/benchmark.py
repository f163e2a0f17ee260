"""Rich summaries of a benchmark: after `bench build` and for `bench info`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.evaluation.stats import benchmark_stats
from reasonaudio.dataset.view import BenchmarkView


def print_info(console: Console, bench: BenchmarkView) -> dict[str, Any]:
    stats = benchmark_stats(bench)
    m = bench.manifest
    console.print(Text.assemble((str(bench.root), "bold"),
                                f"  seed {m.get('seed')}  atoms {m.get('parameters', {}).get('atoms')} "
                                f"({stats['classes']} classes)"))
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


def print_calibration_builds(console: Console, made: Sequence[Any]) -> None:
    """One line per calibration build ``bench build --calibration-for`` made or kept."""
    for m in made:
        console.print(Text.assemble(("kept" if m.reused else "built", "cyan" if m.reused else "green"),
                                    f" {m.build.root}: {len(m.build.clips)} clips, "
                                    f"{len(m.build.queries)} queries, seed {m.build.seed}; the "
                                    f"calibration build of {m.of.root}"))


def print_build_summary(console: Console, out: Path, manifest: dict[str, Any]) -> None:
    counts = manifest["counts"]
    modes = counts["clips_by_mode"]
    tasks = ", ".join(f"{t} {n}" for t, n in counts["queries_by_task"].items())
    console.print(Text.assemble(("built", "green"),
                                f" {out}: {counts['clips']} clips (sequential {modes['sequential']}, "
                                f"overlap {modes['overlap']}), {counts['queries']} queries ({tasks}), "
                                f"{counts['qrels']} relevant pairs, {counts['classes']} classes, "
                                f"seed {manifest['seed']}"))
    for what, n in manifest.get("adjustments", {}).items():
        console.print(Text.assemble(("adjusted", "yellow"), f" {n} x {what}"))
