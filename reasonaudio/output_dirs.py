"""Where a command may write, and what ``--force`` may replace: one rule for every command.

Every path a command writes where the user says is checked here before any work: by the
option's callback as the command line is read (``commands/app.py``: the path alone, then the
path against the command's other arguments), and again by the library call that writes it. The
paths are of three kinds: a file (``--json``, ``render --out``, ``--record-recipe``), a folder
written into (``--trec``, ``--mteb-results``, ``demo --out``), and a folder the command owns
whole (``build --out``, ``export --to``, ``train --out``, ``train-detector --out``,
``report --out``, ``atoms fetch --dest``), each described by an :class:`OutputKind`.

Nothing is written into, or over, what the command did not make:

- a folder that carries another command's marker (:data:`CLAIMS`): a benchmark
  (``manifest.json`` naming the benchmark format), an export, a report, a trained model
  (``card.json``), a fetched bank (``fetch-report.json``), an atom bank (``atoms.jsonl`` or
  ``atoms.csv``), or anything inside one. Only the command whose marker a folder carries may
  replace that folder, and a subfolder a command owns inside another's (``bench report``'s
  default ``DATA/results/plots``) is open to that command alone;
- the package's cache (:func:`reasonaudio.runtime.cache_root`), the installed package, and the
  system's ``/dev``, ``/proc`` and ``/sys``, except the folder an option owns there (``atoms
  fetch --dest``'s default);
- the command's own inputs (:func:`check_not_input`): a file is never an input or inside an
  input folder; a folder written into never is an input, lies inside one or holds an input file;
  a folder owned whole never is an input, lies inside one or above one;
- something of the wrong kind: a file target that exists is a regular file (never a device such
  as ``/dev/full``, a FIFO or a folder), a folder target that exists is a folder, and nothing on
  the way to either is a file. ``fileio.atomic_file`` refuses a non-regular target again just
  before its rename.

A folder owned whole (:func:`check_output_dir`) is never the current folder or one above it, and
an existing one is replaced only with ``--force``, and only when it is empty or carries the
command's own marker. So ``--force`` can remove nothing but that command's earlier output or an
empty folder, and a refusal suggests ``--force`` only where it would succeed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from reasonaudio.errors import DataError, echo
from reasonaudio.runtime import cache_root


@dataclass(frozen=True)
class OutputKind:
    """What one command writes: named in messages, recognised by its marker file."""

    what: str
    """what the folder holds, for messages: ``benchmark``, ``export``, ``model``, ``report``"""
    command: str
    """the command and option that write it, e.g. ``bench export --to``"""
    marker: str
    """file inside the folder that marks it as this command's output"""
    format: str | None = None
    """value of the marker's JSON field ``format`` (None: the marker's presence is enough)"""
    also: tuple[str, ...] = ()
    """other entries (files or folders) whose presence alone marks the folder: a second manifest
    name, the work folder an interrupted run leaves"""

    def written_here(self, folder: Path) -> bool:
        """Whether ``folder`` holds this command's earlier output (its marker names our format)."""
        if any(_present(Path(folder) / name) for name in self.also):
            return True
        marker = Path(folder) / self.marker
        if marker.is_symlink() or not marker.is_file():
            return False
        if self.format is None:
            return True
        try:
            obj = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return False
        return isinstance(obj, dict) and obj.get("format") == self.format


def _present(path: Path) -> bool:
    return os.path.lexists(path) and not os.path.islink(path)


BENCHMARK_OUTPUT = OutputKind("benchmark", "bench build --out", "manifest.json", "reasonaudio-benchmark")
"""A benchmark folder: what ``bench build --force`` may replace, and what no other output may
enter (its manifest names the benchmark format)."""
EXPORT_OUTPUT = OutputKind("export", "bench export --to", "reasonaudio-export.json",
                           "reasonaudio-hf-export/1")
"""What ``bench export --force`` may replace: an earlier export (its record names our format)."""
REPORT_OUTPUT = OutputKind("report", "bench report --out", "report.json", "reasonaudio-report/1")
"""What ``bench report`` replaces: an earlier report folder (its report.json names our format)."""
ENCODER_OUTPUT = OutputKind("model", "bench train --out", "card.json", "reasonaudio-trained-dual-encoder")
"""What ``bench train --force`` may replace: an earlier trained model (its card names our format)."""
DETECTOR_OUTPUT = OutputKind("model", "bench train-detector --out", "card.json",
                             "reasonaudio-trained-detector")
"""What ``bench train-detector --force`` may replace: an earlier trained detector."""
FETCH_OUTPUT = OutputKind("fetched bank", "bench atoms fetch --dest", "fetch-report.json",
                          also=(".cache/done", ".cache/fetch.json"))
"""A folder ``bench atoms fetch packages|beds`` wrote: its report, or the claim and resume records
of a run that was stopped before it wrote one (``reasonaudio.atoms.fetch.fetch.made_by_fetch``
reads the same files' contents before a fetch removes anything)."""
TRAINED_MODEL = OutputKind("trained model", "bench train --out", "card.json")
"""Any trained model folder (a dual encoder's or a detector's card)."""
ATOM_BANK = OutputKind("atom bank", "bench atoms fetch packages --dest", "atoms.jsonl",
                       also=("atoms.csv",))
"""A folder bank with its manifest (``reasonaudio/atoms/folder.py``)."""

CLAIMS = (BENCHMARK_OUTPUT, EXPORT_OUTPUT, REPORT_OUTPUT, TRAINED_MODEL, FETCH_OUTPUT, ATOM_BANK)
"""Folders that belong to the command that marked them: no other output enters or replaces one."""

PACKAGE = Path(__file__).resolve().parent
"""The installed package (its data files are inputs: the recipe books, the bundled models)."""
SYSTEM_FOLDERS = ("/dev", "/proc", "/sys")


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))


def _within(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def _places() -> Iterator[tuple[Path, str]]:
    """Folders no output enters: the cache, the package, the system's."""
    yield _real(cache_root()), "the cache"
    yield PACKAGE, "the installed package"
    for folder in SYSTEM_FOLDERS:
        yield Path(folder), "the system folder"


def claimed(target: Path, kind: OutputKind | None = None, owned: Sequence[Path | str] = ()) -> str | None:
    """Why ``target`` (a real path) is not this command's to write, or None: it is or lies
    inside one of :func:`_places` or a folder :data:`CLAIMS` names. ``kind``: the command's own
    output, which may be the target itself; ``owned``: folders the option owns (anything inside
    them is open)."""
    if any(_within(target, _real(o)) for o in owned):
        return None
    for place, what in _places():
        if _within(target, place):
            return f"{'is' if target == place else 'is inside'} {what} {echo(str(place))}"
    for folder in (target, *target.parents):
        if folder == target and kind is not None and kind.written_here(folder):
            continue
        for other in CLAIMS:
            if other.written_here(folder):
                where = "is" if folder == target else "is inside"
                return f"{where} the {other.what} {echo(str(folder))}"
    return None


def check_replaceable_file(path: Path | str) -> None:
    """Refuse a file target that exists and is not a regular file (a folder, a device such as
    ``/dev/full``, a FIFO, a socket, a dangling link): replacing it would destroy it."""
    if os.path.lexists(path) and not os.path.isfile(path):
        what = "a folder" if os.path.isdir(path) else "not a regular file"
        raise DataError(f"{echo(str(path))}: exists and is {what}; name a new or a regular file")


def _check_parents(path: Path | str) -> None:
    for parent in Path(os.path.abspath(path)).parents:
        if os.path.lexists(parent):
            if not os.path.isdir(parent):
                raise DataError(f"{echo(str(path))}: cannot write ({echo(str(parent))} is not a folder)")
            return


def check_output_path(path: Path | str, option: str, folder: bool = False) -> None:
    """Refuse ``path`` as the output ``option`` writes (a file, or with ``folder`` a folder it
    writes files into) unless no other command claims it (:func:`claimed`) and it is of the right
    kind; one line naming the path and why."""
    shown = echo(str(path))
    _check_parents(path)
    claim = claimed(_real(path))
    if claim is not None:
        raise DataError(f"{shown}: {claim}; {option} never writes there, choose a path outside it")
    if folder:
        if os.path.lexists(path) and not os.path.isdir(path):
            raise DataError(f"{shown}: exists and is not a folder; {option} names a folder")
    else:
        check_replaceable_file(path)


FILE, INTO, WHOLE = "file", "into", "whole"
"""How an output writes: one file; files into a folder; a folder it owns whole."""


def input_clash(path: Path | str, item: Path | str, how: str) -> str | None:
    """How the output ``path`` (written as ``how``) would touch the input ``item``, or None."""
    target, inp = _real(path), _real(item)
    if target == inp or (os.path.exists(path) and os.path.exists(item) and os.path.samefile(path, item)):
        return f"is the input {echo(str(item))}"
    if _within(target, inp):
        return f"is inside the input {echo(str(item))}"
    if how == WHOLE and _within(inp, target):
        return f"is a folder above the input {echo(str(item))}"
    if how == INTO and _within(inp, target) and not os.path.isdir(item):
        return f"holds the input {echo(str(item))}"
    return None


def check_not_input(path: Path | str, option: str, how: str,
                    inputs: Sequence[tuple[str, Path | str]]) -> None:
    """Refuse an output that is, lies in, or (``how``: :data:`INTO`, :data:`WHOLE`) would
    reach one of the command's ``inputs`` ((option, path) pairs): a command never writes over
    what it reads."""
    for name, item in inputs:
        clash = input_clash(path, item, how)
        if clash is not None:
            raise DataError(f"{echo(str(path))}: {clash} ({name}); {option} never writes over "
                            "what the command reads, choose another path")


def check_output_dir(out: Path | str, kind: OutputKind, force: bool,
                     protect: Sequence[Path | str] = (), owned: Sequence[Path | str] = ()) -> None:
    """Refuse ``out`` unless ``kind``'s command may write (or, with ``force``, replace) it.

    ``protect``: the command's inputs; ``owned``: folders the command owns, inside an input or
    a claimed folder (allowed even so). One line naming the path and why.
    """
    shown = echo(str(out))
    target = _real(out)
    if _within(_real(Path.cwd()), target):
        raise DataError(f"{shown}: is the current folder or one above it; write {kind.what} output "
                        f"into a new folder ({kind.command})")
    _check_parents(out)
    claim = claimed(target, kind, owned)
    if claim is not None:
        raise DataError(f"{shown}: {claim}; choose a folder outside it for {kind.command}")
    for item in protect:
        if any(_within(target, _real(o)) and _real(o) != _real(item) for o in owned):
            continue
        clash = input_clash(out, item, WHOLE)
        if clash is not None:
            raise DataError(f"{shown}: {clash}; choose another folder for {kind.command}")
    _check_existing(out, kind, force)


def _check_existing(out: Path | str, kind: OutputKind, force: bool) -> None:
    """An existing target: a plain folder, empty or ``kind``'s own; replaced only with ``force``."""
    if not os.path.lexists(out):
        return
    shown = echo(str(out))
    if os.path.islink(out) or not os.path.isdir(out):
        raise DataError(f"{shown}: exists and is not a folder; choose another folder for {kind.command}")
    if any(Path(out).iterdir()) and not kind.written_here(Path(out)):
        raise DataError(f"{shown}: not empty and not a previous {kind.what} (no {kind.marker} of "
                        f"`{kind.command}`); --force replaces only those, so remove it yourself or "
                        "choose another folder")
    if not force:
        raise DataError(f"{shown}: already exists (pass --force to replace it)")
