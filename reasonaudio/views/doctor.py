"""`bench doctor`'s table: one row per check, then the verdict in one line."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reasonaudio.experiments.doctor import DoctorReport

MARKS = {True: "[green]ok[/]", False: "[red]differs[/]", None: "[yellow]not checked[/]"}


def print_doctor(console: Console, report: DoctorReport) -> None:
    table = Table(box=box.SIMPLE, title="Will this install reproduce the docs' figures?")
    table.add_column("check")
    table.add_column("", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for check in report.checks:
        table.add_row(check.name, MARKS[check.ok], escape(check.detail))
    console.print(table)
    colour = "red" if not report.reproduces else "yellow" if report.unchecked else "green"
    console.print(f"[{colour}]" + escape(report.verdict) + "[/]")
