"""``bench ingest --vectors``: a progress bar while loading, then one summary line."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from reasonaudio.dataset.benchmark import Benchmark
from reasonaudio.ingest.vector_files import CheckedInput, PrecomputedSummary, ingest_precomputed
from reasonaudio.store.base import Store
from reasonaudio.views.progress import progress_hooks


def print_precomputed_summary(console: Console, s: PrecomputedSummary) -> None:
    queries = (f" and {s.queries} query vectors -> {s.query_collection}" if s.query_collection
               else " (no query vectors: pass --query-vectors/--query-ids to search them)")
    how = "already complete" if s.upserted == 0 else f"{s.upserted} points written"
    console.print(Text(f"{s.collection}: {s.clips} clip vectors ({s.dimension}-d, {s.distance}){queries}; "
                       f"{how} in {s.seconds:.1f} s on {s.backend}; search with --retriever {s.retriever}"))


def ingest_with_progress(console: Console, bench: Benchmark, store: Store,
                         checked: CheckedInput) -> PrecomputedSummary:
    with progress_hooks(console) as hooks:
        summary = ingest_precomputed(bench, store, checked, hooks=hooks)
    print_precomputed_summary(console, summary)
    return summary
