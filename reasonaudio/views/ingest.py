"""The ingest summary table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.retrievers.ingest_request import DERIVED, MODEL, PRECOMPUTED, IngestOutcome
from reasonaudio.ingest.run import IngestSummary
from reasonaudio.store.collections import LoadResult
from reasonaudio.views.vector_files import print_precomputed_summary


def print_ingest_summary(console: Console, summary: IngestSummary) -> None:
    table = Table(title=Text(f"ingest {summary.model} -> {summary.collection} ({summary.backend})"),
                  show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    rows = [
        ("clips in the collection", f"{summary.clips:,}"),
        ("already stored (skipped)", f"{summary.already_stored:,}"),
        ("upserted now", f"{summary.upserted:,}"),
        ("embedded now (model run)", f"{summary.embedded:,}"),
        ("served by the embedding cache", f"{summary.cache_hits:,}"),
        ("wall time", f"{summary.wall_s:.1f} s"),
        ("clips/s (upserted / wall)", f"{summary.clips_per_s:.1f}"),
        ("  rendering (background thread)", f"{summary.render_s:.1f} s"),
        ("  model inputs (background thread)", f"{summary.units_s:.1f} s"),
        ("  waiting for renders", f"{summary.render_wait_s:.1f} s"),
        ("  model calls", f"{summary.model_s:.1f} s ({summary.model_calls} calls, "
                          f"{summary.padded_units} padding units)"),
    ]
    if summary.resumed:
        rows.append(("resumed an interrupted ingest", "yes"))
    for kind, n in summary.adjustments.items():
        rows.append((f"render adjustments: {kind}", str(n)))
    for what, value in rows:
        table.add_row(what, value)
    console.print(table)


def print_payload_result(console: Console, result: LoadResult, backend: str) -> None:
    """One line after `bench ingest --model none`."""
    how = ("already complete" if result.upserted == 0 else
           f"{'resumed, ' if result.resumed else ''}{result.upserted} points written")
    console.print(Text(f"{result.collection}: {result.points} points ({how}) in {result.seconds:.1f} s "
                       f"on {backend}"))


def print_ingest_outcome(console: Console, outcome: IngestOutcome) -> None:
    """What one ``bench ingest`` loaded, in the form of its kind."""
    if outcome.kind == MODEL:
        print_ingest_summary(console, outcome.summary)
    elif outcome.kind == PRECOMPUTED:
        print_precomputed_summary(console, outcome.summary)
    elif outcome.kind == DERIVED:
        console.print(Text(f"{outcome.model}: collection {outcome.summary} ready"))
    else:
        print_payload_result(console, outcome.summary, outcome.backend)
