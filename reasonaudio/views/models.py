"""`bench models`: the registry as a rich table (or JSON), with whether each model can load here.

The default is compact: one line per model (name, paradigm, dimension, whether it loads here and
why not), so it fits an 80-column terminal. ``bench models NAME`` shows every field of one model,
``--wide`` the table of every field of every model.

Nothing is downloaded or imported heavily: availability checks modules with ``find_spec`` and
weights in the local caches only.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reasonaudio.models.captioners import captioner_names
from reasonaudio.models.names import EXAMPLE as TWO_STAGE_EXAMPLE
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.registry import PARADIGMS, RECORDS, availability, get_record

TITLE = "Models (bench ingest --model NAME)"


def _dimension(r: ModelRecord) -> str:
    return str(r.dimension) if r.dimension else "- (text)"


def _ordered() -> list[ModelRecord]:
    order = {p: i for i, p in enumerate(PARADIGMS)}
    return sorted(RECORDS, key=lambda r: order.get(r.paradigm, len(order)))


def _loads(ok: bool, why: str) -> str:
    return f"[green]yes[/] ({escape(why)})" if ok else f"[red]no[/] ({escape(why)})"


def _rate(r: ModelRecord) -> str:
    return f"{r.sample_rate // 1000:g} kHz" if r.sample_rate else "-"


def _window(r: ModelRecord) -> str:
    return f"{r.window_seconds:g} s / {r.hop_seconds:g} s" if r.window_seconds else "-"


def _gpu(r: ModelRecord) -> str:
    return f"~{r.gpu_memory_gb:g} GB" if r.gpu_memory_gb else "-"


def models_table(width: int = 80) -> Table:
    """One line per model: name, paradigm, dimension, loads here (and why not), the reason cut
    with an ellipsis so the line fits ``width`` columns (the first three are never cut)."""
    records = _ordered()
    table = Table(title=TITLE, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    fixed = 0
    for header, values, justify in (("name", [r.name for r in records], "left"),
                                    ("paradigm", [r.paradigm for r in records], "left"),
                                    ("dim", [_dimension(r) for r in records], "right")):
        w = max(len(header), *map(len, values))
        fixed += w
        table.add_column(header, no_wrap=True, justify=justify, width=w)  # type: ignore[arg-type]
    # every width fixed: with an unbounded no_wrap column rich squeezes the others to nothing
    # beside the values: 2 of padding per column less the 2 outer ones (pad_edge off), 3 rules
    # between the 4 columns and 2 at the edges (box.SIMPLE_HEAD draws them as spaces)
    table.add_column("loads here", no_wrap=True, overflow="ellipsis",
                     width=max(16, width - fixed - (2 * 4 - 2) - 3 - 2))
    for r in records:
        table.add_row(r.name, r.paradigm, _dimension(r), _loads(*availability(r)))
    return table


def wide_table() -> Table:
    """``--wide``: every field of every model (wide: made for a wide terminal or a pipe)."""
    table = Table(title=TITLE, title_justify="left", show_lines=False)
    table.add_column("name", no_wrap=True)
    for col in ("paradigm", "kind", "hub id / source", "revision", "rate", "window / hop",
                "pooling", "dim", "GPU mem", "licence", "extra", "loads here"):
        table.add_column(col, overflow="fold")
    for r in _ordered():
        table.add_row(r.name, r.paradigm, r.kind, r.hub_id, r.revision, _rate(r), _window(r),
                      r.pooling, _dimension(r), _gpu(r), r.licence, r.extra or "-",
                      _loads(*availability(r)))
    return table


def model_detail(name: str) -> Table:
    """``bench models NAME``: every field of one model, one per line (long values wrap)."""
    r = get_record(name)
    ok, why = availability(r)
    table = Table(title=f"Model {escape(r.name)}", title_justify="left", show_header=False,
                  box=box.SIMPLE, pad_edge=False)
    table.add_column("field", style="cyan", no_wrap=True)
    table.add_column("value", overflow="fold", ratio=1)
    fields = r.to_json()
    shown = {"rate": _rate(r), "window / hop": _window(r), "GPU memory": _gpu(r),
             "loads here": _loads(ok, why)}
    for key, value in fields.items():
        if key in ("sample_rate", "window_seconds", "hop_seconds", "gpu_memory_gb"):
            continue
        if isinstance(value, (list, tuple)):
            value = "; ".join(map(str, value)) or "-"
        text = "-" if value in (None, "") else str(value)
        table.add_row(key, Text(text))
    for key, value in shown.items():
        table.add_row(key, value)
    return table


def _footer() -> Text:
    text_models = ", ".join(r.name for r in RECORDS if r.kind == "text")
    return Text(f"Two-stage pipelines: two-stage:CAPTIONER+EMBEDDER with CAPTIONER in "
                f"{', '.join(captioner_names())} and EMBEDDER a text model ({text_models}), "
                f"e.g. {TWO_STAGE_EXAMPLE}. GPU mem: estimates for bf16 at the default "
                "batch size (docs/models.md).")


def print_models(console: Console, name: str | None = None, wide: bool = False) -> None:
    """The compact table (default), one model's every field (``name``), or the wide table."""
    if name is not None:
        console.print(model_detail(name))
        return
    console.print(wide_table() if wide else models_table(console.width))
    if not wide:
        console.print(Text("bench models NAME: every field of one model (why it does not load "
                           "here, in full); --wide: every field of every model."), soft_wrap=False)
    console.print(_footer(), soft_wrap=False)
