"""Rich tables for evaluation results and comparisons (the terminal side of ``bench report``).

The best value in each column is bold, so the table reads at a glance.
"""

from __future__ import annotations

from typing import Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reasonaudio.bench.compare import OVERALL, Comparison
from reasonaudio.bench.metrics import LABELS, METRICS
from reasonaudio.bench.report import ReportOutcome, Spectrum
from reasonaudio.bench.results import Results, RetrieverResult
from reasonaudio.bench.significance import ALPHA
from reasonaudio.dataset.benchmark import TASKS

_COMPACT = dict(box=box.SIMPLE_HEAD, pad_edge=False)
"""Tables without vertical rules, so seven columns of numbers fit an 80-column terminal."""


def ordered(results: Results) -> list[RetrieverResult]:
    """Retrievers in the order they were evaluated (or loaded)."""
    return list(results.runs.values())


def _groups(rs: Sequence[RetrieverResult]) -> list[str]:
    present = {t for r in rs for t in r.per_task}
    return [t for t in TASKS if t in present] + [OVERALL]


def _value(r: RetrieverResult, group: str, metric: str) -> float | None:
    src = r.overall if group == OVERALL else r.per_task.get(group)
    return None if src is None else src.get(metric)


def _fmt(v: float | None, best: bool = False) -> str:
    if v is None:
        return "-"
    s = f"{v:.3f}"
    return f"[bold]{s}[/]" if best else s


def _best(rs: Sequence[RetrieverResult], group: str, metric: str) -> float | None:
    vals = [v for r in rs if (v := _value(r, group, metric)) is not None]
    return max(vals) if vals and len(rs) > 1 else None


def eval_table(results: Results) -> Table:
    """Rows: retrievers; columns: tasks and overall; cells: ``Acc@1 / nDCG@10``."""
    rs = ordered(results)
    groups = _groups(rs)
    n = rs[0].counts if rs else {}
    table = Table(title="Retrieval: Acc@1 / nDCG@10 (per task, macro mean over queries)",
                  title_justify="left", **_COMPACT)
    table.add_column("retriever", style="cyan", no_wrap=True)
    for g in groups:
        table.add_column(f"{g}\n(n={n.get(g, 0)})", justify="center", min_width=len(g),
                         style="bold" if g == OVERALL else None)
    for r in rs:
        cells = []
        for g in groups:
            a, d = _value(r, g, "acc@1"), _value(r, g, "ndcg@10")
            cells.append(f"{_fmt(a, a == _best(rs, g, 'acc@1'))} / "
                         f"{_fmt(d, d == _best(rs, g, 'ndcg@10'))}")
        table.add_row(Text(r.name), *cells)
    return table


def mc_table(results: Results) -> Table:
    """Rows: retrievers; columns: tasks and overall; cells: multiple-choice accuracy."""
    rs = ordered(results)
    groups = _groups(rs)
    table = Table(title="Multiple choice: positive vs hard negative (chance 0.5, ties count half)",
                  title_justify="left", **_COMPACT)
    table.add_column("retriever", style="cyan", no_wrap=True)
    for g in groups:
        table.add_column(g, justify="right")
    for r in rs:
        table.add_row(Text(r.name), *[_fmt(v, v == _best(rs, g, "mc_acc"))
                                for g in groups for v in [_value(r, g, "mc_acc")]])
    return table


_SHORT = {**LABELS, "recall@10": "R@10", "mc_acc": "MC"}


def detail_table(results: Results) -> Table:
    """Rows: retrievers; columns: every metric overall; caption: search time per query."""
    rs = ordered(results)
    times = [f"{r.name} {r.timing['search_ms_per_query']:.1f}" for r in rs
             if "search_ms_per_query" in r.timing]
    table = Table(title="All metrics, overall (R@10 = Recall@10, MC = multiple choice)",
                  title_justify="left",
                  caption=Text("search ms per query: " + ", ".join(times)) if times else None,
                  caption_justify="left", **_COMPACT)
    table.add_column("retriever", style="cyan", no_wrap=True)
    for m in METRICS:
        table.add_column(_SHORT[m], justify="right", min_width=max(5, len(_SHORT[m])))
    for r in rs:
        table.add_row(Text(r.name), *[_fmt(v, v == _best(rs, OVERALL, m))
                                for m in METRICS for v in [_value(r, OVERALL, m)]])
    return table


def compare_table(c: Comparison) -> Table:
    """One row per (task, metric): means of A and B, ``A - B`` and its two-sided p-value."""
    table = Table(title=f"{escape(c.a)} (A) vs {escape(c.b)} (B): paired randomization test, "
                        f"{c.n_permutations:,} permutations, seed {c.seed}, two-sided; "
                        f"* = p < {ALPHA}", title_justify="left")
    table.add_column("task", style="cyan", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("A", justify="right")
    table.add_column("B", justify="right")
    table.add_column("A - B", justify="right", no_wrap=True)
    table.add_column("p", justify="right")
    for gi, g in enumerate(c.groups):
        if gi:
            table.add_section()
        for mi, m in enumerate(c.metrics):
            t = c.tests[(g, m)]
            p = f"{t.p_value:.4f}" if t.p_value >= 1e-4 else f"{t.p_value:.1e}"
            style = ("green" if t.diff > 0 else "red") if t.significant else "dim"
            mark = "*" if t.significant else " "
            table.add_row(g if mi == 0 else "", LABELS[m], str(t.n), f"{t.mean_a:.3f}",
                          f"{t.mean_b:.3f}", f"[{style}]{t.diff:+.3f}{mark}[/]", p,
                          style="bold" if g == OVERALL else None)
    return table


def spectrum_table(s: Spectrum) -> Table:
    """Learned -> fused -> hybrid -> soft -> detected -> oracle: Acc@1 per task and overall,
    each against the best learned retriever (``*`` = p < ALPHA, paired randomization test)."""
    rs = [r for _, r in s.rows]
    groups = _groups(rs)
    table = Table(title=f"The spectrum: Acc@1 per task vs the best learned ({escape(s.best_learned)}); "
                        f"* = p < {ALPHA}, paired randomization test", title_justify="left", **_COMPACT)
    table.add_column("rung", style="cyan", no_wrap=True)
    table.add_column("retriever", overflow="fold")
    for g in groups:
        table.add_column(g, justify="right", no_wrap=True)
    table.add_column("p (overall)", justify="right", no_wrap=True)
    for rung, r in s.rows:
        c = s.comparisons.get(r.name)
        cells = []
        for g in groups:
            v = _value(r, g, "acc@1")
            t = c.tests.get((g, "acc@1")) if c is not None else None
            mark = "*" if t is not None and t.significant else ""
            cells.append("-" if v is None else f"{v:.3f}{mark}")
        t = c.tests.get((OVERALL, "acc@1")) if c is not None else None
        p = "best learned" if c is None else (f"{t.p_value:.4f}" if t.p_value >= 1e-4 else f"{t.p_value:.1e}")
        table.add_row(rung, Text(r.name), *cells, p)
    return table


def print_spectrum(console: Console, s: Spectrum | None) -> None:
    if s is not None:
        console.print(spectrum_table(s))


def print_eval_tables(console: Console, results: Results, detail: bool = True) -> None:
    """The tables ``bench eval`` prints (and the main job): retrieval, multiple choice, details."""
    if not results.runs:
        console.print("no results to show")
        return
    console.print(eval_table(results))
    console.print(mc_table(results))
    if detail:
        console.print(detail_table(results))


def print_report(console: Console, results: Results) -> None:
    """``bench report``: the saved results as tables, plus a note on stale or missing ones."""
    d = results.data
    console.print(Text.assemble(("benchmark", "bold"), f" {d.get('path')}: {d.get('n_clips')} clips, "
                                f"{d.get('n_queries')} queries, seed {d.get('seed')}"))
    print_eval_tables(console, results)
    if results.stale:
        console.print(Text.assemble(("ignored stale results (another build of this benchmark):", "yellow"),
                                    f" {', '.join(results.stale)}; run `bench eval` again"))


def print_comparison(console: Console, c: Comparison) -> None:
    console.print(compare_table(c))


def print_report_outcome(console: Console, outcome: ReportOutcome) -> None:
    """``bench report``: the tables, then the plots written."""
    print_report(console, outcome.results)
    print_spectrum(console, outcome.spectrum)
    for detection in outcome.detections:
        print_perception_summary(console, detection)
    if not outcome.has_projection:
        console.print("no embedding retriever among the results: projection plot skipped")
    for p in outcome.paths:
        console.print(Text(f"wrote {p}"))


def print_perception_summary(console: Console, detection: dict) -> None:
    """``bench report``: what a saved ``bench detect`` heard (event-based, sed_eval-style collars)
    and, per task, oracle -> detected -> best embedding Acc@1."""
    p = detection.get("perception") or {}
    ev, tg, col = p.get("events_micro") or {}, p.get("tagging_micro") or {}, p.get("collars") or {}
    optimistic = " (optimistic: signatures from the bank's own atoms)" if detection.get("optimistic") else ""
    console.print(Text(f"perception of {detection.get('name')}{optimistic}: events P "
                       f"{ev.get('precision', 0):.3f} R {ev.get('recall', 0):.3f} F1 {ev.get('f1', 0):.3f} "
                       f"(collars: onset {col.get('onset_ms')} ms, offset max({col.get('offset_ms')} ms, "
                       f"{col.get('offset_relative', 0):.0%})); tagging F1 {tg.get('f1', 0):.3f}"))
    table = Table(title=Text(f"Acc@1: oracle -> {detection.get('name')} -> best embedding"),
                  title_justify="left", **_COMPACT)
    for col_name in ("task", "oracle", "detected", "best embedding", "retriever"):
        table.add_column(col_name, justify="left" if col_name in ("task", "retriever") else "right")
    for task, row in (detection.get("decomposition") or {}).items():
        table.add_row(task, _fmt(row.get("oracle")), _fmt(row.get("detected")),
                      _fmt(row.get("best_embedding_value")), Text(str(row.get("best_embedding") or "-")))
    console.print(table)
