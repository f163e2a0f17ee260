"""The failures page's tables: a breakdown of saved failures by retriever, task and kind.

Counts come from :func:`reasonaudio.evaluation.failures.breakdown` (what each retriever ranked first
and the kind of constraint that clip breaks, from the saved runs); this module only arranges them
for one task (``all``: every task summed) or for one retriever over every task. Kinds are
listed in the library's priority order (:data:`~reasonaudio.evaluation.failures.KINDS`), only those
that occur.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from reasonaudio.evaluation.failures import KINDS, Breakdown

ALL = "all"


@dataclass(frozen=True)
class KindRow:
    """One row of a breakdown: a retriever (or a task) with its queries, failures and their kinds."""

    key: str
    """the retriever's name, or the task"""
    queries: int
    failed: int
    counts: dict[str, int]
    """kind -> failures of that kind (every kind of the table, zeros too)"""


def _queries(bd: Breakdown, name: str, task: str) -> int:
    per_task = bd.queries.get(name, {})
    return sum(per_task.values()) if task == ALL else per_task.get(task, 0)


def _row(bd: Breakdown, key: str, name: str, task: str, kinds: Sequence[str]) -> KindRow:
    cell = bd.cell(name, None if task == ALL else task)
    counts = {k: len(cell.get(k, ())) for k in kinds}
    return KindRow(key, _queries(bd, name, task), sum(len(v) for v in cell.values()), counts)


def by_retriever(bd: Breakdown, task: str) -> tuple[list[str], list[KindRow]]:
    """(kinds present, one row per retriever) for ``task`` (or ``all``)."""
    kinds = list(bd.kinds_present())
    return kinds, [_row(bd, name, name, task, kinds) for name in bd.retrievers]


def by_task(bd: Breakdown, name: str) -> tuple[list[str], list[KindRow]]:
    """(kinds present, one row per task then ``all``) for retriever ``name``."""
    kinds = list(bd.kinds_present())
    return kinds, [_row(bd, task, name, task, kinds) for task in (*bd.tasks, ALL)]


def meanings() -> list[tuple[str, str]]:
    """(kind, what it means) for every kind, in priority order (the page's legend)."""
    return [(k.name, k.means) for k in KINDS]
