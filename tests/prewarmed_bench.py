"""`bench` for the doc-recipe tests (test_doc_recipes.py), started once and forked per command.

A recipe's `bench` lines run in bash as printed, each in a process of its own, but starting the
CLI costs seconds of imports (torch, sentence-transformers, matplotlib) that would dominate the
test. So one server process imports ``reasonaudio.cli`` and those modules once and listens on a
Unix socket; the ``bench`` on the recipes' PATH is a client that hands it its argv, working folder,
environment and stdin/stdout/stderr, and the server forks a child that runs the CLI's own
``main()`` with them and exits with its status, which the client exits with. Nothing but imports
happens before the fork (no model is loaded, no command run), so each command starts as a fresh
``bench`` would, minus the import time. Killing the client kills its command.

    python prewarmed_bench.py serve SOCKET      # the server (the test starts it)
    python -S prewarmed_bench.py SOCKET ARGS    # one command (the ``bench`` shim runs this)
"""

from __future__ import annotations

import json
import os
import socket
import sys

PREIMPORT = ("reasonaudio.cli", "torch", "transformers", "transformers.models.bert.modeling_bert",
             "transformers.models.bert.tokenization_bert", "matplotlib", "matplotlib.pyplot",
             "soundfile", "scipy.signal", "qdrant_client", "qdrant_edge", "onnxruntime", "onnx")
"""imported once before any fork: the CLI and the heavy modules its commands import lazily (the
stores import qdrant_client, whose package imports its async client: a second per command)"""


def serve(path: str) -> None:
    import importlib
    import threading

    os.environ.setdefault("MPLBACKEND", "Agg")
    for name in PREIMPORT:
        importlib.import_module(name)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path + ".tmp")
    os.rename(path + ".tmp", path)  # the socket appears once it accepts
    import gc

    gc.freeze()  # children share the imported heap: no collection of it copies its pages
    server.listen(16)
    while True:
        conn, _ = server.accept()
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        pid = os.fork()
        if pid == 0:
            server.close()
            _child(conn, json.loads(message), fds)
        for fd in fds:
            os.close(fd)
        done = threading.Event()
        threading.Thread(target=_wait, args=(conn, pid, done), daemon=True).start()
        threading.Thread(target=_watch, args=(conn, pid, done), daemon=True).start()


def _child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """Run the CLI as ``bench ARGV`` in ``request``'s folder and environment, then exit."""
    conn.close()
    os.setpgid(0, 0)  # its own group: killing the command kills what it started
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["bench", *request["argv"]]
    code = 0
    try:
        from reasonaudio.cli import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException:  # a bug: the traceback, as the interpreter would print it
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    os._exit(code)


def _wait(conn: socket.socket, pid: int, done) -> None:
    _, status = os.waitpid(pid, 0)
    done.set()
    try:
        conn.send(str(os.waitstatus_to_exitcode(status)).encode())
    except OSError:
        pass
    conn.close()


def _watch(conn: socket.socket, pid: int, done) -> None:
    """The client went away before its command ended (killed by a timeout): end the command's
    process group."""
    import signal

    try:
        conn.recv(1)
    except OSError:
        return
    if done.is_set():
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def client(path: str, argv: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.connect(path)
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    status = conn.recv(16)
    if not status:
        return 1
    code = int(status)
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        sys.exit(client(sys.argv[1], sys.argv[2:]))
