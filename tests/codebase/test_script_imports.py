"""Every name the scripts in benchmarks/ and scripts/ import from the package exists.

Nothing else imports those scripts (they run by hand, or write the docs' figures), so a module
moved or a name renamed in the package would otherwise break them silently until someone runs
one; imports inside their functions included."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted([*(ROOT / "benchmarks").glob("*.py"), *(ROOT / "scripts").glob("*.py")])


def package_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) for every ``import reasonaudio...`` and ``from reasonaudio...
    import name`` in ``path``, at any depth."""
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "reasonaudio":
            out += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "reasonaudio"]
    return out


def test_the_scripts_are_found():
    assert len(SCRIPTS) > 20 and all(p.suffix == ".py" for p in SCRIPTS)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_package_name_a_script_imports_exists(path):
    missing = []
    for line, module, name in package_imports(path):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"{path.name}:{line} {module}: {exc}")
            continue
        if name is not None and name != "*" and not hasattr(mod, name):
            try:  # a submodule imported by name
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{path.name}:{line} {module}.{name}")
    assert missing == []


def test_the_check_sees_a_moved_name(tmp_path):
    """The check can fail: a script importing a name from where it no longer lives is found."""
    script = tmp_path / "old.py"
    script.write_text("def main():\n    from reasonaudio.dataset.benchmark import load_benchmark\n",
                      encoding="utf-8")
    (line, module, name), = package_imports(script)
    assert (line, module, name) == (2, "reasonaudio.dataset.benchmark", "load_benchmark")
    assert not hasattr(importlib.import_module(module), name)
