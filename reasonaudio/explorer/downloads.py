"""What the explorer offers to download: the overview's tables as CSV, every saved result as the
``bench eval --json`` document, a retriever's saved TREC run, and the failure breakdown as JSON.

Bytes only, built from what the catalog already holds (nothing is written); the web application
sends them as attachments named after the benchmark's own file names (``results.slug``).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from reasonaudio.evaluation.metrics import METRICS

CSV_TYPE = "text/csv; charset=utf-8"
JSON_TYPE = "application/json"
TREC_TYPE = "text/plain; charset=utf-8"


def _number(value: float | None) -> str:
    return "" if value is None or value != value else f"{value:.6f}"


def table_csv(rows: list[dict[str, Any]], dimensions: list[str]) -> str:
    """The overview's table for one task (``Catalog.table``) as CSV: one row per retriever, each
    metric with its interval's bounds, the count of wrong queries. Values to 6 decimals."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["retriever", "reads", *dimensions,
                     *[f"{m}{part}" for m in METRICS for part in ("", "_low", "_high")], "wrong"])
    for row in rows:
        cells = []
        for value, ci in zip(row["values"], row["intervals"]):
            cells += [_number(value), *(_number(x) for x in (ci or (None, None)))]
        writer.writerow([row["name"], row["reads"], *row["dims"], *cells, row["failures"]])
    return out.getvalue()


def json_bytes(doc: Any) -> bytes:
    """``doc`` as indented, key-sorted JSON (same document, same bytes)."""
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def attachment(filename: str) -> dict[str, str]:
    """The header that makes a browser save the answer as ``filename`` (a file-safe slug)."""
    return {"Content-Disposition": f'attachment; filename="{filename}"'}
