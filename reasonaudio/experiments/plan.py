"""One evaluation plan: retrievers and run files x acoustic conditions x views, checked first.

``bench eval`` and the main job say what to evaluate as one :class:`EvalPlan`: retriever names,
run files made elsewhere, the conditions the audio is rendered under, and the views of the
queries asked (formulations such as ``caption`` and ``question``, and ``interleaved``, where a sound
is given by example). :func:`make_plan` checks the combination once, before any model loads, and
:func:`run_plan` evaluates every cell, each result addressed by its
:class:`~reasonaudio.dataset.keys.ResultKey`, then the tables across cells the plan calls for:
robustness across formulations, named vs by example, and scores across conditions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.conditions import CLEAN
from reasonaudio.dataset.interleaved import INTERLEAVED
from reasonaudio.errors import ReasonAudioError
from reasonaudio.evaluation.by_example import by_example, evaluate_interleaved
from reasonaudio.evaluation.compare import Comparison, compare
from reasonaudio.evaluation.condition_scores import (
    ConditionScores, condition_scores, resolve_conditions, write_scores_json)
from reasonaudio.evaluation.evaluate import EvalContext, ensure_results, evaluate_retrievers
from reasonaudio.evaluation.external import RunSpec, evaluate_run_files
from reasonaudio.dataset.keys import ResultKey
from reasonaudio.evaluation.mteb_results import write_mteb_results
from reasonaudio.evaluation.report import write_results_json
from reasonaudio.evaluation.results import Results
from reasonaudio.evaluation.robustness import robustness
from reasonaudio.generator.formulations import ALL, check_formulation, expand
from reasonaudio.tasks.base import CAPTION

ALL_CONDITIONS = "all"


@dataclass(frozen=True)
class EvalPlan:
    """What one evaluation covers; every combination of its fields has been checked."""

    retrievers: tuple[str, ...] = ()
    runs: tuple[RunSpec, ...] = ()
    conditions: tuple[str, ...] = (CLEAN,)
    views: tuple[str, ...] = (CAPTION,)
    mteb_results: Path | None = None
    """also write MTEB result files here (caption view, one condition)"""
    across_conditions: bool = False
    """``--condition all``: each condition read anew, then the scores across them"""

    def keys(self) -> list[ResultKey]:
        names = list(self.retrievers) + [spec.name for spec in self.runs]
        return [ResultKey(n, c, v) for c in self.conditions for v in self.views for n in names]


@dataclass
class PlanCell:
    """One condition x view of a plan, evaluated."""

    condition: str
    view: str
    results: Results
    run_notes: list[Any] = field(default_factory=list)


@dataclass
class PlanOutcome:
    """Every cell, and the tables across cells the plan asked for (None where it did not)."""

    plan: EvalPlan
    cells: list[PlanCell]
    robustness: dict[str, Any] = field(default_factory=dict)
    """condition -> robustness across formulations (two formulations or more, with retrievers)"""
    by_example: dict[str, Any] = field(default_factory=dict)
    """condition -> named vs by-example table (the interleaved view)"""
    condition_scores: ConditionScores | None = None
    """scores across conditions (two conditions or more)"""

    @property
    def results(self) -> Results:
        """Every cell's results in one document (the ``--json`` of one condition)."""
        first = self.cells[0].results
        runs = {name: r for cell in self.cells for name, r in cell.results.runs.items()}
        return Results(first.data, first.versions, runs)



def make_plan(bench: BenchmarkView, retrievers: Sequence[str] = (), runs: Sequence[RunSpec] = (),
              condition: str = CLEAN, formulation: str = CAPTION, interleaved: bool = False,
              mteb_results: Path | None = None, trec: bool = False) -> EvalPlan:
    """The plan of ``bench eval``'s flags, or one line saying which combination cannot be.

    ``condition``: one name, or ``all`` (every condition the build recorded, else every one with
    saved results). ``formulation``: one, or ``all``. ``interleaved`` adds the interleaved view."""
    if not retrievers and not runs:
        raise ReasonAudioError("nothing to evaluate: pass --retriever NAME and/or --run NAME=PATH")
    try:
        check_formulation(formulation)
    except ValueError as exc:
        raise ReasonAudioError(f"--formulation: {exc}") from None
    if formulation == ALL and runs:
        raise ReasonAudioError("--formulation all cannot go with a run file or a comparison: name the one "
                "formulation it answers")
    views = expand(formulation)
    if interleaved:
        if formulation != CAPTION or mteb_results is not None:
            raise ReasonAudioError("--interleaved asks the interleaved variants of the captions: drop "
                    "--formulation and --mteb-results")
        views = (INTERLEAVED,)
    every = condition.strip() == ALL_CONDITIONS
    conditions = tuple(resolve_conditions(bench, ALL_CONDITIONS)) if every else (condition,)
    if every and (runs or trec):
        raise ReasonAudioError("--condition all evaluates --retriever names only (a run file was made under one "
                "condition: score it with --condition NAME)")
    if mteb_results is not None and (views != (CAPTION,) or every):
        raise ReasonAudioError("--mteb-results writes the caption queries' results only; drop --formulation "
                "(MTEB scores formulations as subsets: "
                "reasonaudio.evaluation.mteb_tasks.formulation_subsets)")
    return EvalPlan(tuple(retrievers), tuple(runs), conditions, tuple(views), mteb_results, every)


def _evaluate_cell(bench: BenchmarkView, condition: str, plan: EvalPlan, view: str,
                   context: EvalContext) -> PlanCell:
    """One condition x view: the run files first (every file checked before any model loads),
    then the retrievers."""
    asked = bench.with_view(view)  # a build without that view: one line, before any work
    done, notes = evaluate_run_files(asked, plan.runs, context, taken=plan.retrievers)
    if plan.retrievers:
        if view == INTERLEAVED:
            fresh = evaluate_interleaved(bench, plan.retrievers, context)
        else:
            fresh = evaluate_retrievers(asked, plan.retrievers, context)
        if plan.runs:
            fresh.runs.update(done.runs)
        done = fresh
    return PlanCell(condition, view, done, notes)


def run_plan(bench: BenchmarkView, plan: EvalPlan, context: EvalContext = EvalContext()) -> PlanOutcome:
    """Evaluate every cell of ``plan`` (results saved as each retriever finishes), then the tables
    across cells. ``bench`` is read under the plan's only condition, or under any when the plan
    has several (a view under each)."""
    for view in plan.views:  # every view checked before anything is evaluated
        bench.with_view(view)
    several = plan.across_conditions
    cells: list[PlanCell] = []
    outcome = PlanOutcome(plan, cells)
    for cond in plan.conditions:
        under = bench.with_condition(cond) if several else bench
        cells += [_evaluate_cell(under, cond, plan, view, context) for view in plan.views]
        if len([v for v in plan.views if v != INTERLEAVED]) > 1 and plan.retrievers:
            outcome.robustness[cond] = robustness(under, list(plan.retrievers))
        if INTERLEAVED in plan.views:
            outcome.by_example[cond] = by_example(under)
    if several:
        outcome.condition_scores = condition_scores(bench, list(plan.retrievers), list(plan.conditions))
    return outcome


def write_plan_outputs(outcome: PlanOutcome, bench: BenchmarkView, json_out: Path | None) -> list[str]:
    """The files a plan's flags asked for (``--json``, ``--mteb-results``); what was written, one
    line each. Across conditions ``--json`` holds the scores across them."""
    wrote = []
    if json_out is not None:
        if outcome.condition_scores is not None:
            write_scores_json(json_out, outcome.condition_scores)
        else:
            write_results_json(json_out, outcome.results)
        wrote.append(f"wrote {json_out}")
    if outcome.plan.mteb_results is not None:
        written = write_mteb_results(bench, outcome.results, outcome.plan.mteb_results)
        wrote.append(f"wrote {len(written)} MTEB result files under {outcome.plan.mteb_results}")
    return wrote


def compare_keys(bench: BenchmarkView, a: ResultKey, b: ResultKey,
                 context: EvalContext | None = None) -> Comparison:
    """:func:`compare` of two results by key: each read under its own condition (the queries are
    the same, so they pair by query), evaluated now where none is saved (``ensure_results`` with
    ``context``). Both must answer the same view. Each side is labelled by its key: the name, and
    the condition where the two differ or are not clean."""
    if a.view != b.view:
        raise ReasonAudioError(f"compare: both sides must answer one formulation, got {a.view!r} and {b.view!r}")
    context = context or EvalContext()
    sides = []
    for key in (a, b):
        # a build without formulations: one line, before any model loads
        under = bench.with_condition(key.condition).with_view(key.view)
        result = ensure_results(under, [key.name], context).runs[key.stored_name]
        show_condition = a.condition != b.condition or key.condition != CLEAN
        result.name = ResultKey(key.name, key.condition if show_condition else CLEAN).label()
        sides.append(result)
    return compare(sides[0], sides[1])
