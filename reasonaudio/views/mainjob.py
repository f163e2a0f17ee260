"""`bench demo` in the terminal: a rule per step, then at a glance the learned-vs-symbolic table,
the step log and where the rest is; ``--verbose`` adds the tables each step produces."""

from __future__ import annotations

import contextlib
from typing import Iterator

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.experiments.detection import DetectRun
from reasonaudio.evaluation.headline import accuracy_table, headline_names, tasks_asked
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.demo_sizes import CUSTOM, DEFAULT_SIZE, DEMO_SIZES
from reasonaudio.ingest.run import IngestSummary
from reasonaudio.mainjob import MainJobResult, StepStarted
from reasonaudio.progress import Hooks
from reasonaudio.views.benchmark import print_info
from reasonaudio.views.detect import print_detect_run
from reasonaudio.views.ingest import print_ingest_summary
from reasonaudio.views.progress import progress_hooks
from reasonaudio.views.robustness import print_robustness
from reasonaudio.views.results import print_comparison, print_report_outcome


@contextlib.contextmanager
def printing_hooks(console: Console, verbose: bool = False) -> Iterator[Hooks]:
    """Hooks that print each step as it happens (progress bars on the same console): a rule per
    :class:`StepStarted`; with ``verbose`` also the benchmark's counts, each ingest and the
    detection run."""
    def event(what: object) -> None:
        if isinstance(what, StepStarted):
            console.rule(Text(what.name, style="bold"))
        elif not verbose:
            return
        elif isinstance(what, BenchmarkView):
            print_info(console, what)
        elif isinstance(what, IngestSummary):
            print_ingest_summary(console, what)
        elif isinstance(what, DetectRun):
            print_detect_run(console, what)

    with progress_hooks(console, unit="clips", event=event) as hooks:
        yield hooks


def steps_table(result: MainJobResult) -> Table:
    t = Table(title="main job steps")
    t.add_column("step")
    t.add_column("seconds", justify="right")
    t.add_column("result")
    for s in result.steps:
        t.add_row(Text(s.name), f"{s.seconds:.1f}", Text(s.result))
    t.add_row("[bold]total", f"[bold]{sum(s.seconds for s in result.steps):.1f}", "")
    return t


NOT_RUN_NAMES = 3
"""learned retrievers the demo's not-run line names before 'and N more'"""


def not_run_line(not_run: dict[str, str]) -> str:
    """The learned retrievers the demo could not run, in one line with a pointer to the reasons
    (``bench models`` says why each does not load here), not one line each."""
    names = list(not_run)
    shown = ", ".join(names[:NOT_RUN_NAMES]) + (f" and {len(names) - NOT_RUN_NAMES} more"
                                                 if len(names) > NOT_RUN_NAMES else "")
    return (f"not run here: {len(names)} learned retriever{'s' if len(names) != 1 else ''} "
            f"({shown}) need weights or packages this machine lacks; `bench models` says why "
            "for each")


def print_main_job(console: Console, result: MainJobResult, verbose: bool = False) -> None:
    """What follows the steps: symbolic filtering vs the best learned retriever, the step log and
    where the rest is (the report's tables and plots, the saved results, the explorer). With
    ``verbose`` the report's tables come first, as ``bench report`` prints them."""
    if verbose and result.report is not None:
        print_report_outcome(console, result.report)
        print_robustness(console, result.report.robustness)
    if result.comparison is not None:
        console.rule("[bold]symbolic filtering vs the best learned retriever")
        print_comparison(console, result.comparison)
    if result.detection_comparison is not None:
        console.rule("[bold]perception + logic (detected events) vs the best learned retriever")
        print_comparison(console, result.detection_comparison)
    if result.not_run:
        console.print(Text(not_run_line(result.not_run), style="dim"))
    console.print(steps_table(result))
    if result.results is not None:
        console.print(headline_table(result))
    for line in where_the_rest_is(result, verbose):
        console.print(Text(line))


def headline_table(result: MainJobResult) -> Table:
    """The README's table, cell for cell (:mod:`reasonaudio.evaluation.headline` makes both):
    Acc@1 per task with multiple choice in brackets, then overall Acc@1, nDCG@10 and MC."""
    results = result.results
    table = accuracy_table(results, headline_names(results), tasks_asked(results))
    t = Table(title="Acc@1 per task (multiple choice), as in the README")
    for i, name in enumerate(table.header):
        t.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    for row in table.rows:
        t.add_row(Text(row[0]), *row[1:])
    return t


def where_the_rest_is(result: MainJobResult, verbose: bool) -> list[str]:
    """The closing lines: every saved artefact and the commands that show it."""
    lines = [f"results: {result.results_path}  runs and per-query values: {result.runs_dir}"]
    size = result.size
    if size is not None and size.name == DEFAULT_SIZE:
        full = DEMO_SIZES["full"]
        lines.append(f"this is the quick size ({size.describe()}); `bench demo --full` "
                     f"runs the size the docs' figures are measured on ({full.describe()}), "
                     f"scores the retrievers that listen under {full.noisy} too (docs/conditions.md), "
                     "and adds detected:yamnet-trained, a detector trained on the testbed's own "
                     "strong labels (docs/trained-detector.md)")
    elif size is not None and size.name == CUSTOM:
        lines.append(f"this is a custom size ({size.describe()}): calibrated as `bench build "
                     "--calibration-for` calibrates, each build at most the size's own")
    if result.report is not None and result.report.paths:
        lines.append(f"report: {len(result.report.paths)} files in {result.report.paths[0].parent}")
    if result.runs_dir is not None:
        data = result.runs_dir.parent
        if not verbose:
            tables = "spectrum, detection, robustness" + ("" if result.noisy is None else ", conditions")
            lines.append(f"every table ({tables}): "
                         f"bench report --data {data}, or bench demo --verbose")
        lines.append(f"explore queries, hits and failures in a browser: bench serve --data {data}")
    return lines
