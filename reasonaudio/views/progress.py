"""Rich progress bars and note lines: the views' side of :class:`reasonaudio.progress.Hooks`."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from reasonaudio import progress as callbacks
from reasonaudio.progress import Hooks


class _Rate(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} {self.unit}/s" if speed else f"- {self.unit}/s")


@contextlib.contextmanager
def progress_bars(console: Console, *, unit: str | None = None, show: bool = True,
                  transient: bool = False) -> Iterator[callbacks.Progress]:
    """A :data:`reasonaudio.progress.Progress` callback that keeps one bar per label. Bars are
    drawn on terminals only: in a pipe or a log they would be noise (and rich's live display
    would interleave with the tables printed meanwhile)."""
    if not show or not console.is_terminal:
        yield Hooks().progress
        return
    columns: list[Any] = [TextColumn("{task.description}", markup=False), BarColumn(),
                          MofNCompleteColumn()]
    if unit:
        columns.append(_Rate(unit))
    columns += [TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn()]
    tasks: dict[str, TaskID] = {}
    with Progress(*columns, console=console, transient=transient) as bar:
        def report(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done, total=total)

        yield report


def notifier(console: Console, style: str | None = None) -> callbacks.Notify:
    """A :data:`reasonaudio.progress.Notify` that prints each note as plain text (never markup)."""
    def notify(message: str) -> None:
        console.print(Text(message, style=style or ""), soft_wrap=True)

    return notify


def warner(console: Console) -> callbacks.Notify:
    """Notes prefixed ``warning:`` in yellow; the message itself is plain text."""
    def warn(message: str) -> None:
        console.print(Text.assemble(("warning: ", "yellow"), message), soft_wrap=True)

    return warn


@contextlib.contextmanager
def progress_hooks(console: Console, *, unit: str | None = None, show: bool = True,
                   transient: bool = False, notify: callbacks.Notify | None = None,
                   warn: callbacks.Notify | None = None,
                   event: callbacks.Event | None = None) -> Iterator[Hooks]:
    """The CLI's :class:`~reasonaudio.progress.Hooks`: bars on ``console`` (as
    :func:`progress_bars`), notes as plain lines (``notify``, default :func:`notifier`), warnings
    prefixed ``warning:`` (``warn``, default :func:`warner`), typed events to ``event``."""
    with progress_bars(console, unit=unit, show=show, transient=transient) as bars:
        yield Hooks(on_progress=bars, on_notify=notify or notifier(console),
                    on_warn=warn or warner(console), on_event=event)
