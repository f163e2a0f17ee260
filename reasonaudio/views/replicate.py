"""``bench replicate``'s tables: each retriever's mean Acc@1 and MC over the seeds with the interval
over seeds, then each claim's effect and Holm-corrected p per seed and on how many seeds it holds.
Reads the replication document (:func:`reasonaudio.experiments.replicate.replication_document`),
so the terminal and the JSON say the same."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.experiments.claims import METRIC_LABELS
from reasonaudio.views.name_cells import NameCell

_COMPACT = dict(box=box.SIMPLE_HEAD, pad_edge=False)


def _cell(spread: dict[str, Any]) -> str:
    lo, hi = spread["interval"]
    return f"{spread['mean']:.3f}\n[{lo:.2f}, {hi:.2f}]"


def holds_text(row: dict[str, Any]) -> str:
    """``3 of 3``, the count the docs' sentences quote."""
    return f"{row['holds']} of {row['seeds']}"


def seed_cell(s: dict[str, Any]) -> str:
    """``+0.500*`` over ``p 0.031`` (Holm-corrected; * where the claim holds on that seed)."""
    if s["effect"] is None:
        return "-"
    return f"{s['effect']:+.3f}{'*' if s['holds'] else ''}\np {s['p_holm']:.2g}"


def print_replication(console: Console, doc: dict[str, Any]) -> None:
    seeds = [s["build"] for s in doc["seeds"]]
    console.print(Text(f"{len(seeds)} builds of seeds {', '.join(map(str, seeds))} "
                       f"({doc['size']['clips']} clips, {doc['size']['queries']} queries each; "
                       f"reference seed {doc['reference']['seed']}); mean over the seeds "
                       f"[{doc['interval']['confidence']:.0%} interval over seeds]"))
    for metric, label in METRIC_LABELS.items():
        table = Table(title=f"{label} over {len(seeds)} seeds", **_COMPACT)
        table.add_column("retriever", style="cyan")
        for g in doc["groups"]:
            table.add_column(g, justify="right", no_wrap=True)
        for name, groups in doc["table"].items():
            table.add_row(NameCell(name), *(_cell(groups[g][metric]) for g in doc["groups"]))
        console.print(table)
    if not doc["claims"]:
        console.print(Text("no claim of the docs is between two of these retrievers"))
        return
    table = Table(title="claims (A - B; * holds on that seed: claimed sign, Holm-corrected p < "
                        f"{doc['test']['alpha']})", **_COMPACT)
    table.add_column("claim", style="cyan")
    for s in seeds:
        table.add_column(f"seed {s}", justify="right", no_wrap=True)
    table.add_column("holds", justify="right", no_wrap=True)
    for row in doc["claims"]:
        sign = ">" if row["direction"] == "above" else "<"
        name = NameCell(f"{row['a']} {sign} {row['b']} on {row['task']} ({METRIC_LABELS[row['metric']]})")
        table.add_row(name, *(seed_cell(s) for s in row["per_seed"]), holds_text(row))
    console.print(table)
