"""`bench models`: the registry as a rich table, with whether each model can load here.

Nothing is downloaded or imported heavily: availability checks modules with ``find_spec`` and
weights in the local caches only.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reasonaudio.models.captioners import CAPTIONERS
from reasonaudio.models.names import EXAMPLE as TWO_STAGE_EXAMPLE
from reasonaudio.models.registry import RECORDS, availability


def models_table() -> Table:
    table = Table(title="Models (bench ingest --model NAME)", show_lines=False)
    for col in ("name", "kind", "towers", "hub id / source", "rate", "window / hop", "pooling",
                "dim", "licence", "extra", "loads here"):
        table.add_column(col, overflow="fold")
    for r in RECORDS:
        ok, why = availability(r)
        window = f"{r.window_seconds:g} s / {r.hop_seconds:g} s" if r.window_seconds else "-"
        table.add_row(r.name, r.kind, "+".join(r.towers), r.hub_id,
                      f"{r.sample_rate // 1000:g} kHz" if r.sample_rate else "-", window, r.pooling,
                      str(r.dimension), r.licence, r.extra or "-",
                      f"[green]yes[/] ({escape(why)})" if ok else f"[red]no[/] ({escape(why)})")
    return table


def print_models(console: Console) -> None:
    console.print(models_table())
    text_models = ", ".join(r.name for r in RECORDS if r.kind == "text")
    console.print(Text(f"Two-stage pipelines: two-stage:CAPTIONER+EMBEDDER with CAPTIONER in "
                       f"{', '.join(CAPTIONERS)} and EMBEDDER a text model ({text_models}), "
                       f"e.g. {TWO_STAGE_EXAMPLE}."))
