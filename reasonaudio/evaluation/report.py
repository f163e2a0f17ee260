"""``bench report`` as a library call: saved results in, PNG plots out (the views print the tables)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.evaluation.by_example import ByExample, by_example
from reasonaudio.evaluation.compare import Comparison, compare
from reasonaudio.evaluation.condition_scores import (
    ConditionScores, condition_scores, plot_vs_snr, saved_conditions, write_scores_json)
from reasonaudio.evaluation.failures import Breakdown, breakdown
from reasonaudio.evaluation.plots import PROJECTIONS, plot_failures, plot_report, retriever_styles
from reasonaudio.evaluation.results import Results, RetrieverResult, load_results, results_dir
from reasonaudio.evaluation.robustness import Robustness, plot_robustness, robustness
from reasonaudio.dataset.benchmark import tasks_present
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.evaluation.intervals import results_document
from reasonaudio.errors import DataError
from reasonaudio.extras import available, install_hint
from reasonaudio.models.names import ABLATED, is_embedding
from reasonaudio.fileio import atomic_dir, read_json, write_json
from reasonaudio.output_dirs import REPORT_OUTPUT
from reasonaudio.provenance import versions
from reasonaudio.retrievers.registry import input_kind


REPORT_FILE, REPORT_FORMAT = REPORT_OUTPUT.marker, REPORT_OUTPUT.format


RUNGS = ("learned", "fused", "hybrid", "soft", "detected", "oracle")
"""The spectrum from learned similarity to hard symbolic filtering (docs/qdrant.md)."""
BASELINES = ("random", "bag-of-sounds")


def rung_of(name: str) -> str | None:
    """The spectrum rung of a retriever name (``None``: a baseline, outside the spectrum)."""
    if name in BASELINES or name.startswith(ABLATED):  # controls, outside the spectrum
        return None
    if name == "oracle":
        return "oracle"
    head = name.partition(":")[0]
    return {"detected": "detected", "soft": "soft", "hybrid": "hybrid", "rrf": "fused",
            "dbsf": "fused"}.get(head, "learned")


CONTROL = "bag-of-sounds"
"""The spectrum's control: perfect hearing (true labels), no logic."""


@dataclass(frozen=True)
class Spectrum:
    """One row per retriever, learned -> fused -> hybrid -> soft -> detected -> oracle, each
    with what it reads (its input kind) and compared by paired randomization tests (per-task p
    corrected with Holm) with the best learned retriever (overall Acc@1) and with
    bag-of-sounds, the perfect-hearing, no-logic control, when its result is saved."""

    rows: list[tuple[str, RetrieverResult]]
    """(rung, result) in rung order, then evaluation order"""
    best_learned: str
    comparisons: dict[str, Comparison]
    """name -> comparison with the best learned (every row but that one)"""
    inputs: dict[str, str] = field(default_factory=dict)
    """name -> what it reads (``retrievers.registry.input_kind``), for every row and the control"""
    control: str | None = None
    """:data:`CONTROL` when its result is saved, else ``None``"""
    vs_control: dict[str, Comparison] = field(default_factory=dict)
    """name -> comparison with the control (every row)"""

    def to_json(self) -> dict[str, Any]:
        def cmp(c: Comparison | None) -> dict[str, Any] | None:
            return c.to_json() if c is not None else None

        return {"best_learned": self.best_learned,
                "best_learned_input": self.inputs.get(self.best_learned),
                "control": self.control, "control_input": self.inputs.get(self.control or ""),
                "rows": [{"rung": rung, "name": r.name, "input": self.inputs.get(r.name),
                          "overall": r.overall, "per_task": r.per_task,
                          "vs_best_learned": cmp(self.comparisons.get(r.name)),
                          "vs_bag_of_sounds": cmp(self.vs_control.get(r.name))}
                         for rung, r in self.rows]}


def spectrum(results: Results) -> Spectrum | None:
    """The spectrum of the saved results, or ``None`` without a learned retriever among them."""
    runs = list(results.runs.values())
    # BM25 sits on the learned rung (the two-stage paradigm) but is not a learned embedding
    learned = [r for r in runs if is_embedding(r.name)]
    if not learned:
        return None
    best = max(learned, key=lambda r: (r.overall.get("acc@1", 0.0), r.name))
    rows = sorted(((rung, r) for r in runs if (rung := rung_of(r.name)) is not None),
                  key=lambda item: RUNGS.index(item[0]))
    comparisons = {r.name: compare(r, best) for _, r in rows if r.name != best.name}
    control = results.runs.get(CONTROL)
    vs_control = {r.name: compare(r, control) for _, r in rows} if control is not None else {}
    inputs = {r.name: input_kind(r.key.name) for _, r in rows}
    if control is not None:
        inputs[CONTROL] = input_kind(CONTROL)
    return Spectrum(rows, best.name, comparisons, inputs, CONTROL if control else None, vs_control)


METRIC = "acc@1"


def decomposition(results: Results, detected: str, metric: str = METRIC) -> dict[str, dict[str, Any]]:
    """group (task or ``overall``) -> oracle, detected, best embedding (name, value), losses:
    ``oracle - detected`` is what imperfect hearing costs, ``detected - best embedding`` what the
    embedding loses beyond hearing (``bench detect`` saves it; ``bench report`` recomputes it
    from the results saved by then)."""
    runs = results.runs
    out: dict[str, dict[str, Any]] = {}
    def value_of(r: RetrieverResult | None, group: str) -> float | None:
        if r is None:
            return None
        src = r.overall if group == "overall" else r.per_task.get(group, {})
        return src.get(metric)

    tasks = tasks_present([t for r in runs.values() for t in r.per_task])
    for group in (*tasks, "overall"):
        def value(r: RetrieverResult | None, group: str = group) -> float | None:
            return value_of(r, group)

        oracle, det = value(runs.get("oracle")), value(runs.get(detected))
        embedded = [(value(r), n) for n, r in runs.items() if is_embedding(n) and value(r) is not None]
        best = max(embedded, key=lambda vn: (vn[0], [-ord(ch) for ch in vn[1]])) if embedded else None
        row: dict[str, Any] = {"oracle": oracle, "detected": det,
                               "best_embedding": best[1] if best else None,
                               "best_embedding_value": best[0] if best else None}
        row["perception_loss"] = (round(oracle - det, 4) if oracle is not None and det is not None
                                  else None)
        row["detected_minus_embedding"] = (round(det - best[0], 4) if det is not None and best
                                           else None)
        out[group] = row
    return out


@dataclass(frozen=True)
class ReportOutcome:
    results: Results
    paths: list[Path]
    detections: list[dict[str, Any]] = field(default_factory=list)
    """the saved ``bench detect`` summaries (perception report), one per mode, each with its
    decomposition recomputed from the saved results (:func:`current_detections`)"""
    conditions: ConditionScores | None = None
    """:class:`~reasonaudio.evaluation.condition_scores.ConditionScores` when results were saved under
    more than one acoustic condition (with ``metrics_vs_snr.png`` among the plots)"""
    robustness: Robustness = field(default_factory=Robustness)
    """every retriever x formulation saved (``bench eval --formulation all``)"""
    spectrum: Spectrum | None = None
    by_example: ByExample | None = None
    """:class:`~reasonaudio.evaluation.by_example.ByExample`: named vs by-example per task, from the
    saved ``NAME@interleaved`` results (empty without them)"""
    failures: Breakdown | None = None
    """every failed query of the report's retrievers by retriever x task x kind, from the saved
    runs (``evaluation/failures.py``)"""
    plots_skipped: str | None = None
    """why no plot was written (the plotting extra is not installed), None when they were"""

    @property
    def has_projection(self) -> bool:
        return any(p.name.startswith("projection_") for p in self.paths)


def write_results_json(path: Path, results: Results) -> None:
    """Write :func:`~reasonaudio.evaluation.intervals.results_document` to ``path``."""
    write_json(path, results_document(results))


def default_report_dir(bench: BenchmarkView) -> Path:
    """``DATA/results/plots`` (under a condition, in its results folder): the one folder of the
    benchmark a report may write."""
    return results_dir(bench) / "plots"


def run_report(bench: BenchmarkView, out: Path | None = None, names: Sequence[str] | None = None,
               projection: str = "pca") -> ReportOutcome:
    """Plots from saved results (no recomputation); the results and the PNG paths come back."""
    if projection not in PROJECTIONS:
        raise DataError(f"--projection must be one of {', '.join(PROJECTIONS)}, got {projection!r}")
    results = load_results(bench, names)
    if results.unreadable:  # a report of some results only would look complete
        raise DataError(f"{len(results.unreadable)} saved results file(s) cannot be read: "
                        f"{'; '.join(results.unreadable)}; repair or remove them (nothing was written)")
    if names:
        missing = [n for n in names if n not in results.runs]
        if missing:
            raise DataError(f"{results_dir(bench)}: no saved results for {', '.join(missing)} "
                            f"(run `bench eval --data {bench.root} --retriever NAME`)")
    if not results.runs:
        hint = f" ({len(results.stale)} stale)" if results.stale else ""
        raise DataError(f"{results_dir(bench)}: no saved results for this benchmark{hint}; "
                        f"run `bench eval --data {bench.root} --retriever NAME` first")
    out = Path(out) if out is not None else default_report_dir(bench)
    scores = condition_scores(bench, names) if len(saved_conditions(bench)) > 1 else None
    rob = robustness(bench, names)

    pairs = by_example(bench, names)
    failed = breakdown(bench, results)
    skipped = None
    if available("plots"):
        paths = write_plots(bench, results, out, projection, scores, rob, pairs, failed)
    else:  # the tables need no plotting package: print them, and say what the plots need
        paths, skipped = [], f"plots not written: they need the `plots` extra ({install_hint('matplotlib')})"
    return ReportOutcome(results, paths, current_detections(bench), conditions=scores,
                         robustness=rob, spectrum=spectrum(results), by_example=pairs,
                         failures=failed, plots_skipped=skipped)


def report_names(results: Results, scores: ConditionScores | None = None,
                 rob: Robustness | None = None) -> list[str]:
    """Every retriever a report draws (results, robustness rows, condition lines), sorted: the
    order :func:`~reasonaudio.evaluation.plots.retriever_styles` hands out colours in."""
    names = set(results.runs)
    names |= {r.name for r in rob.rows} if rob is not None else set()
    if scores is not None:
        names |= set(scores.retrievers) | set(scores.perception)
    return sorted(names)


def write_plots(bench: BenchmarkView, results: Results, out: Path, projection: str,
                scores: ConditionScores | None = None, rob: Robustness | None = None,
                pairs: ByExample | None = None,
                failures: Breakdown | None = None) -> list[Path]:
    """The plots and their data files, written into ``out`` atomically with a ``report.json``
    listing them; every file written but ``report.json`` comes back. One colour per retriever
    in every plot (:func:`report_names`).

    A report is derived from saved results, so an earlier report folder (or an empty one) is
    replaced without ``--force``; anything else is refused by the one output-folder rule. Inside
    the benchmark only :func:`default_report_dir` is the report's: the rest of the results tree
    is what the evaluator reads."""
    styles = retriever_styles(report_names(results, scores, rob))
    with atomic_dir(out, REPORT_OUTPUT, True, [bench.root], [default_report_dir(bench)]) as tmp:
        made = plot_report(bench, results, tmp, projection, styles)
        if failures is not None:
            made += plot_failures(failures, tmp)
        if scores is not None:
            snr = plot_vs_snr(scores, tmp, styles)
            made += [snr] if snr is not None else []
            write_scores_json(tmp / "conditions.json", scores)
            made.append(tmp / "conditions.json")
        if rob is not None:
            made += plot_robustness(rob, tmp, styles)
        if pairs is not None and pairs.rows:
            write_json(tmp / "by_example.json", pairs.to_json())
            made.append(tmp / "by_example.json")
        write_json(tmp / REPORT_FILE, {
            "format": REPORT_FORMAT, "benchmark": str(Path(bench.root).resolve()),
            "retrievers": sorted(results.runs), "projection": projection,
            "plots": [p.name for p in made], "versions": versions()})
    return [out / p.name for p in made]


def current_detections(bench: BenchmarkView) -> list[dict[str, Any]]:
    """:func:`saved_detections` with each decomposition recomputed from the results saved now:
    ``bench detect`` wrote its own before the other retrievers (the oracle, the embeddings) may
    have been evaluated, so a report never reprints those figures."""
    saved = load_results(bench)
    return [{**d, "decomposition": decomposition(saved, str(d.get("name")))}
            for d in saved_detections(bench)]


def saved_detections(bench: BenchmarkView) -> list[dict[str, Any]]:
    """``DATA/results/detect-*.json`` written by ``bench detect`` (or the main job), in name order;
    an unreadable one is skipped (it is a summary, the metrics live in the results)."""
    out = []
    for path in sorted(results_dir(bench).glob("detect-*.json")):
        try:
            out.append(read_json(path))
        except DataError:
            continue
    return out
