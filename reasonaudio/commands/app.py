"""The `bench` application and what its commands share: error handling, option groups, flags.

Errors a user can cause (:class:`ReasonAudioError`) end as one line on stderr and exit code 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
import functools
import inspect
import math
import os
import typing
import warnings
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, IO, NoReturn, TypeVar

import click
import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from reasonaudio.errors import ReasonAudioError, error_line
from reasonaudio.fileio import write_error
from reasonaudio.output_dirs import (
    FILE,
    INTO,
    WHOLE,
    OutputKind,
    check_not_input,
    check_output_dir,
    check_output_path,
)

if TYPE_CHECKING:  # the CLI loads a benchmark only in the commands that read one
    from typer._click.core import Context

    from reasonaudio.dataset.view import BenchmarkView
    from reasonaudio.ingest.ray_engine import RayEngine
    from reasonaudio.retrievers.base import RetrieverOptions

F = TypeVar("F", bound=Callable[..., Any])

# soft_wrap: lines of text are never cut at the console width (pipes, CI, tests read them whole);
# tables still fit the width. emoji off: user text such as the bank spec split:train:SPEC holds
# ``:name:`` runs that rich would replace with emoji.
console = Console(soft_wrap=True, emoji=False)
err_console = Console(stderr=True, soft_wrap=True, emoji=False)
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

    def make_context(self, info_name: Optional[str], args: list[str], parent: Optional[Context] = None,
                     **extra: Any) -> Context:
        try:  # the top group's own options (`bench --bogus`) are parsed here, outside invoke
            return super().make_context(info_name, args, parent=parent, **extra)
        except USAGE_ERRORS as exc:
            _usage_error(exc)

    def invoke(self, ctx: Context) -> object:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return self._invoke(ctx)

    def _invoke(self, ctx: Context) -> object:
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


class _Command(TyperCommand):
    """Every command: once all its options are read, each output it writes is checked against
    the paths it reads (:func:`reasonaudio.output_dirs.check_not_input`), before any work."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        outputs, inputs = [], []
        for param in self.get_params(ctx):
            value = ctx.params.get(param.name)
            writes = getattr(param.callback, "writes", None)
            if value is None:
                continue
            if writes is not None:
                outputs.append((param.opts[0], value, writes.how))
            else:
                inputs += [(param.opts[0], p) for p in read_paths(param.name, value)]
        for option, value, how in outputs:
            check_not_input(value, option, how, inputs)
        return rest


PATH_TEXT_OPTIONS = frozenset({"atoms", "beds", "model_path", "captioner_path", "run", "example",
                               "bank", "source"})
"""Text parameters whose value may name a path the command reads: ``PATH``, ``NAME=PATH`` or
``scheme:PATH`` (``--atoms fsd50k:PATH``, ``--run NAME=PATH``); every ``Path`` parameter that
writes nothing is read."""


def read_paths(name: str, value: object) -> list[Path | str]:
    """The paths parameter ``name`` reads with ``value``: a ``Path`` as given; in the text of a
    :data:`PATH_TEXT_OPTIONS` parameter, the whole or any part after a ``=`` or ``:`` that names
    something on disk."""
    out: list[Path | str] = []
    for item in value if isinstance(value, (list, tuple)) else [value]:
        if isinstance(item, Path):
            out.append(item)
        elif isinstance(item, str) and name in PATH_TEXT_OPTIONS:
            parts = [item] + [item[i + 1:] for i, ch in enumerate(item) if ch in ":="]
            out += [p for p in parts if p and os.path.lexists(p)]
    return out


class _QueryTextCommand(_Command):
    """A command whose argument is query text, which may start with ``-`` (the documented
    exclusion, ``bench search "-rain, dog"``): an argument that starts with one ``-`` and is none
    of the command's options (nor one of its short options with the value glued on, which never
    holds a space or a comma) is the text, not an unknown option. ``--`` still ends the options;
    ``-rain`` alone reads as ``-r ain`` unless given after it."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self._text_last(ctx, list(args)))

    def _text_last(self, ctx: Context, args: list[str]) -> list[str]:
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


def _usage_error(exc: Exception) -> NoReturn:
    """A usage error as one ``error:`` line with the hint in it (not usage + hint + blank +
    ``Error:``), exit 2; ``bench GROUP`` without a command still shows the group's help."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        raise exc
    ctx = getattr(exc, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    _print_error(f"{exc.format_message()}{where}")  # type: ignore[attr-defined]
    raise typer.Exit(getattr(exc, "exit_code", USER_ERROR_EXIT)) from None


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Optional[IO[str]] = None, line: Optional[str] = None) -> None:
    """A Python warning (a library's ``warnings.warn``) as one ``warning:`` line: no source
    file, line number or code line of the package that warned."""
    err_console.print(Text.assemble((WARNING_PREFIX, "yellow"), error_line(message)), highlight=False)


class _Typer(typer.Typer):
    """A typer application whose commands are :class:`_Command` unless they name another."""

    def command(self, *args: Any, cls: Optional[type[TyperCommand]] = None,
                **kwargs: Any) -> Callable[[F], F]:
        return super().command(*args, cls=cls or _Command, **kwargs)


def _app(**kwargs: Any) -> typer.Typer:
    # rich_markup_mode=None: no rich panels around usage errors (they are one `error:` line).
    return _Typer(cls=_UserErrorGroup, no_args_is_help=True, add_completion=False,
                  pretty_exceptions_show_locals=False, rich_markup_mode=None, **kwargs)


app = _app(help="ReasonAudio testbed: build the benchmark, ingest into Qdrant, search, evaluate.")
atoms_app = _app(help="Atom banks: check, fetch, and how well their recordings are named.")
app.add_typer(atoms_app, name="atoms")

# --- numbers: the one rule every int and float option is read by ------------------------------


def _shown(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else repr(float(bound))


@dataclass(frozen=True)
class Number:
    """A numeric option's rule, given as its ``callback=`` (as :data:`OutFile` is a path's):
    the value is finite (``inf`` and ``nan`` parse as floats) and within ``low`` .. ``high``
    (``open_low`` / ``open_high``: the bound itself is out), checked as the option is read,
    before any work; a value out of it is a usage error (one line, exit 2). Every int and float
    option of every command has one (tests/cli/test_number_options.py walks the app); none sets
    typer's own ``min=`` / ``max=``, so every numeric refusal reads alike."""

    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def __str__(self) -> str:
        """``>= 1``, ``> 0``, ``in (0, 1]``: the values the rule admits."""
        if self.low is not None and self.high is not None:
            return (f"in {'(' if self.open_low else '['}{_shown(self.low)}, {_shown(self.high)}"
                    f"{')' if self.open_high else ']'}")
        if self.low is not None:
            return f"{'>' if self.open_low else '>='} {_shown(self.low)}"
        return "" if self.high is None else f"{'<' if self.open_high else '<='} {_shown(self.high)}"

    def admits(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.open_low else value < self.low):
            return False
        return self.high is None or (value < self.high if self.open_high else value <= self.high)

    def __call__(self, value: Optional[float]) -> Optional[float]:
        if value is None or self.admits(value):  # None: an optional option left out
            return value
        wanted = f"{'an integer' if isinstance(value, int) else 'a finite number'} {self}".rstrip()
        raise typer.BadParameter(f"must be {wanted}, got {value}")


SEED_MAX = 2**32 - 1
Seed = Number(0, SEED_MAX)
"""a seed: what every random stream (numpy, torch, Python's) takes alike"""
Count = Number(1)
"""how many of something that needs at least one"""
NonNegative = Number(0)
"""a count where none is meaningful (0: off), or a weight"""
Positive = Number(0, open_low=True)
"""a rate, budget or weight that must be above zero"""
Share = Number(0, 1, open_low=True)
"""a share of something, in (0, 1]"""
Port = Number(0, 65535)
Threads = Number(1, 1024)
"""CPU threads: torch takes a machine's count, and refuses a number past a C integer in a traceback"""


DataOpt = typer.Option(..., "--data", "-d", help="Benchmark directory (from `bench build`).")
ModelPathOpt = typer.Option(None, "--model-path",
                            help="Local weights (a checkpoint folder) instead of the hub id.")
BatchSizeOpt = typer.Option(None, "--batch-size", callback=Count, help="Model units per forward call.")
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


@dataclass(frozen=True)
class Writes:
    """What an output option writes: how (:data:`~reasonaudio.output_dirs.FILE`, ``INTO`` a
    folder, a folder it owns ``WHOLE``), whose output it is, and where it writes by default."""

    how: str
    kind: Optional[OutputKind] = None
    """a ``WHOLE`` folder's kind: the marker that makes an existing folder this option's own"""
    default: Optional[Callable[[], Path]] = None
    """the folder the option writes when not given (open to it even inside the cache)"""


def _output(how: str, kind: Optional[OutputKind] = None,
            default: Optional[Callable[[], Path]] = None) -> Callable[..., Any]:
    """An output option's callback: the one output rule (:mod:`reasonaudio.output_dirs`),
    applied as the option is read, before any work; :class:`_Command` then checks the path
    against the command's inputs. The callback carries its :class:`Writes` (``.writes``)."""
    def check(ctx: Any, param: Any, value: Any) -> Any:  # typer reads these annotations at run time
        if value is None:
            return value
        if kind is not None:  # a folder owned whole
            check_output_dir(value, kind, True, owned=[default()] if default is not None else [])
        else:
            check_output_path(value, param.opts[0], folder=how == INTO)
        return value
    check.writes = Writes(how, kind, default)  # type: ignore[attr-defined]
    return check


OutFile = _output(FILE)
"""A file the option writes (``--json``, ``render --out``)."""
OutFolder = _output(INTO)
"""A folder the option writes files into (``--trec``, ``--mteb-results``)."""


def out_dir(kind: OutputKind, default: Optional[Callable[[], Path]] = None) -> Callable[..., Any]:
    """A folder the option owns whole (``build --out``): new, empty, or ``kind``'s own earlier
    output, outside every other command's; ``--force`` is the library's to check."""
    return _output(WHOLE, kind, default)



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

    def options(self) -> tuple[RetrieverOptions, dict[str, RetrieverOptions]]:
        """(options for every retriever, {name: options} for ``NAME=PATH``)."""
        from reasonaudio.evaluation.evaluate import model_options

        base, per = model_options(self.model_path or (), self.device, self.dtype, self.batch_size)
        if self.captioner_path is None:
            return base, per
        return (base.merged(captioner_path=self.captioner_path),
                {n: o.merged(captioner_path=self.captioner_path) for n, o in per.items()})


@dataclass(frozen=True)
class EngineFlags:
    """``--engine`` and the Ray pool's flags (``ingest``'s model pass, ``detect``'s frame pass)."""

    engine: str = typer.Option("local", "--engine", help="Where the model work runs: local (this "
                               "process) | ray (Ray: render tasks, a model actor pool; "
                               "docs/scale.md).")
    workers: int = typer.Option(1, "--workers", callback=Count, help="--engine ray: model actors.")
    gpus_per_worker: float = typer.Option(0.0, "--gpus-per-worker", callback=NonNegative,
                                          help="--engine ray: GPUs per model actor.")
    cpus_per_worker: Optional[float] = typer.Option(None, "--cpus-per-worker", callback=Number(0.01),
                                                    help="--engine ray: logical CPUs per model "
                                                    "actor (default: a local Ray's cores shared "
                                                    "out over the actors; 1 on a cluster).")
    ray_address: Optional[str] = typer.Option(None, "--ray-address",
                                              help="--engine ray: join this cluster (default: a "
                                              "local Ray for the run).")

    def engine_for(self, backend: Optional[str], url: Optional[str]) -> Optional[RayEngine]:
        """The scheduler (None: local); Ray flags without ``--engine ray`` are an error."""
        from reasonaudio.ingest.ray_engine import ray_engine_from_cli

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


def _load(data: Path, no_verify: bool, condition: str = "clean") -> BenchmarkView:
    """The benchmark at ``data``, verified unless ``--no-verify`` (which says so, in one line),
    read under ``--condition``."""
    from reasonaudio.dataset.view import load_benchmark

    bench = load_benchmark(data, verify=not no_verify)
    if no_verify:
        _skipped_verification(data)
    return bench.with_condition(condition)


def _note(message: str) -> None:
    """A library's one-line notice (plain text: user paths are never read as markup)."""
    err_console.print(Text(f"note: {message}"), highlight=False)


def _skipped_verification(data: Path) -> None:
    err_console.print(Text(f"{WARNING_PREFIX}{data}: files not verified against manifest.json (--no-verify)"),
                      highlight=False)
