"""Running the registries' own clients: argument lists only, never a shell string.

A :data:`Runner` is injectable so tests can stand in for ``apt-get``/``pip``/``npm`` offline.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str], Path], Completed]


def run(argv: Sequence[str], cwd: Path, timeout: float = 3600.0) -> Completed:
    """Run ``argv`` (a list; no shell) in ``cwd`` and capture its output."""
    assert not isinstance(argv, str), "argument lists only"
    try:
        proc = subprocess.run(list(argv), cwd=str(cwd), capture_output=True, text=True,
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        return Completed(127, "", f"{argv[0]}: not found ({exc})")
    except subprocess.TimeoutExpired:
        return Completed(124, "", f"{argv[0]}: timed out after {timeout:.0f} s")
    return Completed(proc.returncode, proc.stdout, proc.stderr)


def last_line(text: str) -> str:
    """The last non-empty line of a client's output (its usual error summary)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""
