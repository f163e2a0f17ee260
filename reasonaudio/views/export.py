"""``bench export``: a progress bar over the clips, then what was written."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from reasonaudio.ingest.benchmark import Benchmark
from reasonaudio.ingest.export import ExportOptions, ExportSummary, check_export, export_hf


def print_export_summary(console: Console, s: ExportSummary) -> None:
    audio = {"embed": "audio in the parquet", "files": "audio files beside it",
             "none": "no audio"}[s.audio]
    rate = f" at {s.sample_rate} Hz" if s.sample_rate and s.audio != "none" else ""
    console.print(f"wrote {s.path}: {s.clips:,} clips ({audio}{rate}), {s.queries:,} queries, "
                  f"{s.qrels:,} qrels, {s.choices:,} choices, {s.hard_negatives:,} hard negatives, "
                  f"{s.atoms:,} atoms with licences in README.md; {len(s.files)} files in "
                  f"{s.seconds:.1f} s", highlight=False, soft_wrap=True)
    for kind, n in s.adjustments.items():
        console.print(f"render adjustments: {kind}: {n}", highlight=False)
    console.print(f'load with: datasets.load_dataset("{s.path}", "corpus", split="test")',
                  highlight=False, soft_wrap=True)


def export_with_progress(console: Console, bench: Benchmark, dest: Path,
                         opts: ExportOptions) -> ExportSummary:
    check_export(bench, dest, opts)  # bad options end in one line, before the bar shows
    progress = Progress(TextColumn("[bold]export"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), TimeRemainingColumn(), console=console)
    task = progress.add_task("export", total=len(bench.clips))

    def advance(done: int, total: int) -> None:
        if not progress.live.is_started:  # started by the first clip: an atom bank that cannot
            progress.start()              # be opened still ends in one line
        progress.update(task, completed=done)

    try:
        summary = export_hf(bench, dest, opts, progress=advance)
    finally:
        if progress.live.is_started:
            progress.stop()
    print_export_summary(console, summary)
    return summary
