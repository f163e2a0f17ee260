"""The fast tier (`pytest -m fast`, README's development section) stays fast by construction: a
module marked ``fast`` builds no benchmark, renders no audio, and runs no model, Ray or browser.
What it may do is a matter of what it calls, so the rule reads each module's source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

TESTS = Path(__file__).resolve().parents[1]
EXPENSIVE = {
    "a session build": r"\b(small|default|tiny)_bench_dir\b",
    "a benchmark build": r"\bbuild_benchmark\(|\[\s*\"build\"",
    "a browser": r"\bselenium\b|\bwebdriver\b",
    "Ray": r"\bimport ray\b|\bray\.init\b",
    "a model": r"\bYamnetTagger\b|\bSentenceTransformer\b|\bload_model\(|\bmodel_fixtures\b",
    "rendering": r"\brender_clip\(|\brender_benchmark\(",
    "the main job": r"\[\s*\"demo\"",
}


def fast_modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if p.name != Path(__file__).name
                  and re.search(r"^pytestmark\s*=.*pytest\.mark\.fast", p.read_text(), re.M))


def test_the_fast_tier_is_a_real_share_of_the_suite():
    assert len(fast_modules()) >= 25


@pytest.mark.parametrize("path", fast_modules(), ids=lambda p: p.name)
def test_a_fast_module_does_nothing_expensive(path):
    text = path.read_text()
    found = [what for what, pattern in EXPENSIVE.items() if re.search(pattern, text)]
    assert not found, f"{path.name} is marked fast but uses {', '.join(found)}"


def test_the_rule_sees_an_expensive_module():
    bad = 'pytestmark = pytest.mark.fast\ndef test(small_bench_dir):\n    pass\n'
    assert [w for w, p in EXPENSIVE.items() if re.search(p, bad)] == ["a session build"]
