"""Errors of the package fetcher.

:class:`FetchError` is a user-facing error (bad recipe, unreadable container, refused entry); the
orchestrator catches it per atom and reports it, so one bad file never stops the whole bank.
"""

from __future__ import annotations

from reasonaudio.errors import DataError


class FetchError(DataError):
    """A recipe, package or container problem; names the file, field and value."""


class UnsafeEntryError(FetchError):
    """An archive entry that would escape the destination, is a link, or is over a size cap."""
