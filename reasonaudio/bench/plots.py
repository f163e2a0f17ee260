"""PNG plots of saved results (matplotlib, Agg backend: no display needed).

- ``metrics_by_task.png``: grouped bars, one group per task (and overall), one bar per retriever,
  for Acc@1, nDCG@10 and multiple-choice accuracy (dashed chance line at 0.5).
- ``projection_<slug>.png``: for each embedding retriever, one panel per task: a 2-D projection
  (PCA, or t-SNE) of a query's text vector with its positive and hard-negative clip vectors, and
  the mean cosine similarity of each group to the query (the ReasonAudio paper's picture of
  misalignment: hard negatives as close to the query as the positives).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Sequence

import numpy as np

from reasonaudio.bench.compare import OVERALL
from reasonaudio.bench.embeddings import ProjectionQuery, load_projection_data
from reasonaudio.bench.metrics import LABELS
from reasonaudio.bench.results import Results, embeddings_path, slug
from reasonaudio.dataset.benchmark import ALL_TASKS, Benchmark
from reasonaudio.errors import ReasonAudioError
from reasonaudio.fileio import atomic_file

BAR_METRICS = ("acc@1", "ndcg@10", "mc_acc")
PROJECTIONS = ("pca", "tsne")


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    with atomic_file(path, "wb") as fh:
        # No timestamps in the PNG metadata: same results, same bytes.
        fig.savefig(fh, format="png", dpi=130, metadata={"Software": None})
    return path


def plot_metrics_by_task(results: Results, out: Path, metrics: Sequence[str] = BAR_METRICS) -> Path | None:
    """Grouped bars per task across retrievers; returns the PNG path (None without results)."""
    rs = list(results.runs.values())
    if not rs:
        return None
    plt = _plt()
    present = {t for r in rs for t in r.per_task}
    groups = [t for t in ALL_TASKS if t in present] + [OVERALL]
    n_q = rs[0].counts
    x = np.arange(len(groups), dtype=float)
    width = 0.8 / len(rs)
    cmap = plt.get_cmap("tab10" if len(rs) <= 10 else "tab20")
    fig, axes = plt.subplots(len(metrics), 1, figsize=(max(8.0, 1.6 * len(groups) + 0.5 * len(rs)),
                                                        3.0 * len(metrics) + 0.8),
                             sharex=True, layout="constrained")
    axes = np.atleast_1d(axes)
    for ax, metric in zip(axes, metrics):
        for i, r in enumerate(rs):
            vals = [(r.overall if g == OVERALL else r.per_task.get(g, {})).get(metric, np.nan)
                    for g in groups]
            bars = ax.bar(x - 0.4 + width * (i + 0.5), vals, width, label=r.name, color=cmap(i),
                          edgecolor="white", linewidth=0.5)
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
    axes[-1].set_xlabel("task (overall = macro mean over all queries)")
    handles, labels = axes[-1].get_legend_handles_labels()
    if "chance (0.5)" in labels:  # retrievers first, the chance line last
        i = labels.index("chance (0.5)")
        handles, labels = handles[:i] + handles[i + 1:] + [handles[i]], labels[:i] + labels[i + 1:] + [labels[i]]
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5), frameon=False)
    fig.suptitle(f"ReasonAudio retrieval: {results.data.get('n_clips')} clips, "
                 f"{results.data.get('n_queries')} queries", fontsize=12)
    path = _save(fig, Path(out) / "metrics_by_task.png")
    plt.close(fig)
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
    for ax, p in zip(axes.flat, items):
        pts = np.vstack([p.query_vector[None, :], p.clip_vectors])
        xy = project_2d(pts, method)
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
        # Square panel, one scale on both axes (distances drawn to scale), room below for the box.
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        centre, half = (lo + hi) / 2, max(float((hi - lo).max()), 1e-6) * 0.65
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
    fig.suptitle(f"{name}: each query's text embedding with its relevant and hard-negative clips "
                 f"({'PCA' if method == 'pca' else 't-SNE'} of L2-normalised vectors)", fontsize=11)
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
        paths.append(bars)
    for name in results.runs:
        emb = embeddings_path(bench, name)
        if emb.is_file():
            made = plot_projection(name, load_projection_data(emb), out, method)
            if made:
                paths.append(made)
    return paths
