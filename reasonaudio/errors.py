"""Errors a user can cause.

Anything raised as :class:`ReasonAudioError` is shown by the CLI as one line and a non-zero exit
code; every other exception is a bug and keeps its traceback.
"""

from __future__ import annotations


class ReasonAudioError(Exception):
    """A problem with the user's input, files, data or environment (not a bug)."""


class DataError(ReasonAudioError):
    """A benchmark directory, atom bank or file is missing, malformed or inconsistent."""


class LogicError(ReasonAudioError):
    """Query logic JSON that does not follow docs/benchmark.md."""


class QueryParseError(ReasonAudioError):
    """Query text that cannot be read into logic (unknown sound, ambiguity, contradiction)."""


class StoreError(ReasonAudioError):
    """The vector store cannot be reached, or a collection is missing or incompatible."""


class ModelError(ReasonAudioError):
    """A model cannot be loaded (no weights, no network, missing extra)."""
