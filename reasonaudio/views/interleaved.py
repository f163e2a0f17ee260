"""What the command line shows about interleaved queries (issue 28): what a build or
``bench interleave`` wrote, how an example was resolved, and the named vs by-example table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text


def print_interleave_summary(console: Console, root: Path, manifest: dict[str, Any]) -> None:
    """One line: how many queries have an interleaved variant, per task, and how many examples
    come from the same recording as the clips (the optimistic case)."""
    rec = manifest.get("interleaved")
    if not rec:
        return
    tasks = ", ".join(f"{t} {n}" for t, n in rec["queries_by_task"].items())
    skipped = f", {rec['skipped']} left named (no slot reads back exactly)" if rec["skipped"] else ""
    console.print(Text.assemble(("interleaved", "green"),
                                f" {root}: {rec['queries']} queries with a sound given by example "
                                f"({tasks}); {rec['same_recording']} examples from the same "
                                f"recording as the clips{skipped}"))
