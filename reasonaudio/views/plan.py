"""The tables of one evaluation plan (``bench eval``): each cell, then the tables across cells."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from reasonaudio.experiments.plan import PlanOutcome
from reasonaudio.views.condition_scores import print_condition_scores
from reasonaudio.views.external import print_run_notes
from reasonaudio.views.interleaved import print_by_example
from reasonaudio.views.results import print_eval_tables
from reasonaudio.views.robustness import print_robustness


def print_plan(console: Console, outcome: PlanOutcome) -> None:
    """Per cell: its run-file notes, a heading where the plan has several conditions or views,
    its tables (the details only for one condition); then robustness, named vs by example and
    the scores across conditions, where the plan asked for them."""
    plan = outcome.plan
    several_conditions = plan.across_conditions
    for cell in outcome.cells:
        print_run_notes(console, cell.run_notes)
        if several_conditions and cell.view == plan.views[0]:
            console.print(Text(f"condition {cell.condition}", style="bold"))
        if len(plan.views) > 1:
            console.print(Text(f"formulation: {cell.view}"))
        print_eval_tables(console, cell.results, detail=not several_conditions)
    for rob in outcome.robustness.values():
        print_robustness(console, rob)
    for table in outcome.by_example.values():
        print_by_example(console, table)
    if outcome.condition_scores is not None:
        print_condition_scores(console, outcome.condition_scores)
