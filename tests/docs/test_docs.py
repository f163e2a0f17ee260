"""README and docs/ as a front door and a reference (issue 40): sizes, links, no run history,
the generated CLI reference and performance page, and a short tour (test_doc_recipes.py runs it,
with every other shell block of the docs)."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_BYTES = 10_240
DOCS_MAX_BYTES = 281_000
"""the explorer round 3, the claims across seeds (now with the detected claims), the Python API, the
typed seams, the trained detector's example reading, the paper-size table, the identification
table (`bench atoms identify`), the third recordings with the pooled branch, and the third bank's
identification by training recordings each needed more"""
PAGE_MAX_BYTES = 30 * 1024


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def script(name: str):
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_test_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


# --- sizes and the first screen -----------------------------------------------------------------

def test_the_readme_fits_and_says_first_what_the_project_is():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < README_MAX_BYTES
    head = "\n".join(text.splitlines()[:5])
    for word in ("ReasonAudio", "Negation", "Order", "Overlap", "Duration", "Mix", "Qdrant", "learned",
                 "symbolic"):
        assert word in head, f"README's first five lines do not say {word!r}"
    first_screen = "\n".join(text.splitlines()[:24])
    assert "bash scripts/install.sh && .venv/bin/bench demo" in first_screen
    assert "bash scripts/install.sh test && .venv/bin/python -m pytest -q" in first_screen
    assert "docs/performance.md#install-main-job-and-tests" in first_screen  # size and time, generated


def test_docs_are_a_reference_of_bounded_size():
    sizes = {p.name: p.stat().st_size for p in pages()}
    assert sum(sizes.values()) < DOCS_MAX_BYTES, sizes
    assert [n for n, s in sizes.items() if s > PAGE_MAX_BYTES] == []


def test_every_docs_page_is_linked_from_the_readme():
    linked = {target.split("#")[0] for target in links(README.read_text(encoding="utf-8"))}
    assert [p.name for p in pages() if f"docs/{p.name}" not in linked] == []


# --- links ----------------------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """Text outside fenced code blocks and inline code spans."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def links(text: str) -> list[str]:
    return LINK.findall(prose(text))


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats -1, -2."""
    out: set[str] = set()
    body = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", body, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        name, n = slug, 1
        while name in out:
            name, n = f"{slug}-{n}", n + 1
        out.add(name)
    return out


def broken_links(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    out = []
    for target in links(text):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not checked offline
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            out.append(f"{doc.name}: {target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            out.append(f"{doc.name}: {target} (no such heading)")
    return out


def test_every_relative_link_and_anchor_exists():
    assert [b for doc in [README, *pages()] for b in broken_links(doc)] == []


def test_the_link_checker_sees_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "a.md").write_text("# A page\n\n## Some `code` here\n")
    doc = tmp_path / "b.md"
    doc.write_text("[ok](a.md#some-code-here) [bad](nope.md) [gone](a.md#no-heading) `[not](x.md)`\n"
                   "```\n[in code](y.md)\n```\n[self](#title)\n# Title\n")
    assert broken_links(doc) == ["b.md: nope.md (no such file)", "b.md: a.md#no-heading (no such heading)"]


# --- no run history ---------------------------------------------------------------------------------

HISTORY = [
    (r"\bin (?:two|three|four|five|six|several|\d+) (?:runs|passes|sittings)\b", "how many runs a figure took"),
    (r"\(was \S", "what a figure was before"),
    (r"\bwas \d+(?:\.\d+)?\b", "what a figure was before"),
    (r"\bload average\b", "how busy the machine was"),
    (r"\bidle machine\b", "how busy the machine was"),
    (r"\bother jobs\b", "how busy the machine was"),
    (r"\bre-?measured\b", "which figures were measured again"),
    (r"\b(?:this|last|previous|earlier|later|that) (?:round|session|sitting)s?\b", "which round of work"),
    (r"\bbefore this change\b", "what changed"),
    (r"\bas before\b", "what changed"),
    (r"\bthe task that wrote\b", "which round of work"),
    (r"\bgit show\b", "a pointer into history"),
    (r"\b20\d\d-\d\d-\d\d\b", "the date of a run"),
    (r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December) 20\d\d\b",
     "the date of a run"),
]
"""run-history phrases (case-insensitive) that no page may hold; history belongs in commit messages"""

GENERATED_DATES = {"performance.md"}
"""pages whose generated tables carry the date of each measurement (their one place)"""


def history(text: str, name: str = "") -> list[str]:
    found = []
    for line in text.splitlines():
        for pattern, why in HISTORY:
            if why == "the date of a run" and name in GENERATED_DATES and line.startswith("|"):
                continue
            m = re.search(pattern, line, flags=re.I)
            if m:
                found.append(f"{name}: {m.group(0)!r} ({why}): {line.strip()[:100]}")
    return found


def test_readme_and_docs_hold_no_run_history():
    assert [h for doc in [README, *pages()] for h in history(doc.read_text(encoding="utf-8"), doc.name)] == []


@pytest.mark.parametrize("bad", ["11 min 22 s and 11 min 57 s in two runs", "Acc@1 0.41 (was 0.380)",
                                 "at a load average of 14", "expect less on an idle machine",
                                 "not re-measured after the fix", "figures from this round",
                                 "as in the previous session", "slower before this change",
                                 "measured on 2025-03-14", "was 0.38 before", "in 4 runs"])
def test_the_history_check_finds_each_kind(bad):
    assert history(bad, "x.md")


def test_the_history_check_passes_definitions():
    assert history("Acc@1 is 1 if the top clip is relevant; a run file has 6 fields.\n"
                   "| row | 2026-01-02 |", "performance.md") == []


# --- generated pages --------------------------------------------------------------------------------

def test_the_cli_reference_is_the_typer_app(tmp_path, monkeypatch, capsys):
    mod = script("cli_reference")
    assert mod.main(["--check"]) == 0, capsys.readouterr().out
    text = mod.render()
    from typer.main import get_command

    from reasonaudio.cli import app

    for name in get_command(app).commands:
        assert f"`bench {name}`" in text
    assert "| `--clips` | int >= 1 | `10000` |" in text  # bench build's option, type with range, default
    stale = tmp_path / "cli.md"
    stale.write_text(text.replace("`10000`", "`20000`", 1), encoding="utf-8")
    monkeypatch.setattr(mod, "PAGE", stale)
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    assert mod.main(["--check"]) == 1


def test_the_performance_page_is_its_records(tmp_path, monkeypatch, capsys):
    mod = script("performance_page")
    assert mod.main(["--check"]) == 0, capsys.readouterr().out
    text = (DOCS / "performance.md").read_text(encoding="utf-8")
    for key in mod.record.COMMANDS:  # every benchmark command is on the page, measured or not
        assert f"`{mod.record.command_of(key)}`" in text
    assert {s for s, _ in mod.record.COMMANDS.values()} == set(mod.scripts())
    # structure, not timings: a record of another command, or a page edited by hand, fails
    results = tmp_path / "results"
    results.mkdir()
    for key in mod.record.COMMANDS:
        (results / f"{key}.json").write_text(mod.path_of(key).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(mod.record, "RESULTS", results)
    assert mod.problems() == []
    first = next(iter(mod.record.COMMANDS))
    (results / f"{first}.json").write_text(
        (results / f"{first}.json").read_text(encoding="utf-8").replace("benchmarks/", "benchmarks/other-"),
        encoding="utf-8")
    assert any(first in p for p in mod.problems())
    page = tmp_path / "performance.md"
    page.write_text(text.replace("| **not measured** |", "| 1.0 s |", 1) if "not measured" in text
                    else text + "edited\n", encoding="utf-8")
    monkeypatch.setattr(mod.record, "RESULTS", mod.ROOT / "benchmarks" / "results")
    monkeypatch.setattr(mod, "PAGE", page)
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    assert mod.main(["--check"]) == 1


# --- the tour (test_doc_recipes.py runs it) ----------------------------------------------------------

def tour() -> list[str]:
    """The command lines of the README's tour (its first fenced block after "## A short tour")."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## A short tour", 1)[1]
    block = re.search(r"```\w*\n(.*?)```", section, flags=re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def test_the_tour_is_short_and_uses_folders_the_main_job_makes():
    lines = tour()
    assert 3 <= len(lines) <= 10
    for line in lines:
        args = shlex.split(line, comments=True)
        assert args[0] == "bench", line
        paths = [a for a in args if a.startswith("data/")]
        assert all(p.startswith("data/demo/") for p in paths), line  # what `bench demo` writes
