"""`bench atoms check SOURCE`: validate an atom bank and summarise it.

:func:`check_bank` opens the bank collecting every bad file instead of stopping at the first, then
(unless ``decode=False``) decodes every atom to prove it is readable, non-empty and finite. The
result is plain data (:class:`BankReport`); :func:`print_bank_report` draws it with rich. Further
checks (e.g. an audio tagger agreeing with the labels) can take ``report.bank`` and add their own
rows without touching this module.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from reasonaudio.errors import DataError
from reasonaudio.ingest.atom_rules import check_samples, duration_problems, label_problems
from reasonaudio.ingest.atoms import AtomBank, open_bank
from reasonaudio.ingest.synthetic_bank import UNSAFE_WORDS


@dataclass
class BankReport:
    source: str
    bank: AtomBank
    description: dict[str, Any]
    n_classes: int
    n_files: int
    durations: tuple[float, float, float]
    """min, median, max natural duration in seconds"""
    sample_rates: dict[int, int]
    licences: dict[str, int]
    decoded: bool
    errors: list[str] = field(default_factory=list)
    """one line per bad file, naming it"""
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "bank": self.description, "classes": self.n_classes,
                "files": self.n_files, "duration_min": self.durations[0],
                "duration_median": self.durations[1], "duration_max": self.durations[2],
                "sample_rates": {str(k): v for k, v in self.sample_rates.items()},
                "licences": self.licences, "decoded": self.decoded, "errors": self.errors,
                "warnings": self.warnings}


def _open_collecting(source: str, errors: list[str]) -> AtomBank:
    spec = source.strip()
    if spec == "synthetic" or spec.startswith("synthetic:"):
        return open_bank(spec)
    if spec.startswith("fsd50k:"):
        from reasonaudio.ingest.fsd50k_bank import FSD50KBank

        return FSD50KBank.from_path(spec.split(":", 1)[1], errors=errors)
    from reasonaudio.ingest.folder_bank import FolderBank

    return FolderBank.from_path(spec, errors=errors)


def _label_warnings(labels: tuple[str, ...]) -> list[str]:
    out = []
    risky = [lb for lb in labels if set(lb.split()) & UNSAFE_WORDS]
    if risky:
        out.append(f"{len(risky)} label(s) contain words the query language uses, e.g. {risky[0]!r}; "
                   "query text may read ambiguously")
    odd = [lb for lb in labels if not all(w.isalpha() for w in lb.split())]
    if odd:
        out.append(f"{len(odd)} label(s) contain digits or punctuation, e.g. {odd[0]!r}")
    return out


def check_bank(source: str, decode: bool = True, progress: bool = True,
               console: Console | None = None) -> BankReport:
    """Open and validate the bank named by ``source`` (``synthetic``, ``PATH``, ``fsd50k:PATH``)."""
    errors: list[str] = []
    bank = _open_collecting(source, errors)
    bad_ids: set[str] = set()
    if decode:
        with Progress(TextColumn("decoding atoms"), BarColumn(), MofNCompleteColumn(),
                      TimeRemainingColumn(), console=console, disable=not progress,
                      transient=True) as bar:
            task = bar.add_task("decode", total=len(bank.atoms))
            for atom in bank.atoms:
                try:
                    x, sr = bank.load(atom.atom_id)
                    check_samples(x, sr, atom.path)
                except DataError as exc:
                    errors.append(f"{atom.atom_id}: {exc}" if atom.atom_id not in str(exc) else str(exc))
                    bad_ids.add(atom.atom_id)
                bar.advance(task)
    errors.extend(duration_problems(a for a in bank.atoms if a.atom_id not in bad_ids))
    errors.extend(label_problems(bank.atoms, source))
    durations = sorted(a.duration for a in bank.atoms)
    return BankReport(
        source=source, bank=bank, description=bank.describe(), n_classes=len(bank.labels),
        n_files=len(bank.atoms),
        durations=(durations[0], statistics.median(durations), durations[-1]),
        sample_rates=dict(sorted(Counter(a.sample_rate for a in bank.atoms).items())),
        licences=dict(Counter(a.license for a in bank.atoms).most_common()),
        decoded=decode, errors=errors, warnings=_label_warnings(bank.labels))


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
