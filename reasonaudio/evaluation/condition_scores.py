"""Scores per acoustic condition: which conditions a command runs, the saved results of every
condition side by side, the figure against SNR, and comparisons across conditions.

A benchmark is read under one condition at a time (a
:class:`~reasonaudio.dataset.view.BenchmarkView` holds one), so each condition gets its own view
of the same files (``bench.with_condition(name)``); results of each sit in that condition's
results folder. Queries, qrels and choices are the same files under every
condition, so per-query values pair across conditions exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.evaluation.plots import Style, _plt, _save, legend_below, retriever_styles
from reasonaudio.evaluation.results import RESULTS_DIR, Results, load_results, results_dir
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.conditions import (
    CLEAN,
    parse_condition,
    recorded_conditions,
)
from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_file, read_json

CONDITION_METRICS = ("acc@1", "ndcg@10", "mc_acc")
SNR_PLOT = "metrics_vs_snr.png"


def saved_conditions(bench: BenchmarkView) -> list[str]:
    """Conditions with a results folder (clean first, then in name order)."""
    folder = bench.root / RESULTS_DIR / "conditions"
    found = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return [CLEAN] + [parse_condition(n, str(folder / n)).name for n in found if n != CLEAN]


def resolve_conditions(bench: BenchmarkView, text: str) -> list[str]:
    """``--condition NAME`` -> [NAME]; ``all`` -> the build's recorded conditions, or, for a
    build that recorded none, clean and every condition with saved results."""
    if text.strip() != "all":
        return [parse_condition(text).name]
    recorded = list(recorded_conditions(bench.manifest))
    return recorded or saved_conditions(bench)


def snr_order(conditions: Sequence[str]) -> list[str]:
    """The SNR axis: the snr conditions from noisiest to quietest bed, then clean (at the right)."""
    snrs = sorted((cond for cond in map(parse_condition, conditions) if cond.snr_axis is not None),
                  key=lambda c: c.snr_axis)
    return [c.name for c in snrs] + ([CLEAN] if CLEAN in conditions else [])


@dataclass
class ConditionScores:
    """Overall metrics of each retriever under each condition, and the perception report of
    each detected retriever per condition (from the saved ``bench detect`` summaries)."""

    conditions: list[str]
    retrievers: list[str]
    values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """retriever -> condition -> metric -> value"""
    perception: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """detected retriever -> condition -> {events_f1, tagging_f1, events_precision, events_recall}"""
    results: dict[str, Results] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"conditions": self.conditions, "retrievers": self.retrievers,
                "values": self.values, "perception": self.perception}


def condition_scores(bench: BenchmarkView, names: Sequence[str] | None = None,
                     conditions: Sequence[str] | None = None) -> ConditionScores:
    """Saved results of ``names`` (default: every retriever saved under any condition) under each
    of ``conditions`` (default: every condition with saved results)."""
    conds = list(conditions) if conditions is not None else saved_conditions(bench)
    out = ConditionScores(conds, [])
    order: list[str] = []
    for cond in conds:
        b = bench.with_condition(cond)
        results = load_results(b, names)
        out.results[cond] = results
        for name, r in results.runs.items():
            if name not in order:
                order.append(name)
            out.values.setdefault(name, {})[cond] = {m: float(r.overall.get(m, 0.0))
                                                    for m in CONDITION_METRICS}
        for path in sorted(results_dir(b).glob("detect-*.json")):
            try:
                d = read_json(path)
                p = d["perception"]
                out.perception.setdefault(str(d["name"]), {})[cond] = {
                    "events_f1": float(p["events_micro"]["f1"]),
                    "events_precision": float(p["events_micro"]["precision"]),
                    "events_recall": float(p["events_micro"]["recall"]),
                    "tagging_f1": float(p["tagging_micro"]["f1"])}
            except (DataError, KeyError, TypeError, ValueError):
                continue
    out.retrievers = list(names) if names else sorted(order, key=lambda n: (n != "oracle", n))
    return out


def plot_vs_snr(scores: ConditionScores, out: Path, styles: dict[str, Style] | None = None) -> Path | None:
    """One panel per metric: x = SNR (dB), clean at the right; one line per retriever; the
    perception F1 of each detected retriever in a panel beside them. None without two points.
    ``styles``: the report's colours (default: :func:`~reasonaudio.evaluation.plots.retriever_styles`
    of the names drawn); one legend under the panels."""
    axis = snr_order(scores.conditions)
    if len(axis) < 2:
        return None

    plt = _plt()
    styles = styles or retriever_styles([*scores.retrievers, *scores.perception])
    labels = [c if c == CLEAN else f"{parse_condition(c).snr_axis:g}" for c in axis]
    x = list(range(len(axis)))
    panels = list(CONDITION_METRICS) + (["perception"] if scores.perception else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.4), squeeze=False,
                             layout="constrained")
    titles = {"acc@1": "Acc@1", "ndcg@10": "nDCG@10", "mc_acc": "MC accuracy",
              "perception": "perception: event F1 (solid), tagging F1 (dashed)"}
    for ax, metric in zip(axes[0], panels):
        if metric == "perception":
            for name, per in sorted(scores.perception.items()):
                for key, dash in (("events_f1", "-"), ("tagging_f1", "--")):
                    ys = [per.get(c, {}).get(key) for c in axis]
                    pts = [(i, y) for i, y in zip(x, ys) if y is not None]
                    if pts:
                        ax.plot(*zip(*pts), linestyle=dash, marker="o", color=styles[name].colour,
                                label=f"{name} {key[:-3]}")
        else:
            for name in scores.retrievers:
                per = scores.values.get(name, {})
                pts = [(i, per[c][metric]) for i, c in zip(x, axis) if c in per]
                if pts:
                    ax.plot(*zip(*pts), marker="o", color=styles[name].colour,
                            linestyle=styles[name].linestyle, label=name)
        ax.set_xticks(x, labels)
        ax.set_xlabel("SNR (dB)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(titles[metric], fontsize=9, wrap=True)
        ax.grid(alpha=0.3)
    handles, names = axes[0][0].get_legend_handles_labels()
    if scores.perception:
        more, more_names = axes[0][-1].get_legend_handles_labels()
        handles, names = handles + more, names + more_names
    legend_below(fig, handles, names, 3)
    path = _save(fig, Path(out) / SNR_PLOT)
    plt.close(fig)
    return path


def write_scores_json(path: Path, scores: ConditionScores) -> None:
    with atomic_file(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(scores.to_json(), indent=1, sort_keys=True) + "\n")
