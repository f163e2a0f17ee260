"""`bench eval`, `compare`, `report`, `sweep perception`: scoring retrievers."""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path
from typing import Any, Optional, Sequence

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    DataOpt,
    NoVerifyOpt,
    OutFile,
    OutFolder,
    RetrieverFlags,
    StoreFlags,
    _app,
    _load,
    app,
    console,
    option_groups,
)
from reasonaudio.errors import ReasonAudioError

# --- eval / compare / report (evaluation/) ---------------------------------------------------------

def _eval_context(store: StoreFlags, models: RetrieverFlags, **fields: Any) -> Any:
    """The evaluation context of ``eval`` / ``compare``: store and model flags, plus ``fields``."""
    from reasonaudio.evaluation.evaluate import EvalContext

    options, per_retriever = models.options()
    return EvalContext(backend=store.backend, url=store.qdrant_url, options=options,
                       retriever_options=per_retriever, **fields)


FormulationOpt = typer.Option("caption", "--formulation", help="Which way of asking the "
                              "queries are answered in: caption (default, queries.jsonl) | question "
                              "| command | keywords | paraphrase | exclusion | all (each in turn).")


def _formulations(name: str, with_runs: bool, allow_all: bool = True) -> tuple[str, ...]:
    """``--formulation``'s names; one line for an unknown one (or ``all`` where one is needed)."""
    from reasonaudio.constraints.formulations import ALL, check_formulation, expand

    try:
        check_formulation(name)
    except ValueError as exc:
        raise ReasonAudioError(f"--formulation: {exc}") from None
    if name == ALL and (with_runs or not allow_all):
        raise ReasonAudioError("--formulation all cannot go with a run file or a comparison: "
                               "name the one formulation it answers")
    return expand(name)


@app.command("eval")
@option_groups
def eval_(
    data: Path = DataOpt,
    retriever: Optional[list[str]] = typer.Option(None, "--retriever", "-r",
                                                  help="Retriever name (repeat for several)."),
    run: Optional[list[str]] = typer.Option(None, "--run", help="NAME=PATH: score a run file made "
                                            "elsewhere (TREC or JSON {qid: {clip: score}}; repeat)."),
    json_out: Optional[Path] = typer.Option(None, "--json", callback=OutFile,
                                            help="Also write the results as JSON."),
    trec: Optional[Path] = typer.Option(None, "--trec", callback=OutFolder,
                                        help="Write one TREC run file per retriever here."),
    mteb_results: Optional[Path] = typer.Option(None, "--mteb-results", callback=OutFolder,
                                                help="Also write MTEB result "
                                                "files here (MTEB's result-cache layout; needs mteb)."),
    depth: int = typer.Option(100, "--depth", "-k", help="Clips each retriever returns per query."),
    formulation: str = FormulationOpt,
    store: StoreFlags = StoreFlags(),
    models: RetrieverFlags = RetrieverFlags(),
    condition: str = typer.Option("clean", "--condition",
                                  help="clean | snrNN | long, or all: every condition the build "
                                  "recorded (else every one with saved results), one after another."),
    no_verify: bool = NoVerifyOpt,
    interleaved: bool = typer.Option(False, "--interleaved", help="Ask the build's interleaved "
                                     "variants (a sound given by example; docs/interleaved.md): "
                                     "results NAME@interleaved, and the named vs by-example table."),
) -> None:
    """Evaluate retrievers on every query: per-task Acc@1 / nDCG@10 and multiple choice."""
    from reasonaudio.evaluation.evaluate import evaluate_retrievers
    from reasonaudio.evaluation.external import RunSpec, evaluate_run_files
    from reasonaudio.evaluation.report import write_results_json
    from reasonaudio.evaluation.results import formulation_key
    from reasonaudio.evaluation.run_files import parse_run_spec
    from reasonaudio.views.external import print_run_notes
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.results import print_eval_tables

    if condition.strip() == "all":
        _eval_all_conditions(data, no_verify, retriever, run, json_out, trec, depth, store, models)
        return
    bench = _load(data, no_verify, condition)
    if not retriever and not run:
        raise ReasonAudioError("nothing to evaluate: pass --retriever NAME and/or --run NAME=PATH")
    if mteb_results is not None:
        from reasonaudio.models.mteb_models import require_mteb

        require_mteb()  # refused before anything is evaluated
    if interleaved:
        if formulation != "caption" or mteb_results is not None:
            raise ReasonAudioError("--interleaved asks the interleaved variants of the captions: "
                                   "drop --formulation and --mteb-results")
        _eval_interleaved(bench, retriever or (), run or (),
                          _eval_context(store, models, depth=depth, trec_dir=trec), json_out)
        return
    forms = _formulations(formulation, bool(run))
    if mteb_results is not None and forms != ("caption",):
        raise ReasonAudioError("--mteb-results writes the caption queries' results only; drop "
                               "--formulation (MTEB scores formulations as subsets: "
                               "reasonaudio.evaluation.mteb_tasks.formulation_subsets)")
    views = [bench.formulated(form) for form in forms]  # a build without formulations: one line
    context = _eval_context(store, models, depth=depth, trec_dir=trec)
    results = None
    for form, view in zip(forms, views):
        specs = [RunSpec(*parse_run_spec(item)) for item in run or ()]
        specs = [RunSpec(formulation_key(sp.name, form), *astuple(sp)[1:]) for sp in specs]
        external, notes = evaluate_run_files(view, specs, context.with_(formulation=form),
                                             taken=retriever or ())  # files checked before any model loads
        print_run_notes(console, notes)
        if retriever:
            with progress_hooks(console) as hooks:
                done = evaluate_retrievers(bench, retriever, context.with_(hooks=hooks, formulation=form))
            done.runs.update(external.runs)
        else:
            done = external
        if len(forms) > 1:
            console.print(Text(f"formulation: {form}"))
        print_eval_tables(console, done)
        if results is None:
            results = done
        else:
            results.runs.update(done.runs)
    assert results is not None
    if len(forms) > 1 and retriever:
        from reasonaudio.evaluation.robustness import robustness
        from reasonaudio.views.robustness import print_robustness

        print_robustness(console, robustness(bench, retriever))
    if json_out is not None:
        write_results_json(json_out, results)
        console.print(Text(f"wrote {json_out}"))
    if mteb_results is not None:
        from reasonaudio.evaluation.mteb_results import write_mteb_results

        written = write_mteb_results(bench, results, mteb_results)
        console.print(Text(f"wrote {len(written)} MTEB result files under {mteb_results}"))


def _eval_interleaved(bench: Any, retrievers: Sequence[str], runs: Sequence[str], context: Any,
                      json_out: Optional[Path]) -> None:
    """``bench eval --interleaved``: retrievers and run files on the interleaved variants, then
    the named vs by-example table of what is saved."""
    from reasonaudio.dataset.interleaved import INTERLEAVED, interleaved_view
    from reasonaudio.evaluation.by_example import by_example, evaluate_interleaved
    from reasonaudio.evaluation.external import RunSpec, evaluate_run_files
    from reasonaudio.evaluation.report import write_results_json
    from reasonaudio.evaluation.results import formulation_key
    from reasonaudio.evaluation.run_files import parse_run_spec
    from reasonaudio.views.external import print_run_notes
    from reasonaudio.views.interleaved import print_by_example
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.results import print_eval_tables

    view = interleaved_view(bench)  # a build without interleaved queries: one line
    specs = [RunSpec(*parse_run_spec(item)) for item in runs]
    specs = [RunSpec(formulation_key(sp.name, INTERLEAVED), *astuple(sp)[1:]) for sp in specs]
    done, notes = evaluate_run_files(view, specs, context.with_(formulation=INTERLEAVED),
                                     taken=retrievers)
    print_run_notes(console, notes)
    if retrievers:
        with progress_hooks(console) as hooks:
            done.runs.update(evaluate_interleaved(bench, retrievers, context.with_(hooks=hooks)).runs)
    print_eval_tables(console, done)
    print_by_example(console, by_example(bench))
    if json_out is not None:
        write_results_json(json_out, done)
        console.print(Text(f"wrote {json_out}"))


def _eval_all_conditions(data: Path, no_verify: bool, retriever: Optional[list[str]],
                         run: Optional[list[str]], json_out: Optional[Path], trec: Optional[Path],
                         depth: int, store: StoreFlags, models: RetrieverFlags) -> None:
    """``bench eval --condition all``: each condition in turn, then the table across them."""
    from reasonaudio.evaluation.condition_scores import (
        condition_scores,
        reread,
        resolve_conditions,
        write_scores_json,
    )
    from reasonaudio.evaluation.evaluate import evaluate_retrievers
    from reasonaudio.views.condition_scores import print_condition_scores
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.results import print_eval_tables

    if run or trec:
        raise ReasonAudioError("--condition all evaluates --retriever names only (a run file was "
                               "made under one condition: score it with --condition NAME)")
    if not retriever:
        raise ReasonAudioError("nothing to evaluate: pass --retriever NAME")
    bench = _load(data, no_verify)
    conditions = resolve_conditions(bench, "all")
    context = _eval_context(store, models, depth=depth)
    for cond in conditions:
        console.print(Text(f"condition {cond}", style="bold"))
        with progress_hooks(console) as hooks:
            results = evaluate_retrievers(reread(bench, cond), retriever, context.with_(hooks=hooks))
        print_eval_tables(console, results, detail=False)
    scores = condition_scores(bench, retriever, conditions)
    print_condition_scores(console, scores)
    if json_out is not None:
        write_scores_json(json_out, scores)
        console.print(Text(f"wrote {json_out}"))


@app.command()
@option_groups
def compare(
    a: str = typer.Argument(..., help="Retriever A (NAME, or NAME@CONDITION: e.g. "
                            "two-stage:yamnet-caption+minilm@snr5)."),
    b: str = typer.Argument(..., help="Retriever B (NAME or NAME@CONDITION)."),
    data: Path = DataOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", callback=OutFile,
                                            help="Also write the comparison as JSON."),
    depth: int = typer.Option(100, "--depth", "-k", help="Depth if a retriever must be evaluated."),
    formulation: str = typer.Option("caption", "--formulation", help="The formulation both "
                                    "answer: caption (default) | question | command | keywords | "
                                    "paraphrase | exclusion."),
    store: StoreFlags = StoreFlags(),
    models: RetrieverFlags = RetrieverFlags(),
    condition: str = typer.Option("clean", "--condition",
                                  help="Condition of A and B where they do not name one (@COND)."),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """A - B per task with a paired randomization test (10,000 permutations, seed 0); A and B
    may be one retriever under two conditions (paired by query: the queries are the same)."""
    from reasonaudio.dataset.conditions import qualified
    from reasonaudio.evaluation.compare import compare as compare_results
    from reasonaudio.evaluation.condition_scores import results_under
    from reasonaudio.evaluation.evaluate import ensure_results
    from reasonaudio.evaluation.results import formulation_key
    from reasonaudio.fileio import write_json
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.results import print_comparison

    (form,) = _formulations(formulation, False, allow_all=False)
    context = _eval_context(store, models, depth=depth, formulation=form)
    bench = _load(data, no_verify, condition)
    bench.formulated(form)  # a build without formulations: one line, before any model loads
    sides = []
    with progress_hooks(console) as hooks:
        for text in (a, b):
            side_bench, name, cond = results_under(bench, text, condition)
            run_ = ensure_results(side_bench, [name], context.with_(hooks=hooks)).runs[
                formulation_key(name, form)]
            run_.name = qualified(name, cond) if "@" in a + b or condition != "clean" else name
            sides.append(run_)
    comparison = compare_results(sides[0], sides[1])
    print_comparison(console, comparison)
    if json_out is not None:
        write_json(json_out, comparison.to_json())
        console.print(Text(f"wrote {json_out}"))


@app.command()
def report(
    data: Path = DataOpt,
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="Folder for PNG plots (default DATA/results/plots)."),
    retriever: Optional[list[str]] = typer.Option(None, "--retriever", "-r",
                                                  help="Only these retrievers (default: all saved)."),
    projection: str = typer.Option("pca", help="2-D projection of embeddings: pca | tsne."),
    condition: str = typer.Option("clean", "--condition",
                                  help="Whose saved results the tables and plots show; results "
                                  "under several conditions add the table and plot against SNR."),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Saved results as tables and PNG plots (no recomputation)."""
    from reasonaudio.evaluation.report import run_report
    from reasonaudio.views.results import print_report_outcome
    from reasonaudio.views.robustness import print_robustness

    outcome = run_report(_load(data, no_verify, condition), out, retriever or None, projection)
    print_report_outcome(console, outcome)
    print_robustness(console, outcome.robustness)
    if outcome.by_example is not None:
        from reasonaudio.views.interleaved import print_by_example
        print_by_example(console, outcome.by_example)


# --- bench sweep (issue 42): parameter sweeps over a benchmark --------------------------------

sweep_app = _app(help="Sweeps: a benchmark scored along one parameter.")
app.add_typer(sweep_app, name="sweep")


@sweep_app.command("perception")
def sweep_perception_cmd(
    data: Path = DataOpt,
    levels: Optional[str] = typer.Option(None, "--levels", help="Comma-separated severities in "
                                         "[0, 1], or miss:false_alarm:jitter_ms:merge_split levels "
                                         "(default: 0,0.05,0.1,0.2,0.3,0.45,0.6)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the perception model's draws."),
    baseline: Optional[list[str]] = typer.Option(None, "--baseline", help="A retriever with saved "
                                                 "results whose Acc@1 the crossings are read against "
                                                 "(repeat; default: bag-of-sounds and the best "
                                                 "learned retriever, when saved)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the ladder as JSON here."),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """The oracle's logic over events heard worse and worse: event F1 and Acc@1 per level."""
    from reasonaudio.evaluation.perception_ladder import parse_levels, saved_baselines, sweep_perception
    from reasonaudio.fileio import write_json
    from reasonaudio.views.perception_ladder import print_ladder
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify)
    chosen = parse_levels(levels) if levels is not None else None
    baselines = saved_baselines(bench, baseline or ())
    with progress_hooks(console) as hooks:
        ladder = sweep_perception(bench, chosen, seed, baselines, hooks)
    print_ladder(console, ladder)
    if json_out is not None:
        write_json(json_out, ladder.to_json())
        console.print(Text(f"wrote {json_out}"))
