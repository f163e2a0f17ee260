"""Typed seams: few parameters or returns of the package say only ``Any``.

The count is read from the source with ``ast``: every parameter (positional, keyword-only,
``*args``, ``**kwargs``) and every return annotated exactly ``Any`` (``Any``, ``typing.Any`` or
the string ``"Any"``) in a function or method of ``reasonaudio/``. ``Any`` inside a type
(``dict[str, Any]``, ``Any | None``) is not counted: a JSON object's values are of any type.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import reasonaudio

pytestmark = pytest.mark.fast

PACKAGE = Path(reasonaudio.__file__).parent
LIMIT = 150


def is_bare_any(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Name):
        return node.id == "Any"
    if isinstance(node, ast.Attribute):
        return node.attr == "Any" and isinstance(node.value, ast.Name) and node.value.id == "typing"
    if isinstance(node, ast.Constant):
        return node.value == "Any"
    return False


def bare_any(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, ``function:parameter`` or ``function:return``) of each bare ``Any`` in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]
        found += [(p.lineno, f"{node.name}:{p.arg}") for p in params if is_bare_any(p.annotation)]
        if is_bare_any(node.returns):
            found.append((node.lineno, f"{node.name}:return"))
    return found


def package_bare_any() -> list[str]:
    return [f"{path.relative_to(PACKAGE.parent)}:{line} {where}"
            for path in sorted(PACKAGE.rglob("*.py"))
            for line, where in bare_any(ast.parse(path.read_text(encoding="utf-8")))]


def test_the_rule_counts_bare_any_only():
    tree = ast.parse("import typing\n"
                     "def f(a: Any, b: 'Any', *c: Any, d: typing.Any = 1, **e: Any) -> Any: ...\n"
                     "def g(a: dict[str, Any], b: Any | None, c: list[Any], d: object) -> int: ...\n"
                     "class C:\n    def m(self, x: Any) -> 'Any': ...\n")
    assert [w for _, w in bare_any(tree)] == ["f:a", "f:b", "f:d", "f:c", "f:e", "f:return",
                                              "m:x", "m:return"]


def test_bare_any_is_under_the_limit():
    found = package_bare_any()
    assert len(found) < LIMIT, (f"{len(found)} parameters or returns annotated bare Any (limit "
                                f"{LIMIT}); name the type:\n" + "\n".join(found))
