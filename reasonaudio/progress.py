"""How long-running library calls report, without printing: plain callbacks.

``Progress(label, done, total)`` is called as work advances (``label`` names the piece of work,
e.g. ``"ingest clap"``); ``Notify(message)`` carries one-line notes and warnings. Library
functions take either as an optional argument and stay silent without it; the CLI's views turn
them into rich progress bars and lines (:mod:`reasonaudio.views.progress`).
"""

from __future__ import annotations

from typing import Callable

Progress = Callable[[str, int, int], None]
Notify = Callable[[str], None]


def silent_progress(label: str, done: int, total: int) -> None:
    """The default: report nothing."""


def silent_notify(message: str) -> None:
    """The default: say nothing."""
