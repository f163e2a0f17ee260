"""`bench parse`, `search`, `serve`: reading and answering one query, the explorer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    BackendOpt,
    ConditionOpt,
    Count,
    DataOpt,
    NoVerifyOpt,
    Port,
    QdrantUrlOpt,
    RetrieverFlags,
    StoreFlags,
    _load,
    _note,
    _QueryTextCommand,
    _skipped_verification,
    app,
    console,
    err_console,
    option_groups,
)
from reasonaudio.errors import ReasonAudioError

if TYPE_CHECKING:
    from reasonaudio.querylang.resolve import ResolveOptions

# --- parse -----------------------------------------------------------------------------------

StrictOpt = typer.Option(False, "--strict",
                         help="Read exact (and stemmed) labels only: no verb forms, families or "
                              "semantic matches.")


@app.command("parse", cls=_QueryTextCommand)
def parse_cmd(
    text: str = typer.Argument(..., help="Query text, e.g. \"dog barking but no siren\"."),
    data: Optional[Path] = typer.Option(None, "--data", "-d",
                                        help="Benchmark directory; its atoms give the labels."),
    labels: Optional[Path] = typer.Option(None, "--labels",
                                          help="Instead of --data: a file with one label per line."),
    as_json: bool = typer.Option(False, "--json",
                                 help='Print only {"logic": ..., "resolved": [...]} as JSON.'),
    strict: bool = StrictOpt,
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Read query text into logic over the bank's labels (what the oracle retriever runs)."""
    import json

    from reasonaudio.querylang.parser import parse_detailed
    from reasonaudio.logic import to_json
    from reasonaudio.views.parse import print_parse, vocabulary_source

    vocabulary = vocabulary_source(data, labels, verify=not no_verify)
    if no_verify and data is not None:
        _skipped_verification(data)
    result = parse_detailed(text, vocabulary, _resolve_options(strict))
    if as_json:
        typer.echo(json.dumps({"logic": to_json(result.logic),
                               "resolved": [r.to_json() for r in result.resolutions]}))
    else:
        print_parse(console, text, result)


def _resolve_options(strict: bool) -> ResolveOptions:
    """--strict: labels only; otherwise resolution with MiniLM's semantic fallback (loaded on
    the first phrase that needs it)."""
    from reasonaudio.querylang.parser import STRICT, ResolveOptions
    from reasonaudio.extras import available

    if strict:
        return STRICT
    if not available("models"):
        _note("semantic label matching is off: it needs the models extra "
              "(pip install 'reasonaudio[models]'); name each sound by its label")
        return STRICT
    from reasonaudio.models.label_matcher import shared_matcher

    return ResolveOptions(semantic=shared_matcher())


# --- models (models/) -------------------------------------------------------------------------

@app.command(cls=_QueryTextCommand)
@option_groups
def search(
    text: str = typer.Argument(..., help="Query text, e.g. \"dog barking but no siren\"."),
    data: Path = DataOpt,
    retriever: str = typer.Option("oracle", "--retriever", "-r",
                                  help="oracle | bag-of-sounds | random | a model retriever."),
    k: int = typer.Option(10, "-k", callback=Count, help="Number of hits."),
    as_json: bool = typer.Option(False, "--json",
                                 help='Print only {"logic": ..., "hits": [{"id", "score"}]}.'),
    store_flags: StoreFlags = StoreFlags(),
    model: Optional[str] = typer.Option(None, "--model", "-m",
                                        help="A model retriever (clap, two-stage:...); same as -r."),
    models: RetrieverFlags = RetrieverFlags(),
    strict: bool = StrictOpt,
    condition: str = ConditionOpt,
    no_verify: bool = NoVerifyOpt,
    example: Optional[list[str]] = typer.Option(None, "--example", help="NAME=PATH: a recording "
                                                "given in the text as <audio:NAME> (repeat; "
                                                "docs/interleaved.md)."),
) -> None:
    """One query: its logic, then the hits with event timelines and a check per constraint."""
    import json

    from reasonaudio.progress import Hooks
    from reasonaudio.retrievers.one_query import search_one
    from reasonaudio.store.open import open_store
    from reasonaudio.views.progress import notifier
    from reasonaudio.views.search import print_search_outcome, query_truth, search_events, search_json

    bench = _load(data, no_verify, condition)
    truth = query_truth(bench, text)  # a benchmark query: mark relevant hits and the hard negative
    retriever = model or retriever
    base, per_retriever = models.options()
    hooks = Hooks(on_notify=notifier(err_console, style="dim"),
                  on_event=search_events(console, err_console, as_json))
    options = per_retriever.get(retriever, base).merged(hooks=hooks)
    with open_store(bench.root, store_flags.backend, store_flags.qdrant_url) as store:
        outcome = search_one(bench, text, retriever, k, store, options, _resolve_options(strict),
                             example or (), captions=not as_json, hooks=hooks)
    if as_json:
        typer.echo(json.dumps({**search_json(outcome.logic, outcome.hits), "resolved": [
            r.to_json() for r in (outcome.parsed.resolutions if outcome.parsed is not None else ())]}))
    else:
        print_search_outcome(console, bench, outcome, retriever, k, truth)


@app.command()
def serve(
    data: Path = DataOpt,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (another than "
                             "loopback only when asked: anyone who reaches it can read the benchmark)."),
    port: int = typer.Option(8765, "--port", callback=Port,
                             help="Port (0: any free one; the URL is printed)."),
    plots: Optional[Path] = typer.Option(None, "--plots", help="Folder of PNG plots (default: "
                                         "DATA/results/plots, or the demo's report folder)."),
    atoms: Optional[str] = typer.Option(None, help="Atom bank, if not the one the manifest names."),
    backend: Optional[str] = BackendOpt,
    qdrant_url: Optional[str] = QdrantUrlOpt,
    no_verify: bool = NoVerifyOpt,
) -> None:
    """A local, read-only web explorer: results, queries, minimal pairs, audio, failures, search."""
    from reasonaudio.explorer.server import build_app, is_loopback, listen, run

    bench = _load(data, no_verify)
    if plots is not None and not plots.is_dir():
        raise ReasonAudioError(f"{plots}: --plots folder not found")
    app_ = build_app(bench, plots, backend, qdrant_url, atoms)
    listening = listen(host, port)
    if not is_loopback(host):
        err_console.print(Text(f"warning: listening on {host}, not loopback: anyone who can reach "
                               "this address can read the benchmark and its results"), highlight=False)
    console.print(Text(f"serving {bench.root} at {listening.url} (read-only; Ctrl-C stops)"), highlight=False)
    sys.stdout.flush()
    run(app_, listening)


