"""``bench export``: a progress bar over the clips, then what was written."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.generator.export import ExportOptions, ExportSummary, check_export, export_hf
from reasonaudio.views.progress import progress_hooks


def print_export_summary(console: Console, s: ExportSummary) -> None:
    audio = {"embed": "audio in the parquet", "files": "audio files beside it",
             "none": "no audio"}[s.audio]
    rate = f" at {s.sample_rate} Hz" if s.sample_rate and s.audio != "none" else ""
    forms = f", {s.formulations:,} formulation rows" if s.formulations else ""
    console.print(Text(f"wrote {s.path}: {s.clips:,} clips ({audio}{rate}), {s.queries:,} queries, "
                       f"{s.qrels:,} qrels, {s.choices:,} choices, {s.hard_negatives:,} hard negatives, "
                       f"{s.atoms:,} atoms with licences in README.md"
                       f"{forms}; {len(s.files)} files in "
                       f"{s.seconds:.1f} s"))
    for kind, n in s.adjustments.items():
        console.print(Text(f"render adjustments: {kind}: {n}"))
    console.print(Text(f'load with: datasets.load_dataset("{s.path}", "corpus", split="test")'))


def export_with_progress(console: Console, bench: BenchmarkView, dest: Path,
                         opts: ExportOptions) -> ExportSummary:
    check_export(bench, dest, opts)  # bad options end in one line, before any work
    with progress_hooks(console, unit="clips") as hooks:
        summary = export_hf(bench, dest, opts, hooks=hooks)
    print_export_summary(console, summary)
    return summary
