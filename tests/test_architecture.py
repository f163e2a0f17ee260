"""The package's shape, checked: no import cycles, and dependencies that run one way.

Layers, lowest first (docs/architecture.md): a module may import its own layer and the ones
below it, never one above. The graph is read from the source with ``ast`` (every import,
module-level or inside a function), so a cycle cannot hide behind a lazy import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import reasonaudio

PACKAGE = Path(reasonaudio.__file__).parent

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("reasonaudio", "reasonaudio.errors", "reasonaudio.fileio",
                    "reasonaudio.provenance", "reasonaudio.runtime", "reasonaudio.progress")),
    ("data model", ("reasonaudio.dataset", "reasonaudio.constraints.logic")),
    ("query language", ("reasonaudio.constraints",)),
    ("store", ("reasonaudio.store",)),
    ("models", ("reasonaudio.models",)),
    ("ingest and retrievers", ("reasonaudio.ingest", "reasonaudio.retrievers", "reasonaudio.detect",
                               "reasonaudio.train")),
    ("evaluation", ("reasonaudio.bench", "reasonaudio.mainjob")),
    ("views", ("reasonaudio.views", "reasonaudio.explorer")),
    ("command line", ("reasonaudio.cli",)),
]


def module_names() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules ``name`` imports (``from pkg import sub`` counts as pkg.sub and pkg)."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{a.name}" for a in node.names]
        found |= {t for t in targets if t in known and t != name}
    return found


def layer_of(name: str) -> int:
    best, best_len = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            nested = name.startswith(prefix + ".") and prefix != "reasonaudio"  # the root: itself only
            if (name == prefix or nested) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def graph() -> dict[str, set[str]]:
    mods = module_names()
    return {name: imports_of(name, path, set(mods)) for name, path in mods.items()}


def test_every_module_has_a_layer():
    assert [m for m in graph() if layer_of(m) < 0] == []


def find_cycles(g: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(g.get(node, ())):
            if nxt == "reasonaudio":  # the package root only sets the thread default
                continue
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(g):
        if node not in state:
            visit(node, [node])
    return cycles


def test_no_import_cycle():
    assert find_cycles(graph()) == []


def test_dependencies_run_one_way():
    upward = sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                    for a, targets in graph().items() for b in targets
                    if layer_of(b) > layer_of(a))
    assert upward == []


def test_the_checker_sees_cycles_and_upward_imports(tmp_path):
    """The checks above can fail: a planted cycle and a planted upward import are found."""
    known = {"reasonaudio.dataset.x", "reasonaudio.views.y"}
    x = tmp_path / "x.py"
    x.write_text("def f():\n    from reasonaudio.views.y import show\n")
    assert imports_of("reasonaudio.dataset.x", x, known) == {"reasonaudio.views.y"}
    assert layer_of("reasonaudio.views.y") > layer_of("reasonaudio.dataset.x")
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_library_never_prints_with_rich():
    """rich lives in views and the CLI; library modules report through callbacks."""
    offenders = []
    for name, path in module_names().items():
        if layer_of(name) >= layer_of("reasonaudio.views"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            mod = getattr(node, "module", None) if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if (mod or "").startswith("rich") or any(n.startswith("rich") for n in names):
                offenders.append(name)
    assert sorted(set(offenders)) == []
