"""`bench atoms check` and `bench atoms identify`: the bank report, the tagger report, the
identification table."""

from __future__ import annotations

from dataclasses import asdict

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reasonaudio.atoms.check import BankReport
from reasonaudio.atoms.distinct import MAX_COMPARED
from reasonaudio.atoms.tagger_check import TaggerReport
from reasonaudio.detect.identify import BY_NAME, KINDS, IdentifyResult, training_table


def print_bank_report(console: Console, report: BankReport, err_console: Console | None = None) -> None:
    """The summary table; warnings and one error line per bad file (to ``err_console``)."""
    d = report.description
    table = Table(title=f"atom bank: {escape(report.source)}", show_header=False, title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row("kind", str(d.get("kind", report.bank.kind)))
    table.add_row("classes", str(report.n_classes))
    table.add_row("files", str(report.n_files))
    lo, med, hi = report.durations
    table.add_row("duration (s)", f"min {lo:.2f} · median {med:.2f} · max {hi:.2f}")
    table.add_row("sample rates", ", ".join(f"{sr} Hz ×{n}" for sr, n in report.sample_rates.items()))
    table.add_row("licences", escape(", ".join(f"{lic} ×{n}" for lic, n in report.licences.items())))
    for key in ("version", "hierarchy", "splits", "manifest", "requested_classes", "files_per_class"):
        if d.get(key) is not None:
            table.add_row(key.replace("_", " "), escape(str(d[key])))
    table.add_row("decoded", "every file" if report.decoded else "no (metadata only)")
    rec = report.recordings
    if rec is not None:
        def counts(by: dict[int, int]) -> str:
            return " · ".join(f"{k} ×{v}" for k, v in sorted(by.items())) or "none"

        table.add_row("labels by recordings", counts(rec.by_recordings))
        distinct = counts(rec.by_distinct)
        if rec.not_compared:
            distinct += f" (not compared: {len(rec.not_compared)} label(s) of more than {MAX_COMPARED})"
        table.add_row("labels by distinct recordings", distinct)
    status = "[green]ok[/]" if report.ok else f"[red]{len(report.errors)} bad file(s)[/]"
    table.add_row("status", status)
    console.print(table)
    examples = Table(title="classes (first 10)", title_justify="left")
    examples.add_column("label")
    examples.add_column("files", justify="right")
    examples.add_column("seconds", justify="right")
    for label, atoms in list(report.bank.by_label.items())[:10]:
        examples.add_row(escape(label), str(len(atoms)), ", ".join(f"{a.duration:.2f}" for a in atoms[:4]))
    console.print(examples)
    err = err_console or console
    for w in report.warnings:
        err.print(f"[yellow]warning:[/] {escape(w)}", highlight=False, soft_wrap=True)
    for e in report.errors:
        err.print(f"[bold red]error:[/] {escape(e)}", highlight=False, soft_wrap=True)


def print_tagger_report(console: Console, report: TaggerReport, show: str = "all") -> None:
    """A rich table (all labels, or only ``unconfirmed``) and the confirmation rate."""
    table = Table(title=f"{escape(report.tagger)} tagger check: expected AudioSet tag in the top "
                        f"{report.k}", show_lines=False, box=None, pad_edge=False)
    table.add_column("label", overflow="fold")
    table.add_column("ok", justify="center")
    table.add_column("rank", justify="right")
    table.add_column("expected", overflow="fold")
    table.add_column("tagger's top classes", overflow="fold")
    for c in report.labels:
        if show == "unconfirmed" and c.confirmed:
            continue
        best = c.best
        top = ", ".join(f"{n} {s:.2f}" for n, s in (best.top[:3] if best else ()))
        table.add_row(escape(c.label), "[green]yes[/]" if c.confirmed else "[red]no[/]",
                      str(best.rank) if best and best.rank else "-",
                      escape("|".join(c.expected)), escape(top))
    console.print(table)
    n, m = len(report.labels), len(report.confirmed)
    console.print(Text(f"{report.tagger}: {m} of {n} classes confirmed ({100 * report.rate:.1f}%)"
                       + (f"; unconfirmed: {', '.join(c.label for c in report.unconfirmed)}"
                          if report.unconfirmed else "")), highlight=False)


KIND_TITLES = {"recording": "other recordings", "excerpt": "unheard excerpts of heard recordings"}


def print_identify_report(console: Console, result: IdentifyResult, per_atom: bool = False) -> None:
    """Per kind of test atom, one row per identifier: top-1, top-5 (ties split), named, refused;
    with ``per_atom``, first each atom and the label each identifier heard in it."""
    if per_atom:
        print_atom_picks(console, result)
    p = result.parent
    console.print(Text(f"{result.spec}: {result.labels} labels; bank {p.get('spec')} "
                       f"({p.get('labels')} labels, {p.get('atoms')} recordings"
                       + (f", fingerprint {p['fingerprint']}" if p.get("fingerprint") else "") + ")"))
    for kind in KINDS:
        rows = [r for r in result.rows if r.kind == kind]
        if not rows:
            continue
        table = Table(title=f"{KIND_TITLES[kind]} ({result.atoms.get(kind, 0)} atoms)", title_justify="left")
        for name, justify in (("identifier", "left"), ("top-1", "right"), ("top-5", "right"),
                              ("named", "right"), ("refused", "right")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for r in rows:
            table.add_row(escape(r.identifier), f"{r.top1:.3f}", f"{r.top5:.3f}", f"{r.named:.3f}",
                          f"{r.refused:.3f}")
        console.print(table)
    if len({r.train_recordings for r in result.by_training}) > 1:  # one count: the table above
        print_by_training(console, result)
    for name in dict.fromkeys(r.identifier for r in result.rows):
        console.print(Text(f"{name}: {BY_NAME[name].title}; knows {BY_NAME[name].learns_from}"))
    if result.detector:
        d = result.detector
        console.print(Text(f"detector {d['weights_sha256']} (training builds' seeds "
                           f"{', '.join(str(s) for s in d['training_seeds'])}) heard "
                           f"{d['heard_test_atoms']} of these test atoms in training"))


def print_by_training(console: Console, result: IdentifyResult) -> None:
    """The other recordings' top-1 / named per identifier, one column per number of recordings
    of their label in the train part."""
    columns, rows = training_table([asdict(r) for r in result.by_training])
    table = Table(title="other recordings by training recordings of the label", title_justify="left",
                  caption="top-1 / named; columns: the label's recordings in the train part",
                  caption_justify="left")
    table.add_column("identifier")
    for count, labels in columns:
        table.add_column(f"{count} ({labels} labels)", justify="right")
    for name, cells in rows:
        table.add_row(escape(name), *("-" if c is None else f"{c['top1']:.3f} / {c['named']:.3f}"
                                      for c in cells))
    console.print(table)


def print_atom_picks(console: Console, result: IdentifyResult) -> None:
    """One row per test atom: its label, its kind and what each identifier heard (bold when it is
    the label; ``+n`` other labels tied; ``-`` nothing heard)."""
    names = list(dict.fromkeys(r.identifier for r in result.rows))
    table = Table(title="what each identifier heard", title_justify="left")
    for column in ("atom", "label", "kind", *names):
        table.add_column(column)
    for a in result.per_atom:
        cells = []
        for name in names:
            p = a.picks[name]
            text = "-" if p.label is None else p.label + (f" +{p.tied}" if p.tied else "")
            cells.append(Text(text, style="bold" if p.label == a.label and not p.tied else ""))
        table.add_row(escape(a.atom_id), escape(a.label), a.kind, *cells)
    console.print(table)
