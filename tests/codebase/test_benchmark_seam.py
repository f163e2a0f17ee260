"""Every function that reads a benchmark says so in its signature: a parameter named ``bench``
(or ``calib``, the calibration build) is a ``BenchmarkView``, never ``Any`` or unannotated, and
nothing reads a benchmark's condition from a string-keyed cache or patches a copy's attributes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import reasonaudio

pytestmark = pytest.mark.fast

PACKAGE = Path(reasonaudio.__file__).parent
BENCHMARK_PARAMETERS = ("bench", "calib")
RETIRED = (r"\b(under_condition|condition_of|interleaved_view|formulated|reread)\(|_DERIVED_KEY"
           r"|derived\(\s*\"condition\"|__dict__\[\"(queries|query_by_id|qrels)\"\]")
"""the seam before views were values: a condition in ``derived("condition")`` and copied,
patched benchmarks"""


def untyped_benchmark_parameters() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            args = node.args
            for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                if arg.arg not in BENCHMARK_PARAMETERS:
                    continue
                note = ast.unparse(arg.annotation) if arg.annotation is not None else "(none)"
                if not re.search(r"\bBenchmarkView\b", note):
                    out.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}({arg.arg}: {note})")
    return out


def test_every_benchmark_parameter_is_a_view():
    assert untyped_benchmark_parameters() == []


def test_the_retired_seam_is_gone():
    found = [f"{p.relative_to(PACKAGE)}:{i}" for p in sorted(PACKAGE.rglob("*.py"))
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(RETIRED, line)]
    assert found == []
