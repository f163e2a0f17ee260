"""How long-running library calls report, without printing: one :class:`Hooks` object.

Every long-running entry point takes ``hooks: Hooks = SILENT`` and reports through it:

- ``hooks.progress(label, done, total)`` as work advances (``label`` names the piece of work,
  e.g. ``"ingest clap"``; one bar per label in the CLI);
- ``hooks.notify(message)`` for one-line notes, ``hooks.warn(message)`` for warnings;
- ``hooks.event(obj)`` for a typed event richer than a count: training's ``TrainStatus`` (phase,
  epoch, loss, accuracy, validation figures) and the main job's steps and intermediate results.
  A view that knows the type shows it; every other receiver ignores it.

``hooks.counter(label)`` is the ``(done, total)`` callback a helper that counts one kind of thing
takes (``load_points``, ``frame_rows``). Without receivers a ``Hooks`` says nothing; the CLI's
views build one that draws rich bars and prints lines (:mod:`reasonaudio.views.progress`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)``"""
Notify = Callable[[str], None]
"""``notify(message)``"""
Counter = Callable[[int, int], None]
"""``counter(done, total)``: progress of one labelled piece of work (:meth:`Hooks.counter`)"""
Event = Callable[[Any], None]
"""``event(obj)``: a typed event (e.g. ``TrainStatus``)"""


@dataclass(frozen=True)
class Hooks:
    """Where a library call's progress, notes, warnings and typed events go; each receiver is
    optional and an absent one makes its method a no-op."""

    on_progress: Progress | None = None
    on_notify: Notify | None = None
    on_warn: Notify | None = None
    on_event: Event | None = None

    def progress(self, label: str, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(label, done, total)

    def notify(self, message: str) -> None:
        if self.on_notify is not None:
            self.on_notify(message)

    def warn(self, message: str) -> None:
        if self.on_warn is not None:
            self.on_warn(message)

    def event(self, event: object) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def counter(self, label: str, offset: int = 0, total: int | None = None) -> Counter:
        """``(done, total)`` -> ``progress(label, offset + done, total)``: a helper's count reported
        under ``label`` (``offset``/``total``: the helper does a part of a larger piece of work)."""
        def count(done: int, of: int) -> None:
            self.progress(label, offset + done, of if total is None else total)

        return count

    def with_(self, **receivers: Callable[..., None] | None) -> "Hooks":
        """A copy with the given receivers replaced (``None`` values leave a receiver as it is)."""
        return replace(self, **{k: v for k, v in receivers.items() if v is not None})


SILENT = Hooks()
"""The default: report nothing."""
