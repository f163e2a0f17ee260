"""``bench report``'s failure breakdown: per retriever and task, how many queries it failed
(Acc@1 = 0) and what kind of clip it ranked first (``evaluation/failures.py``'s kinds)."""

from __future__ import annotations

from rich import box
from rich.console import Console, RenderableType
from rich.text import Text

from reasonaudio.evaluation.failures import KINDS, Breakdown
from reasonaudio.views.name_cells import NameCell, stacked_table

ALL = "all"
"""the column of every task together"""
FAILED = "failed"


def _block(b: Breakdown, name: str) -> list[list[str]]:
    """``failed/n`` per group, then one row per kind the retriever's failures have."""
    groups = (None, *b.tasks)
    cells = {g: b.cell(name, g) for g in groups}
    n = {g: (sum(b.queries.get(name, {}).values()) if g is None
             else b.queries.get(name, {}).get(g, 0)) for g in groups}
    rows = [[FAILED, *[f"{sum(len(v) for v in cells[g].values())}/{n[g]}" for g in groups]]]
    for kind in KINDS:
        if kind.name in cells[None]:
            rows.append([kind.header, *[str(len(cells[g][kind.name])) if kind.name in cells[g]
                                        else "[dim]·[/]" for g in groups]])
    return rows


def failures_table(b: Breakdown) -> RenderableType:
    """Each retriever's name on a line of its own, under it how many queries it failed per task
    (and over all tasks) and, one row per kind, what it ranked first; the columns keep one width
    from retriever to retriever, so the table reads down as well as across and fits 80 columns."""
    headers = ["", ALL, *b.tasks]
    rows = [(NameCell(Text(name, "cyan")), _block(b, name)) for name in b.retrievers]
    return stacked_table(headers, rows, left=1, box=box.SIMPLE_HEAD)


def print_failures(console: Console, b: Breakdown | None) -> None:
    """The breakdown's title and its table (the failed query ids are in the report's
    ``failures.json``)."""
    if b is None or not b.retrievers:
        return
    console.print(Text("Failures (Acc@1 = 0) by what the retriever ranked first: the planted hard "
                       "negative, or the kind of constraint that clip breaks (docs/evaluation.md, "
                       "\"Failure kinds\"); the query ids are in failures.json", style="italic"),
                  soft_wrap=False)  # wrapped at the width, unlike plain lines
    if not b.records:
        console.print("no failures")
        return
    console.print(failures_table(b))
