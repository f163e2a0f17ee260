"""One way to report: every long-running entry point takes ``hooks: Hooks = SILENT`` and no module
keeps its own progress callback type (docs/architecture.md, "Reporting")."""

from __future__ import annotations

import ast
from pathlib import Path

import reasonaudio
from reasonaudio.progress import SILENT, Hooks

PACKAGE = Path(reasonaudio.__file__).parent

ENTRY_POINTS = {
    "generator/build.py": ("build_benchmark", "compose_benchmark"),
    "generator/calibration.py": ("make_calibration_builds",),
    "render/clips.py": ("write_clip_audio",),
    "atoms/rules.py": ("validate_bank",),
    "atoms/check.py": ("check_bank",),
    "atoms/tagger_check.py": ("run_tagger_check",),
    "atoms/fetch/fetch.py": ("fetch_packages",),
    "ingest/run.py": ("ingest_model",),
    "ingest/vector_files.py": ("ingest_precomputed",),
    "generator/export.py": ("export_hf",),
    "store/collections.py": ("ingest_payload", "ensure_payload_collection"),
    "detect/clip_frames.py": ("clip_frames",),
    "detect/collection.py": ("run_detection", "calibrated"),
    "train/trainer.py": ("train_model",),
    "experiments/detection.py": ("detect_and_evaluate",),
    "experiments/train_experiment.py": ("run_experiment",),
    "mainjob.py": ("resolve_atoms", "prepare_benchmark", "run_main_job"),
}
"""module -> its long-running functions (evaluation takes its hooks in ``EvalContext``)"""

OLD_SHAPES = {"progress", "notify", "warn"}


def _functions(rel: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_hooks_are_silent_by_default_and_reach_their_receivers():
    SILENT.progress("x", 1, 2)
    SILENT.notify("n")
    SILENT.warn("w")
    SILENT.event(object())
    seen: list[tuple] = []
    hooks = Hooks(on_progress=lambda *a: seen.append(("p", *a)), on_notify=lambda m: seen.append(("n", m)),
                  on_warn=lambda m: seen.append(("w", m)), on_event=lambda e: seen.append(("e", e)))
    hooks.progress("ingest clap", 3, 10)
    hooks.notify("note")
    hooks.warn("careful")
    hooks.event(7)
    hooks.counter("load")(2, 5)
    hooks.counter("vectors", offset=10, total=15)(2, 5)  # the second part of a larger piece of work
    assert seen == [("p", "ingest clap", 3, 10), ("n", "note"), ("w", "careful"), ("e", 7),
                    ("p", "load", 2, 5), ("p", "vectors", 12, 15)]
    quiet = hooks.with_(on_warn=lambda m: None)
    assert quiet.on_progress is hooks.on_progress and quiet.on_warn is not hooks.on_warn
    assert Hooks() == SILENT


def test_every_long_running_entry_point_takes_hooks():
    wrong = []
    for rel, names in ENTRY_POINTS.items():
        found = _functions(rel)
        for name in names:
            fn = found[name]
            params = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
            if "hooks" not in params or OLD_SHAPES & set(params):
                wrong.append(f"{rel}:{name}({', '.join(params)})")
    assert wrong == []


def test_evaluation_takes_one_context():
    found = _functions("evaluation/evaluate.py")
    for name in ("evaluate_retrievers", "ensure_results", "evaluate_retriever"):
        params = [a.arg for a in found[name].args.args + found[name].args.kwonlyargs]
        assert "context" in params and not OLD_SHAPES & set(params) and len(params) <= 4, (name, params)
    run = _functions("ingest/run.py")["ingest_model"]
    assert len(run.args.args + run.args.kwonlyargs) <= 6


REPORTING_SHAPES = {f"Callable[{args}, None]" for args in ("[int, int]", "[str, int, int]", "[int]", "[str]")}
"""the argument lists of a count, a labelled count, a step and a note callback"""


def _callback_aliases(tree: ast.Module) -> list[str]:
    """Module-level names bound to a reporting ``Callable`` (a progress type of the module's own)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
            if ast.unparse(node.value).removeprefix("typing.") in REPORTING_SHAPES:
                out += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return out


def test_no_module_keeps_its_own_progress_callback_type():
    found = {}
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "progress.py":
            continue
        names = _callback_aliases(ast.parse(path.read_text(encoding="utf-8")))
        if names:
            found[path.relative_to(PACKAGE).as_posix()] = names
    assert found == {}


def test_the_alias_checker_sees_an_alias():
    tree = ast.parse("from typing import Callable\nProgressFn = Callable[[int, int], None]\nX = 1\n"
                     "Builder = Callable[[str, object], object]\n")
    assert _callback_aliases(tree) == ["ProgressFn"]
