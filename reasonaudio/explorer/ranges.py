"""HTTP byte ranges (RFC 9110 section 14): one ``Range: bytes=...`` header -> the bytes to send.

One range per request (what audio players ask for). A header that is not exactly
``bytes=FIRST-[LAST]`` or ``bytes=-SUFFIX`` is malformed (400); a well-formed range that lies
outside the content, or a list of several ranges, cannot be satisfied (416). Nothing is guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(r"bytes=(\d{0,18})-(\d{0,18})", re.IGNORECASE)
"""the range unit is case-insensitive (RFC 9110 section 14.1: ``BYTES=0-1`` is ``bytes=0-1``)"""


class RangeError(Exception):
    """A Range header that is refused: ``status`` is 400 (malformed) or 416 (unsatisfiable)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int
    """inclusive, as in Content-Range"""

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def content_range(self, total: int) -> str:
        return f"bytes {self.start}-{self.end}/{total}"


def parse_range(header: str, total: int) -> ByteRange:
    """The single byte range ``header`` asks for within ``total`` bytes (raises :class:`RangeError`)."""
    value = header.strip()
    if "," in value and value.lower().startswith("bytes="):
        raise RangeError(416, "only one byte range per request is served")
    m = _SPEC.fullmatch(value)
    if m is None:
        raise RangeError(400, "malformed Range header (expected bytes=FIRST-LAST, bytes=FIRST- or bytes=-N)")
    first, last = m.group(1), m.group(2)
    if not first and not last:
        raise RangeError(400, "malformed Range header (bytes=- names no byte)")
    if not first:  # suffix: the last N bytes
        n = int(last)
        if n == 0 or total == 0:
            raise RangeError(416, "the range names no byte of the content")
        return ByteRange(max(0, total - n), total - 1)
    start = int(first)
    end = int(last) if last else total - 1
    if last and end < start:
        raise RangeError(400, "malformed Range header (last byte before first)")
    if start >= total:
        raise RangeError(416, "the range starts past the end of the content")
    return ByteRange(start, min(end, total - 1))
