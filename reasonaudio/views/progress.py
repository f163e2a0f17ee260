"""A transient progress bar for library calls that report ``progress(done, total)``."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


@contextlib.contextmanager
def clip_progress(console: Console, what: str) -> Iterator[Callable[[int, int], None]]:
    """Yield a ``progress(done, total)`` callback drawing a bar on ``console`` (gone when done;
    nothing is drawn when the console is not a terminal)."""
    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(what, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
