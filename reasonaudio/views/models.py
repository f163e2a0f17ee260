"""`bench models`: the registry as a rich table (or JSON), with whether each model can load here.

Nothing is downloaded or imported heavily: availability checks modules with ``find_spec`` and
weights in the local caches only.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reasonaudio.models.captioners import captioner_names
from reasonaudio.models.names import EXAMPLE as TWO_STAGE_EXAMPLE
from reasonaudio.models.registry import PARADIGMS, RECORDS, availability


def _dimension(r: Any) -> str:
    return str(r.dimension) if r.dimension else "- (text)"


def models_table() -> Table:
    table = Table(title="Models (bench ingest --model NAME)", show_lines=False)
    table.add_column("name", no_wrap=True)
    for col in ("paradigm", "kind", "hub id / source", "revision", "rate", "window / hop",
                "pooling", "dim", "GPU mem", "licence", "extra", "loads here"):
        table.add_column(col, overflow="fold")
    order = {p: i for i, p in enumerate(PARADIGMS)}
    for r in sorted(RECORDS, key=lambda r: order.get(r.paradigm, len(order))):
        ok, why = availability(r)
        window = f"{r.window_seconds:g} s / {r.hop_seconds:g} s" if r.window_seconds else "-"
        gpu = f"~{r.gpu_memory_gb:g} GB" if r.gpu_memory_gb else "-"
        table.add_row(r.name, r.paradigm, r.kind, r.hub_id, r.revision,
                      f"{r.sample_rate // 1000:g} kHz" if r.sample_rate else "-", window, r.pooling,
                      _dimension(r), gpu, r.licence, r.extra or "-",
                      f"[green]yes[/] ({escape(why)})" if ok else f"[red]no[/] ({escape(why)})")
    return table


def print_models(console: Console) -> None:
    console.print(models_table())
    text_models = ", ".join(r.name for r in RECORDS if r.kind == "text")
    console.print(Text(f"Two-stage pipelines: two-stage:CAPTIONER+EMBEDDER with CAPTIONER in "
                       f"{', '.join(captioner_names())} and EMBEDDER a text model ({text_models}), "
                       f"e.g. {TWO_STAGE_EXAMPLE}. GPU mem: estimates for bf16 at the default "
                       "batch size (docs/models.md)."))
