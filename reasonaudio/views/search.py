"""Why each hit does or does not satisfy the query: event timelines and per-constraint checks.

Used by ``bench search`` for every retriever (oracle, baselines, vector search): the checks
come from the judge's semantics (``semantics.evaluate``), not from the retriever, so a wrong
hit of a learned retriever shows which constraint it breaks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from reasonaudio.logic import Node, conjuncts, describe, labels, to_json
from reasonaudio.querylang.semantics import evaluate
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.retrievers.base import Hit
from reasonaudio.retrievers.one_query import ExamplesRead, NoConstraintChecks, SearchOutcome
from reasonaudio.views.interleaved import print_example_resolutions
from reasonaudio.views.parse import print_resolutions

YES = "[green]✓[/]"
NO = "[red]✗[/]"
LABEL_WIDTH = 16
MAX_LABEL_WIDTH = 26


def bar(onset: float, offset: float, duration: float, width: int) -> str:
    """``width`` cells over the clip; a cell is filled when the event covers any part of it."""
    if duration <= 0:
        return "·" * width
    cells = []
    for i in range(width):
        lo, hi = duration * i / width, duration * (i + 1) / width
        cells.append("█" if onset < hi and offset > lo else "·")
    return "".join(cells)


def timeline(clip: Clip, width: int = 24, mentioned: Iterable[str] = (),
             times: bool = True, label_width: int = LABEL_WIDTH) -> Text:
    """One line per event in onset order: label, bar over the clip, onset-offset in seconds.

    Sounds the query mentions are bold; the others are dimmed.
    """
    mentioned = set(mentioned)
    out = Text()
    for i, e in enumerate(sorted(clip.events, key=lambda e: (e.onset, e.label))):
        if i:
            out.append("\n")
        lw = label_width
        name = e.label if len(e.label) <= lw else e.label[:lw - 1] + "…"
        style = "bold" if e.label in mentioned else "dim"
        out.append(f"{name:<{lw}} ", style=style)
        out.append(bar(e.onset, e.offset, clip.duration, width),
                   style="cyan" if e.label in mentioned else "dim")
        if times:
            out.append(f" {e.onset:5.2f}-{e.offset:5.2f}s", style="dim")
    return out


@dataclass(frozen=True)
class QueryTruth:
    """What the benchmark knows about one of its queries' hits (``bench search QUERY-ID``)."""

    query_id: str
    relevant: frozenset[str]
    """the query's relevant clips (its qrels)"""
    hard_negative: str | None
    """the planted hard negative (choices.jsonl), if the query has one"""

    def mark(self, clip_id: str) -> Text:
        if clip_id in self.relevant:
            return Text("relevant", style="green")
        if clip_id == self.hard_negative:
            return Text("hard neg.", style="red")
        return Text("-", style="dim")

    def summary(self, hits: Sequence[Hit]) -> Text:
        """``first relevant clip at rank 3 of 10`` (or none in the top k), and the hard
        negative's rank, for the line under the table."""
        ids = [h.clip_id for h in hits]
        first = next((i for i, c in enumerate(ids, 1) if c in self.relevant), None)
        n = len(self.relevant)
        out = Text()
        out.append(f"{self.query_id}: ", style="bold")
        if first is None:
            out.append(f"no relevant clip in the top {len(ids)}", style="yellow")
        else:
            out.append(f"first relevant clip at rank {first}")
        out.append(f" ({n} relevant clip{'s' if n != 1 else ''} in the benchmark, "
                   f"{sum(c in self.relevant for c in ids)} in these hits)")
        if self.hard_negative is not None:
            where = (f"at rank {ids.index(self.hard_negative) + 1}" if self.hard_negative in ids
                     else f"not in the top {len(ids)}")
            out.append(f"; hard negative {self.hard_negative} {where}")
        return out


def query_truth(bench: BenchmarkView, query_id: str) -> QueryTruth | None:
    """The qrels and hard negative of ``query_id``, or None when it is not a benchmark query."""
    if query_id not in bench.query_by_id:
        return None
    negative = next((c.negative for c in bench.choices if c.query_id == query_id), None)
    return QueryTruth(query_id, frozenset(bench.qrels.get(query_id, ())), negative)


def checks(logic: Node, clip: Clip) -> list[bool]:
    """Whether the clip satisfies each top-level constraint of ``logic`` (``logic.conjuncts``)."""
    return [evaluate(c, clip.events) for c in conjuncts(logic)]


def hits_table(bench: BenchmarkView, hits: Sequence[Hit], logic: Node | None, *,
               title: str | None = None, width: int = 24, times: bool = True,
               label_width: int = LABEL_WIDTH, truth: QueryTruth | None = None) -> Table:
    """Rank, clip, (for a benchmark query: relevant or hard negative), score, timeline, one ✓/✗
    column per constraint (numbered as in :func:`constraint_legend`) and, for several
    constraints, one for the whole query."""
    table = Table(title=Text(title) if title is not None else None, show_lines=True,
                  title_justify="left")
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("clip", no_wrap=True)
    if truth is not None:
        table.add_column("truth", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True, min_width=5)
    table.add_column("events over the clip", no_wrap=True, overflow="ellipsis")
    parts = conjuncts(logic) if logic is not None else ()
    for i, _ in enumerate(parts, 1):
        table.add_column(f"C{i}", justify="center", no_wrap=True, min_width=2)
    if len(parts) > 1:
        table.add_column("all", justify="center", no_wrap=True, min_width=3)
    mentioned = labels(logic) if logic is not None else ()
    for rank_, hit in enumerate(hits, 1):
        clip = bench.clip_by_id.get(hit.clip_id)
        mark = [truth.mark(hit.clip_id)] if truth is not None else []
        if clip is None:
            table.add_row(str(rank_), Text(hit.clip_id), *mark, f"{hit.score:.3g}",
                          Text("not in the corpus", "red"))
            continue
        row: list[Any] = [str(rank_), Text.assemble(clip.id, (f"\n{clip.mode}\n{clip.duration:.2f} s", "dim")),
                          *mark, f"{hit.score:.3g}", timeline(clip, width, mentioned, times, label_width)]
        if logic is not None:
            marks = checks(logic, clip)
            row += [YES if ok else NO for ok in marks]
            if len(parts) > 1:
                row.append(YES if all(marks) else NO)
        table.add_row(*row)
    return table


def constraint_legend(logic: Node) -> Text:
    """``C1 has(dog barking)   C2 !has(siren)``: what each check column of the table tests."""
    out = Text()
    for i, part in enumerate(conjuncts(logic), 1):
        if i > 1:
            out.append("\n")
        out.append(f"  C{i}  ", style="bold")
        out.append(describe(part))
    return out


def search_json(logic: Node | None, hits: Sequence[Hit]) -> dict[str, Any]:
    """The ``--json`` form of a search: ``{"logic": ..., "hits": [{"id", "score"}, ...]}``."""
    return {"logic": to_json(logic) if logic is not None else None,
            "hits": [{"id": h.clip_id, "score": float(h.score)} for h in hits]}


def label_width(bench: BenchmarkView, hits: Sequence[Hit]) -> int:
    """Room for the longest label among the hits' events (16 to 26 characters)."""
    longest = max((len(e.label) for h in hits if h.clip_id in bench.clip_by_id
                   for e in bench.clip_by_id[h.clip_id].events), default=LABEL_WIDTH)
    return max(LABEL_WIDTH, min(MAX_LABEL_WIDTH, longest))


TRUTH_WIDTH = 12
"""the truth column of a benchmark query's hits ("hard neg." and its rules)"""


def bar_width(console_width: int, logic: Node | None,
              label_w: int = LABEL_WIDTH, truth: bool = False) -> tuple[int, bool]:
    """Timeline cells that fit beside the other columns (8 to 30), and whether the event times
    fit too (they go first on a narrow terminal)."""
    n = len(conjuncts(logic)) if logic is not None else 0
    checks_w = 5 * (n + (1 if n > 1 else 0))
    fixed = 5 + 13 + 8 + (label_w + 1) + 3 + checks_w + 2 + (TRUTH_WIDTH if truth else 0)
    if console_width - fixed - 13 >= 8:
        return min(30, console_width - fixed - 13), True
    return max(8, min(30, console_width - fixed)), False


def render_search(bench: BenchmarkView, text: str, logic: Node | None, hits: Sequence[Hit],
                  retriever: str, k: int, width: int = 100, truth: QueryTruth | None = None) -> Group:
    """Everything ``bench search`` prints: the query, its logic, then the hits table; for a
    benchmark query (``truth``) each hit marked relevant or hard negative, and the rank of the
    first relevant clip under the table."""
    head = Text()
    head.append("query  ", style="bold")
    head.append(text)
    head.append("\nlogic  ", style="bold")
    head.append(describe(logic) if logic is not None else "(not parsed: no constraint checks)")
    parts: list[Any] = [head]
    if logic is not None:
        parts.append(constraint_legend(logic))
    if not hits:
        return Group(*parts, Text(f"{retriever}: no clip matches", style="yellow"),
                     *([truth.summary(hits)] if truth is not None else []))
    title = f"{retriever}: {len(hits)} hit{'s' if len(hits) != 1 else ''} (k={k})"
    lw = label_width(bench, hits)
    cells, times = bar_width(width, logic, lw, truth is not None)
    if cells < 16 and lw > LABEL_WIDTH:  # narrow terminal: shorter labels before fewer cells
        lw = LABEL_WIDTH
        cells, times = bar_width(width, logic, lw, truth is not None)
    return Group(*parts, hits_table(bench, hits, logic, title=title, width=cells, times=times,
                                    label_width=lw, truth=truth),
                 *([truth.summary(hits)] if truth is not None else []))


def print_search(console: Console, *args: Any, **kwargs: Any) -> None:
    """:func:`render_search` sized to the console."""
    console.print(render_search(*args, width=console.width, **kwargs))


def print_captions(console: Console, hits: Sequence[Hit], captions: dict[str, str]) -> None:
    """What a two-stage retriever's captioner wrote for each hit (plain text, never markup)."""
    for i, hit in enumerate(hits, 1):
        if hit.clip_id in captions:
            console.print(Text.assemble((f"{i:>3}", "bold"), f" {hit.clip_id} caption: {captions[hit.clip_id]}"),
                          highlight=False)


def search_events(console: Console, err_console: Console, as_json: bool) -> Callable[[object], None]:
    """The receiver of ``search_one``'s events: the examples as heard (not with ``--json``), and a
    note where the text did not parse, each printed as it happens."""
    def receive(event: object) -> None:
        if isinstance(event, ExamplesRead) and not as_json:
            print_example_resolutions(console, event.readings, event.notes)
        elif isinstance(event, NoConstraintChecks):
            err_console.print(Text.assemble(("note: ", "yellow"), f"no constraint checks: {event.reason}"))
    return receive


def print_search_outcome(console: Console, bench: BenchmarkView, outcome: SearchOutcome, retriever: str, k: int,
                         truth: QueryTruth | None = None) -> None:
    """``bench search``: the label resolutions, the hits, their captions."""
    if outcome.parsed is not None:
        print_resolutions(console, outcome.parsed)
    print_search(console, bench, outcome.text, outcome.logic, outcome.hits, retriever, k, truth=truth)
    print_captions(console, outcome.hits, outcome.captions)
