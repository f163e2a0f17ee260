"""Retrievers built in the background, so the search page can say "loading model" instead of
waiting in silence: the first search with a learned model loads its weights (seconds to
minutes).

The page asks :meth:`Loading.start` and answers at once with a note that polls
:meth:`Loading.state` (``/search/status``) until the model is ``ready`` (the page then asks
again and gets its results, with how long the load took) or ``failed`` (the page then shows the
one-line error, once; the next search tries again). Nothing here knows about models: it runs the
``build`` it is given (``Catalog.prepare``) in one thread per retriever.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from reasonaudio.errors import ReasonAudioError, error_line, redact

COLD, LOADING, READY, FAILED = "cold", "loading", "ready", "failed"


@dataclass
class _Load:
    state: str
    started: float
    seconds: float | None = None
    """how long the build took (once it is ready)"""
    error: str = ""
    noted: bool = False
    """whether a results page has shown the load time already"""


class Loading:
    """The background builds of one explorer, by retriever name; thread-safe."""

    def __init__(self, build: Callable[[str], object], clock: Callable[[], float] = time.monotonic) -> None:
        self._build = build
        self._clock = clock
        self._loads: dict[str, _Load] = {}
        self._lock = threading.Lock()

    def state(self, name: str) -> str:
        with self._lock:
            load = self._loads.get(name)
            return load.state if load is not None else COLD

    def elapsed(self, name: str) -> float:
        """Seconds since ``name`` started loading (0 when it is not loading)."""
        with self._lock:
            load = self._loads.get(name)
            return self._clock() - load.started if load is not None and load.state == LOADING else 0.0

    def start(self, name: str) -> bool:
        """Build ``name`` in the background unless it is loading or loaded already; whether this
        call started it (the page that starts a load always answers with the loading note, however
        fast the build turns out)."""
        with self._lock:
            if name in self._loads and self._loads[name].state in (LOADING, READY):
                return False
            self._loads[name] = _Load(LOADING, self._clock())
        threading.Thread(target=self._run, args=(name,), name=f"explorer-load-{name}", daemon=True).start()
        return True

    def _run(self, name: str) -> None:
        try:
            self._build(name)
        except ReasonAudioError as exc:
            self._finish(name, FAILED, error_line(exc))
        except Exception as exc:  # a loader's own failure: one line on the page, not a dead thread
            self._finish(name, FAILED, redact(f"loading {name} failed: {type(exc).__name__}: {exc}"))
        else:
            self._finish(name, READY)

    def _finish(self, name: str, state: str, error: str = "") -> None:
        with self._lock:
            load = self._loads[name]
            load.state, load.error, load.seconds = state, error, self._clock() - load.started

    def take_error(self, name: str) -> str | None:
        """The error of a failed load, once (the load is forgotten: the next search tries again)."""
        with self._lock:
            load = self._loads.get(name)
            if load is None or load.state != FAILED:
                return None
            del self._loads[name]
            return load.error

    def take_load_time(self, name: str) -> float | None:
        """Seconds the finished load of ``name`` took, the first time a results page asks."""
        with self._lock:
            load = self._loads.get(name)
            if load is None or load.state != READY or load.noted:
                return None
            load.noted = True
            return load.seconds
