"""Shared checks for hostile-input tests: exit 2, one line on stderr naming the culprit, no traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.generator.build import BuildParams, build_benchmark

runner = CliRunner()


def bench(*args: str) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def one_line_error(result: Any, *needles: str) -> str:
    """The single error line of a user error; asserts exit 2, no traceback, every needle in it."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    # notices the command printed on the way (--no-verify's warning) are not part of the error
    lines = [ln for ln in result.stderr.strip().splitlines()
             if not ln.startswith(("warning: ", "note: "))]
    assert len(lines) == 1, result.stderr
    text = lines[0]
    for needle in needles:
        assert needle in text, text
    return text


def small_build(out: Path, clips: int = 60, queries: int = 10, seed: int = 0) -> Path:
    """A real (synthetic-bank) benchmark, small enough to build in well under a second."""
    build_benchmark(out, BuildParams(n_clips=clips, n_queries=queries, seed=seed))
    return out
