"""Every ``python`` block of README.md and docs/*.md runs as printed, or its marker says why not:
each in a fresh folder of its own, as a script, offline, with this checkout on ``PYTHONPATH``
(docs/python.md's notebook-sized example builds, parses, evaluates and reads its table here).

A block that is not run carries the shell blocks' marker (test_doc_recipes.py) on the line before
its fence, ``<!-- not run: REASON -->``, with one of the same reasons and no fragment."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_doc_recipes import PAGES, REASONS, ROOT, fenced, marker_items, recipe_env

PYTHON_TAGS = ("python", "py")


def python_blocks():
    return [b for p in PAGES for b in fenced(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())
            if b.tag in PYTHON_TAGS]


RUN = [b for b in python_blocks() if b.marker is None]


def test_docs_python_md_has_a_block_that_runs():
    assert any(b.page == "docs/python.md" for b in RUN)


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.name)
def test_each_python_block_runs_as_printed(block, tmp_path):
    script = tmp_path / "block.py"
    script.write_text("\n".join(block.body) + "\n", encoding="utf-8")
    env = {**recipe_env(tmp_path), "PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{block.name} exited {done.returncode}:\n{done.stderr[-4000:]}"
    assert done.stdout.strip(), f"{block.name} printed nothing"
    if block.page == "docs/python.md":  # the API itself prints nothing: only the block's print()s
        assert done.stderr == "", f"{block.name} wrote to stderr:\n{done.stderr[-2000:]}"


def test_every_python_marker_names_a_known_reason():
    bad = [f"{b.name}: {reason!r}" + (f" ({fragment})" if fragment else "")
           for b in python_blocks() for reason, fragment in marker_items(b.marker)
           if reason not in REASONS or fragment is not None]
    assert bad == []
