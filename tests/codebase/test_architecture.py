"""The package's shape, checked: no import cycles, and dependencies that run one way.

Layers, lowest first (docs/architecture.md): a module may import its own layer and the ones
below it, never one above. The graph is read from the source with ``ast`` (every import,
module-level or inside a function), so a cycle cannot hide behind a lazy import; a loader named
by string (``"reasonaudio.models.clap:load"``, ``import_module("reasonaudio.x")``) counts as an
import of that module. docs/architecture.md names every module (and nothing that is gone), and no
two modules share a file name unless the page's naming rule allows it.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

import reasonaudio

PACKAGE = Path(reasonaudio.__file__).parent

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("reasonaudio", "reasonaudio.errors", "reasonaudio.fileio", "reasonaudio.output_dirs",
                    "reasonaudio.provenance", "reasonaudio.runtime", "reasonaudio.progress",
                    "reasonaudio.extras", "reasonaudio.registries", "reasonaudio.seeds", "reasonaudio.types")),
    ("data model", ("reasonaudio.logic", "reasonaudio.dataset", "reasonaudio.tasks")),
    ("query language", ("reasonaudio.querylang",)),
    ("store", ("reasonaudio.store",)),
    ("models", ("reasonaudio.models",)),
    ("sounds", ("reasonaudio.atoms", "reasonaudio.render")),
    ("benchmark generator", ("reasonaudio.generator",)),
    ("ingest and retrievers", ("reasonaudio.ingest", "reasonaudio.retrievers", "reasonaudio.detect",
                               "reasonaudio.train")),
    ("evaluation", ("reasonaudio.evaluation", "reasonaudio.demo_sizes")),
    ("experiments", ("reasonaudio.experiments", "reasonaudio.mainjob")),
    ("public API", ("reasonaudio.api",)),
    ("views", ("reasonaudio.views", "reasonaudio.explorer")),
    ("command line", ("reasonaudio.cli", "reasonaudio.commands")),
]


@functools.lru_cache(maxsize=None)
def parsed(path: Path) -> ast.AST:
    """One parse per file per test run (the package's files do not change under the tests)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def module_names() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


LOADER_SPEC = re.compile(r"^(reasonaudio(?:\.\w+)+):\w+$")
"""a loader named by string, ``module:function`` (the model registry's form)"""

STRING_LOADERS_ALLOWED_UPWARD = {
    ("reasonaudio.models.registry", "reasonaudio.train.embedder"),
    ("reasonaudio", "reasonaudio.api"),
}
"""Loader strings that name a module of a higher layer, each justified in docs/architecture.md
(a registry record of the models layer whose loader is a trained model's directory reader; the
package root, whose public names load from the public API on first use)."""


def string_loaders(tree: ast.AST, known: set[str]) -> set[str]:
    """Modules named by a loader string or ``import_module("...")`` call in ``tree``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = LOADER_SPEC.match(node.value)
            if m and m.group(1) in known:
                found.add(m.group(1))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", ""))
              == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and node.args[0].value in known):
            found.add(node.args[0].value)
    return found


def imports_of(name: str, path: Path, known: set[str], strings: bool = True) -> set[str]:
    """Project modules ``name`` imports (``from pkg import sub`` counts as pkg.sub and pkg), and
    with ``strings`` the modules its loader strings name."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    tree = parsed(path)
    if strings:
        found |= {m for m in string_loaders(tree, known) if m != name
                  and (name, m) not in STRING_LOADERS_ALLOWED_UPWARD}
    for node in ast.walk(tree):
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
    return {name: set(targets) for name, targets in _graph().items()}


@functools.lru_cache(maxsize=None)
def _graph() -> dict[str, frozenset[str]]:
    mods = module_names()
    return {name: frozenset(imports_of(name, path, set(mods))) for name, path in mods.items()}


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


def test_string_loaders_are_resolved():
    """The model registry's loaders are edges of the graph (one exception, documented)."""
    g = graph()
    loaded = {"reasonaudio.models.clap", "reasonaudio.models.yamnet_embedder"}
    assert loaded <= g["reasonaudio.models.registry"]
    mods = module_names()
    for a, b in STRING_LOADERS_ALLOWED_UPWARD:  # the exception still exists and still goes upward
        assert b in imports_of(a, mods[a], set(mods), strings=False) | string_loaders(
            parsed(mods[a]), set(mods))
        assert layer_of(b) > layer_of(a)
        shown = module_path(b if a == "reasonaudio" else a)  # the root is named by what it loads
        assert f"`{shown}`" in ARCHITECTURE.read_text(encoding="utf-8")


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
    loaders = tmp_path / "loaders.py"
    loaders.write_text('RECORD = dict(loader="reasonaudio.views.y:load")\n'
                       'import importlib\nimportlib.import_module("reasonaudio.views.y")\n'
                       'NOT_A_LOADER = "reasonaudio.views.y"\n')
    assert imports_of("reasonaudio.dataset.x", loaders, known) == {"reasonaudio.views.y"}
    only_text = tmp_path / "text.py"
    only_text.write_text('NOT_A_LOADER = "reasonaudio.views.y"\n')
    assert imports_of("reasonaudio.dataset.x", only_text, known) == set()
    assert layer_of("reasonaudio.views.y") > layer_of("reasonaudio.dataset.x")
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_library_never_prints_with_rich():
    """rich lives in views and the CLI; library modules report through callbacks."""
    offenders = []
    for name, path in module_names().items():
        if layer_of(name) >= layer_of("reasonaudio.views"):
            continue
        tree = parsed(path)
        for node in ast.walk(tree):
            mod = getattr(node, "module", None) if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if (mod or "").startswith("rich") or any(n.startswith("rich") for n in names):
                offenders.append(name)
    assert sorted(set(offenders)) == []


# --- docs/architecture.md names every module --------------------------------------------------

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def module_path(name: str) -> str:
    """``reasonaudio.evaluation.evaluate`` -> ``evaluation/evaluate.py``; a package -> ``evaluation/``."""
    path = module_names()[name]
    rel = path.relative_to(PACKAGE)
    return f"{rel.parent.as_posix()}/" if path.name == "__init__.py" else rel.as_posix()


def doc_drift(doc: str, paths: set[str]) -> tuple[list[str], list[str]]:
    """(module paths the page does not name in backticks, backticked paths that are no module)."""
    named = set(re.findall(r"`([\w/]+(?:\.py|/))`", doc))
    missing = sorted(p for p in paths if p not in named)
    packages = {p.split("/")[0] for p in paths if "/" in p}
    # a path into the package (not tests/, scripts/ ...), or a bare file name: must be a module
    ours = {p for p in named if p.split("/")[0] in packages or "/" not in p}
    stale = sorted(p for p in ours if p not in paths)
    return missing, stale


def documented_paths() -> set[str]:
    return {module_path(n) for n in module_names() if n != "reasonaudio"}


def test_every_module_is_on_the_architecture_page():
    missing, stale = doc_drift(ARCHITECTURE.read_text(encoding="utf-8"), documented_paths())
    assert missing == [], "describe these in docs/architecture.md"
    assert stale == [], "docs/architecture.md names modules that do not exist"


def test_the_doc_checker_sees_a_missing_and_a_stale_module():
    doc = ("- `evaluation/`: evaluation\n- `evaluation/evaluate.py`: eval\n- `evaluation/gone.py`: removed\n"
           "- `tests/test_x.py` and `evaluate.py` (a bare name)\n")
    assert doc_drift(doc, {"evaluation/", "evaluation/evaluate.py", "evaluation/new.py"}) == (
        ["evaluation/new.py"], ["evaluate.py", "evaluation/gone.py"])


# --- module file names ------------------------------------------------------------------------

SHARED_FILE_NAMES = {"__init__.py", "base.py", "registry.py", "errors.py"}
"""File names one job per package may share (docs/architecture.md, "Module names"): a package's
marker, its interface, its table of named records, its error types."""


def name_clashes(paths: list[Path], root: Path) -> list[str]:
    """File names two modules share against the rule: outside :data:`SHARED_FILE_NAMES`, only
    ``views/X.py`` beside exactly one library module ``X.py`` (the view of what it computes)."""
    by_name: dict[str, list[Path]] = defaultdict(list)
    for p in paths:
        by_name[p.name].append(p)
    clashes = []
    for file_name, group in sorted(by_name.items()):
        if len(group) < 2 or file_name in SHARED_FILE_NAMES:
            continue
        views = [p for p in group if p.parent == root / "views"]
        if not (len(views) == 1 and len(group) == 2):
            where = sorted(p.relative_to(root).as_posix() for p in group)
            clashes.append(f"{file_name}: " + ", ".join(where))
    return clashes


def test_no_two_modules_share_a_file_name_against_the_rule():
    assert name_clashes(sorted(PACKAGE.rglob("*.py")), PACKAGE) == []


def test_the_name_checker_sees_clashes():
    root = Path("/pkg")
    paths = [root / p for p in ("a/cache.py", "b/cache.py", "views/results.py", "evaluation/results.py",
                                "views/x.py", "a/x.py", "b/x.py", "a/base.py", "b/base.py")]
    assert name_clashes(paths, root) == ["cache.py: a/cache.py, b/cache.py",
                                         "x.py: a/x.py, b/x.py, views/x.py"]
