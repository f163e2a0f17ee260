"""Errors a user can cause.

Anything raised as :class:`ReasonAudioError` is shown by the CLI as one line and a non-zero exit
code; every other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import os
import re
import unicodedata


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


class MissingExtraError(ModelError):
    """A feature needs an optional install extra that is not installed (``reasonaudio.extras``)."""


ECHO_LIMIT = 120
"""Characters of user-supplied text (a query, a path, a label, a server's answer) an error echoes."""
LINE_LIMIT = 600
"""Characters of a whole error line; longer ones keep their start and their end."""

_SECRET = re.compile(r"(?i)\b(api[-_ ]?key|authorization)(\"?\s*[:=]\s*\"?)"
                     r"(bearer\s+)?[^\s\"',;}]+")


def one_line(text: object) -> str:
    """``text`` on one line: newlines and other control characters shown escaped (``\\n``)."""
    out = []
    for ch in str(text):
        if ch in "\n\r\t" or unicodedata.category(ch) == "Cc":
            out.append(repr(ch)[1:-1] if ch in "\n\r\t" else f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]*@")
SECRET_RUN = 8
"""Characters of a secret that are never shown together: any run this long is redacted (a
server may echo a key split in two, or cut)."""


def strip_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL in it removed."""
    return _USERINFO.sub(r"\1", text)


def _redact_secret(text: str, secret: str) -> str:
    """``text`` with every run of ``SECRET_RUN`` characters of ``secret`` (the whole secret when
    it is shorter), in any letter case, replaced; overlapping runs become one ``<redacted>``."""
    size = min(SECRET_RUN, len(secret))
    hidden = [False] * len(text)
    for i in range(len(secret) - size + 1):
        for m in re.finditer(re.escape(secret[i:i + size]), text, flags=re.IGNORECASE):
            hidden[m.start():m.end()] = [True] * (m.end() - m.start())
    if not any(hidden):
        return text
    out, i = [], 0
    while i < len(text):
        if hidden[i]:
            while i < len(text) and hidden[i]:
                i += 1
            out.append("<redacted>")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with credentials removed: ``api-key: X`` style pairs, the ``user:password@`` of
    URLs, and the given secret values (by default the ``QDRANT_API_KEY`` in the environment) in
    any letter case (a server may echo a key upper- or lower-cased) and any run of
    :data:`SECRET_RUN` of their characters, so no error echoes a key back, whole or in pieces."""
    for secret in secrets or tuple(filter(None, [os.environ.get("QDRANT_API_KEY")])):
        if len(secret) >= 4:
            text = _redact_secret(text, secret)
    text = strip_userinfo(text)
    return _SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>", text)


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """User-supplied text as an error shows it: one line, credentials redacted, at most ``limit``
    characters with the cut said (a 100,000-character query is not printed back whole)."""
    text = redact(one_line(value))
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def error_line(message: object, limit: int = LINE_LIMIT) -> str:
    """A whole error message as the CLI prints it: one line, redacted, its start and end kept."""
    text = redact(one_line(message))
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 2 // 3], text[-(limit // 3):]
    return f"{head} ...[{len(text) - len(head) - len(tail):,} characters cut]... {tail}"
