"""``bench sweep perception``: the ladder as a table, then the crossings per task."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.experiments.perception_ladder import Ladder
from reasonaudio.dataset.benchmark import ALL_TASKS


def ladder_table(ladder: Ladder) -> Table:
    tasks = [t for t in ALL_TASKS if any(t in lv["per_task"] for lv in ladder.levels)]
    table = Table(title=f"Perception ladder (seed {ladder.seed}): the oracle's logic over degraded "
                        "events, Acc@1 per task", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    for head in ("miss", "FA", "jitter ms", "split", "event F1", "tag F1", *tasks, "overall", "MC"):
        table.add_column(head, justify="right", no_wrap=True)
    for lv in ladder.levels:
        p = lv["params"]
        table.add_row(f"{p['miss']:.2f}", f"{p['false_alarm']:.2f}", str(p["jitter_ms"]),
                      f"{p['merge_split']:.2f}", f"{lv['event_f1']:.3f}", f"{lv['tagging_f1']:.3f}",
                      *[f"{lv['per_task'][t]['acc@1']:.3f}" if t in lv["per_task"] else "-" for t in tasks],
                      f"{lv['overall']['acc@1']:.3f}", f"{lv['overall'].get('mc_acc', 0.0):.3f}")
    return table


def crossings_table(ladder: Ladder) -> Table | None:
    if not ladder.crossings:
        return None
    table = Table(title="Event F1 at which perceived logic reaches each baseline's Acc@1 "
                        "(interpolated; <= x: already at the worst level; never: not even at level 0)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("task", no_wrap=True)
    for name in ladder.crossings:
        table.add_column(name, justify="right", overflow="fold")
    groups = list(dict.fromkeys(t for per in ladder.crossings.values() for t in per))
    for t in groups:
        cells = []
        for per in ladder.crossings.values():
            c = per.get(t)
            if c is None:
                cells.append("-")
            else:
                f1 = ("never" if c["event_f1"] is None else
                      f"<= {c['event_f1']:.3f}" if c["reached"] == "at every level" else
                      f"{c['event_f1']:.3f}")
                cells.append(f"{f1} (Acc@1 {c['baseline_acc@1']:.3f})")
        table.add_row(t, *cells)
    return table


def print_ladder(console: Console, ladder: Ladder) -> None:
    console.print(ladder_table(ladder))
    crossings = crossings_table(ladder)
    if crossings is None:
        console.print(Text("no baseline results saved: no crossings (bench eval -r bag-of-sounds "
                           "and a learned retriever first, or --baseline NAME)"))
    else:
        console.print(crossings)
