"""`bench eval`, `compare`, `report`, `sweep perception`: scoring retrievers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    BackendOpt,
    Count,
    DataOpt,
    NoVerifyOpt,
    OutFile,
    OutFolder,
    RetrieverFlags,
    Seed,
    StoreFlags,
    _app,
    _load,
    app,
    console,
    option_groups,
    out_dir,
)
from reasonaudio.errors import ReasonAudioError
from reasonaudio.output_dirs import REPORT_OUTPUT

if TYPE_CHECKING:
    from reasonaudio.evaluation.evaluate import EvalContext

# --- eval / compare / report (evaluation/) ---------------------------------------------------------

def _eval_context(store: StoreFlags, models: RetrieverFlags, **fields: Any) -> EvalContext:
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
    from reasonaudio.generator.formulations import ALL, check_formulation, expand

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
    depth: int = typer.Option(100, "--depth", "-k", callback=Count,
                              help="Clips each retriever returns per query."),
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
    from reasonaudio.evaluation.external import RunSpec
    from reasonaudio.experiments.plan import ALL_CONDITIONS, make_plan, run_plan, write_plan_outputs
    from reasonaudio.evaluation.run_files import parse_run_spec
    from reasonaudio.views.plan import print_plan
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify, "clean" if condition.strip() == ALL_CONDITIONS else condition)
    specs = [RunSpec(*parse_run_spec(item)) for item in run or ()]
    plan = make_plan(bench, retriever or (), specs, condition, formulation, interleaved,
                     mteb_results, trec is not None)
    if mteb_results is not None:
        from reasonaudio.models.mteb_models import require_mteb

        require_mteb()  # refused before anything is evaluated
    with progress_hooks(console) as hooks:
        outcome = run_plan(bench, plan, _eval_context(store, models, depth=depth, trec_dir=trec,
                                                      hooks=hooks))
    print_plan(console, outcome)
    for line in write_plan_outputs(outcome, bench, json_out):
        console.print(Text(line))


@app.command()
@option_groups
def compare(
    a: str = typer.Argument(..., help="Retriever A (a name, e.g. two-stage:yamnet-caption+minilm)."),
    b: str = typer.Argument(..., help="Retriever B (a name; may be A itself under another condition)."),
    data: Path = DataOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", callback=OutFile,
                                            help="Also write the comparison as JSON."),
    depth: int = typer.Option(100, "--depth", "-k", callback=Count,
                              help="Depth if a retriever must be evaluated."),
    formulation: str = typer.Option("caption", "--formulation", help="The formulation both "
                                    "answer: caption (default) | question | command | keywords | "
                                    "paraphrase | exclusion."),
    store: StoreFlags = StoreFlags(),
    models: RetrieverFlags = RetrieverFlags(),
    condition: str = typer.Option("clean", "--condition", help="Condition of A and B."),
    condition_a: Optional[str] = typer.Option(None, "--condition-a", help="Condition of A "
                                              "(default: --condition)."),
    condition_b: Optional[str] = typer.Option(None, "--condition-b", help="Condition of B "
                                              "(default: --condition)."),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """A - B per task with a paired randomization test (10,000 permutations, seed 0); A and B
    may be one retriever under two conditions (paired by query: the queries are the same)."""
    from reasonaudio.experiments.plan import compare_keys
    from reasonaudio.dataset.keys import ResultKey
    from reasonaudio.fileio import write_json
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.results import print_comparison

    (form,) = _formulations(formulation, False, allow_all=False)
    for name in (a, b):
        if "@" in name:
            raise ReasonAudioError(f"compare {name}: a retriever name never carries its condition; "
                                   "name it with --condition-a / --condition-b (or --condition for both)")
    keys = [ResultKey(name, cond or condition, form)
            for name, cond in ((a, condition_a), (b, condition_b))]
    bench = _load(data, no_verify, condition)
    with progress_hooks(console) as hooks:
        comparison = compare_keys(bench, keys[0], keys[1],
                                  _eval_context(store, models, depth=depth, hooks=hooks))
    print_comparison(console, comparison)
    if json_out is not None:
        write_json(json_out, comparison.to_json())
        console.print(Text(f"wrote {json_out}"))


@app.command()
def report(
    data: Path = DataOpt,
    out: Optional[Path] = typer.Option(None, "--out", "-o", callback=out_dir(REPORT_OUTPUT),
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
    seed: int = typer.Option(0, "--seed", callback=Seed, help="Seed of the perception model's draws."),
    baseline: Optional[list[str]] = typer.Option(None, "--baseline", help="A retriever with saved "
                                                 "results whose Acc@1 the crossings are read against "
                                                 "(repeat; default: bag-of-sounds and the best "
                                                 "learned retriever, when saved)."),
    json_out: Optional[Path] = typer.Option(None, "--json", callback=OutFile,
                                            help="Write the ladder as JSON here."),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """The oracle's logic over events heard worse and worse: event F1 and Acc@1 per level."""
    from reasonaudio.experiments.perception_ladder import parse_levels, saved_baselines, sweep_perception
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


# --- bench replicate (issue 52): claims across seeds ------------------------------------------

def _data_seeds(text: Optional[str], replicates: Optional[int]) -> tuple[int, ...]:
    """``--data-seeds 100,200,300`` as seeds (each a seed by the one rule); none given: empty
    (the library picks ``--replicates`` of its own)."""
    if text is None:
        return ()
    seeds = []
    for item in text.split(","):
        try:
            seeds.append(Seed(int(item.strip())))
        except (ValueError, typer.BadParameter):
            raise ReasonAudioError(f"--data-seeds: {item.strip()!r} is not a seed (integers in "
                                   f"{Seed}, comma-separated)") from None
    if replicates is not None and replicates != len(seeds):
        raise ReasonAudioError(f"--replicates {replicates} but --data-seeds names {len(seeds)} seeds; "
                               "give one of the two")
    return tuple(seeds)


@app.command()
def replicate(
    retriever: Optional[list[str]] = typer.Option(None, "--retriever", "-r", help="Retriever name "
                                                  "(repeat; default: oracle, bag-of-sounds, BM25)."),
    data_seeds: Optional[str] = typer.Option(None, "--data-seeds", help="The builds' seeds, "
                                             "comma-separated (default: reference + 100, + 200, ...)."),
    replicates: Optional[int] = typer.Option(None, "--replicates", "-K", callback=Count,
                                             help="Builds without --data-seeds (default 3)."),
    reference_seed: int = typer.Option(0, "--reference-seed", callback=Seed, help="The docs' "
                                       "build: its seeds are not used again."),
    clips: int = typer.Option(600, "--clips", callback=Count, help="Clips in each build."),
    queries: int = typer.Option(200, "--queries", callback=Count, help="Queries in each build."),
    atoms: str = typer.Option("auto", help="auto | synthetic | PATH (as `bench demo`)"),
    detector_model: Optional[Path] = typer.Option(None, "--detector-model", help="A trained "
                                                  "detected: retriever's model."),
    out: Path = typer.Option(Path("data/replicate"), "--out", "-o", callback=OutFolder,
                             help="The builds' folder."),
    json_out: Optional[Path] = typer.Option(None, "--json", callback=OutFile,
                                            help="Also write the figures as JSON."),
    backend: Optional[str] = BackendOpt,
) -> None:
    """Retrievers on K builds of other seeds: means over seeds and the docs' claims on each."""
    from reasonaudio.experiments.replicate import (DEFAULT_REPLICATES, DEFAULT_RETRIEVERS, ReplicateParams,
                                                   replication_document, run_replicate)
    from reasonaudio.fileio import write_json
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.replicate import print_replication

    params = ReplicateParams(out=out, retrievers=tuple(retriever or DEFAULT_RETRIEVERS),
                             seeds=_data_seeds(data_seeds, replicates),
                             replicates=DEFAULT_REPLICATES if replicates is None else replicates,
                             reference_seed=reference_seed, clips=clips, queries=queries, atoms=atoms,
                             backend=backend, detector_model=detector_model)
    with progress_hooks(console) as hooks:
        doc = replication_document(run_replicate(params, hooks))
    print_replication(console, doc)
    if json_out is not None:
        write_json(json_out, doc)
        console.print(Text(f"wrote {json_out}"))
