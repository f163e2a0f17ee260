"""`bench models` and `bench ingest`: the model registry and model ingest."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    BatchSizeOpt,
    ConditionOpt,
    DataOpt,
    DeviceOpt,
    DtypeOpt,
    EngineFlags,
    ModelPathOpt,
    NoVerifyOpt,
    StoreFlags,
    _load,
    app,
    console,
    option_groups,
)
from reasonaudio.errors import ReasonAudioError


@app.command("models")
def models_cmd(
    name: Optional[str] = typer.Argument(None, help="One model: show every field of its record."),
    wide: bool = typer.Option(False, "--wide", help="Every field of every model (a wide table)."),
    json_out: bool = typer.Option(False, "--json", help="Print the registry as a JSON list of objects."),
) -> None:
    """List the model registry and whether each model can load here (nothing is downloaded)."""
    if json_out:
        import json as _json

        from reasonaudio.models.registry import get_record, models_json

        rows = models_json()
        if name is not None:
            rows = [row for row in rows if row["name"] == get_record(name).name]
        typer.echo(_json.dumps(rows, indent=2))
        return
    from reasonaudio.views.models import print_models

    print_models(console, name=name, wide=wide)


# --- store: ingest / search (store/, retrievers/) ---------------------------------------------



@app.command()
@option_groups
def ingest(
    data: Path = DataOpt,
    model: Optional[str] = typer.Option(None, "--model", "-m",
                                        help="none = the payload-only collection (oracle, baselines)."),
    store_flags: StoreFlags = StoreFlags(),
    force: bool = typer.Option(False, "--force", help="Drop and reload the collection."),
    shard_number: Optional[int] = typer.Option(None, help="Server only: shards at creation."),
    replication_factor: Optional[int] = typer.Option(None, help="Server only: replicas per shard."),
    model_path: Optional[str] = ModelPathOpt,
    batch_size: Optional[int] = BatchSizeOpt,
    device: str = DeviceOpt,
    limit: Optional[int] = typer.Option(None, "--limit", min=1,
                                        help="Model ingest: only the first N clips (never removes any)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Model ingest: bypass the embedding cache."),
    dtype: Optional[str] = DtypeOpt,
    captioner_path: Optional[str] = typer.Option(None, "--captioner-path",
                                                 help="two-stage with a model captioner: its local "
                                                 "weights (--model-path is the embedder's)."),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="Instead of --model: precomputed "
                                           "clip vectors (.npy or .parquet), one row per --ids line."),
    ids: Optional[Path] = typer.Option(None, "--ids", help="With --vectors: clip ids, one per line."),
    name: Optional[str] = typer.Option(None, "--name", help="With --vectors: search them as "
                                       "--retriever vectors:NAME."),
    query_vectors: Optional[Path] = typer.Option(None, "--query-vectors",
                                                 help="With --vectors: the queries' vectors."),
    query_ids: Optional[Path] = typer.Option(None, "--query-ids",
                                             help="With --query-vectors: query ids, one per line."),
    distance: str = typer.Option("cosine", "--distance",
                                 help="With --vectors: cosine | dot | euclid | manhattan."),
    engine_flags: EngineFlags = EngineFlags(),
    condition: str = ConditionOpt,
    chunking: str = typer.Option("fixed", "--chunking",
                                 help="Window models: fixed windows | silence (cuts at the quietest "
                                 "point; part of the model identity)."),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Load a Qdrant collection for the benchmark (idempotent; an interrupted load resumes).

    --model none: the payload-only collection. --model NAME (see `bench models`) or
    two-stage:CAPTIONER+EMBEDDER: render, embed and upsert every clip (docs/models.md).
    --vectors/--ids/--name: precomputed vectors of a model run elsewhere (docs/bring-your-own.md)."""
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.collections import ingest_payload
    from reasonaudio.store.open import open_store
    from reasonaudio.views.ingest import print_ingest_summary, print_payload_result
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify, condition)
    backend, qdrant_url = store_flags.backend, store_flags.qdrant_url
    if condition != "clean" and (vectors is not None or model is None or model == "none"):
        raise ReasonAudioError(f"--condition {condition}: only a model ingest renders audio; the "
                               "payload and precomputed vectors are the same under every condition")
    if vectors is not None or model is None:
        from reasonaudio.ingest.vector_files import check_precomputed, options_from_cli
        from reasonaudio.views.vector_files import ingest_with_progress

        checked = check_precomputed(bench, options_from_cli(model, vectors, ids, name, query_vectors,
                                                            query_ids, distance, force))
        with open_store(bench.root, backend, qdrant_url, write=True) as store:  # opened once the input is sound
            ingest_with_progress(console, bench, store, checked)
        return
    from reasonaudio.models.names import is_combined, is_lexical
    if is_combined(model) or is_lexical(model):  # derived collections: joint, BM25 (docs/qdrant.md)
        from reasonaudio.retrievers.base import RetrieverOptions
        from reasonaudio.retrievers.registry import get_retriever
        with open_store(bench.root, backend, qdrant_url, write=True) as store, \
                progress_hooks(console) as hooks:
            with get_retriever(model, bench, RetrieverOptions(auto_ingest=True, model_path=model_path,
                                                              device=device, hooks=hooks),
                               store=store) as made:
                console.print(Text(f"{model}: collection {getattr(made, 'collection', '')} ready"))
        return
    if model != "none":
        scheduler = engine_flags.engine_for(backend, qdrant_url)
        options = IngestOptions(model_path=model_path, device=device, batch_size=batch_size,
                                dtype=dtype, captioner_path=captioner_path, limit=limit,
                                force=force, cache=not no_cache, engine=scheduler,
                                chunking=chunking)
        with open_store(bench.root, backend, qdrant_url, write=True) as store, \
                progress_hooks(console, unit="clips") as hooks:
            summary = ingest_model(bench, store, model, options, hooks=hooks)
        print_ingest_summary(console, summary)
        return
    with open_store(bench.root, backend, qdrant_url, write=True) as store, \
            progress_hooks(console) as hooks:
        result = ingest_payload(bench, store, force=force, shard_number=shard_number,
                                replication_factor=replication_factor, hooks=hooks)
        backend_name = store.backend
    print_payload_result(console, result, backend_name)


