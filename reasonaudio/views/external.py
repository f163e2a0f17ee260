"""What ``bench eval --run`` says about each run file: missing queries, ties, cuts."""

from __future__ import annotations

from typing import Sequence

from rich.console import Console
from rich.text import Text

from reasonaudio.evaluation.external import ExternalRun
from reasonaudio.evaluation.run_files import TIE_RULE


def print_run_notes(console: Console, runs: Sequence[ExternalRun]) -> None:
    """One line per run file, plus one warning per thing worth knowing (each said once)."""
    for ext in runs:
        f, name = ext.file, ext.result.name
        console.print(Text(f"{name}: {f.rows:,} rows for {len(f.scores)} queries from {f.path} "
                           f"({f.format})"))
        if f.missing_queries:
            console.print(Text.assemble(("warning: ", "yellow"),
                                        f"{name}: {len(f.missing_queries)} of the benchmark's queries "
                                        f"are not in the run file and score 0 (first: "
                                        f"{f.missing_queries[0]})"))
        if f.tied_queries:
            console.print(Text(f"note: {name}: {len(f.tied_queries)} queries have tied scores; ties are "
                               f"broken by the testbed's rule ({TIE_RULE}), not by the file's rank "
                               f"column (first: {f.tied_queries[0]})"))
        if ext.cut_queries:
            console.print(Text(f"note: {name}: {ext.cut_queries} queries list more than "
                               f"{ext.result.depth} clips; rank metrics use the top {ext.result.depth} "
                               "(-k), multiple choice every row"))
