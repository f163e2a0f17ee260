"""Run the explorer: bind the socket first (so a taken port is a one-line error), then uvicorn."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import ReasonAudioError
from reasonaudio.explorer.catalog import Catalog

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.middleware.trustedhost import TrustedHostMiddleware

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
PLOTS_DIRS = ("results/plots", "../report")
"""where plots are looked for, relative to the benchmark (``bench report``'s default; the demo's)"""


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
"""Host headers a loopback-bound explorer also answers (how a browser on the machine names it)."""


def _addresses(host: str) -> list[str]:
    """Every address ``host`` stands for, read as the OS reads it (``127.1`` is 127.0.0.1)."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError):
        return []
    return [str(info[4][0]).split("%", 1)[0] for info in infos]


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (``localhost``, ``127.1``, ``::1``)."""
    found = _addresses(host)
    return bool(found) and all(ipaddress.ip_address(a).is_loopback for a in found)


def _as_host(address: str) -> str:
    """An address as a Host header writes it (an IPv6 one in brackets), lower-cased."""
    return f"[{address}]".lower() if ":" in address else address.lower()


def host_names(host: str, bound: str) -> tuple[str, ...]:
    """The Host headers the explorer answers when it listens on ``host`` (bound to ``bound``):
    the name given and the bound address; the loopback names for a loopback bind; the machine's
    own names and addresses for a wildcard bind (0.0.0.0, ::). Any other Host (a page of another
    site reaching the port through DNS rebinding) is refused."""
    names = {_as_host(host.strip("[]")), _as_host(bound)}
    if is_loopback(host):
        names.update(LOOPBACK_NAMES)
    elif ipaddress.ip_address(bound).is_unspecified:
        for own in {socket.gethostname(), socket.getfqdn()}:
            names.add(own.lower())
            names.update(_as_host(a) for a in _addresses(own))
        names.update(LOOPBACK_NAMES)
    return tuple(sorted(names))


def default_plots(bench: BenchmarkView) -> Path | None:
    for rel in PLOTS_DIRS:
        folder = (bench.root / rel).resolve()
        if folder.is_dir() and any(folder.glob("*.png")):
            return folder
    return None


@dataclass
class Listening:
    sock: socket.socket
    url: str
    hosts: tuple[str, ...] = ()
    """the Host headers answered (:func:`host_names`)"""


def listen(host: str, port: int) -> Listening:
    """A listening TCP socket on ``host:port`` (port 0: a free one), or a one-line error."""
    if not 0 <= port <= 65535:
        raise ReasonAudioError(f"--port must be from 0 to 65535, got {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ReasonAudioError(f"--host {host!r}: cannot resolve ({exc.strerror})") from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ReasonAudioError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if family == socket.AF_INET6 else bound[0]
    return Listening(sock, f"http://{shown}:{bound[1]}/", host_names(host, str(bound[0])))


def build_app(bench: BenchmarkView, plots: Path | None = None, backend: str | None = None,
              url: str | None = None, bank_spec: str | None = None) -> Starlette:
    from reasonaudio.explorer.webapp import create_app  # its packages are in the core install

    catalog = Catalog(bench, plots if plots is not None else default_plots(bench), backend, url, bank_spec)
    return create_app(catalog)


WARM_AFTER_S = 5.0
"""the background warm-up starts after the first page is answered, or after this long"""


def _warm(app: Starlette) -> None:
    app.state.answered.wait(WARM_AFTER_S)  # the first page does not share the CPU with it
    app.state.catalog.warm()


def guarded(app: Starlette, hosts: tuple[str, ...]) -> TrustedHostMiddleware:
    """``app`` answering only requests whose Host header is one of ``hosts`` (else 400)."""
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    return TrustedHostMiddleware(app, allowed_hosts=list(hosts))


def run(app: Starlette | TrustedHostMiddleware, listening: Listening) -> None:
    """Serve ``app`` on the bound socket until interrupted (connections made before uvicorn's loop
    starts wait in the socket's backlog, so the URL can be announced before this call)."""
    import uvicorn

    # The renderer logs each atom it levels (the build recorded those adjustments already); a
    # server rendering clips on demand would repeat them on every first play.
    logging.getLogger("reasonaudio.render").setLevel(logging.ERROR)
    threading.Thread(target=_warm, args=(app,), name="explorer-warm", daemon=True).start()
    config = uvicorn.Config(guarded(app, listening.hosts), log_level="critical", access_log=False, lifespan="off",
                            server_header=False)
    try:
        uvicorn.Server(config).run(sockets=[listening.sock])
    finally:
        listening.sock.close()
        app.state.catalog.close()


@contextmanager
def child_server(data: Path, *args: str, timeout: float = 120.0) -> Iterator[str]:
    """``bench serve --data DATA --port 0 ARGS`` in a child process (as a user runs it); yields
    its base URL (no trailing slash) once it listens, and stops it, waiting, however the block
    ends. For the browser tests, the speed benchmark and the README's screenshot."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "reasonaudio.cli", "serve", "--data", str(data),
                             "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()  # printed once the socket listens
        if " at http" not in line:
            proc.wait(timeout=timeout)
            raise ReasonAudioError(f"bench serve did not start: {(line + proc.stderr.read()).strip()}")
        yield line.split(" at ", 1)[1].split()[0].rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
