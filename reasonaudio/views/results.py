"""Rich tables for evaluation results and comparisons (the terminal side of ``bench report``).

The best value in each column is bold, so the table reads at a glance. Numbers are never cut:
number columns do not wrap and the retriever names are the column that gives way (folded onto
more lines), so a table fits an 80-column terminal with every figure whole.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

from rich import box
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reasonaudio.evaluation.compare import OVERALL, Comparison
from reasonaudio.evaluation.intervals import metric_interval
from reasonaudio.evaluation.metrics import LABELS, METRICS
from reasonaudio.evaluation.report import ReportOutcome, Spectrum
from reasonaudio.evaluation.results import Results, RetrieverResult
from reasonaudio.evaluation.significance import ALPHA
from reasonaudio.dataset.benchmark import ALL_TASKS
from reasonaudio.retrievers.registry import SHORT_KIND, UNKNOWN, input_kind
from reasonaudio.views.condition_scores import print_condition_scores
from reasonaudio.views.failures import print_failures
from reasonaudio.views.name_cells import NAME_ROOM, NameCell, room_for_names, stacked_table

_COMPACT = dict(box=box.SIMPLE_HEAD, pad_edge=False)
"""Tables without vertical rules, so seven columns of numbers fit an 80-column terminal."""
_GAP = 3
"""columns of a _COMPACT table beside its values, per column: padding and the rule between"""


def _name_column(table: Table, header: str = "retriever", style: str | None = "cyan") -> None:
    """The column that gives way when the table is too wide: its names (:class:`NameCell`) break
    onto more lines where the name grammar allows, never mid-word."""
    table.add_column(header, style=style)


def _number_column(table: Table, header: str, **kwargs: object) -> None:
    """A column of figures: never wrapped, never cut (rich shrinks the name column instead)."""
    kwargs.setdefault("justify", "right")
    table.add_column(header, no_wrap=True, **kwargs)  # type: ignore[arg-type]


def ordered(results: Results) -> list[RetrieverResult]:
    """Retrievers in the order they were evaluated (or loaded)."""
    return list(results.runs.values())


def _groups(rs: Sequence[RetrieverResult]) -> list[str]:
    present = {t for r in rs for t in r.per_task}
    return [t for t in ALL_TASKS if t in present] + [OVERALL]


def _value(r: RetrieverResult, group: str, metric: str) -> float | None:
    src = r.overall if group == OVERALL else r.per_task.get(group)
    return None if src is None else src.get(metric)


def _fmt(v: float | None, best: bool = False) -> str:
    if v is None:
        return "-"
    s = f"{v:.3f}"
    return f"[bold]{s}[/]" if best else s


def _bound(x: float) -> str:
    s = f"{x:.2f}"
    return s[1:] if s.startswith("0.") else s


def _interval(r: RetrieverResult, group: str, metric: str) -> str:
    """The 95% interval of a cell's mean, compact (``.33-.52``; Wilson for Acc@1 and MC)."""
    if _value(r, group, metric) is None:
        return ""
    lo, hi = metric_interval(r, group, metric)
    return "" if lo != lo else f"[dim]{_bound(lo)}-{_bound(hi)}[/]"


def _short_kind(kind: str) -> str:
    return "" if kind == UNKNOWN else SHORT_KIND.get(kind, "")


def _name_cell(r: RetrieverResult) -> NameCell:
    """A result's name and, dim, what its retriever reads (truth / heard / learned / none)."""
    kind = _short_kind(input_kind(r.key.name))
    return NameCell(Text.assemble(r.name, (f" ({kind})", "dim") if kind else ""))


def _best(rs: Sequence[RetrieverResult], group: str, metric: str) -> float | None:
    vals = [v for r in rs if (v := _value(r, group, metric)) is not None]
    return max(vals) if vals and len(rs) > 1 else None


READS_LEGEND = ("Per task: macro mean over queries. Beside each name what it reads: truth (ground "
                "truth, perfect hearing), heard (perceived audio), learned (a learned embedding), "
                "none. Multiple choice: the positive against its hard negative, ties count half.")


def eval_table(results: Results, width: int | None = None) -> Table:
    """Rows: retrievers; columns: tasks and overall; cells: ``Acc@1 / nDCG@10``, on two lines
    (``Acc@1 /`` over ``nDCG@10``) when one line per cell would not fit ``width`` columns."""
    rs = ordered(results)
    groups = _groups(rs)
    n = rs[0].counts if rs else {}
    table = Table(title="Retrieval: Acc@1 / nDCG@10, Acc@1's Wilson 95% under each",
                  title_justify="left", **_COMPACT)
    _name_column(table)
    heads = [(g, f"(n={n.get(g, 0)})") for g in groups]
    one_line = len("0.000 / 0.000")
    need = max((_name_cell(r).text.cell_len for r in rs), default=0) + _GAP + sum(
        max(one_line, len(g), len(c)) + _GAP for g, c in heads)
    sep = " / " if width is None or need <= width else " /\n"
    for g, count in heads:
        _number_column(table, f"{g}\n{count}", justify="center", style="bold" if g == OVERALL else None)
    for r in rs:
        cells = []
        for g in groups:
            a, d = _value(r, g, "acc@1"), _value(r, g, "ndcg@10")
            cells.append(f"{_fmt(a, a == _best(rs, g, 'acc@1'))}{sep}"
                         f"{_fmt(d, d == _best(rs, g, 'ndcg@10'))}\n{_interval(r, g, 'acc@1')}")
        table.add_row(_name_cell(r), *cells)
    return table


def mc_table(results: Results) -> Table:
    """Rows: retrievers; columns: tasks and overall; cells: multiple-choice accuracy."""
    rs = ordered(results)
    groups = _groups(rs)
    table = Table(title="Multiple choice (chance 0.5), its Wilson 95% under each",
                  title_justify="left", **_COMPACT)
    _name_column(table)
    for g in groups:
        _number_column(table, g)
    for r in rs:
        table.add_row(_name_cell(r), *[f"{_fmt(v, v == _best(rs, g, 'mc_acc'))}\n"
                                      f"{_interval(r, g, 'mc_acc')}"
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
    _name_column(table)
    for m in METRICS:
        _number_column(table, _SHORT[m], min_width=max(5, len(_SHORT[m])))
    for r in rs:
        table.add_row(_name_cell(r), *[_fmt(v, v == _best(rs, OVERALL, m))
                                for m in METRICS for v in [_value(r, OVERALL, m)]])
    return table


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def compare_table(c: Comparison) -> Table:
    """One row per (task, metric): means of A and B, ``A - B``, its two-sided p-value and the
    p-value after Holm's correction for the tasks (per metric; overall is its own test)."""
    table = Table(title=f"{escape(c.a)} (A) vs {escape(c.b)} (B): paired randomization test, "
                        f"{c.n_permutations:,} permutations, seed {c.seed}, two-sided; "
                        f"p Holm: corrected for testing every task (per metric); "
                        f"* = p Holm < {ALPHA}", title_justify="left")
    table.add_column("task", style="cyan", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    for header in ("n", "A", "B", "A - B", "p", "p Holm"):
        _number_column(table, header)
    for gi, g in enumerate(c.groups):
        if gi:
            table.add_section()
        for mi, m in enumerate(c.metrics):
            t = c.tests[(g, m)]
            sig = c.significant(g, m)
            style = ("green" if t.diff > 0 else "red") if sig else "dim"
            mark = "*" if sig else " "
            table.add_row(g if mi == 0 else "", LABELS[m], str(t.n), f"{t.mean_a:.3f}",
                          f"{t.mean_b:.3f}", f"[{style}]{t.diff:+.3f}{mark}[/]", _p(t.p_value),
                          _p(c.p_holm[(g, m)]), style="bold" if g == OVERALL else None)
    return table


def spectrum_table(s: Spectrum, width: int | None = None) -> RenderableType:
    """Learned -> fused -> hybrid -> soft -> detected -> oracle: what each reads, Acc@1 per task
    and overall against the best learned retriever (``*`` = p < ALPHA after Holm's correction
    over the tasks), and the overall p against the best learned and against bag-of-sounds.

    Names sit beside their figures when ``width`` (None: any) leaves them room
    (:data:`NAME_ROOM`); otherwise each name takes a line of its own above its figures."""
    rs = [r for _, r in s.rows]
    groups = _groups(rs)
    headers = [*groups, "p best", *(["p bag"] if s.control is not None else [])]
    rows = [(NameCell(Text.assemble((f"{rung}: ", "cyan"), r.name,
                                    (f" ({kind})" if kind else "", "dim"))),
              _spectrum_cells(s, r, groups))
            for rung, r in s.rows for kind in [_short_kind(s.inputs.get(r.name, ""))]]
    if width is not None and room_for_names(headers, [c for _, c in rows], width) < min(
            NAME_ROOM, max((n.text.cell_len for n, _ in rows), default=0)):
        return stacked_table(headers, [(name, [cells]) for name, cells in rows], **_COMPACT)
    table = Table(**_COMPACT)  # the title is printed as its own line, which wraps at any width
    _name_column(table, style=None)  # "rung: name (reads)", broken where the grammar allows
    for h in headers:
        _number_column(table, h)
    for name, cells in rows:
        table.add_row(name, *cells)
    return table


def _spectrum_cells(s: Spectrum, r: RetrieverResult, groups: Sequence[str]) -> list[str]:
    """Acc@1 per group (``*``: significant against the best learned), p best, p bag."""
    c = s.comparisons.get(r.name)
    cells = []
    for g in groups:
        v = _value(r, g, "acc@1")
        mark = "*" if c is not None and (g, "acc@1") in c.p_holm and c.significant(g, "acc@1") else ""
        cells.append("-" if v is None else f"{v:.3f}{mark}")
    cells.append("best" if c is None else _p(c.tests[(OVERALL, "acc@1")].p_value))
    if s.control is not None:
        b = s.vs_control.get(r.name)
        cells.append("-" if b is None or r.name == s.control
                     else _p(b.tests[(OVERALL, "acc@1")].p_value))
    return cells


def spectrum_title(s: Spectrum) -> Text:
    bag = (f"; p bag: overall, against {s.control} (true labels, no logic)"
           if s.control is not None else "; bag-of-sounds not saved, so no p against it")
    return Text(f"The spectrum (rung: retriever (what it reads: truth = ground truth, perfect "
                f"hearing; heard = perceived audio; learned = learned embedding)), Acc@1 per task "
                f"vs the best learned ({s.best_learned}, reads "
                f"{_short_kind(s.inputs.get(s.best_learned, '')) or 'its input'}); * = p < {ALPHA} "
                f"after Holm's correction over the tasks, paired randomization test; p best: "
                f"overall{bag}", style="italic")


def print_spectrum(console: Console, s: Spectrum | None) -> None:
    if s is not None:
        console.print(spectrum_title(s), soft_wrap=False)  # wrapped at the width, unlike plain lines
        console.print(spectrum_table(s, console.width))


def print_eval_tables(console: Console, results: Results, detail: bool = True) -> None:
    """The tables ``bench eval`` prints (and the main job): retrieval, multiple choice, details."""
    if not results.runs:
        console.print("no results to show")
        return
    console.print(eval_table(results, console.width))

    console.print(textwrap.fill(READS_LEGEND, width=max(40, min(console.width, 100))), highlight=False)
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
    print_failures(console, outcome.failures)
    for detection in outcome.detections:
        print_perception_summary(console, detection)
    if outcome.conditions is not None:
        print_condition_scores(console, outcome.conditions)
    if outcome.plots_skipped:
        console.print(Text(outcome.plots_skipped))
    elif not outcome.has_projection:
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
    table.add_column("task", no_wrap=True)
    for col_name in ("oracle", "detected", "best embedding"):
        _number_column(table, col_name)
    _name_column(table, "retriever", style=None)
    for task, row in (detection.get("decomposition") or {}).items():
        table.add_row(task, _fmt(row.get("oracle")), _fmt(row.get("detected")),
                      _fmt(row.get("best_embedding_value")), Text(str(row.get("best_embedding") or "-")))
    console.print(table)
