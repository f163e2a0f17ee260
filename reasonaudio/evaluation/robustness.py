"""Robustness to the way of asking: every retriever under every formulation, from saved results.

``bench eval --formulation all`` saves one result per retriever and formulation (``NAME`` for
``caption``, ``NAME@FORMULATION`` otherwise) and its TREC run. From those, for each retriever:

- per formulation, Acc@1 and nDCG@10 (or the metrics asked for: the training experiment adds
  multiple choice) over the queries that have that formulation, and the change from ``caption``
  on those same queries with a paired randomization test
  (:func:`reasonaudio.evaluation.significance.paired_randomization_test`, 10,000 sign flips, seed 0);
- **consistency@1**: the share of queries whose top-1 clip is the same under every formulation
  the query has (a query a formulation leaves unanswered counts as inconsistent).

Silent; ``bench report`` prints it (views/robustness.py) and plots it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from reasonaudio.evaluation.metrics import LABELS, MC_METRIC
from reasonaudio.evaluation.plots import Style, _plt, _save, legend_below, retriever_styles
from reasonaudio.dataset.keys import ResultKey
from reasonaudio.evaluation.results import RetrieverResult, load_results, run_path
from reasonaudio.evaluation.runs import read_trec
from reasonaudio.evaluation.significance import paired_randomization_test
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import DataError
from reasonaudio.fileio import write_json
from reasonaudio.tasks.base import CAPTION, FORMULATIONS
from reasonaudio.tasks.formulation_records import default_formulation, is_default

ROBUSTNESS_METRICS = ("acc@1", "ndcg@10")


@dataclass(frozen=True)
class Cell:
    """One retriever under one formulation."""

    formulation: str
    n: int
    """queries with this formulation"""
    values: dict[str, float]
    """metric -> mean over those queries"""
    caption: dict[str, float]
    """metric -> the caption's mean over the same queries"""
    p_values: dict[str, float]
    """metric -> paired test p-value of the change from caption (1.0 for caption itself)"""

    def delta(self, metric: str) -> float:
        return self.values[metric] - self.caption[metric]

    def to_json(self) -> dict[str, Any]:
        return {"formulation": self.formulation, "n": self.n, "values": self.values,
                "caption": self.caption,
                "delta": {m: self.delta(m) for m in self.values}, "p_values": self.p_values}


@dataclass(frozen=True)
class RetrieverRobustness:
    name: str
    cells: list[Cell]
    consistency_at_1: float | None
    """None when no run file of some formulation is saved"""
    n_consistent: int = 0
    n_queries: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "consistency@1": self.consistency_at_1,
                "consistent": self.n_consistent, "queries": self.n_queries,
                "formulations": [c.to_json() for c in self.cells]}


@dataclass(frozen=True)
class Robustness:
    rows: list[RetrieverRobustness] = field(default_factory=list)
    metrics: tuple[str, ...] = ROBUSTNESS_METRICS

    def to_json(self) -> dict[str, Any]:
        return {"metrics": list(self.metrics), "retrievers": [r.to_json() for r in self.rows]}


def paired_cell(caption: RetrieverResult, other: RetrieverResult,
                metrics: Sequence[str] = ROBUSTNESS_METRICS) -> Cell:
    """``other`` against ``caption`` over the queries both answered: means and the paired test
    (also how evaluation/by_example.py pairs a named run with its by-example run)."""
    qids = sorted(q for q in other.task_of if q in caption.task_of)
    values, base, p = {}, {}, {}
    for m in metrics:
        # multiple choice exists only where the query has a choice pair: compare those queries
        have = qids if m != MC_METRIC else [q for q in qids if m in other.per_query.get(q, {})
                                             and m in caption.per_query.get(q, {})]
        a, b = other.values(m, have), caption.values(m, have)
        values[m] = sum(a) / len(a) if a else 0.0
        base[m] = sum(b) / len(b) if b else 0.0
        p[m] = 1.0 if is_default(other.formulation) else paired_randomization_test(a, b).p_value
    return Cell(other.formulation, len(qids), values, base, p)


def _top1(bench: BenchmarkView, key: str) -> dict[str, str] | None:
    path = run_path(bench, key)
    if not path.is_file():
        return None
    try:
        run = read_trec(path)
    except DataError:
        return None
    return {q: ranking[0] for q in run.hits if (ranking := run.ranking(q))}


def consistency(bench: BenchmarkView, name: str, results: dict[str, RetrieverResult]
                ) -> tuple[float | None, int, int]:
    """(consistency@1, consistent queries, queries) of ``name`` over the formulations in
    ``results`` (formulation -> result); None when a run file is missing."""
    tops = {}
    for form in results:
        top = _top1(bench, ResultKey(name, view=form).stored_name)
        if top is None:
            return None, 0, 0
        tops[form] = top
    qids = sorted(results[default_formulation()].task_of)
    same = 0
    for q in qids:
        picks = [tops[f].get(q) for f, r in results.items() if q in r.task_of]
        same += int(None not in picks and len(set(picks)) == 1)
    return (same / len(qids) if qids else None), same, len(qids)


def robustness(bench: BenchmarkView, names: Sequence[str] | None = None,
               metrics: Sequence[str] = ROBUSTNESS_METRICS) -> Robustness:
    """Every retriever with a saved ``caption`` result and at least one other formulation
    (``names``: those only), scored on ``metrics``."""
    saved = load_results(bench, formulations=True).runs
    by_name: dict[str, dict[str, RetrieverResult]] = {}
    for key, r in saved.items():
        base = key[: -len(r.formulation) - 1] if r.formulation != CAPTION else key
        by_name.setdefault(base, {})[r.formulation] = r
    rows = []
    for name, forms in by_name.items():
        if names is not None and name not in names:
            continue
        ordered = {f: forms[f] for f in FORMULATIONS if f in forms}  # not NAME@interleaved
        if default_formulation() not in ordered or len(ordered) < 2:
            continue
        cells = [paired_cell(ordered[default_formulation()], r, metrics) for r in ordered.values()]
        c, same, n = consistency(bench, name, ordered)
        rows.append(RetrieverRobustness(name, cells, c, same, n))
    rows.sort(key=lambda r: (r.name != "oracle", r.name))
    return Robustness(rows=rows, metrics=tuple(metrics))


def plot_robustness(rob: Robustness, out: Path,
                    styles: Mapping[str, Style] | None = None) -> list[Path]:
    """``robustness.png`` (Acc@1 per retriever x formulation, consistency@1 in the legend) and
    ``robustness.json`` beside it; nothing without rows."""
    if not rob.rows:
        return []
    plt = _plt()
    forms = [f for f in FORMULATIONS if any(c.formulation == f for r in rob.rows for c in r.cells)]
    x = np.arange(len(forms), dtype=float)
    width = 0.8 / len(rob.rows)
    styles = styles or retriever_styles(r.name for r in rob.rows)
    fig, axes = plt.subplots(len(ROBUSTNESS_METRICS), 1, sharex=True, layout="constrained",
                             figsize=(max(8.0, 1.4 * len(forms) + 0.5 * len(rob.rows)),
                                      3.0 * len(ROBUSTNESS_METRICS) + 0.8))
    for ax, metric in zip(np.atleast_1d(axes), ROBUSTNESS_METRICS):
        for i, r in enumerate(rob.rows):
            by = {c.formulation: c.values[metric] for c in r.cells}
            cons = "-" if r.consistency_at_1 is None else f"{r.consistency_at_1:.2f}"
            bars = ax.bar(x - 0.4 + width * (i + 0.5), [by.get(f, np.nan) for f in forms], width,
                          label=f"{r.name} (consistency@1 {cons})", color=styles[r.name].colour,
                          hatch=styles[r.name].hatch, edgecolor="white", linewidth=0.5)
            if len(rob.rows) <= 6:
                ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
        ax.set_ylim(0, 1.12)
        ax.set_ylabel(LABELS.get(metric, metric))
        ax.set_title(f"{LABELS.get(metric, metric)} by formulation", loc="left", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    np.atleast_1d(axes)[-1].set_xticks(x, forms)
    handles, labels = np.atleast_1d(axes)[-1].get_legend_handles_labels()
    fig.suptitle("ReasonAudio: the same queries, asked in different ways", fontsize=12)
    legend_below(fig, handles, labels, 3)
    path = _save(fig, Path(out) / "robustness.png")
    plt.close(fig)
    write_json(path.with_suffix(".json"), rob.to_json())
    return [path, path.with_suffix(".json")]
