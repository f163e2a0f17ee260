"""Where a command may write a folder, and what ``--force`` may replace: one rule for every command.

Every command that writes a folder (``bench build --out``, ``bench export --to``, ``bench train
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


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))


def _within(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


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
