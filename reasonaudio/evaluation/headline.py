"""The accuracy table: Acc@1 per task (multiple choice in brackets), then overall Acc@1, nDCG@10
and MC, one row per retriever. One generator for the table `bench demo` prints last and for the
README's and docs' blocks (``scripts/doc_figures.py``), so every cell a reader sees on screen is
the cell the docs quote."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from reasonaudio.evaluation.report import rung_of
from reasonaudio.evaluation.results import Results
from reasonaudio.models.names import is_lexical
from reasonaudio.tasks.registry import TASKS

ORDER = ("oracle", "detected:yamnet", "detected:yamnet-enrolled", "detected:yamnet-trained",
         "trained:hard-negatives", "trained:in-batch-only", "two-stage:oracle-caption+minilm", "two-stage:yamnet-caption+minilm",
         "bag-of-sounds", "random")
"""the rows' order: symbolic first, then perception, learned, the controls; others by name after"""


def f3(v: float | None) -> str:
    """A figure to three decimals, ``-`` where there is none."""
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def ordered_names(results: Results, prefix: str = "") -> list[str]:
    """The saved retrievers starting with ``prefix``, in :data:`ORDER`, then the rest by name."""
    have = [n for n in ORDER if n in results.runs and n.startswith(prefix)]
    return have + sorted(n for n in results.runs if n not in ORDER and n.startswith(prefix))


def spectrum_rung(name: str) -> bool:
    """The Qdrant-side rungs the demo adds after detection (soft, BM25, hybrids, fusions): their
    table is docs/qdrant.md's spectrum, not the main job's."""
    return rung_of(name) in ("fused", "hybrid", "soft") or is_lexical(name)


def headline_names(results: Results, job_runs: Sequence[str] = ()) -> list[str]:
    """The main job's table's rows: what the job itself evaluated (``job_runs``; every saved
    result when empty), without the spectrum's rungs."""
    return [n for n in ordered_names(results) if (not job_runs or n in job_runs) and not spectrum_rung(n)]


def tasks_asked(results: Results) -> list[str]:
    """The built-in tasks the evaluated benchmark asks queries of, in :data:`TASKS` order."""
    asked = results.data.get("queries_per_task") or {}
    return [t for t in TASKS if asked.get(t)]


@dataclass(frozen=True)
class AccuracyTable:
    tasks: tuple[str, ...]
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    """per row: the retriever's name, one cell per task, overall Acc@1, nDCG@10, MC"""


def accuracy_table(results: Results, names: Sequence[str], tasks: Sequence[str],
                   mc: bool = True) -> AccuracyTable:
    """The cells of the table for ``names`` over ``tasks`` (``mc``: the multiple-choice accuracy
    in brackets after each task's Acc@1)."""
    rows = []
    for name in names:
        r = results.runs[name]
        cells = [name]
        for t in tasks:
            cell = f3(r.per_task.get(t, {}).get("acc@1"))
            if mc and "mc_acc" in r.per_task.get(t, {}):
                cell += f" ({r.per_task[t]['mc_acc']:.2f})"
            cells.append(cell)
        cells += [f3(r.overall.get("acc@1")), f3(r.overall.get("ndcg@10")), f3(r.overall.get("mc_acc"))]
        rows.append(tuple(cells))
    return AccuracyTable(tuple(tasks), ("retriever", *tasks, "overall Acc@1", "nDCG@10", "MC"), tuple(rows))


def markdown(table: AccuracyTable) -> list[str]:
    """The table as the docs print it (names in backticks, overall Acc@1 in bold)."""
    lines = ["| " + " | ".join(table.header) + " |", "|---|" + "---|" * (len(table.header) - 1)]
    for name, *cells in table.rows:
        *tasks, acc, ndcg, mc = cells
        lines.append(f"| `{name}` | " + " | ".join(tasks) + f" | **{acc}** | {ndcg} | {mc} |")
    return lines
