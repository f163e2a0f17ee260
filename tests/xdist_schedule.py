"""How pytest-xdist shares the suite among its workers (pyproject's addopts run it on every core).

A work unit is one test module, so a module's fixtures are built once, on one worker; modules
whose ``pytestmark`` names the same ``xdist_group`` are one unit (the Ray modules: two local Rays
never share the machine). Workers take the units in collection order, which conftest sets under
xdist: grouped modules first (the longest unit starts at once), the fast tier's modules last
(cheap by construction, they fill the end).

pytest-xdist's own ``--dist loadgroup`` reads the mark from a suffix it writes into each test's
node id, which pytest 9.2's structured node ids no longer take (pytest-xdist issue 1386: the
groups are silently ignored); the controller here never sees the tests, only their ids, so the
group is read from the module's source, as ``test_fast_tier`` reads the fast mark.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GROUP = re.compile(r"^pytestmark\s*=.*\bpytest\.mark\.xdist_group\(\"([\w.-]+)\"\)", re.M)
"""a module-wide group: ``pytestmark = pytest.mark.xdist_group("NAME")`` (or a list opening
with it)"""


def module_group(path: Path) -> str | None:
    """The ``xdist_group`` a module's ``pytestmark`` names, or None."""
    try:
        found = GROUP.search(path.read_text(encoding="utf-8"))
    except OSError:
        return None
    return found.group(1) if found else None


def unit_rank(item: pytest.Item) -> int:
    """Where a test's module goes in the order the workers take units: 0 a grouped module, 2 a
    module of the fast tier, 1 the rest."""
    if item.get_closest_marker("xdist_group") is not None:
        return 0
    return 2 if item.get_closest_marker("fast") is not None else 1


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (addopts) is scheduled here; another ``--dist`` is xdist's own."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """xdist's scope scheduling with a module (or its group) as the scope, units taken in
        collection order."""

        def __init__(self, config, log=None) -> None:
            super().__init__(config, log)
            self.groups: dict[str, str] = {}

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module not in self.groups:
                self.groups[module] = module_group(Path(config.rootpath) / module) or module
            return self.groups[module]

    config.option.loadscopereorder = False  # collection order: conftest's, not the count of tests
    return ModuleScheduling(config, log)
