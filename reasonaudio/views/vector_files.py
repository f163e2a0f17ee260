"""``bench ingest --vectors``: the one summary line."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from reasonaudio.ingest.vector_files import PrecomputedSummary


def print_precomputed_summary(console: Console, s: PrecomputedSummary) -> None:
    queries = (f" and {s.queries} query vectors -> {s.query_collection}" if s.query_collection
               else " (no query vectors: pass --query-vectors/--query-ids to search them)")
    how = "already complete" if s.upserted == 0 else f"{s.upserted} points written"
    console.print(Text(f"{s.collection}: {s.clips} clip vectors ({s.dimension}-d, {s.distance}){queries}; "
                       f"{how} in {s.seconds:.1f} s on {s.backend}; search with --retriever {s.retriever}"))

