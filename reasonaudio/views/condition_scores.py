"""Tables of scores per acoustic condition (``bench report``, ``bench eval --condition all``,
the main job's clean-vs-noisy table)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reasonaudio.evaluation.condition_scores import CONDITION_METRICS, ConditionScores, snr_order

_HEAD = {"acc@1": "Acc@1", "ndcg@10": "nDCG@10", "mc_acc": "MC"}


def _columns(scores: ConditionScores) -> list[str]:
    axis = snr_order(scores.conditions)
    return axis + [c for c in scores.conditions if c not in axis]


def conditions_table(scores: ConditionScores, title: str = "scores per condition") -> Table:
    """One row per retriever and metric, one column per condition (SNR ladder, clean, others)."""
    cols = _columns(scores)
    table = Table(title=Text(title), title_justify="left")
    table.add_column("retriever", justify="left")
    table.add_column("metric", justify="left")
    for c in cols:
        table.add_column(c, justify="right")
    for name in scores.retrievers:
        per = scores.values.get(name, {})
        for metric in CONDITION_METRICS:
            cells = [f"{per[c][metric]:.3f}" if c in per else "-" for c in cols]
            table.add_row(Text(name) if metric == CONDITION_METRICS[0] else "", _HEAD[metric], *cells)
    return table


def perception_table(scores: ConditionScores) -> Table | None:
    """Event and tagging F1 of each detected retriever per condition (perception apart from logic)."""
    if not scores.perception:
        return None
    cols = _columns(scores)
    table = Table(title=Text("perception per condition (event-based P / R / F1, tagging F1)"),
                  title_justify="left")
    table.add_column("detected", justify="left")
    table.add_column("measure", justify="left")
    for c in cols:
        table.add_column(c, justify="right")
    for name, per in sorted(scores.perception.items()):
        for i, (key, head) in enumerate((("events_precision", "event P"), ("events_recall", "event R"),
                                         ("events_f1", "event F1"), ("tagging_f1", "tagging F1"))):
            cells = [f"{per[c][key]:.3f}" if c in per else "-" for c in cols]
            table.add_row(Text(name) if i == 0 else "", head, *cells)
    return table


def print_condition_scores(console: Console, scores: ConditionScores,
                           title: str = "scores per condition") -> None:
    if scores is None:
        return
    console.print(conditions_table(scores, title))
    perception = perception_table(scores)
    if perception is not None:
        console.print(perception)
