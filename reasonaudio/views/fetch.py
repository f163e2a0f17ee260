"""Rich output for ``bench atoms fetch packages``: the summary, then every shortfall by atom."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reasonaudio.atoms.fetch.fetch import MB, FetchSummary


def print_fetch_summary(console: Console, summary: FetchSummary) -> None:
    for notice in summary.notices:
        console.print(f"[yellow]note:[/] {escape(notice)}", highlight=False)
    fetched, requested = len(summary.succeeded), len(summary.atoms)
    table = Table(title=f"real-sound bank: {escape(str(summary.dest))}", show_header=False,
                  title_justify="left", box=None)
    table.add_column("field", style="bold")
    table.add_column("value")
    by_n = summary.labels_by_recordings()
    table.add_row("classes" if set(by_n) <= {"1"} else "atoms", f"{fetched} of {requested} fetched"
                  + (f" ([red]{len(summary.failed)} failed[/], listed below)" if summary.failed else ""))
    table.add_row("recordings", "; ".join(f"{v} labels with {k}" for k, v in by_n.items()) or "none")
    if set(by_n) - {"1"} and summary.distinct:
        table.add_row("distinct recordings", "; ".join(f"{v} labels with {k}" for k, v
                                                       in sorted(summary.distinct.items())))
    cached = sum(1 for a in summary.atoms if a.status == "cached")
    if cached:
        table.add_row("resumed", f"{cached} atoms already done by an earlier run")
    table.add_row("downloaded", f"{summary.downloaded_bytes / MB:.1f} MiB this run "
                  f"({(summary.downloaded_bytes + summary.cached_bytes) / MB:.1f} MiB of archives used)")
    table.add_row("time", f"{summary.seconds:.1f} s")
    table.add_row("bank", f"{summary.published} atoms in atoms.jsonl; report in fetch-report.json")
    console.print(table)
    if summary.failed:
        fails = Table(title="shortfall: atoms not in the bank", title_justify="left", box=None)
        fails.add_column("label", overflow="fold")
        fails.add_column("package")
        fails.add_column("reason", overflow="fold")
        for a in summary.failed:
            fails.add_row(escape(a.label), escape(a.package), escape(a.reason))
        console.print(fails)
    warned = [a for a in summary.atoms if a.warning]
    for a in warned:
        console.print(f"[yellow]warning:[/] {escape(a.label)}: {escape(a.warning)}", highlight=False)
    for p in summary.packages:
        if p.warning:
            console.print(f"[yellow]warning:[/] {escape(p.spec)}: {escape(p.warning)}", highlight=False)


def print_bed_check(console: Console, check: dict | None) -> None:
    """``bench atoms fetch beds``: the tagger check's verdict per fetched bed."""
    if check is None:
        console.print("[yellow]note:[/] no atom bank to check the beds against (fetch one, or "
                      "pass --atoms); a condition runs the check when it first uses them",
                      highlight=False)
        return
    table = Table(title=f"bed check against {check.get('classes')} classes (YAMNet top "
                  f"{check.get('k')}): {len(check.get('accepted', []))} of "
                  f"{len(check.get('verdicts', []))} accepted", title_justify="left", box=None)
    table.add_column("bed", overflow="fold")
    table.add_column("verdict")
    table.add_column("labels heard", overflow="fold")
    for v in check.get("verdicts", []):
        heard = ", ".join(v["heard"][:6]) + (f" (+{len(v['heard']) - 6})" if len(v["heard"]) > 6 else "")
        table.add_row(escape(v["bed_id"]), "[green]accepted[/]" if v["ok"] else "[red]refused[/]",
                      escape(heard or "-"))
    console.print(table)
