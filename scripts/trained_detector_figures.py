"""The trained detector's figures in docs/trained-detector.md: saved once, rendered and checked.

    python scripts/trained_detector_figures.py --enrolled EVAL_DIR --unseen EVAL_DIR   # measure
    python scripts/trained_detector_figures.py --identify identify.json                 # measure
    python scripts/trained_detector_figures.py --identify FILE --identify-block NAME    # another bank
    python scripts/trained_detector_figures.py --check                                  # verify

With ``--enrolled``/``--unseen``, reads what `bench detect` and `bench eval` saved under each
evaluated build's ``results/`` and writes the figures to :data:`FIGURES` (committed, so a clean
clone checks the page without the builds): the build and the detector it was measured with,
perception per detection mode (event and tagging F1), Acc@1 and multiple choice per task of
``detected:yamnet-trained`` beside the oracle, ``detected:yamnet``, ``bag-of-sounds`` and the best
learned embedding, and the paired randomization test of the trained detector against
bag-of-sounds and that embedding (Holm-corrected over tasks). The unseen block also splits the
perception by what the evaluated atoms are (other recordings, or the unheard halves of heard
recordings: ``atoms/split.py``). With ``--identify``, it keeps what `bench atoms identify ...
--json` printed (how well each way of hearing names one unheard recording) as the block
``identify`` (or the block ``--identify-block`` names), with the other recordings by their
label's training recordings where the split holds more than one count. Then, and without
those options, it rewrites the page's blocks ``<!-- detector-figures:NAME -->`` ...
``<!-- /detector-figures:NAME -->`` from :data:`FIGURES`; ``--check`` rewrites nothing and
exits 1 when a block differs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reasonaudio.dataset.view import BenchmarkView

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGE = ROOT / "docs" / "trained-detector.md"
FIGURES = ROOT / "docs" / "trained-detector-figures.json"
BLOCK = re.compile(r"(<!-- detector-figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)"
                   r"(<!-- /detector-figures:(?P=name) -->)", re.S)
TRAINED = "detected:yamnet-trained"
SHOWN = ("epochs", "batch_clips", "lr", "hidden", "yamnet_dim", "overlap_weight")
"""the recipe fields a block names, with ``train.detector.AUGMENTATIONS`` (the card and the figures
record hold them all; an augmentation or prior left off is not in the recipe, so not named)"""


def _shown() -> tuple[str, ...]:
    from reasonaudio.train.detector import AUGMENTATIONS

    return (*SHOWN, *AUGMENTATIONS)


def _f3(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


# --- measure: saved results -> the figures record ----------------------------------------

def _best_embedding(results: Any) -> str | None:
    from reasonaudio.models.names import is_embedding

    learned = [r for r in results.runs.values() if is_embedding(r.name)]
    return max(learned, key=lambda r: (r.overall.get("acc@1", 0.0), r.name)).name if learned else None


def _setup(bench: BenchmarkView, detection: dict[str, Any]) -> dict[str, Any]:
    from reasonaudio.evaluation.results import fingerprint

    tr = detection.get("training") or {}
    heard = tr.get("heard") or {}
    cal = detection["calibration"]
    return {"seed": bench.seed, "clips": len(bench.clips), "queries": len(bench.queries),
            "bank": (bench.manifest.get("parameters") or {}).get("atoms"),
            "classes": bench.manifest.get("bank", {}).get("n_classes"),
            "digest": fingerprint(bench)[:12], "weights": str(tr.get("weights_sha256"))[:16],
            "training_seeds": list(tr.get("seeds", [])), "calibration_seed": cal["seed"],
            "calibration_clips": cal["clips"], "calibration_step3": _step3(cal.get("choices")),
            "heard": heard.get("heard_in_training", 0),
            "atoms": heard.get("atoms", 0), "recipe": (detection.get("label_map") or {}).get("recipe")}


def _step3(choices: dict[str, Any] | None) -> str | None:
    """Calibration's step 3 (``detect.calibrate_choices``) as the setup line names it."""
    if not choices or "skipped" in choices:
        return None
    return (f"thresholds capped at {choices['threshold_cap']:g}, off_ratio {choices['off_ratio']:g} "
            f"by its {choices['pairs']} pairs")


def _perception(detections: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per detection (its collection's events), and one more at the event operating
    point where calibration's step 3 moved the collection's parameters away from it."""
    out = []
    for name, d in sorted(detections.items()):
        for key, at in (("perception", None), ("perception_event_point", "event operating point")):
            if key not in d:
                continue
            p = d[key]
            ev = p["events_micro"]
            out.append({"name": name, "at": at, "precision": ev["precision"], "recall": ev["recall"],
                        "f1": ev["f1"], "macro_f1": p["events_macro_f1"],
                        "tagging_f1": p["tagging_micro"]["f1"]})
    return out


def _by_kind(bench: BenchmarkView, detection: dict[str, Any]) -> list[dict[str, Any]]:
    """Event and tagging F1 (micro) over the labels whose evaluated atoms are whole other
    recordings, and over those that are unheard halves of heard recordings."""
    from reasonaudio.atoms.split import atom_kind

    kind_of = {a.label: atom_kind(a.atom_id) for a in bench.atoms}
    per = detection["perception"]["per_label"]
    out = []
    for kind in ("recording", "excerpt"):
        labels = [lab for lab in per if kind_of.get(lab) == kind]
        tot = {k: [sum(per[lab][w][k] for lab in labels) for w in ("events", "tagging")]
               for k in ("tp", "fp", "fn")}
        f1 = [2 * tot["tp"][i] / max(1, 2 * tot["tp"][i] + tot["fp"][i] + tot["fn"][i]) for i in (0, 1)]
        out.append({"kind": kind, "labels": len(labels), "event_f1": f1[0], "tagging_f1": f1[1]})
    return out


def _tests(results: Any, others: list[str], tasks: list[str]) -> list[dict[str, Any]]:
    from reasonaudio.evaluation.compare import compare

    out = []
    for name in others:
        c = compare(results.runs[TRAINED], results.runs[name], ("acc@1",))
        cells = {}
        for g in [*tasks, "overall"]:
            t = c.tests.get((g, "acc@1"))
            if t is not None:
                cells[g] = {"diff": t.diff, "p_holm": c.p_holm[(g, "acc@1")],
                            "significant": c.significant(g, "acc@1")}
        out.append({"baseline": name, "cells": cells})
    return out


def measure(data: Path, unseen: bool = False) -> dict[str, Any]:
    """The figures of one evaluated build (module docstring)."""
    from reasonaudio.evaluation.report import saved_detections
    from reasonaudio.evaluation.results import load_results
    from reasonaudio.dataset.benchmark import tasks_present
    from reasonaudio.dataset.view import load_benchmark

    bench = load_benchmark(data)
    results = load_results(bench)
    detections = {d["name"]: d for d in saved_detections(bench)}
    if TRAINED not in detections or TRAINED not in results.runs:
        raise SystemExit(f"{data}: run `bench detect --data {data} --mode trained --model-path DIR` first")
    tasks = list(tasks_present(list(results.runs[TRAINED].per_task)))
    best = _best_embedding(results)
    names = [n for n in ("oracle", TRAINED, "detected:yamnet", "bag-of-sounds", best)
             if n and n in results.runs]
    rows = [{"name": n, "acc": {t: results.runs[n].per_task.get(t, {}).get("acc@1") for t in tasks},
             "mc": {t: results.runs[n].per_task.get(t, {}).get("mc_acc") for t in tasks},
             "acc_all": results.runs[n].overall.get("acc@1"), "mc_all": results.runs[n].overall.get("mc_acc")}
            for n in names]
    return {"setup": _setup(bench, detections[TRAINED]), "perception": _perception(detections),
            "by_kind": _by_kind(bench, detections[TRAINED]) if unseen else None, "tasks": tasks,
            "retrieval": rows,
            "tests": _tests(results, [n for n in ("bag-of-sounds", best) if n and n in results.runs], tasks)}


def read_identify(path: Path) -> dict[str, Any]:
    """`bench atoms identify --json`'s output; exits 2 naming the file when it is not one."""
    try:
        fig = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fig, why = None, f"cannot read it as JSON ({type(exc).__name__})"
    else:
        why = "not the output of `bench atoms identify --json`"
    if not isinstance(fig, dict) or not str(fig.get("format", "")).startswith("reasonaudio-identify/"):
        print(f"error: --identify {path}: {why}", file=sys.stderr)
        raise SystemExit(2)
    return {k: v for k, v in fig.items() if k != "per_atom"}  # the block shows the table only


# --- render: the figures record -> the page's lines ----------------------------------------

def _setup_lines(s: dict[str, Any]) -> list[str]:
    return [f"Measured on: seed {s['seed']}, {s['clips']:,} clips, {s['queries']} queries, bank "
            f"`{s['bank']}` ({s['classes']} classes), benchmark digest {s['digest']}; detector "
            f"`{s['weights']}` trained on the builds of seeds "
            f"{', '.join(str(x) for x in s['training_seeds'])}; calibration build seed "
            f"{s['calibration_seed']} ({s['calibration_clips']} clips"
            + (f"; {s['calibration_step3']}" if s.get("calibration_step3") else "")
            + "); the detector heard "
            f"{s['heard']} of the {s['atoms']} atoms these clips use; recipe: "
            + ", ".join(f"{k} {s['recipe'][k]}" for k in _shown() if k in (s.get("recipe") or {}))
            + ".", ""]


def _perception_lines(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| detection | event P | event R | event F1 | macro F1 | tagging F1 |",
           "|---|---|---|---|---|---|"]
    out += [f"| `{r['name']}`" + (f" ({r['at']})" if r.get("at") else "")
            + f" | {r['precision']:.3f} | {r['recall']:.3f} | **{r['f1']:.3f}** | "
            f"{r['macro_f1']:.3f} | {r['tagging_f1']:.3f} |" for r in rows]
    return out + [""]


def _by_kind_lines(rows: list[dict[str, Any]]) -> list[str]:
    what = {"recording": "other recordings", "excerpt": "unheard halves of heard recordings"}
    out = ["| evaluated atoms | labels | event F1 | tagging F1 |", "|---|---|---|---|"]
    out += [f"| {what[r['kind']]} | {r['labels']} | {r['event_f1']:.3f} | {r['tagging_f1']:.3f} |"
            for r in rows if r["labels"]]
    return out + [""]


def _retrieval_lines(rows: list[dict[str, Any]], tasks: list[str]) -> list[str]:
    out = ["| retriever (Acc@1 / MC) | " + " | ".join(tasks) + " | **all** |",
           "|---|" + "---|" * (len(tasks) + 1)]
    for r in rows:
        cells = [f"{_f3(r['acc'][t])} / {_f3(r['mc'][t])}" for t in tasks]
        total = f"**{_f3(r['acc_all'])}** / {_f3(r['mc_all'])}"
        out.append(f"| `{r['name']}` | " + " | ".join(cells) + f" | {total} |")
    return out + [""]


def _test_lines(rows: list[dict[str, Any]], tasks: list[str]) -> list[str]:
    out = [f"Acc@1 of `{TRAINED}` minus each baseline (paired randomization test, Holm over the "
           "tasks; * = p < 0.05):", "", "| baseline | " + " | ".join(tasks) + " | all |",
           "|---|" + "---|" * (len(tasks) + 1)]
    for r in rows:
        cells = [r["cells"].get(g) for g in [*tasks, "overall"]]
        out.append(f"| `{r['baseline']}` | " + " | ".join(
            "-" if c is None else f"{c['diff']:+.3f}{'*' if c['significant'] else ''}" for c in cells) + " |")
    return out


IDENTIFY_COMMAND = "bench atoms identify {bank}{model} --json > identify.json"
FIRST_IDENTIFY_MODEL = "data/det/detector-unseen"
"""the model folder of the ``identify`` block, measured before identify recorded the folder it
was given"""


def render_identify(fig: dict[str, Any]) -> list[str]:
    """The ``identify`` block: `bench atoms identify --json`'s table, one row per identifier in
    the order it printed them, and which names the most other recordings."""
    p, n, d = fig["parent"], fig["atoms"], fig.get("detector")
    head = (f"Measured on: `{fig['spec']}` ({fig['labels']} labels; {n.get('recording', 0)} other "
            f"recordings, {n.get('excerpt', 0)} unheard excerpts) of bank `{p['spec']}` ({p['labels']} "
            f"labels, {p['atoms']} recordings, fingerprint {p['fingerprint']}), runtime lock "
            f"{fig['versions']['runtime']}")
    if d:
        head += (f"; detector `{d['weights_sha256']}` trained on the builds of seeds "
                 f"{', '.join(str(x) for x in d['training_seeds'])}, which played "
                 f"{d['heard_test_atoms']} of these atoms")
    model = "" if not d else f" --model-path {d.get('model_path', FIRST_IDENTIFY_MODEL)}"
    lines = [head + f"; command: `{IDENTIFY_COMMAND.format(bank=p['spec'], model=model)}`.", "",
             "| identifier | knows | other recordings: top-1 / top-5 / named / refused | unheard "
             "excerpts: top-1 / top-5 / named / refused |", "|---|---|---|---|"]
    for name in dict.fromkeys(r["identifier"] for r in fig["rows"]):
        cells = []
        for kind in ("recording", "excerpt"):
            row = next((r for r in fig["rows"] if r["identifier"] == name and r["kind"] == kind), None)
            cells.append("-" if row is None else
                         " / ".join(f"{row[k]:.3f}" for k in ("top1", "top5", "named", "refused")))
        lines.append(f"| `{name}` | {fig['identifiers'][name]['learns_from']} | " + " | ".join(cells) + " |")
    other = [r for r in fig["rows"] if r["kind"] == "recording"]
    if other:
        best = max(other, key=lambda r: (r["top1"], r["identifier"]))
        lines += ["", f"Highest top-1 on other recordings: `{best['identifier']}` ({best['top1']:.3f})."]
    return lines + _by_training_lines(fig.get("by_training") or [])


def _by_training_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The other recordings' top-1 / named by their label's recordings in the train part (none
    where the split holds one count only)."""
    from reasonaudio.detect.identify import training_table

    columns, table = training_table(rows)
    if len(columns) < 2:
        return []
    out = ["", "Other recordings by their label's recordings in the train part (top-1 / named):", "",
           "| identifier | " + " | ".join(f"{c} ({n} labels)" for c, n in columns) + " |",
           "|---|" + "---|" * len(columns)]
    out += [f"| `{name}` | " + " | ".join("-" if c is None else f"{c['top1']:.3f} / {c['named']:.3f}"
                                          for c in cells) + " |" for name, cells in table]
    return out


def render(fig: dict[str, Any]) -> list[str]:
    if fig.get("format", "").startswith("reasonaudio-identify/"):
        return render_identify(fig)
    lines = _setup_lines(fig["setup"]) + _perception_lines(fig["perception"])
    if fig.get("by_kind"):
        lines += _by_kind_lines(fig["by_kind"])
    return lines + _retrieval_lines(fig["retrieval"], fig["tasks"]) + _test_lines(fig["tests"], fig["tasks"])


def rewrite(text: str, figures: dict[str, Any]) -> str:
    def sub(m: re.Match) -> str:
        name = m.group("name")
        if name not in figures:
            raise SystemExit(f"error: {PAGE.name}: no saved figures for block {name!r} in {FIGURES.name}")
        return m.group(1) + "\n".join(render(figures[name])) + "\n" + m.group(4)
    return BLOCK.sub(sub, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--enrolled", type=Path, help="the enrolled split's evaluated build (measure)")
    ap.add_argument("--unseen", type=Path, help="the unseen split's evaluated build (measure)")
    ap.add_argument("--identify", type=Path, help="what `bench atoms identify ... --json` printed (measure)")
    ap.add_argument("--identify-block", default="identify", metavar="NAME",
                    help="the page's block that --identify fills (default: identify)")
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 on a difference")
    args = ap.parse_args(argv)
    given = {"enrolled": args.enrolled, "unseen": args.unseen}
    if any(given.values()) or args.identify:
        if args.check:
            ap.error("--check reads the saved figures; give no build")
        figures = json.loads(FIGURES.read_text(encoding="utf-8")) if FIGURES.is_file() else {}
        figures.update({name: measure(d, name == "unseen") for name, d in given.items() if d})
        if args.identify:
            blocks = {m.group("name") for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))}
            if args.identify_block not in blocks:
                print(f"error: --identify-block {args.identify_block}: {PAGE.name} has no block "
                      f"<!-- detector-figures:{args.identify_block} -->", file=sys.stderr)
                return 2
            figures[args.identify_block] = read_identify(args.identify)
        FIGURES.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not FIGURES.is_file():
        print(f"error: {FIGURES.name}: not found (measure with --enrolled DIR)", file=sys.stderr)
        return 2
    text = PAGE.read_text(encoding="utf-8")
    new = rewrite(text, json.loads(FIGURES.read_text(encoding="utf-8")))
    if new == text:
        return 0
    if args.check:
        print(f"{PAGE.name}: differs from {FIGURES.name}")
        return 1
    PAGE.write_text(new, encoding="utf-8")
    print(f"{PAGE.name}: rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
