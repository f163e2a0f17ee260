"""`bench models` and `bench ingest`: the model registry and model ingest."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from reasonaudio.commands.app import (
    BatchSizeOpt,
    ConditionOpt,
    Count,
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
    shard_number: Optional[int] = typer.Option(None, callback=Count, help="Server only: shards at creation."),
    replication_factor: Optional[int] = typer.Option(None, callback=Count,
                                                     help="Server only: replicas per shard."),
    model_path: Optional[str] = ModelPathOpt,
    batch_size: Optional[int] = BatchSizeOpt,
    device: str = DeviceOpt,
    limit: Optional[int] = typer.Option(None, "--limit", callback=Count,
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
    from reasonaudio.retrievers.ingest_request import (PRECOMPUTED, PROGRESS_UNIT, IngestRequest, check_condition,
                                           request_kind, run_ingest)
    from reasonaudio.ingest.run import IngestOptions
    from reasonaudio.store.open import open_store
    from reasonaudio.views.ingest import print_ingest_outcome
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify, condition)
    kind = request_kind(model, vectors is not None)
    check_condition(kind, condition)
    precomputed = None
    if kind == PRECOMPUTED:  # every file read and checked before the store opens
        from reasonaudio.ingest.vector_files import check_precomputed, options_from_cli

        precomputed = check_precomputed(bench, options_from_cli(model, vectors, ids, name, query_vectors,
                                                                query_ids, distance, force))
    options = IngestOptions(model_path=model_path, device=device, batch_size=batch_size, dtype=dtype,
                            captioner_path=captioner_path, limit=limit, force=force, cache=not no_cache,
                            chunking=chunking)
    request = IngestRequest(model, options, precomputed, condition, shard_number, replication_factor)
    with open_store(bench.root, store_flags.backend, store_flags.qdrant_url, write=True) as store, \
            progress_hooks(console, unit=PROGRESS_UNIT.get(request.kind)) as hooks:
        outcome = run_ingest(bench, store, request, hooks, engine=lambda: engine_flags.engine_for(
            store_flags.backend, store_flags.qdrant_url))
    print_ingest_outcome(console, outcome)


