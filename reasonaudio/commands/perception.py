"""`bench detect` and `bench tune`: detected events and fused retrievers' weights."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    ConditionOpt,
    Count,
    DataOpt,
    EngineFlags,
    NoVerifyOpt,
    NonNegative,
    OutFile,
    StoreFlags,
    _load,
    app,
    console,
    option_groups,
)


@app.command()
@option_groups
def detect(
    data: Path = DataOpt,
    tagger: str = typer.Option("yamnet", "--tagger", help="Audio tagger: yamnet."),
    mode: str = typer.Option("zero-shot", "--mode",
                             help="zero-shot (AudioSet classes by name) | enrolled (the bank's "
                             "atoms tagged alone: optimistic) | trained (a `bench "
                             "train-detector` model: --model-path)."),
    model_path: Optional[Path] = typer.Option(None, "--model-path",
                                              help="--mode trained: the detector's model "
                                              "directory (bench train-detector --out)."),
    calibration: Optional[Path] = typer.Option(None, "--calibration",
                                               help="Calibration build (default DATA-calibration; "
                                               "`bench build --calibration-for DATA` makes it)."),
    top_k: Optional[int] = typer.Option(None, "--top-k", callback=Count,
                                        help="AudioSet classes per label (zero-shot, 3) or "
                                        "signature size (enrolled, 5)."),
    worst: int = typer.Option(10, "--worst", callback=NonNegative, help="Worst labels to list."),
    show_map: bool = typer.Option(False, "--show-map", help="Print every label's classes."),
    json_out: Optional[Path] = typer.Option(None, "--json", callback=OutFile,
                                            help="Also write the summary as JSON."),
    store_flags: StoreFlags = StoreFlags(),
    engine_flags: EngineFlags = EngineFlags(),
    condition: str = ConditionOpt,
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Detect events from cached YAMNet frames into their own collection, evaluate detected:TAGGER.
    Frames the cache lacks are computed here, or on Ray with --engine ray."""
    from reasonaudio.detect.collection import DetectOptions
    from reasonaudio.experiments.detection import detect_and_evaluate
    from reasonaudio.fileio import write_json
    from reasonaudio.generator.calibration import resolve_calibration
    from reasonaudio.store.open import open_store
    from reasonaudio.views.detect import print_detect_run
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify, condition)
    engine = engine_flags.engine_for(None, None)  # flag errors first
    calib = resolve_calibration(bench, calibration)  # refused before the store is opened
    options = DetectOptions(tagger=tagger, mode=mode, calibration=calib.root, top_k=top_k,
                            model_path=model_path, engine=engine)
    with open_store(bench.root, store_flags.backend, store_flags.qdrant_url, write=True) as store, \
            progress_hooks(console, unit="clips") as hooks:
        run = detect_and_evaluate(bench, store, options, hooks=hooks)
    print_detect_run(console, run, worst=worst, show_map=show_map)
    if json_out is not None:
        write_json(json_out, run.to_json())
        console.print(Text(f"wrote {json_out}"))


@app.command()
@option_groups
def tune(
    data: Path = DataOpt,
    retriever: list[str] = typer.Option(..., "--retriever", "-r",
                                        help="A hybrid:, rrf: or dbsf: retriever (repeat for several)."),
    calibration: Optional[Path] = typer.Option(None, "--calibration",
                                               help="Calibration build (default DATA-calibration; "
                                               "`bench build --calibration-for DATA` makes it)."),
    force: bool = typer.Option(False, "--force", help="Tune again what was tuned on this build."),
    store_flags: StoreFlags = StoreFlags(),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Choose combined retrievers' N, w and RRF k on the calibration build (DATA/results/combine-params.json)."""
    from reasonaudio.experiments.combine_tuning import params_text, tune_combined
    from reasonaudio.retrievers.combined import combine_params
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify)
    with progress_hooks(console) as hooks:
        tune_combined(bench, retriever, calibration, backend=store_flags.backend,
                      url=store_flags.qdrant_url, force=force, hooks=hooks)
    for name in retriever:
        console.print(Text(f"{name}: {params_text(name, combine_params(bench, name))}"))


