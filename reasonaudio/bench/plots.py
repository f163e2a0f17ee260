"""PNG plots of saved results (matplotlib, Agg backend: no display needed).

- ``metrics_by_task.png``: grouped bars, one group per task (and overall), one bar per retriever,
  for Acc@1, nDCG@10 and multiple-choice accuracy (dashed chance line at 0.5), each with its 95%
  bootstrap interval (the per-query values resampled, seeded); ``metrics_by_task.json`` beside
  it records every interval, the resamples, the confidence and the seed.
- A retriever keeps its colour in every plot: the colour comes from its name (a stable hash into
  :data:`PALETTE`), never from its position; two names of one plot that share a colour are told
  apart by hatching.
- ``projection_<slug>.png``: for each embedding retriever, one panel per task: a query's text
  vector with its positive and hard-negative clip vectors, and the mean cosine similarity of each
  group to the query (the ReasonAudio paper's picture of misalignment: hard negatives as close to
  the query as the positives). The 2-D projection (PCA, or t-SNE) is fitted once on the points
  of every panel together (up to 5 queries of 25 points), not per panel: a fit on one panel's
  few points in hundreds of dimensions gives each panel its own arbitrary axes, so neither
  distances across panels nor the directions meant anything. One fit, one scale on every panel.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from reasonaudio.bench.compare import OVERALL
from reasonaudio.bench.intervals import (BOOTSTRAP_CONFIDENCE, BOOTSTRAP_METHOD, BOOTSTRAP_RESAMPLES,
                                         BOOTSTRAP_SEED, bootstrap_interval, group_values, name_hash)
from reasonaudio.bench.embeddings import ProjectionQuery, load_projection_data
from reasonaudio.bench.metrics import LABELS
from reasonaudio.bench.results import Results, RetrieverResult, embeddings_path, slug
from reasonaudio.dataset.benchmark import ALL_TASKS, Benchmark
from reasonaudio.errors import ReasonAudioError
from reasonaudio.fileio import atomic_file, write_json

BAR_METRICS = ("acc@1", "ndcg@10", "mc_acc")
PROJECTIONS = ("pca", "tsne")

PALETTE = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6",
           "#bfef45", "#469990", "#9a6324", "#800000", "#808000", "#000075", "#a9a9a9",
           "#ffe119")
"""Distinct colours a retriever's name hashes into (Trubetskoy's 20 less the pastels, which
vanish on white)."""
HATCHES = ("//", "..", "xx", "\\\\", "++", "oo")
"""Told apart by these when two retrievers of one plot hash to the same colour."""


def retriever_colour(name: str) -> str:
    """The colour of ``name`` in every plot: a stable hash of the name into :data:`PALETTE`."""
    return PALETTE[name_hash(name) % len(PALETTE)]


def bar_styles(names: Sequence[str]) -> dict[str, tuple[str, str | None]]:
    """(colour, hatch) of each retriever of one plot: its own colour always; no hatch for the
    first name of each colour (in the plot's order), one each for the others sharing it, so
    bars of one colour stay distinguishable."""
    seen: dict[str, int] = {}
    out: dict[str, tuple[str, str | None]] = {}
    for name in names:
        colour = retriever_colour(name)
        n = seen.get(colour, 0)
        seen[colour] = n + 1
        out[name] = (colour, None if n == 0 else HATCHES[(n - 1) % len(HATCHES)])
    return out


def bar_intervals(results: Results, groups: Sequence[str],
                  metrics: Sequence[str] = BAR_METRICS) -> dict[str, Any]:
    """Every bar's mean, interval and query count, with how they were drawn (the JSON beside
    ``metrics_by_task.png``)."""
    table: dict[str, Any] = {}
    for r in results.runs.values():
        per: dict[str, Any] = {}
        for g in groups:
            per[g] = {}
            for m in metrics:
                v = group_values(r, g, m)
                lo, hi = bootstrap_interval(v, r.name, g, m)
                per[g][m] = {"mean": float(v.mean()) if v.size else None, "n": int(v.size),
                             "low": None if np.isnan(lo) else lo, "high": None if np.isnan(hi) else hi}
        table[r.name] = per
    return {"bootstrap": dict(BOOTSTRAP_METHOD), "intervals": table}


def _plt():
    from reasonaudio.extras import require

    matplotlib = require("matplotlib", "PNG plots")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    with atomic_file(path, "wb") as fh:
        # No timestamps in the PNG metadata: same results, same bytes.
        fig.savefig(fh, format="png", dpi=130, metadata={"Software": None})
    return path


def plot_metrics_by_task(results: Results, out: Path, metrics: Sequence[str] = BAR_METRICS) -> Path | None:
    """Grouped bars per task across retrievers with 95% bootstrap intervals; returns the PNG path
    (None without results) and writes the intervals to ``metrics_by_task.json`` beside it."""
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
    styles = bar_styles([r.name for r in rs])
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
                          color=styles[r.name][0], hatch=styles[r.name][1],
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
    axes[-1].set_xlabel(f"task (overall = macro mean over all queries); whiskers: "
                        f"{BOOTSTRAP_CONFIDENCE:.0%} bootstrap intervals ({BOOTSTRAP_RESAMPLES:,} "
                        f"resamples of the per-query values, seed {BOOTSTRAP_SEED})")
    handles, labels = axes[-1].get_legend_handles_labels()
    if "chance (0.5)" in labels:  # retrievers first, the chance line last
        i = labels.index("chance (0.5)")
        handles, labels = handles[:i] + handles[i + 1:] + [handles[i]], labels[:i] + labels[i + 1:] + [labels[i]]
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5), frameon=False)
    fig.suptitle(f"ReasonAudio retrieval: {results.data.get('n_clips')} clips, "
                 f"{results.data.get('n_queries')} queries", fontsize=12)
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
    fig, axes = plt.subplots(rows, cols, figsize=(5.0 * cols, 4.8 * rows + 0.6), squeeze=False,
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
    fig.legend(handles, labels, loc="outside lower center", ncol=3, frameon=False)
    fig.suptitle(f"{name}: each query's text embedding with its relevant and hard-negative clips\n"
                 f"(one {'PCA' if method == 'pca' else 't-SNE'} of the L2-normalised vectors, "
                 f"fitted on all {len(fitted)} points of the {len(items)} queries shown)", fontsize=11)
    path = _save(fig, Path(out) / f"projection_{slug(name)}.png")
    plt.close(fig)
    return path


def plot_report(bench: Benchmark, results: Results, out: Path, method: str = "pca") -> list[Path]:
    """Every plot the saved results allow; projections only for embedding retrievers."""
    if method not in PROJECTIONS:
        raise ReasonAudioError(f"--projection must be one of {', '.join(PROJECTIONS)}, got {method!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    bars = plot_metrics_by_task(results, out)
    if bars:
        paths += [bars, bars.with_suffix(".json")]
    for name in results.runs:
        emb = embeddings_path(bench, name)
        if emb.is_file():
            made = plot_projection(name, load_projection_data(emb), out, method)
            if made:
                paths.append(made)
    return paths
