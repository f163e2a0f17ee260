"""What ``bench train-detector`` prints: the model directory, its training builds, the figures."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reasonaudio.train.detector import DetectorTrainResult


def print_detector_summary(console: Console, result: DetectorTrainResult) -> None:
    card = result.card
    console.print(f"wrote {escape(str(result.out))} (weights sha256 {result.weights_sha256[:16]})",
                  highlight=False)
    builds = "; ".join(f"seed {b['seed']} ({b['counts'].get('clips', '?')} clips, bank "
                       f"{escape(str(b['atoms']))})" for b in card["training_builds"])
    console.print(f"training builds: {builds}", highlight=False)
    data = card["data"]
    console.print(f"{data['labels']} labels, {data['clips_train']} training clips "
                  f"({data['frames_train']:,} frames of 80 ms), {data['clips_val']} validation clips",
                  highlight=False)
    table = Table(title="training", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("epoch", "train loss", "validation frame F1"):
        table.add_column(col, justify="right")
    for r in card["validation"]:
        f1 = r["val_frame_f1"]
        table.add_row(str(r["epoch"]), f"{r['train_loss']:.5f}", "-" if f1 is None else f"{f1:.3f}")
    console.print(table)
    t = card["timings_s"]
    console.print(f"time: inputs {t.get('features_s', 0):.1f} s, training {t.get('train_s', 0):.1f} s "
                  f"({card['threads']} threads)", highlight=False)
