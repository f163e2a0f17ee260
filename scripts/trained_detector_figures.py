"""Print the trained detector's figures for docs/trained-detector.md as generated blocks.

    python scripts/trained_detector_figures.py --enrolled EVAL_DIR [--unseen EVAL_DIR]

Reads what `bench detect` and `bench eval` saved under each benchmark's ``results/``
(``detect-yamnet-*.json``, the retrievers' results) and prints, between the page's markers
``<!-- figures:trained-detector-enrolled -->`` and ``<!-- figures:trained-detector-unseen -->``:
the build and the detector it was measured with, perception per detection mode (event and
tagging F1), Acc@1 and multiple choice per task for ``detected:yamnet-trained`` beside the
oracle, ``detected:yamnet``, ``bag-of-sounds`` and the best learned embedding, and the paired
randomization test of the trained detector against each baseline (Holm-corrected over tasks).
The unseen block also splits the perception by what the evaluated atoms are (other recordings,
or the unheard halves of heard recordings: ``ingest/atoms/split.py``). Nothing is computed
here that the saved results do not hold; ``scripts/doc_figures.py`` can call :func:`block`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TRAINED = "detected:yamnet-trained"
BASELINES = ("oracle", "detected:yamnet", "bag-of-sounds")


def _f3(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _best_embedding(results: Any) -> str | None:
    from reasonaudio.models.names import is_embedding

    learned = [r for r in results.runs.values() if is_embedding(r.name)]
    return max(learned, key=lambda r: (r.overall.get("acc@1", 0.0), r.name)).name if learned else None


def _header(bench: Any, detection: dict[str, Any]) -> list[str]:
    from reasonaudio.bench.results import fingerprint

    bank = bench.manifest.get("bank", {})
    tr = detection.get("training", {})
    heard = tr.get("heard", {})
    cal = detection["calibration"]
    return [f"Measured on: seed {bench.seed}, {len(bench.clips):,} clips, {len(bench.queries)} "
            f"queries; bank `{(bench.manifest.get('parameters') or {}).get('atoms')}` "
            f"({bank.get('n_classes')} classes); benchmark digest {fingerprint(bench)[:12]};",
            f"detector weights `{str(tr.get('weights_sha256'))[:16]}`, training builds seeds "
            f"{', '.join(str(s) for s in tr.get('seeds', []))}; calibration build seed {cal['seed']} "
            f"({cal['clips']} clips); the detector heard {heard.get('heard_in_training', 0)} of the "
            f"{heard.get('atoms', 0)} atoms these clips use.", ""]


def _perception(detections: dict[str, dict[str, Any]]) -> list[str]:
    rows = ["| detection | event P | event R | event F1 | event macro F1 | tagging F1 |",
            "|---|---|---|---|---|---|"]
    for name, d in sorted(detections.items()):
        p = d["perception"]
        ev = p["events_micro"]
        rows.append(f"| `{name}` | {ev['precision']:.3f} | {ev['recall']:.3f} | **{ev['f1']:.3f}** | "
                    f"{p['events_macro_f1']:.3f} | {p['tagging_micro']['f1']:.3f} |")
    return rows + [""]


def _retrieval(results: Any, names: list[str], tasks: list[str]) -> list[str]:
    rows = ["| retriever | " + " | ".join(f"{t} Acc@1" for t in tasks) + " | **Acc@1** | "
            + " | ".join(f"{t} MC" for t in tasks) + " | MC |",
            "|---|" + "---|" * (2 * len(tasks) + 2)]
    for name in names:
        r = results.runs[name]
        rows.append(f"| `{name}` | " + " | ".join(_f3(r.per_task.get(t, {}).get("acc@1")) for t in tasks)
                    + f" | **{_f3(r.overall.get('acc@1'))}** | "
                    + " | ".join(_f3(r.per_task.get(t, {}).get("mc_acc")) for t in tasks)
                    + f" | {_f3(r.overall.get('mc_acc'))} |")
    return rows + [""]


def _tests(results: Any, others: list[str], tasks: list[str]) -> list[str]:
    from reasonaudio.bench.compare import compare

    rows = [f"`{TRAINED}` minus each baseline, Acc@1 (paired randomization test, Holm-corrected "
            "over the tasks; * = significant at 0.05):", "",
            "| baseline | " + " | ".join(tasks) + " | overall |", "|---|" + "---|" * (len(tasks) + 1)]
    for name in others:
        c = compare(results.runs[TRAINED], results.runs[name], ("acc@1",))
        cells = []
        for g in [*tasks, "overall"]:
            t = c.tests.get((g, "acc@1"))
            mark = "*" if t is not None and c.significant(g, "acc@1") else ""
            cells.append("-" if t is None else f"{t.diff:+.3f}{mark} (p {c.p_holm[(g, 'acc@1')]:.4f})")
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return rows


def _by_kind(bench: Any, detection: dict[str, Any]) -> list[str]:
    """Unseen split: event F1 over the labels whose evaluated atoms are whole other recordings,
    and over those that are unheard halves of heard recordings."""
    from reasonaudio.ingest.atoms.split import atom_kind

    kind_of = {a.label: atom_kind(a.atom_id) for a in bench.atoms}
    per = detection["perception"]["per_label"]
    rows = ["| evaluated atoms | labels | event F1 (micro) | tagging F1 (micro) |", "|---|---|---|---|"]
    for kind in ("recording", "excerpt"):
        labels = [lab for lab in per if kind_of.get(lab) == kind]
        tot = {k: [sum(per[lab][w][k] for lab in labels) for w in ("events", "tagging")]
               for k in ("tp", "fp", "fn")}
        f1 = [2 * tot["tp"][i] / max(1, 2 * tot["tp"][i] + tot["fp"][i] + tot["fn"][i]) for i in (0, 1)]
        what = "other recordings" if kind == "recording" else "unheard halves of heard recordings"
        rows.append(f"| {what} | {len(labels)} | {f1[0]:.3f} | {f1[1]:.3f} |")
    return rows + [""]


def block(data: Path, unseen: bool = False) -> list[str]:
    """The figures of one evaluated build (module docstring)."""
    from reasonaudio.bench.report import saved_detections
    from reasonaudio.bench.results import load_results
    from reasonaudio.dataset.benchmark import load_benchmark, tasks_present

    bench = load_benchmark(data)
    results = load_results(bench)
    detections = {d["name"]: d for d in saved_detections(bench)}
    if TRAINED not in detections or TRAINED not in results.runs:
        raise SystemExit(f"{data}: run `bench detect --data {data} --mode trained --model-path DIR` first")
    tasks = list(tasks_present(list(results.runs[TRAINED].per_task)))
    best = _best_embedding(results)
    names = [n for n in ("oracle", TRAINED, "detected:yamnet", "bag-of-sounds", best)
             if n and n in results.runs]
    rows = _header(bench, detections[TRAINED]) + _perception(detections)
    if unseen:
        rows += _by_kind(bench, detections[TRAINED])
    rows += _retrieval(results, names, tasks)
    return rows + _tests(results, [n for n in ("bag-of-sounds", best) if n and n in results.runs], tasks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--enrolled", type=Path, required=True, help="the enrolled split's evaluated build")
    ap.add_argument("--unseen", type=Path, default=None, help="the unseen split's evaluated build")
    args = ap.parse_args()
    for name, data, unseen in (("enrolled", args.enrolled, False), ("unseen", args.unseen, True)):
        if data is None:
            continue
        print(f"<!-- figures:trained-detector-{name} -->")
        print("\n".join(block(data, unseen)))
        print(f"<!-- /figures:trained-detector-{name} -->\n")


if __name__ == "__main__":
    main()
