"""What ``bench detect`` prints: label map, calibration, perception report, loss decomposition."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from reasonaudio.detect.event_metrics import (ONSET_COLLAR_MS, OFFSET_COLLAR_MS, OFFSET_COLLAR_RELATIVE,
                                              PerceptionReport)
from reasonaudio.experiments.detection import DetectRun

_COMPACT = dict(box=box.SIMPLE_HEAD, pad_edge=False)


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def print_label_map(console: Console, run: DetectRun, limit: int | None = None) -> None:
    lm = run.summary.label_map
    if lm.mode == "trained":  # a detector, not a map: say which model and what it heard
        tr = run.summary.training or {}
        heard = tr.get("heard", {})
        console.print(f"trained detector {escape(str(tr.get('model')))} (weights "
                      f"{str(tr.get('weights_sha256'))[:16]}, training seeds {tr.get('seeds')}); "
                      f"it heard {heard.get('heard_in_training', 0)} of the {heard.get('atoms', 0)} "
                      "atoms these clips use in training", highlight=False)
        return
    table = Table(title=f"label -> {run.summary.tagger} classes ({lm.mode})", **_COMPACT)
    for col in ("label", "classes", "source"):
        table.add_column(col, overflow="fold")
    rows = list(zip(lm.labels, lm.classes, lm.sources))
    for label, cls, source in rows[:limit]:
        table.add_row(escape(label), escape(" | ".join(lm.class_names[c] for c in cls)), source)
    console.print(table)
    if limit is not None and len(rows) > limit:
        console.print(f"... {len(rows) - limit} more labels (--show-map prints all)", highlight=False)


def print_detect_run(console: Console, run: DetectRun, worst: int = 10, show_map: bool = False) -> None:
    s = run.summary
    cal = s.calibration
    p = cal.params
    console.print(Text.assemble((s.name, "bold"), f" -> {s.collection}: {s.clips} clips, "
                                f"{s.detected_events} detected events ({s.true_events} true)"))
    if s.mode == "enrolled":
        console.print(Text("enrolled: signatures from the bank's own atoms; an optimistic "
                           "perception bound", style="yellow"))
    elif s.optimistic:
        console.print(Text("trained on builds of these very recordings (the enrolled split): it "
                           "heard the atoms the clips are mixed from", style="yellow"))
    f = s.frames
    console.print(Text(f"frames: {f['cached_rows']} clips from the ingest's cache, {f['tagged']} tagged "
                  f"now; hashes: {f['from_index']} from the ingest's index, {f['rendered']} rendered"))
    console.print(Text(f"calibration: build {cal.path} (seed {cal.seed}, {cal.clips} clips, corpus "
                  f"{cal.corpus_sha256[:12]}, clips digest {cal.clips_digest[:12]}); "
                  f"on {p.on:g} (default), {len(p.thresholds)} per-label thresholds, off_ratio "
                  f"{p.off_ratio:g}, gap {p.gap_ms} ms, min {p.min_ms} ms, policy {p.policy}; "
                  f"calibration event F1 {cal.objective.get('events_micro_f1', 0):.3f}"))
    if cal.choices:
        console.print(Text(_choices_line(cal.choices)))
    print_label_map(console, run, None if show_map else 8)
    rep = s.perception
    console.print(f"perception (collars: onset {ONSET_COLLAR_MS} ms, offset max({OFFSET_COLLAR_MS} "
                  f"ms, {OFFSET_COLLAR_RELATIVE:.0%} of length)): {_scores(rep)}", highlight=False)
    if s.event_point is not None:
        console.print(f"at the event operating point (calibration's step 2, not stored): "
                      f"{_scores(s.event_point)}", highlight=False)
    table = Table(title=f"worst {worst} labels (event F1)", **_COMPACT)
    for col in ("label", "true", "event P", "event R", "event F1", "tag P", "tag R", "tag F1"):
        table.add_column(col, justify="left" if col == "label" else "right")
    for label in rep.worst(worst):
        e, t = rep.events[label], rep.tagging[label]
        table.add_row(escape(label), str(e.tp + e.fn), _f(e.precision), _f(e.recall), _f(e.f1),
                      _f(t.precision), _f(t.recall), _f(t.f1))
    console.print(table)
    dec = Table(title="Acc@1: oracle (truth + logic) -> detected (perception + logic) -> best "
                      "embedding", **_COMPACT)
    for col in ("task", "oracle", "detected", "best embedding", "", "perception loss",
                "detected - embedding"):
        dec.add_column(col, justify="left" if col in ("task", "") else "right")
    for group, row in run.decomposition.items():
        dec.add_row(group, _f(row["oracle"]), _f(row["detected"]), _f(row["best_embedding_value"]),
                    escape(row["best_embedding"] or "-"), _f(row["perception_loss"]),
                    _f(row["detected_minus_embedding"]))
    console.print(dec)
    if not run.embedding_retrievers:
        console.print("no saved embedding results (bench eval -r two-stage:... first)", highlight=False)
    t = s.timings
    console.print(f"time: frames {t.get('frames_s', 0):.1f} s, detect {t.get('detect_s', 0):.1f} s, "
                  f"upsert {t.get('upsert_s', 0):.1f} s, calibration {t.get('calibration_s', 0):.1f} s, "
                  f"label map {t.get('label_map_s', 0):.1f} s", highlight=False)


def _choices_line(choices: dict[str, Any]) -> str:
    """Calibration's step 3 (``detect.calibrate_choices``) in one line."""
    if "skipped" in choices:
        return f"tuned for the calibration build's pairs: skipped ({choices['skipped']})"
    return (f"tuned for the calibration build's {choices['pairs']} pairs: thresholds capped at "
            f"{choices['threshold_cap']:g}, off_ratio {choices['off_ratio']:g}; multiple-choice "
            f"accuracy {choices['choices_mc_before']:.3f} -> {choices['choices_mc']:.3f}")


def _scores(rep: PerceptionReport) -> str:
    """A perception report's event and tagging scores in one line."""
    ev, tg = rep.total("events"), rep.total("tagging")
    return (f"events P {ev.precision:.3f} R {ev.recall:.3f} F1 {ev.f1:.3f} (macro F1 "
            f"{rep.macro_f1('events'):.3f}); tagging P {tg.precision:.3f} R {tg.recall:.3f} F1 {tg.f1:.3f}")
