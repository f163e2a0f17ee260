"""The public API (``reasonaudio/__init__.py``, docs/python.md): ``__all__`` names only what
exists, each documented; ``import reasonaudio`` loads none of it (and never torch) until a name
is used; the docs page's table names every function."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import reasonaudio
from reasonaudio import api

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]


def test_all_names_only_what_exists_and_each_is_documented():
    assert len(reasonaudio.__all__) == len(set(reasonaudio.__all__))
    assert set(reasonaudio.__all__) == set(api.__all__) | {"__version__"}
    for name in api.__all__:
        value = getattr(reasonaudio, name)
        assert value is getattr(api, name)
        if callable(value) and not isinstance(value, type):
            assert inspect.getdoc(value), f"reasonaudio.{name} has no docstring"
    assert set(reasonaudio.__all__) <= set(dir(reasonaudio))
    assert reasonaudio.__doc__ and "docs/python.md" in reasonaudio.__doc__


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        reasonaudio.no_such_thing  # noqa: B018
    from reasonaudio import errors  # submodules still import as submodules

    assert errors.ReasonAudioError


def test_import_is_cheap_and_never_loads_torch():
    probe = ("import sys, reasonaudio as ra\n"
             "heavy = ('torch', 'transformers', 'scipy', 'qdrant_client', 'reasonaudio.api')\n"
             "print(sorted(m for m in heavy if m in sys.modules))\n"
             "ra.parse, ra.load, ra.scores\n"
             "print('torch' in sys.modules, 'reasonaudio.api' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "False True"]


def test_the_python_page_names_every_function():
    page = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    functions = [n for n in api.__all__ if inspect.isfunction(getattr(api, n))]
    assert [n for n in functions if f"`{n}(" not in page] == []
