"""`bench models`: the registry as a rich table (or JSON), with whether each model can load here.

Nothing is downloaded or imported heavily: availability checks modules with ``find_spec`` and
weights in the local caches only.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reasonaudio.models.registry import PARADIGMS, RECORDS, availability


def _dimension(r: Any) -> str:
    return str(r.dimension) if r.dimension else "- (text)"


def models_json() -> list[dict[str, Any]]:
    """Every record as a plain object, plus ``loads_here`` / ``why`` (what ``--json`` prints)."""
    out = []
    for r in RECORDS:
        ok, why = availability(r)
        out.append({**r.to_json(), "loads_here": ok, "why": why})
    return out


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
    try:
        from reasonaudio.ingest.captions import captioner_names

        captioners = ", ".join(captioner_names())
    except ImportError:  # pragma: no cover
        captioners = "oracle-caption, yamnet-caption"
    texts = ", ".join(r.name for r in RECORDS if r.kind == "text")
    console.print(f"Two-stage pipelines: two-stage:CAPTIONER+EMBEDDER with CAPTIONER in "
                  f"{captioners} and EMBEDDER a text model ({texts}), e.g. "
                  "two-stage:oracle-caption+minilm. GPU mem: estimates for bf16 at the default "
                  "batch size (docs/models.md).", highlight=False)
