"""What the command line shows about interleaved queries (issue 28): what a build or
``bench interleave`` wrote, how an example was resolved, and the named vs by-example table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from reasonaudio.evaluation.by_example import ByExample


def print_interleave_summary(console: Console, root: Path, manifest: dict[str, Any]) -> None:
    """One line: how many queries have an interleaved variant, per task, and how many examples
    come from the same recording as the clips (the optimistic case)."""
    rec = manifest.get("interleaved")
    if not rec:
        return
    tasks = ", ".join(f"{t} {n}" for t, n in rec["queries_by_task"].items())
    skipped = f", {rec['skipped']} left named (no slot reads back exactly)" if rec["skipped"] else ""
    console.print(Text.assemble(("interleaved", "green"),
                                f" {root}: {rec['queries']} queries with a sound given by example "
                                f"({tasks}); {rec['same_recording']} examples from the same "
                                f"recording as the clips{skipped}"))


def _fmt(x: float) -> str:
    return f"{x:.3f}"


def print_by_example(console: Console, table_data: ByExample) -> None:
    """Named vs by-example per retriever and task: Acc@1 both ways on the same queries, the
    change with its paired p-value, the perceiver's error on the examples and the share it
    refused where one read them (the tagger, a trained detector), and for a filter the loss in queries answered exactly (the relevant set, no more, no less)."""
    if not table_data.rows:
        return
    table = Table(title="named vs by example (same queries, same logic; Acc@1, paired test)",
                  title_justify="left")
    for col in ("retriever", "reading", "task", "n", "named", "by example", "change", "p",
                "perceiver error", "refused", "exact loss"):
        table.add_column(col, no_wrap=col in ("retriever", "task"),
                         justify="right" if col not in ("retriever", "reading", "task") else "left")
    for row in table_data.rows:
        for i, t in enumerate(row.tasks):
            table.add_row(Text(row.name) if i == 0 else Text(""), row.reading if i == 0 else "",
                          t.task, f"{t.n:,}", _fmt(t.named["acc@1"]), _fmt(t.by_example["acc@1"]),
                          f"{t.delta('acc@1'):+.3f}", f"{t.p_values['acc@1']:.3g}",
                          "-" if t.tagger_error is None else _fmt(t.tagger_error),
                          "-" if t.refused is None else _fmt(t.refused),
                          "-" if t.exact_loss is None else _fmt(t.exact_loss))
    console.print(table)
    console.print(Text(f"{table_data.examples} examples, {table_data.same_recording} from the same "
                       "recording as the clips (the optimistic case)"))


def print_example_resolutions(console: Console, heard: dict[str, Any], notes: list[str]) -> None:
    """``bench search --example``: what the perceiver (the tagger, or the retriever's trained
    detector) hears in each example, like the sound-name resolutions (label, score, runners-up)."""
    for note in notes:
        console.print(Text(f"note: {note}"))
    for name, h in heard.items():
        others = ", ".join(f"{lab} {s:.2f}" for lab, s in h.top[1:])
        label = h.label if h.label is not None else "nothing (refused)"
        console.print(Text.assemble(("example ", "dim"), f"<audio:{name}> -> {label}",
                                    f" ({h.who} {h.score:.2f}" + (f"; next: {others}" if others else "")
                                    + (f"; hears: {h.caption})" if h.caption else ")")))
