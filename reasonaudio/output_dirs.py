"""Where a command may write, and what ``--force`` may replace: one rule for every command.

Every file or folder a command writes where the user says goes through this module before any
work is done. A benchmark's own files are never an output: nothing is written into a benchmark
folder (one whose ``manifest.json`` names the benchmark format), or over it, except into a
subfolder the command owns there.

Files (``--json``, ``render --out``, ``--record-recipe``) and folders written into
(``--trec``, ``--mteb-results``, ``atoms fetch --dest``) ask :func:`check_output_path`: the
target is outside every benchmark; a file target that exists is a regular file (never a device
such as ``/dev/full``, a FIFO or a folder), a folder target that exists is a folder; nothing on the
way to it is a file. ``fileio.atomic_file`` refuses a non-regular target again just before its
rename, for every file the package writes.

Every command that writes a whole folder (``bench build --out``, ``bench export --to``, ``bench train
--out``, ``bench report --out``, the tiny-model builders, any later one) describes its output with an
:class:`OutputKind` and asks :func:`check_output_dir` before it does any work; ``fileio.atomic_dir``
asks again before it renames anything into place. The rule:

- the target is never the current folder or one above it;
- never a protected input (the benchmark exported, the training build, the atom bank), one above
  it, or anything inside it, except inside a subfolder the command owns there (``bench report``'s
  default ``DATA/results/plots``);
- something that exists and is not a plain folder (a file, a link, a FIFO, a device) is refused
  without being opened;
- an existing folder is replaced only with ``--force``, and only when it is empty or holds the
  command's own marker file (a benchmark's ``manifest.json``, an export's ``export.json``, a trained
  model's ``card.json``, a report's ``report.json``) naming the command's format.

So ``--force`` can remove nothing but that command's earlier output or an empty folder.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from reasonaudio.errors import DataError, echo


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

    def written_here(self, folder: Path) -> bool:
        """Whether ``folder`` holds this command's earlier output (its marker names our format)."""
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


BENCHMARK_OUTPUT = OutputKind("benchmark", "bench build --out", "manifest.json", "reasonaudio-benchmark")
"""A benchmark folder: what ``bench build --force`` may replace, and what no other output may
enter (its manifest names the benchmark format)."""


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))


def _within(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def enclosing_benchmark(path: Path, owned: Sequence[Path | str] = ()) -> Path | None:
    """The benchmark folder ``path`` (a real path) is in or is, or None; a path inside one of
    ``owned`` (a subfolder a command owns in a benchmark) is in none."""
    if any(_within(path, _real(o)) for o in owned):
        return None
    for folder in (path, *path.parents):
        if BENCHMARK_OUTPUT.written_here(folder):
            return folder
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
    writes files into) unless it lies outside every benchmark and is of the right kind; one line
    naming the path and why."""
    shown = echo(str(path))
    target = _real(path)
    inside = enclosing_benchmark(target if folder else target.parent)
    if inside is not None:
        where = "is the benchmark" if inside == target else f"is inside the benchmark {echo(str(inside))}"
        raise DataError(f"{shown}: {where}; {option} never writes into a benchmark's own files, "
                        "choose a path outside it")
    _check_parents(path)
    if folder:
        if os.path.lexists(path) and not os.path.isdir(path):
            raise DataError(f"{shown}: exists and is not a folder; {option} names a folder")
    else:
        check_replaceable_file(path)


def check_output_dir(out: Path | str, kind: OutputKind, force: bool,
                     protect: Sequence[Path | str] = (), owned: Sequence[Path | str] = ()) -> None:
    """Refuse ``out`` unless ``kind``'s command may write (or, with ``force``, replace) it.

    ``protect``: the command's inputs; ``owned``: subfolders of an input the command writes into
    (allowed even though they lie inside ``protect``). One line naming the path and why.
    """
    shown = echo(str(out))
    target = _real(out)
    cwd = _real(Path.cwd())
    if _within(cwd, target):
        raise DataError(f"{shown}: is the current folder or one above it; write {kind.what} output "
                        f"into a new folder ({kind.command})")
    inside = enclosing_benchmark(target.parent, owned)
    if inside is not None:
        raise DataError(f"{shown}: is inside the benchmark {echo(str(inside))}; choose a folder "
                        f"outside it for {kind.command}")
    for item in protect:
        inp = _real(item)
        if any(_within(target, _real(o)) and _real(o) != inp for o in owned):
            continue
        if _within(inp, target):
            raise DataError(f"{shown}: is {'the input' if target == inp else 'a folder above the input'} "
                            f"{echo(str(item))}; choose another folder for {kind.command}")
        if _within(target, inp):
            raise DataError(f"{shown}: is inside the input {echo(str(item))}; choose a folder "
                            f"outside it for {kind.command}")
    if not os.path.lexists(out):
        return
    if os.path.islink(out) or not os.path.isdir(out):
        raise DataError(f"{shown}: exists and is not a folder; choose another folder for {kind.command}")
    if not force:
        raise DataError(f"{shown}: already exists (pass --force to replace it)")
    if any(Path(out).iterdir()) and not kind.written_here(Path(out)):
        raise DataError(f"{shown}: not empty and not a previous {kind.what} (no {kind.marker} of "
                        f"`{kind.command}`); --force replaces only those, so remove it yourself or "
                        "choose another folder")
