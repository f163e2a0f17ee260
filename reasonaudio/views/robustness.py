"""The robustness table: Acc@1 and nDCG@10 per retriever x formulation, the change from caption
with its paired test, and consistency@1 (``bench report``, ``bench eval --formulation all``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.evaluation.metrics import LABELS
from reasonaudio.evaluation.robustness import Robustness
from reasonaudio.evaluation.significance import ALPHA, N_PERMUTATIONS, SEED
from reasonaudio.tasks.formulation_records import is_default
from reasonaudio.views.results import _COMPACT, _name_column, _number_column


def _change(delta: float, p: float) -> str:
    mark = "*" if p < ALPHA else ""
    return f"{delta:+.3f}{mark}"


def robustness_table(rob: Robustness, held_out: Sequence[str] = ()) -> Table:
    """``held_out``: formulations a trained model never saw, marked ``(held out)``."""
    heads = [LABELS.get(m, m) for m in rob.metrics]
    table = Table(title=Text(f"Robustness to the way of asking: {' / '.join(heads)}, change from "
                             f"caption on the same queries (* p < {ALPHA} paired randomization "
                             f"test, {N_PERMUTATIONS:,} permutations, seed {SEED})"),
                  title_justify="left", **_COMPACT)
    _name_column(table)
    table.add_column("formulation", no_wrap=True)
    for header in ("n", *(h for head in heads for h in (head, "change"))):
        _number_column(table, header)
    for row in rob.rows:
        for i, c in enumerate(row.cells):
            caption = is_default(c.formulation)
            cells = []
            for m in rob.metrics:
                cells += [f"{c.values[m]:.3f}", "" if caption else _change(c.delta(m), c.p_values[m])]
            form = f"{c.formulation} (held out)" if c.formulation in held_out else c.formulation
            table.add_row(Text(row.name) if i == 0 else Text(""), form, f"{c.n:,}", *cells,
                          end_section=i == len(row.cells) - 1)
    return table


def print_robustness(console: Console, rob: Robustness, held_out: Sequence[str] = ()) -> None:
    """The table (two metrics a table, so 80 columns show every figure whole) and one
    consistency@1 line per retriever (nothing without rows)."""
    if not rob.rows:
        return
    for i in range(0, len(rob.metrics), 2):
        console.print(robustness_table(replace(rob, metrics=rob.metrics[i:i + 2]), held_out))
    for row in rob.rows:
        if row.consistency_at_1 is None:
            console.print(Text(f"consistency@1 {row.name}: - (a formulation's run file is missing)"))
        else:
            console.print(Text(f"consistency@1 {row.name}: {row.consistency_at_1:.3f} "
                               f"({row.n_consistent:,} of {row.n_queries:,} queries keep their "
                               "top-1 clip under every formulation)"))


def robustness_markdown(rob: Robustness, held_out: Sequence[str] = ()) -> list[str]:
    """The same table in markdown (``scripts/doc_figures.py``: the docs' figures), each change
    with its p-value, then consistency@1; ``held_out`` formulations marked."""
    heads = [LABELS.get(m, m) for m in rob.metrics]
    rows = [f"Change from `caption` on the same queries, paired randomization test "
            f"({N_PERMUTATIONS:,} permutations, seed {SEED}; * p < {ALPHA}):", "",
            "| retriever | formulation | n | " + " | ".join(f"{h} | change" for h in heads) + " |",
            "|---|---|---:|" + "---:|---:|" * len(heads)]
    for row in rob.rows:
        for i, c in enumerate(row.cells):
            form = f"{c.formulation} (held out)" if c.formulation in held_out else c.formulation
            cells = [f"{c.values[m]:.3f} | " + ("" if is_default(c.formulation) else
                                                f"{_change(c.delta(m), c.p_values[m])} "
                                                f"(p {c.p_values[m]:.2g})") for m in rob.metrics]
            rows.append(f"| {f'`{row.name}`' if i == 0 else ''} | {form} | {c.n:,} | "
                        + " | ".join(cells) + " |")
    rows += ["", "consistency@1 (queries whose top-1 clip is the same under every formulation "
             "they have): " + "; ".join(
                 f"`{r.name}` " + ("-" if r.consistency_at_1 is None else
                                   f"{r.consistency_at_1:.3f} ({r.n_consistent:,} of {r.n_queries:,})")
                 for r in rob.rows) + "."]
    return rows
