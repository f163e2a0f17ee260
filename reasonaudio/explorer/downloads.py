"""What the explorer offers to download: the overview's tables as CSV, every saved result as the
``bench eval --json`` document, a retriever's saved TREC run, and the failure breakdown as JSON.

Bytes only, built from what the catalog already holds (nothing is written); the web application
sends them as attachments named after the benchmark's own file names (``results.slug``).

A saved results file that cannot be read (corrupt, cut, not results: ``Results.unreadable``) is
in none of the tables and documents, and each of them says so: the JSON documents list it under
:data:`UNREADABLE`, the CSV tables in a row of its own after the retrievers', and their answers
carry :data:`UNREADABLE_HEADER` with the count (the overview page says it too).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from reasonaudio.evaluation.metrics import METRICS

CSV_TYPE = "text/csv; charset=utf-8"
JSON_TYPE = "application/json"
TREC_TYPE = "text/plain; charset=utf-8"
UNREADABLE = "unreadable"
"""a JSON download's key for the saved results files it leaves out, each ``PATH: why``"""
UNREADABLE_HEADER = "X-Unreadable-Results"
"""how many saved results files a download leaves out (absent when none)"""
UNREADABLE_ROW = "unreadable: "
"""how a CSV table's row for a results file it leaves out starts (its first cell)"""


def _number(value: float | None) -> str:
    return "" if value is None or value != value else f"{value:.6f}"


def table_csv(rows: list[dict[str, Any]], dimensions: list[str], unreadable: Sequence[str] = ()) -> str:
    """The overview's table for one task (``Catalog.table``) as CSV: one row per retriever, each
    metric with its interval's bounds, the count of wrong queries. Values to 6 decimals. Then a
    row per ``unreadable`` results file: its first cell :data:`UNREADABLE_ROW` and ``PATH: why``,
    the rest empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = ["retriever", "reads", *dimensions,
              *[f"{m}{part}" for m in METRICS for part in ("", "_low", "_high")], "wrong"]
    writer.writerow(header)
    for row in rows:
        cells = []
        for value, ci in zip(row["values"], row["intervals"]):
            cells += [_number(value), *(_number(x) for x in (ci or (None, None)))]
        writer.writerow([row["name"], row["reads"], *row["dims"], *cells, row["failures"]])
    for line in unreadable:
        writer.writerow([f"{UNREADABLE_ROW}{line}", *[""] * (len(header) - 1)])
    return out.getvalue()


def with_unreadable(doc: dict[str, Any], unreadable: Sequence[str]) -> dict[str, Any]:
    """A JSON download's document with the results files it leaves out listed under
    :data:`UNREADABLE` (the document as it is when there are none)."""
    return {**doc, UNREADABLE: list(unreadable)} if unreadable else doc


def unreadable_header(unreadable: Sequence[str]) -> dict[str, str]:
    """:data:`UNREADABLE_HEADER` with the count of results files left out (none when none)."""
    return {UNREADABLE_HEADER: str(len(unreadable))} if unreadable else {}


def json_bytes(doc: object) -> bytes:
    """``doc`` as indented, key-sorted JSON (same document, same bytes)."""
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def attachment(filename: str) -> dict[str, str]:
    """The header that makes a browser save the answer as ``filename`` (a file-safe slug)."""
    return {"Content-Disposition": f'attachment; filename="{filename}"'}
