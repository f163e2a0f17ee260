"""Train with and without planted hard negatives, evaluate both on the benchmark under test.

    python scripts/train_vs_test.py --train TRAIN_DIR --test BENCH_DIR --out MODELS_DIR \
        [--baseline two-stage:yamnet-caption+minilm] [--no-hold-out-templates] [--hold-out-labels N]

Prints the per-task Acc@1 / nDCG@10 / multiple-choice table of both variants (and the baselines
named, from their saved results on BENCH_DIR), the paired randomization tests between the two
variants and of each against each baseline, whichever way they come out, and draws the
projection plots of both under BENCH_DIR/results/plots. docs/training.md has the figures.

By default the models are trained with the benchmark's query templates held out
(``--hold-out-templates``), so no benchmark query text is among the training captions: that is
the figure to lead with. ``--no-hold-out-templates`` trains on the benchmark's templates too;
then some benchmark query texts occur verbatim among the training captions, and the script says
how many and prints Acc@1 on those queries and on the others apart.

With ``--hold-out-formulations A,B`` the training captions are also rendered in every other
formulation (question, command, keywords, paraphrase, exclusion) but never in A or B; then the
trained model and the baselines are scored under every formulation of the benchmark (its
``formulations.jsonl``: ``bench formulate --data BENCH`` adds it to an older build), and the
robustness table (Acc@1, nDCG@10 and MC per formulation, change from caption with a paired
test, held-out formulations marked) and consistency@1 are printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main() -> None:
    from reasonaudio.train.data import DataOptions
    from reasonaudio.train.perception_stage import PerceptionOptions
    from reasonaudio.train.trainer import TrainOptions

    recipe, data, perception = TrainOptions(), DataOptions(), PerceptionOptions()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, required=True, help="training build (another seed)")
    ap.add_argument("--test", type=Path, required=True, help="benchmark under test")
    ap.add_argument("--out", type=Path, required=True, help="folder for the two model directories")
    ap.add_argument("--baseline", action="append", default=[], help="saved retriever to compare with")
    ap.add_argument("--variant", action="append", default=None, metavar="NAME",
                    help="train only these (trained:hard-negatives, trained:in-batch-only; default both)")
    ap.add_argument("--epochs", type=int, default=recipe.epochs)
    ap.add_argument("--seed", type=int, default=recipe.seed)
    ap.add_argument("--hold-out-labels", type=int, default=data.hold_out_labels)
    ap.add_argument("--hold-out-templates", action=argparse.BooleanOptionalAction, default=True,
                    help="train on training paraphrases only (default), never on the benchmark's "
                    "query templates")
    ap.add_argument("--hold-out-formulations", default=None, metavar="A,B",
                    help="also train on the other formulations' templates but never these "
                    "(e.g. keywords,paraphrase); then every retriever is scored under every "
                    "formulation of the benchmark")
    ap.add_argument("--threads", type=int, default=recipe.threads)
    ap.add_argument("--captions-per-clip", type=int, default=data.captions_per_clip)
    ap.add_argument("--templates-per-query", type=int, default=data.templates_per_query)
    ap.add_argument("--perception-epochs", type=int, default=perception.epochs)
    ap.add_argument("--presence-weight", type=float, default=recipe.presence_weight)
    ap.add_argument("--no-event-slots", dest="event_slots", action="store_false",
                    default=recipe.model.event_slots)
    args = ap.parse_args()

    from rich.console import Console
    from rich.text import Text

    from reasonaudio.experiments.train_experiment import VARIANTS, run_experiment
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.errors import ReasonAudioError
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.results import print_comparison, print_eval_tables
    from reasonaudio.views.train import print_train_summary, train_progress

    console = Console()
    from reasonaudio.train.data import check_hold_out_formulations

    try:
        held_forms = None if args.hold_out_formulations is None else check_hold_out_formulations(
            [n.strip() for n in args.hold_out_formulations.split(",") if n.strip()])
    except ReasonAudioError as exc:
        console.print(Text.assemble(("error: ", "bold red"), str(exc)))
        raise SystemExit(2)
    options = TrainOptions(data=DataOptions(captions_per_clip=args.captions_per_clip,
                                            templates_per_query=args.templates_per_query,
                                            hold_out_labels=args.hold_out_labels,
                                            hold_out_templates=args.hold_out_templates,
                                            hold_out_formulations=held_forms,
                                            seed=args.seed),
                           epochs=args.epochs, seed=args.seed, threads=args.threads,
                           perception=PerceptionOptions(epochs=args.perception_epochs),
                           presence_weight=args.presence_weight,
                           model=replace(recipe.model, event_slots=args.event_slots))
    try:
        if held_forms is not None:  # scored under every formulation: refused before training
            from reasonaudio.tasks.base import FORMULATIONS
            from reasonaudio.tasks.formulation_records import is_default

            test_bench = load_benchmark(args.test)
            for form in (f for f in FORMULATIONS if not is_default(f)):
                test_bench.with_view(form)
        with progress_hooks(console) as hooks:
            exp = run_experiment(args.train, args.test, args.out, options, tuple(args.baseline),
                                 hooks=hooks, train_hooks=lambda name: train_progress(console),
                                 variants=tuple(args.variant or VARIANTS))
    except ReasonAudioError as exc:
        console.print(Text.assemble(("error: ", "bold red"), str(exc)))
        raise SystemExit(2)
    for name, result in exp.trained.items():
        if result is not None:
            print_train_summary(console, result)
        else:
            console.print(f"{name}: reused {exp.models[name]} (same recipe and training build)")
    n_queries = len(load_benchmark(args.test).queries)
    console.print(f"training build vs benchmark: {exp.separation}; benchmark query texts among "
                  f"the training captions: {exp.leaked_query_texts} of {n_queries}"
                  f"{' (templates held out)' if args.hold_out_templates else ''}", highlight=False)
    print_eval_tables(console, exp.results)
    if exp.comparison is not None:
        print_comparison(console, exp.comparison)
    for base, tests in exp.versus.items():
        for comparison in tests.values():
            print_comparison(console, comparison)
    from reasonaudio.experiments.train_experiment import held_out_split, verbatim_split

    bench = load_benchmark(args.test)
    if exp.leaked_texts:
        print_split(console, verbatim_split(exp.results, bench, exp.leaked_texts),
                    "Acc@1 on queries whose text is among the training captions vs the others")
    if args.hold_out_labels:
        from reasonaudio.fileio import read_json

        held = tuple(read_json(next(iter(exp.models.values())) / "card.json")["data"]["held_out_labels"])
        print_split(console, held_out_split(exp.results, bench, held),
                    f"Acc@1 on queries that mention a held-out sound ({', '.join(held)}) vs the others")
    from reasonaudio.evaluation.report import write_plots
    from reasonaudio.evaluation.results import results_dir

    for path in write_plots(bench, exp.results, results_dir(bench) / "plots", "pca"):
        console.print(f"wrote {path}", highlight=False)
    if held_forms is not None:
        try:
            score_formulations(console, args.test, exp, tuple(args.baseline), held_forms)
        except ReasonAudioError as exc:
            console.print(Text.assemble(("error: ", "bold red"), str(exc)))
            raise SystemExit(2)


def score_formulations(console, test_dir: Path, exp, baselines: tuple[str, ...],
                       held: tuple[str, ...]) -> None:
    """The trained models (the weights just trained) and the baselines (saved results, or
    evaluated now) under every formulation but caption, then the robustness table."""
    from reasonaudio.evaluation.evaluate import EvalContext, ensure_results, evaluate_retrievers
    from reasonaudio.evaluation.metrics import MC_METRIC
    from reasonaudio.evaluation.robustness import ROBUSTNESS_METRICS, robustness
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.retrievers.base import RetrieverOptions
    from reasonaudio.tasks.base import FORMULATIONS
    from reasonaudio.tasks.formulation_records import is_default
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.robustness import print_robustness

    bench = load_benchmark(test_dir)
    per = {name: RetrieverOptions(model_path=str(path)) for name, path in exp.models.items()}
    for form in (f for f in FORMULATIONS if not is_default(f)):
        with progress_hooks(console) as hooks:
            context = EvalContext(hooks=hooks, formulation=form)
            evaluate_retrievers(bench, list(exp.models), context.with_(retriever_options=per))
            if baselines:
                ensure_results(bench, list(baselines), context)
    rob = robustness(bench, [*exp.models, *baselines], (*ROBUSTNESS_METRICS, MC_METRIC))
    console.print(f"formulations held out of training: {', '.join(held)}; the others were "
                  "among the training captions' templates", highlight=False)
    print_robustness(console, rob, held)


def print_split(console, split, title: str) -> None:
    from rich.table import Table

    table = Table(title=title)
    table.add_column("retriever")
    table.add_column("queries")
    tasks = list(next(iter(next(iter(split.values())).values())))
    for task in tasks:
        table.add_column(task, justify="right")
    for name, groups in split.items():
        for group, cells in groups.items():
            table.add_row(name, group, *(f"{v:.3f} (n={n})" for v, n in cells.values()))
    console.print(table)


if __name__ == "__main__":
    main()
