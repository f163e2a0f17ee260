"""PNG plots of saved results (matplotlib, Agg backend: no display needed).

- ``metrics_by_task.png``: grouped bars, one group per task (and overall), one bar per retriever,
  for Acc@1, nDCG@10 and multiple-choice accuracy (dashed chance line at 0.5), each with its 95%
  bootstrap interval (the per-query values resampled, seeded); ``metrics_by_task.json`` beside
  it records every interval, the resamples, the confidence and the seed.
- Colours come from one rule, :func:`palette`: a fixed qualitative palette handed out in a
  stable order (a report's retrievers sorted by name, the same mapping in every plot of the
  report), so no two retrievers of a report share a colour (past 15, a colour comes back with
  a hatch and a dash pattern of its own).
- Every legend stays inside its figure (:func:`legend_below`): long names break where the name
  grammar allows, and the legend loses columns, or the figure grows, until it fits.
- ``projection_<slug>.png``: for each embedding retriever, one panel per task: a query's text
  vector with its positive and hard-negative clip vectors, and the mean cosine similarity of each
  group to the query (the ReasonAudio paper's picture of misalignment: hard negatives as close to
  the query as the positives). The 2-D projection (PCA, or t-SNE) is fitted once on the points
  of every panel together (up to 5 queries of 25 points), not per panel: a fit on one panel's
  few points in hundreds of dimensions gives each panel its own arbitrary axes, so neither
  distances across panels nor the directions meant anything. One fit, one scale on every panel.
"""

from __future__ import annotations

import io
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from reasonaudio.evaluation.compare import OVERALL
from reasonaudio.evaluation.intervals import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE,  # noqa: F401
                                         bootstrap_interval, group_values, interval_method,
                                         metric_interval)
from reasonaudio.evaluation.embeddings import ProjectionQuery, load_projection_data
from reasonaudio.evaluation.failures import KIND_NAMES, Breakdown
from reasonaudio.evaluation.metrics import LABELS
from reasonaudio.evaluation.results import Results, RetrieverResult, embeddings_path, slug
from reasonaudio.dataset.benchmark import ALL_TASKS
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import ReasonAudioError
from reasonaudio.extras import require
from reasonaudio.fileio import atomic_file, write_json
from reasonaudio.models.names import name_lines

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.legend import Legend

BAR_METRICS = ("acc@1", "ndcg@10", "mc_acc")
PROJECTIONS = ("pca", "tsne")

PALETTE = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6",
           "#bfef45", "#469990", "#9a6324", "#800000", "#808000", "#000075", "#a9a9a9",
           "#ffe119")
"""Distinct qualitative colours (Trubetskoy's 20 less the pastels, which vanish on white),
handed out in turn by :func:`palette`."""
HATCHES = ("//", "..", "xx", "\\\\", "++", "oo")
LINESTYLES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)))
"""Past :data:`PALETTE`'s colours a name's colour comes back with one of these (bars, lines)."""


@dataclass(frozen=True)
class Style:
    """How one name is drawn: its colour and, only past the palette's length, a hatch (bars)
    and a dash pattern (lines) that no other name of the plot has with that colour."""

    colour: str
    hatch: str | None = None
    linestyle: Any = "-"


def palette(names: Iterable[str]) -> dict[str, Style]:
    """The one colour rule of every plot: ``names``, in the order given (a repeat counts once),
    take :data:`PALETTE`'s colours in turn, so no two of up to ``len(PALETTE)`` names share a
    colour; after that colours come back, each round with its own hatch and dash pattern.
    Callers give a stable order: a report's retrievers sorted by name (:func:`retriever_styles`),
    failure kinds in their table's order."""
    out: dict[str, Style] = {}
    for name in names:
        if name not in out:
            i = len(out)
            turn = i // len(PALETTE)
            out[name] = Style(PALETTE[i % len(PALETTE)],
                              None if turn == 0 else HATCHES[(turn - 1) % len(HATCHES)],
                              "-" if turn == 0 else LINESTYLES[(turn - 1) % len(LINESTYLES)])
    return out


def retriever_styles(names: Iterable[str]) -> dict[str, Style]:
    """Every retriever of one report (or one plot) styled by :func:`palette`, names sorted: the
    same set of names gets the same colours in every plot and on every machine."""
    return palette(sorted(set(names)))


LEGEND_NAME_WIDTH = 44
"""characters per line of a retriever's name in a legend (broken where the name grammar allows)"""


def wrap_label(label: str, width: int = LEGEND_NAME_WIDTH) -> str:
    """A legend label on lines of at most ``width`` characters, broken where a retriever name
    may break (``models/names.py``: after ``:``, ``+``, ``,``, before ``@`` and spaces)."""
    return "\n".join(name_lines(label, width)) or label


def legend_below(fig: Figure, handles: Sequence[Any], labels: Sequence[str], ncol: int) -> Legend:
    """A figure legend under the axes (constrained layout keeps room for it), labels wrapped by
    :func:`wrap_label`, then kept inside the figure by :func:`keep_inside`; :func:`_save`'s
    drawing confirms the fit (and fits again if it does not hold)."""
    ncol = max(1, min(ncol, len(labels)))
    legend = fig.legend(handles, [wrap_label(t) for t in labels], loc="outside lower center",
                        ncol=ncol, frameon=False)
    base_h = float(fig.get_size_inches()[1])
    ncol = keep_inside(fig, legend, ncol, base_h=base_h, confirm=False)
    setattr(fig, LEGEND_FIT, LegendFit(legend, ncol, base_h))
    return legend


FIT_ROUNDS = 12
"""at most this many layouts to fit a legend (each drops a column or resizes the figure)"""
LEGEND_FIT = "_reasonaudio_legend_fit"
"""the figure attribute naming the legend :func:`_save` confirms inside it"""


@dataclass
class LegendFit:
    legend: Legend
    ncol: int
    base_h: float
    """the figure's height before the legend's room was added"""


def keep_inside(fig: Figure, legend: Legend, ncol: int, *, base_h: float | None = None,
                confirm: bool = True) -> int:
    """Fit ``legend`` into the figure: while it is wider than the figure it loses a column (at
    one column the figure widens), and the figure grows by the legend's height, so the axes keep
    the room they were given and the legend never reaches past an edge; returns the columns kept.

    A legend's size does not depend on the layout (only its place does), so the columns and the
    size are chosen without laying the figure out (a layout costs a full draw). With
    ``confirm=False`` that is all: the caller's next draw (a save's) places the legend and
    confirms the fit (:func:`_fits`). Otherwise the figure is laid out until a layout confirms it."""
    base_h = fig.get_size_inches()[1] if base_h is None else base_h
    renderer = fig.canvas.get_renderer()
    while ncol > 1 and legend.get_window_extent(renderer).width > fig.bbox.width:
        ncol -= 1
        legend.set_ncols(ncol)
    if not confirm:
        fig.set_size_inches(*_wanted(fig, legend.get_window_extent(renderer), base_h))
        return ncol
    for _ in range(FIT_ROUNDS):
        with warnings.catch_warnings():  # a first layout may have no room for the axes yet
            warnings.filterwarnings("ignore", "constrained_layout not applied")
            fig.draw_without_rendering()  # the layout and every extent, no pixels
        if legend.get_window_extent().width > fig.bbox.width and ncol > 1:
            ncol -= 1
            legend.set_ncols(ncol)
            continue
        wanted = _fits(fig, legend, base_h)
        if wanted is None:
            return ncol
        fig.set_size_inches(*wanted)
    return ncol


def _fits(fig: Figure, legend: Legend, base_h: float) -> tuple[float, float] | None:
    """None when the last layout holds ``legend`` inside ``fig`` at the size it wants (room for
    its width and, above ``base_h``, its height), else that (width, height) in inches."""
    box, fig_box = legend.get_window_extent(), fig.bbox
    want = _wanted(fig, box, base_h)
    inside = (box.x0 >= fig_box.x0 and box.x1 <= fig_box.x1 and box.y0 >= fig_box.y0
              and box.y1 <= fig_box.y1)
    return None if inside and np.allclose(want, fig.get_size_inches(), rtol=0, atol=1e-9) else want


def _wanted(fig: Figure, box: Any, base_h: float) -> tuple[float, float]:
    """The figure's size with room for a legend of ``box`` (display units): its width, and its
    height above ``base_h``; never smaller than the figure is."""
    w, h = fig.get_size_inches()
    return max(w, box.width / fig.dpi + 0.4), max(h, base_h + box.height / fig.dpi + 0.2)


def bar_intervals(results: Results, groups: Sequence[str],
                  metrics: Sequence[str] = BAR_METRICS) -> dict[str, Any]:
    """Every bar's mean, interval and query count, with how they were computed (the JSON beside
    ``metrics_by_task.png``): the tables' intervals (:func:`metric_interval`: Wilson for Acc@1
    and MC, a seeded percentile bootstrap for nDCG@10), so a figure has one interval in every
    plot and table."""
    table: dict[str, Any] = {}
    for r in results.runs.values():
        per: dict[str, Any] = {}
        for g in groups:
            per[g] = {}
            for m in metrics:
                v = group_values(r, g, m)
                lo, hi = metric_interval(r, g, m)
                per[g][m] = {"mean": float(v.mean()) if v.size else None, "n": int(v.size),
                             "low": None if np.isnan(lo) else lo, "high": None if np.isnan(hi) else hi}
        table[r.name] = per
    return {"method": interval_method(), "intervals": table}


def _plt():
    matplotlib = require("matplotlib", "PNG plots")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    """The figure as a PNG at ``path``; a legend of :func:`legend_below` is confirmed inside by
    this drawing's layout, or fitted again (:func:`keep_inside`) and drawn once more."""
    png = _png(fig)
    fit = getattr(fig, LEGEND_FIT, None)
    if fit is not None and _fits(fig, fit.legend, fit.base_h) is not None:
        keep_inside(fig, fit.legend, fit.ncol, base_h=fit.base_h)
        png = _png(fig)
    with atomic_file(path, "wb") as fh:
        fh.write(png)
    return path


def _png(fig) -> bytes:
    buf = io.BytesIO()
    # No timestamps in the PNG metadata: same results, same bytes.
    fig.savefig(buf, format="png", dpi=130, metadata={"Software": None})
    return buf.getvalue()


def plot_metrics_by_task(results: Results, out: Path, metrics: Sequence[str] = BAR_METRICS,
                         styles: Mapping[str, Style] | None = None) -> Path | None:
    """Grouped bars per task across retrievers with the tables' 95% intervals; returns the PNG path
    (None without results) and writes the intervals to ``metrics_by_task.json`` beside it.
    ``styles``: the report's (default: :func:`retriever_styles` of these retrievers)."""
    rs = list(results.runs.values())
    if not rs:
        return None
    plt = _plt()
    present = {t for r in rs for t in r.per_task}
    groups = [t for t in ALL_TASKS if t in present] + [OVERALL]
    n_q = rs[0].counts
    x = np.arange(len(groups), dtype=float)
    width = 0.8 / len(rs)
    intervals = bar_intervals(results, groups, metrics)
    styles = styles or retriever_styles(r.name for r in rs)
    fig, axes = plt.subplots(len(metrics), 1, figsize=(max(8.0, 1.6 * len(groups) + 0.5 * len(rs)),
                                                        3.0 * len(metrics) + 0.8),
                             sharex=True, layout="constrained")
    axes = np.atleast_1d(axes)
    for ax, metric in zip(axes, metrics):
        for i, r in enumerate(rs):
            vals = [(r.overall if g == OVERALL else r.per_task.get(g, {})).get(metric, np.nan)
                    for g in groups]
            cells = [intervals["intervals"][r.name][g][metric] for g in groups]
            lo = [v - c["low"] if c["low"] is not None else 0.0 for v, c in zip(vals, cells)]
            hi = [c["high"] - v if c["high"] is not None else 0.0 for v, c in zip(vals, cells)]
            bars = ax.bar(x - 0.4 + width * (i + 0.5), vals, width, label=r.name,
                          color=styles[r.name].colour, hatch=styles[r.name].hatch,
                          edgecolor="white", linewidth=0.5,
                          yerr=np.clip([lo, hi], 0, None), ecolor="0.2",
                          error_kw=dict(elinewidth=0.8, capsize=2))
            if len(rs) <= 6:
                ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
        if metric == "mc_acc":
            ax.axhline(0.5, color="black", linestyle="--", linewidth=1, label="chance (0.5)")
        ax.set_ylim(0, 1.12)
        ax.set_ylabel(LABELS.get(metric, metric))
        ax.set_title(f"{LABELS.get(metric, metric)} by task", loc="left", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        ax.axvline(len(groups) - 1.5, color="grey", linewidth=0.8, alpha=0.6)
    axes[-1].set_xticks(x, [f"{g}\n(n={n_q.get(g, 0)})" for g in groups])
    axes[-1].set_xlabel(f"task (overall = macro mean over all queries); whiskers: the tables' "
                        f"{CONFIDENCE:.0%} intervals (Wilson for Acc@1 and MC; nDCG@10: percentile "
                        f"bootstrap, {BOOTSTRAP_RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED})", wrap=True)
    handles, labels = axes[-1].get_legend_handles_labels()
    if "chance (0.5)" in labels:  # retrievers first, the chance line last
        i = labels.index("chance (0.5)")
        handles, labels = handles[:i] + handles[i + 1:] + [handles[i]], labels[:i] + labels[i + 1:] + [labels[i]]
    fig.suptitle(f"ReasonAudio retrieval: {results.data.get('n_clips')} clips, "
                 f"{results.data.get('n_queries')} queries", fontsize=12)
    legend_below(fig, handles, labels, 5)
    path = _save(fig, Path(out) / "metrics_by_task.png")
    plt.close(fig)
    write_json(path.with_suffix(".json"), intervals)
    return path


def _unit(v: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(norms == 0, 1, norms)


def project_2d(points: np.ndarray, method: str = "pca", seed: int = 0) -> np.ndarray:
    """2-D coordinates of L2-normalised ``points`` by PCA (SVD) or t-SNE (scikit-learn)."""
    pts = _unit(np.asarray(points, dtype=np.float64))
    if method == "tsne" and len(pts) >= 4:
        from sklearn.manifold import TSNE

        perplexity = float(max(1.0, min(30.0, (len(pts) - 1) / 3)))
        return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed,
                    metric="cosine").fit_transform(pts)
    centred = pts - pts.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T
    if coords.shape[1] < 2:
        coords = np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))
    # Fix each axis's sign (SVD's is arbitrary) so the same data always draws the same way.
    for j in range(2):
        if coords[np.argmax(np.abs(coords[:, j])), j] < 0:
            coords[:, j] *= -1
    return coords


def plot_projection(name: str, items: Sequence[ProjectionQuery], out: Path,
                    method: str = "pca") -> Path | None:
    """One panel per query: its text vector and its positive / hard-negative clip vectors."""
    if not items:
        return None
    plt = _plt()
    cols = min(3, len(items))
    rows = -(-len(items) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(max(6.0, 5.0 * cols), 4.8 * rows + 1.2), squeeze=False,
                             layout="constrained")
    # relevant clips drawn on top, so one that shares a spot with a hard negative stays visible
    style = {"positive": dict(c="#2ca02c", marker="o", label="relevant clip", zorder=4),
             "hard_negative": dict(c="#d62728", marker="X", label="hard negative", zorder=3)}
    axis = "PC" if method == "pca" else "t-SNE "
    # one projection fitted on every panel's points together (see the module docstring)
    stacks = [np.vstack([p.query_vector[None, :], p.clip_vectors]) for p in items]
    fitted = project_2d(np.vstack(stacks), method)
    starts = np.cumsum([0] + [len(st) for st in stacks])
    lo_all, hi_all = fitted.min(axis=0), fitted.max(axis=0)
    centre, half = (lo_all + hi_all) / 2, max(float((hi_all - lo_all).max()), 1e-6) * 0.6
    for i, (ax, p) in enumerate(zip(axes.flat, items)):
        xy = fitted[starts[i]:starts[i + 1]]
        kinds = np.array(p.kinds)
        sims = _unit(p.clip_vectors) @ _unit(p.query_vector)
        cos = []
        for kind, st in style.items():
            mask = kinds == kind
            if mask.any():
                ax.scatter(xy[1:][mask, 0], xy[1:][mask, 1], s=52, alpha=0.85, edgecolor="white",
                           linewidth=0.6, c=st["c"], marker=st["marker"], label=st["label"],
                           zorder=st["zorder"])
                cos.append(f"{'relevant' if kind == 'positive' else 'hard neg.'} "
                           f"{sims[mask].mean():+.3f} (n={int(mask.sum())})")
        ax.scatter(xy[0, 0], xy[0, 1], s=280, c="#1f77b4", marker="*", edgecolor="black",
                   linewidth=0.8, label="query text", zorder=5)
        wrapped = "\n".join(textwrap.wrap(f'"{p.text}"', 50)[:3])
        ax.set_title(f"{p.task} ({p.query_id})\n{wrapped}", fontsize=9, loc="left")
        ax.text(0.02, 0.02, "mean cos to query: " + ", ".join(cos), transform=ax.transAxes,
                fontsize=7.5, va="bottom", ha="left",
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="0.7", alpha=0.9))
        # Square panels, one scale on both axes and on every panel, room below for the box.
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - 1.25 * half, centre[1] + half)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel(f"{axis}1")
        ax.set_ylabel(f"{axis}2")
        ax.grid(alpha=0.25)
    for ax in list(axes.flat)[len(items):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle(f"{wrap_label(name, 50)}\neach query's text embedding with its relevant and "
                 f"hard-negative clips\n(one {'PCA' if method == 'pca' else 't-SNE'} of the "
                 f"L2-normalised vectors, fitted on all {len(fitted)} points\nof the {len(items)} "
                 f"queries shown)", fontsize=11)
    legend_below(fig, handles, labels, 3)
    path = _save(fig, Path(out) / f"projection_{slug(name)}.png")
    plt.close(fig)
    return path


FAILURES_PLOT = "failures.png"
ALL_TASKS_GROUP = "all tasks"


def plot_failures(failures: Breakdown, out: Path) -> list[Path]:
    """``failures.png``: one panel per task and one for all tasks; per retriever a bar of the
    share of the group's queries it failed (Acc@1 = 0), split by failure kind (colours from
    :func:`palette` over the kinds in their table's order), and ``failures.json`` beside it with
    every count and the failed query ids. Nothing without a retriever."""
    if not failures.retrievers:
        return []
    plt = _plt()
    names, kinds = list(failures.retrievers), failures.kinds_present()
    kind_styles = palette(KIND_NAMES)
    groups = [*failures.tasks, ALL_TASKS_GROUP]
    cols = min(3, len(groups))
    rows = -(-len(groups) // cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, sharey=True, layout="constrained",
                             figsize=(4.0 * cols + 2.5, rows * (0.32 * len(names) + 1.2) + 1.0))
    y = np.arange(len(names))[::-1]
    for ax, group in zip(axes.flat, groups):
        task = None if group == ALL_TASKS_GROUP else group
        left = np.zeros(len(names))
        n = np.array([sum(failures.queries.get(r, {}).values()) if task is None
                      else failures.queries.get(r, {}).get(task, 0) for r in names], dtype=float)
        for kind in kinds:
            share = np.array([len(failures.cell(r, task).get(kind, ())) for r in names]) / np.maximum(n, 1)
            ax.barh(y, share, left=left, color=kind_styles[kind].colour, label=kind,
                    edgecolor="white", linewidth=0.5)
            left += share
        ax.set_xlim(0, 1)
        ax.set_title(f"{group} (n={int(n.max()) if len(n) else 0})", loc="left", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        ax.set_yticks(y, [wrap_label(r, 28) for r in names], fontsize=8)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("share of the queries failed (Acc@1 = 0)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle("Why retrievers fail: what they ranked first, by the constraint it breaks",
                 fontsize=12)
    legend_below(fig, handles, labels, 4)
    path = _save(fig, Path(out) / FAILURES_PLOT)
    plt.close(fig)
    write_json(path.with_suffix(".json"), failures.to_json())
    return [path, path.with_suffix(".json")]


def plot_report(bench: BenchmarkView, results: Results, out: Path, method: str = "pca",
                styles: Mapping[str, Style] | None = None) -> list[Path]:
    """Every plot the saved results allow; projections only for embedding retrievers.
    ``styles``: the report's retriever colours (default: :func:`retriever_styles` of ``results``)."""
    if method not in PROJECTIONS:
        raise ReasonAudioError(f"--projection must be one of {', '.join(PROJECTIONS)}, got {method!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    bars = plot_metrics_by_task(results, out, styles=styles)
    if bars:
        paths += [bars, bars.with_suffix(".json")]
    for name in results.runs:
        emb = embeddings_path(bench, name)
        if emb.is_file():
            made = plot_projection(name, load_projection_data(emb), out, method)
            if made:
                paths.append(made)
    return paths
