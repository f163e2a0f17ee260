"""The robustness table: Acc@1 and nDCG@10 per retriever x formulation, the change from caption
with its paired test, and consistency@1 (``bench report``, ``bench eval --formulation all``)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.bench.robustness import Robustness
from reasonaudio.bench.significance import ALPHA, N_PERMUTATIONS, SEED
from reasonaudio.tasks.base import CAPTION
from reasonaudio.views.results import _COMPACT, _name_column, _number_column


def _change(delta: float, p: float) -> str:
    mark = "*" if p < ALPHA else ""
    return f"{delta:+.3f}{mark}"


def robustness_table(rob: Robustness) -> Table:
    table = Table(title=Text("Robustness to the way of asking: Acc@1 / nDCG@10, change from "
                             f"caption on the same queries (* p < {ALPHA} paired randomization "
                             f"test, {N_PERMUTATIONS:,} permutations, seed {SEED})"),
                  title_justify="left", **_COMPACT)
    _name_column(table)
    table.add_column("formulation", no_wrap=True)
    for header in ("n", "Acc@1", "change", "nDCG@10", "change"):
        _number_column(table, header)
    for row in rob.rows:
        for i, c in enumerate(row.cells):
            caption = c.formulation == CAPTION
            table.add_row(Text(row.name) if i == 0 else Text(""), c.formulation, f"{c.n:,}",
                          f"{c.values['acc@1']:.3f}",
                          "" if caption else _change(c.delta("acc@1"), c.p_values["acc@1"]),
                          f"{c.values['ndcg@10']:.3f}",
                          "" if caption else _change(c.delta("ndcg@10"), c.p_values["ndcg@10"]),
                          end_section=i == len(row.cells) - 1)
    return table


def print_robustness(console: Console, rob: Robustness) -> None:
    """The table and one consistency@1 line per retriever (nothing without rows)."""
    if not rob.rows:
        return
    console.print(robustness_table(rob))
    for row in rob.rows:
        if row.consistency_at_1 is None:
            console.print(Text(f"consistency@1 {row.name}: - (a formulation's run file is missing)"))
        else:
            console.print(Text(f"consistency@1 {row.name}: {row.consistency_at_1:.3f} "
                               f"({row.n_consistent:,} of {row.n_queries:,} queries keep their "
                               "top-1 clip under every formulation)"))
