"""Retriever names in table cells: lines break where the name grammar allows (after ``:``, ``+``
and ``,``, before ``@`` and spaces; ``models/names.py``, :func:`name_spans`), never mid-word,
whatever width the table gives the column."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from reasonaudio.models.names import longest_piece, name_spans


class NameCell:
    """A styled name (``Text``) that wraps at the name grammar's break points: its minimum width
    is its widest unbreakable piece, its maximum the whole name on one line."""

    def __init__(self, text: Text | str) -> None:
        self.text = text if isinstance(text, Text) else Text(text)

    @property
    def min_width(self) -> int:
        return longest_piece(self.text.plain)

    def lines(self, width: int) -> list[Text]:
        return [self.text[a:b] for a, b in name_spans(self.text.plain, width)]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(self.min_width, options.max_width),
                           min(self.text.cell_len, options.max_width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        out = Text("\n").join(self.lines(options.max_width))
        out.no_wrap = True  # already broken where the grammar allows
        yield out


def widest_piece(cells: Iterable[NameCell]) -> int:
    """The narrowest column that shows every name without a mid-word break."""
    return max((c.min_width for c in cells), default=0)


NAME_ROOM = 20
"""the fewest columns a name gets beside its figures; with less, names go on lines of their own"""


def room_for_names(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> int:
    """Columns left for a first, name column beside figure columns (``headers``, cells as
    markup) in a table without vertical rules: each figure column takes its width, a space of
    padding each side and one between columns; the edges and the name's padding two more."""
    return width - sum(w + 3 for w in figure_widths(headers, rows)) - 2


def figure_widths(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each figure column's width: its widest header line or cell line."""
    def cell_width(markup: str) -> int:
        return max((Text.from_markup(line).cell_len for line in markup.split("\n")), default=0)

    return [max([cell_width(h), *(cell_width(r[i]) for r in rows)]) for i, h in enumerate(headers)]


def stacked_table(headers: Sequence[str], rows: Sequence[tuple[NameCell, Sequence[Sequence[str]]]],
                  left: int = 0, **table_args: Any) -> Group:
    """A table whose names sit on lines of their own, each above its rows of figures, over the
    whole width (for a terminal too narrow to put them beside the figures); the figure columns
    keep one width from row to row, so they line up under one header. The first ``left``
    columns are text, set to the left."""
    widths = figure_widths(headers, [cells for _, block in rows for cells in block])

    def grid(header: bool) -> Table:
        table = Table(**{**table_args, "pad_edge": False, "show_edge": False, "show_header": header,
                         **({} if header else {"title": None, "caption": None})})
        for i, (h, w) in enumerate(zip(headers, widths)):
            table.add_column(h, width=w, justify="left" if i < left else "right", no_wrap=True)
        return table

    parts: list[Any] = [grid(True)]
    for name, block in rows:
        figures = grid(False)
        for cells in block:
            figures.add_row(*cells)
        parts += [name, figures]
    return Group(*parts)
