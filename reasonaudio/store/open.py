"""Choosing and opening a backend: embedded by default, a server when a URL is given.

- ``edge`` (default): Qdrant Edge in-process, data under ``DATA/qdrant/edge/``. Chosen on the
  numbers of ``benchmarks/store_speed.py`` (docs/qdrant.md): on 10,000 clips it loads the
  payload collection and runs 1,000 oracle queries one to two orders of magnitude faster
  than local mode.
- ``local``: qdrant-client's local mode, data under ``DATA/qdrant/local/``; pure Python.
- ``server``: ``--qdrant-url`` or ``QDRANT_URL``; API key from ``QDRANT_API_KEY`` only.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from reasonaudio.errors import StoreError, echo
from reasonaudio.store.base import Store

BACKENDS = ("edge", "local", "server")
DEFAULT_BACKEND = "edge"
EMBEDDED_DIR = "qdrant"
URL_ENV = "QDRANT_URL"
API_KEY_ENV = "QDRANT_API_KEY"


def resolve_backend(backend: str | None, url: str | None) -> tuple[str, str | None]:
    """(backend, url) after applying the rules: a URL (flag or env) means the server."""
    url = url or os.environ.get(URL_ENV) or None
    if backend is not None and backend not in BACKENDS:
        raise StoreError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if url:
        if backend in ("edge", "local"):
            raise StoreError(f"--backend {backend} is embedded but a server URL is set "
                             f"(--qdrant-url or {URL_ENV}); drop one of them")
        return "server", check_server_url(url)
    if backend == "server":
        raise StoreError(f"--backend server needs --qdrant-url URL or {URL_ENV}")
    return backend or DEFAULT_BACKEND, None


SERVER_SCHEMES = ("http", "https")


def check_server_url(url: str) -> str:
    """``url`` if it is a server URL qdrant-client can open (``http(s)://HOST[:PORT][/PATH]``),
    else a one-line StoreError that shows it without credentials (no traceback of the client's
    URL parser, which would print the key in its userinfo or query)."""
    shown = f"--qdrant-url {echo(url)}"
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # a port out of 0-65535 or not a number is a ValueError
    except ValueError as exc:
        raise StoreError(f"{shown}: not a URL ({echo(exc)})") from None
    if parts.scheme.lower() not in SERVER_SCHEMES:
        raise StoreError(f"{shown}: scheme {parts.scheme or 'missing'!r} is not served; use "
                         "http://HOST:6333 or https://HOST (the REST API)")
    if not parts.hostname or any(c.isspace() for c in url.strip()):
        raise StoreError(f"{shown}: not of the form http(s)://HOST[:PORT][/PATH]")
    if port == 0:
        raise StoreError(f"{shown}: port 0 is not a server's port")
    return url.strip()


def embedded_path(data_root: Path, backend: str) -> Path:
    """Where an embedded backend keeps a benchmark's collections (they persist between runs)."""
    return Path(data_root) / EMBEDDED_DIR / backend


def open_store(data_root: Path | str, backend: str | None = None, url: str | None = None,
               write: bool = False) -> Store:
    """Open the store for a benchmark directory; the caller closes it (or uses ``with``).

    Embedded stores hold an inter-process lock while open (store/lock.py): shared for readers,
    exclusive for writers (``write``, or from a reader's first change); a conflict is an error
    naming the other process, never a collection rebuilt under someone else.
    """
    backend, url = resolve_backend(backend, url)
    # Only the backend in use is imported: each loads its own native library or client stack.
    if backend == "edge":
        from reasonaudio.store.edge import EdgeStore
        return EdgeStore(embedded_path(Path(data_root), "edge"), write=write)
    from reasonaudio.store.client import ClientStore
    if backend == "local":
        return ClientStore(path=embedded_path(Path(data_root), "local"), write=write)
    return ClientStore(url=url, api_key=os.environ.get(API_KEY_ENV) or None)
