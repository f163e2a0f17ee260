"""Rich printing for `bench train`: one progress bar per phase (loss, in-batch accuracy, ETA),
a line per validated epoch, and a summary table. The trainer itself only emits hooks events."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from reasonaudio.progress import Hooks
from reasonaudio.train.card import event_figures_text, perception_text
from reasonaudio.views.progress import notifier

if TYPE_CHECKING:
    from reasonaudio.train.trainer import TrainResult


@contextlib.contextmanager
def train_progress(console: Console) -> Iterator[Hooks]:
    """Hooks for :func:`reasonaudio.train.trainer.train_model` drawing its ``TrainStatus`` events
    as rich bars (one per phase, with loss and accuracy) and a line per validated epoch."""
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[figures]}"), TextColumn("ETA"),
                        TimeRemainingColumn(), TimeElapsedColumn(), console=console)
    tasks: dict[str, Any] = {}

    def update(status: object) -> None:
        if not hasattr(status, "phase"):  # another kind of event: not the trainer's
            return
        phase = status.phase
        if phase == "validate":
            if status.val is not None:
                v = status.val
                progress.console.print(
                    f"epoch {status.epoch}: train loss {status.loss:.4f}, in-batch acc "
                    f"{status.acc:.3f} | validation acc@1 {v['acc@1']:.3f}, mc clip "
                    f"{v['mc_clip']:.3f}, mc text {v['mc_text']:.3f}", highlight=False)
            return
        if phase not in tasks:
            tasks[phase] = progress.add_task(phase, total=max(status.total, 1), figures="")
        figures = ""
        if status.loss is not None:
            figures = f"epoch {status.epoch} loss {status.loss:.3f} acc {status.acc:.2f}"
        progress.update(tasks[phase], completed=status.done, total=max(status.total, 1),
                        figures=figures)

    with progress:
        yield Hooks(on_event=update, on_notify=notifier(progress.console))  # e.g. stale work folders removed


def print_train_summary(console: Console, result: TrainResult) -> None:
    card = result.card
    table = Table(title=f"bench train -> {result.out}", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    best = next((r for r in result.history if r["epoch"] == result.best_epoch), {})
    rows = [
        ("weights sha256", result.weights_sha256[:16] + "..."),
        ("training build", f"seed {card['training_build']['seed']}, manifest "
                           f"{card['training_build']['manifest_sha256'][:12]}..."),
        ("examples (train / val)", f"{result.data_stats['examples']['train']:,} / "
                                   f"{result.data_stats['examples']['val']:,}"),
        ("hard negatives", "yes" if card["recipe"]["hard_negatives"] else "no"),
        ("perception stage", perception_text(card)),
        ("presence weight", f"{card['recipe']['presence_weight']:g}"),
        ("event figures", event_figures_text(card)),
        ("epochs run (best)", f"{result.epochs_run} ({result.best_epoch})"),
        ("steps", f"{result.steps:,}"),
        ("validation acc@1 / mc clip / mc text",
         f"{best.get('val_acc@1', 0):.3f} / {best.get('val_mc_clip', 0):.3f} / "
         f"{best.get('val_mc_text', 0):.3f}"),
    ]
    rows += [(f"time: {k[:-2].replace('_', ' ')}", f"{v:.1f} s") for k, v in result.timings.items()]
    for what, value in rows:
        table.add_row(what, value)
    console.print(table)
    console.print(f"model card {result.out / 'README.md'}, loss curve {result.out / 'loss_curve.png'}",
                  highlight=False, soft_wrap=True)
