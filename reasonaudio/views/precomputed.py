"""``bench ingest --vectors``: a progress bar while loading, then one summary line."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reasonaudio.ingest.benchmark import Benchmark
from reasonaudio.ingest.precomputed import CheckedInput, PrecomputedSummary, check_store, ingest_precomputed
from reasonaudio.store.base import Store


def print_precomputed_summary(console: Console, s: PrecomputedSummary) -> None:
    queries = (f" and {s.queries} query vectors -> {s.query_collection}" if s.query_collection
               else " (no query vectors: pass --query-vectors/--query-ids to search them)")
    how = "already complete" if s.upserted == 0 else f"{s.upserted} points written"
    console.print(f"{s.collection}: {s.clips} clip vectors ({s.dimension}-d, {s.distance}){queries}; "
                  f"{how} in {s.seconds:.1f} s on {s.backend}; search with --retriever {s.retriever}",
                  highlight=False, soft_wrap=True)


def ingest_with_progress(console: Console, bench: Benchmark, store: Store,
                         checked: CheckedInput) -> PrecomputedSummary:
    check_store(store, checked)  # an incompatible collection is refused before the bar shows
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as progress:
        task = progress.add_task(f"vectors:{checked.opts.name} -> {store.backend}", total=None)
        summary = ingest_precomputed(
            bench, store, checked,
            progress=lambda done, total: progress.update(task, completed=done, total=total))
    print_precomputed_summary(console, summary)
    return summary
