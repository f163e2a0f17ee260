"""The figures the docs quote, made from saved results (never typed by hand).

    python scripts/doc_figures.py --demo data/demo-full [--quick data/demo] [--experiment NAME=BENCH_DIR:MODELS_DIR ...]
        [--interleaved DIR] [--paper DIR] [--check]

Every block of figures in README.md and docs/*.md sits between

    <!-- figures:NAME -->
    ...
    <!-- /figures:NAME -->

and is rewritten here from the saved results of a `bench demo --full` folder (its benchmark's
``results/``: runs, per-query values, `bench detect` summaries; README.md's table from a `bench
demo` folder, the quick size the README's first command runs; the paper-size table from a `bench
demo` folder of :data:`PAPER_DEMO`'s size) and of training experiments
(``scripts/train_vs_test.py``'s benchmark copies). Each block starts with the benchmark it was
measured on (seed, clips, queries, the bank and its class count, the benchmark's content digest,
the lock's runtime digest) and the
commands that print it. ``--check`` rewrites nothing and exits 1 when a block differs from what
the saved results give. A demo built from a bank with fewer classes than the real-sound recipe
book is refused, so no doc quotes a smaller bank's figures.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from reasonaudio.dataset.view import BenchmarkView
    from reasonaudio.evaluation.by_example import ByExample

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from reasonaudio.evaluation.headline import (accuracy_table, f3, headline_names,  # noqa: E402
                                             markdown, ordered_names, spectrum_rung, tasks_asked)
from reasonaudio.demo_sizes import PAPER_ARGS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(<!-- figures:(?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- /figures:(?P=name) -->)",
                   re.S)



@dataclass
class Saved:
    """One benchmark's saved results, loaded once."""

    root: Path
    bench: BenchmarkView | None = None
    results: Any = None
    detections: dict[str, dict[str, Any]] = field(default_factory=dict)
    job_runs: tuple[str, ...] = ()
    """the retrievers the main job itself evaluated (its results.json), when it is a demo folder"""
    models: Path | None = None
    """a training experiment's model folder (``scripts/train_vs_test.py --out``)"""
    label: str = ""

    @classmethod
    def load(cls, root: Path) -> "Saved":
        from reasonaudio.evaluation.report import saved_detections
        from reasonaudio.evaluation.results import load_results
        from reasonaudio.dataset.view import load_benchmark
        from reasonaudio.fileio import read_json

        bench = load_benchmark(root)
        job = Path(root).parent / "results.json"
        runs = tuple(read_json(job).get("runs", {})) if job.is_file() else ()
        return cls(root, bench, load_results(bench), {d["name"]: d for d in saved_detections(bench)},
                   runs)

    def run(self, name: str) -> Any:
        if name not in self.results.runs:
            raise SystemExit(f"error: {self.root}: no saved results for {name!r}")
        return self.results.runs[name]

    def names(self, prefix: str = "") -> list[str]:
        return ordered_names(self.results, prefix)


def describe(saved: Saved) -> str:
    """The benchmark a block was measured on, in one sentence: what determines its figures, as
    digests that are the same for every user who builds it (the bank's content, the manifest
    without the install's versions, the lock's runtime section; never a test-only pin)."""
    from reasonaudio.dataset.benchmark import content_digest

    m = saved.bench.manifest
    p, bank = m.get("parameters", {}), m.get("bank", {})
    kind = "real-sound folder bank" if bank.get("kind") == "folder" else f"{bank.get('kind')} bank"
    return (f"seed {m['seed']}, {p.get('n_clips', len(saved.bench.clips)):,} clips, "
            f"{p.get('n_queries', len(saved.bench.queries)):,} queries; {kind}, "
            f"{bank.get('n_classes')} classes (bank fingerprint {str(bank.get('fingerprint'))[:12]}); "
            f"benchmark digest {content_digest(m)[:12]}, runtime packages {m.get('versions', {}).get('runtime', '-')}")


REFERENCE = ROOT / "reasonaudio" / "data" / "reference.json"
"""what the docs' figures were measured with (``bench doctor`` compares an install with it)"""


def reference_record(saved: Saved) -> str:
    from reasonaudio.dataset.benchmark import content_digest
    import json

    from reasonaudio.models import yamnet

    m = saved.bench.manifest
    bank = m.get("bank", {})
    record = {"benchmark": {"seed": m["seed"], "digest": content_digest(m)},
              "bank": {k: bank.get(k) for k in ("spec", "n_classes", "fingerprint")},
              "runtime": m.get("versions", {}).get("runtime"),
              "tagger": {"revision": yamnet.REVISION, "self_check": yamnet.SELF_CHECK_SHA256}}
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def tasks_of(saved: Saved) -> list[str]:
    """The tasks a block's columns name: the library's rule, the one `bench demo`'s table reads."""
    return tasks_asked(saved.results)


def acc_table(saved: Saved, names: list[str], mc: bool = True) -> list[str]:
    """Acc@1 per task (multiple choice in brackets), then overall Acc@1 / nDCG@10 / MC: the
    library's table (:mod:`reasonaudio.evaluation.headline`), the one `bench demo` prints."""
    return markdown(accuracy_table(saved.results, names, tasks_of(saved), mc))


def test_table(saved: Saved, a: str, b: str) -> list[str]:
    """Paired randomization tests of ``a`` against ``b`` per task and overall."""
    from reasonaudio.evaluation.compare import compare

    c = compare(saved.run(a), saved.run(b))
    rows = [f"`{a}` - `{b}`, paired randomization test ({c.n_permutations:,} permutations, seed "
            f"{c.seed}, two-sided; p as tested, * Holm-corrected p < 0.05 over the tasks):", "",
            "| metric | " + " | ".join(c.groups) + " |", "|---|" + "---|" * len(c.groups)]
    for m in c.metrics:
        cells = []
        for g in c.groups:
            t = c.tests[(g, m)]
            cells.append(f"{t.diff:+.3f}{'*' if c.significant(g, m) else ''} (p {t.p_value:.2g})")
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    return rows


def shell_word(name: str) -> str:
    """``name`` as one word of a printed command that a variable can carry: unquoted (quotes
    inside a variable stay part of the word), so it must need no quoting."""
    import shlex

    if shlex.quote(name) != name:
        raise SystemExit(f"error: retriever name {name!r} needs shell quoting; the recipe cannot carry it in $R")
    return name


def header(saved: Saved, commands: list[str]) -> list[str]:
    return [f"Measured on: {describe(saved)}. Printed by:", "", "```sh", *commands, "```", ""]


DEMO_COMMANDS = ["bash scripts/install.sh && .venv/bin/bench demo --full   # the full install: 201 classes",
                 "python scripts/doc_figures.py --demo data/demo-full --check"]
"""the docs' figures: the full-size demo (``bench demo --full``)"""
QUICK_COMMANDS = ["bash scripts/install.sh && .venv/bin/bench demo   # the full install: 201 classes",
                  "python scripts/doc_figures.py --quick data/demo --check"]
"""the README's table: what the README's first command prints (``bench demo``, the quick size)"""


PAPER_DEMO = " ".join([".venv/bin/bench", "demo", *PAPER_ARGS, "--out", "data/paper"])
"""the main job at the paper's size; its time is docs/performance.md's"""
PAPER_COMMANDS = [f"bash scripts/install.sh && {PAPER_DEMO}   # its time: docs/performance.md",
                  "python scripts/doc_figures.py --paper data/paper --check"]


def block_demo_results(ctx: "Context") -> list[str]:
    """README.md: the main job's table, from the quick demo the README's first command runs."""
    s = ctx.quick
    return header(s, QUICK_COMMANDS) + acc_table(s, headline_names(s.results, s.job_runs))


ENROLLED_COMMAND = ("bench detect --data data/demo-full/bench --tagger yamnet --mode enrolled "
                    "--calibration data/demo-full/calibration")
"""what saves ``detected:yamnet-enrolled`` (the demo saves ``detected:yamnet`` only): listed above a
detection table exactly when the table has that row"""


def block_detect_results(ctx: "Context") -> list[str]:
    s = ctx.demo
    names = s.names("detected:")  # the others are the main job's table (README)
    commands = ["bench demo --full"] + [ENROLLED_COMMAND for n in names if n == "detected:yamnet-enrolled"] + [
        "python scripts/doc_figures.py --demo data/demo-full --check"]
    out = header(s, commands) + acc_table(s, names) + [""]
    best = best_embedding(s)
    out += test_table(s, "detected:yamnet", best)
    return out


def best_embedding(s: Saved) -> str:
    from reasonaudio.experiments.detection import is_embedding

    names = [n for n in s.names() if is_embedding(n) and n != "random"]
    return max(names, key=lambda n: (s.run(n).overall["acc@1"], n))


def block_detect_decomposition(ctx: "Context") -> list[str]:
    from reasonaudio.experiments.detection import decomposition

    s = ctx.demo
    d = decomposition(s.results, "detected:yamnet")
    rows = ["| task | oracle | `detected:yamnet` | best embedding | which |", "|---|---|---|---|---|"]
    for group, row in d.items():
        rows.append(f"| {group} | {f3(row['oracle'])} | {f3(row['detected'])} | "
                    f"{f3(row['best_embedding_value'])} | `{row['best_embedding']}` |")
    return rows


def block_detect_perception(ctx: "Context") -> list[str]:
    rows = ["| mode | event P | event R | event F1 (micro) | event F1 (macro) | tag P | tag R | tag F1 |",
            "|---|---|---|---|---|---|---|---|"]
    for name, d in sorted(ctx.demo.detections.items()):
        p = d["perception"]
        ev, tg = p["events_micro"], p["tagging_micro"]
        rows.append(f"| {d['mode']} | {ev['precision']:.3f} | {ev['recall']:.3f} | {ev['f1']:.3f} | "
                    f"{p['events_macro_f1']:.3f} | {tg['precision']:.3f} | {tg['recall']:.3f} | "
                    f"{tg['f1']:.3f} |")
    rows += [""]
    for name, d in sorted(ctx.demo.detections.items()):
        c = d["calibration"]
        prm = {k: v for k, v in c["params"].items() if k not in ("thresholds",)}
        rows.append(f"- {d['mode']}: calibration build seed {c['seed']} ({c['clips']} clips, corpus "
                    f"`{c['corpus_sha256'][:12]}`), calibration event F1 "
                    f"{c['objective']['events_micro_f1']:.3f}, tagging F1 "
                    f"{c['objective']['tagging_micro_f1']:.3f}; chose "
                    + ", ".join(f"`{k}` {v}" for k, v in prm.items()))
    return rows


def block_perception_ladder(ctx: "Context") -> list[str]:
    """docs/detection.md: the perception ladder on the demo benchmark (default levels, seed 0),
    each detected retriever placed on it by its measured event F1, and the crossings."""
    from reasonaudio.experiments.perception_ladder import saved_baselines, sweep_perception

    s = ctx.demo
    tasks = tasks_of(s)
    ladder = sweep_perception(s.bench, seed=0, baselines=saved_baselines(s.bench))
    rows = header(s, [DEMO_COMMANDS[0],
                      ".venv/bin/bench sweep perception --data data/demo-full/bench --seed 0",
                      "python scripts/doc_figures.py --demo data/demo-full --check"])
    rows += ["| hearing | event F1 | tagging F1 | " + " | ".join(tasks) + " | overall Acc@1 | MC |",
             "|---|---|---|" + "---|" * (len(tasks) + 2)]
    for level in ladder.levels:
        prm = level["params"]
        what = (f"miss {prm['miss']:g}, false alarm {prm['false_alarm']:g}, jitter {prm['jitter_ms']:g} ms, "
                f"split {prm['merge_split']:g}")
        rows.append(f"| {what} | {level['event_f1']:.3f} | {level['tagging_f1']:.3f} | "
                    + " | ".join(f3(level["per_task"].get(t, {}).get("acc@1")) for t in tasks)
                    + f" | **{f3(level['overall'].get('acc@1'))}** | {f3(level['overall'].get('mc_acc'))} |")
    for name, d in sorted(s.detections.items()):
        if name in s.results.runs:
            r = s.run(name)
            ev, tg = d["perception"]["events_micro"]["f1"], d["perception"]["tagging_micro"]["f1"]
            rows.append(f"| `{name}` (measured) | {ev:.3f} | {tg:.3f} | "
                        + " | ".join(f3(r.per_task.get(t, {}).get("acc@1")) for t in tasks)
                        + f" | **{f3(r.overall.get('acc@1'))}** | {f3(r.overall.get('mc_acc'))} |")
    rows += ["", "Event F1 at which the ladder's Acc@1 reaches each baseline's (per task):", "",
             "| baseline | " + " | ".join(tasks) + " | overall |", "|---|" + "---|" * (len(tasks) + 1)]
    for name, per_task in sorted(ladder.crossings.items()):
        cells = []
        for t in [*tasks, "overall"]:
            c = per_task.get(t)
            if c is None:
                cells.append("-")
            elif c["event_f1"] is None:
                cells.append(f"never ({c['baseline_acc@1']:.3f})")
            else:
                mark = "<= " if c["reached"] == "at every level" else ""
                cells.append(f"{mark}{c['event_f1']:.3f} ({c['baseline_acc@1']:.3f})")
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return rows


def _labels(d: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    per = d["perception"]["per_label"]
    return sorted(per.items(), key=lambda kv: (-kv[1]["events"]["f1"], kv[0]))


def block_detect_labels(ctx: "Context") -> list[str]:
    """The labels heard worst and the labels the zero-shot map cannot tell apart (every label's
    row is in the saved detection summary, `bench detect --json`)."""
    d = ctx.demo.detections["detected:yamnet"]
    shared: dict[str, list[str]] = {}
    for lab, v in d["label_map"]["labels"].items():
        for c in v["classes"][:1]:
            shared.setdefault(c, []).append(lab)
    clashes = {c: labs for c, labs in shared.items() if len(labs) > 1}
    n_clash = sum(len(v) for v in clashes.values())
    worst = [lab for lab, v in sorted(d["perception"]["per_label"].items(),
                                      key=lambda kv: (kv[1]["events"]["f1"],
                                                      -(kv[1]["events"]["tp"] + kv[1]["events"]["fn"]),
                                                      kv[0]))[:10]]
    best = [lab for lab, _ in _labels(d)[:10]]
    return [f"Worst labels (event F1, most true events first): {', '.join(worst)}.", "",
            f"Best labels (event F1): {', '.join(best)}.", "",
            f"{n_clash} of the {len(d['label_map']['labels'])} labels share their first AudioSet class with another "
            f"label ({', '.join(f'`{c}` for {len(v)}' for c, v in sorted(clashes.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:8])}"
            f"{', ...' if len(clashes) > 8 else ''}): zero-shot, those labels cannot be told apart. Every "
            "label's row: `bench detect --json`, and `data/demo-full/bench/results/detect-yamnet-zero-shot.json`."]


TRAINED = ("trained:hard-negatives", "trained:in-batch-only")
BASELINES = ("two-stage:oracle-caption+minilm", "two-stage:yamnet-caption+minilm")


def card_of(exp: Saved, name: str) -> dict[str, Any]:
    from reasonaudio.fileio import read_json

    return read_json(exp.models / name.split(":", 1)[1] / "card.json")


def experiment_facts(exp: Saved) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The training build's description and the benchmark query texts among its captions."""
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.train.data import DataOptions, make_examples, query_text_overlap

    card = card_of(exp, TRAINED[0])
    build = card["training_build"]
    data = DataOptions(**card["recipe"]["data"])
    leaked = tuple(query_text_overlap(make_examples(load_benchmark(build["path"]), data), exp.bench))
    return card, leaked


def experiment_header(exp: Saved, card: dict[str, Any], leaked: tuple[str, ...]) -> list[str]:
    build, recipe = card["training_build"], card["recipe"]
    counts, bank = build.get("counts", {}), build.get("bank", {})
    held = recipe["data"]["hold_out_templates"]
    flag = "" if held else " --no-hold-out-templates"
    forms = recipe["data"].get("hold_out_formulations")
    flag += f" --hold-out-formulations {','.join(forms)}" if forms else ""
    variants = "" if TRAINED[1] in exp.results.runs else f" --variant {TRAINED[0]}"
    return [f"Training build: seed {build['seed']}, {counts.get('clips', '?'):,} clips, "
            f"{counts.get('queries', '?'):,} queries, {bank.get('n_classes')} classes (manifest "
            f"sha256 {build['manifest_sha256'][:12]}); recipe: {recipe['epochs']} epochs, "
            f"{recipe['data']['captions_per_clip']} captions per clip, "
            f"{'training paraphrases only (benchmark templates held out)' if held else 'benchmark templates and training paraphrases'}"
            f"{'' if forms is None else ', and the formulations but ' + ', '.join(forms)}"
            f"; benchmark query texts among the training captions: **{len(leaked)} of "
            f"{len(exp.bench.queries)}**.", ""] + header(exp, [
                "bench demo --full && bench build --atoms ~/.cache/reasonaudio/atoms/packages --seed "
                f"{build['seed']} --clips {counts.get('clips')} --queries {counts.get('queries')} --out TRAIN",
                f"cp -r data/demo-full/bench data/{exp.label}   # one copy per experiment: results are "
                "keyed by retriever name",
                f"python scripts/train_vs_test.py --train TRAIN --test data/{exp.label} --out MODELS"
                f"{flag}{variants} --baseline two-stage:yamnet-caption+minilm --baseline "
                "two-stage:oracle-caption+minilm",
                "python scripts/doc_figures.py --demo data/demo-full --experiment "
                f"{exp.label}=data/{exp.label}:MODELS --check"])


def block_train(ctx: "Context", label: str) -> list[str]:
    from reasonaudio.experiments.train_experiment import verbatim_split

    exp = ctx.experiments[label]
    card, leaked = experiment_facts(exp)
    names = [n for n in (*TRAINED, *BASELINES) if n in exp.results.runs]
    out = experiment_header(exp, card, leaked) + acc_table(exp, names) + [""]
    if TRAINED[1] in exp.results.runs:
        out += test_table(exp, TRAINED[0], TRAINED[1]) + [""]
    out += test_table(exp, TRAINED[0], BASELINES[0])
    if leaked:
        split = verbatim_split(exp.results, exp.bench, leaked)
        tasks = tasks_of(exp)
        out += ["", f"Acc@1 apart on the {len(leaked)} queries whose text is among the training "
                "captions and on the others (queries in brackets):", "",
                "| retriever | queries | " + " | ".join(tasks) + " | overall |",
                "|---|---|" + "---|" * (len(tasks) + 1)]
        for name in names:
            for group, cells in split[name].items():
                out.append(f"| `{name}` | {group} | " + " | ".join(
                    f"{f3(v)} ({n})" for v, n in (cells[t] for t in (*tasks, "overall"))) + " |")
    return out


def block_train_headline(ctx: "Context") -> list[str]:
    """One paragraph above docs/training.md's tables: the lead figure, and the other beside it."""
    from reasonaudio.evaluation.compare import compare

    lead = ctx.experiments["held-out-templates"]
    t, b = lead.run(TRAINED[0]), lead.run(BASELINES[0])
    p = compare(t, b).tests[("overall", "acc@1")].p_value
    line = (f"Trained with the benchmark's query templates held out (so none of the demo "
            f"benchmark's {len(lead.bench.queries)} query texts is a training caption), "
            f"`{TRAINED[0]}` reaches {f3(t.overall['acc@1'])} Acc@1 on the demo benchmark of the "
            f"full install against {f3(b.overall['acc@1'])} for `{BASELINES[0]}` (p {p:.2g}) and "
            f"{f3(lead.run(BASELINES[1]).overall['acc@1'])} for `{BASELINES[1]}`; its multiple "
            f"choice is {f3(t.overall.get('mc_acc'))}.")
    other = ctx.experiments.get("benchmark-templates")
    if other is not None:
        _, leaked = experiment_facts(other)
        o = other.run(TRAINED[0]).overall["acc@1"]
        line += (f" Trained on the benchmark's templates too it scores {f3(o)}, but then "
                 f"{len(leaked)} of the {len(other.bench.queries)} query texts occur verbatim "
                 "among its training captions.")
    return [line, "", f"Measured on: {describe(lead)}; the tables below have the training build and "
            "the commands that print them."]


def block_conditions(ctx: "Context") -> list[str]:
    """docs/conditions.md: retriever x condition (the SNR ladder, clean at the right), then the
    perception of each detected retriever per condition; only retrievers scored under a noisy
    condition."""
    from reasonaudio.evaluation.condition_scores import condition_scores, snr_order

    scores = condition_scores(ctx.demo.bench)
    order = snr_order(scores.conditions) + [c for c in scores.conditions
                                             if c not in snr_order(scores.conditions)]
    rows = [f"Measured on: {describe(ctx.demo)}.", "",
            "| retriever | metric | " + " | ".join(order) + " |", "|---|---|" + "---|" * len(order)]
    heads = {"acc@1": "Acc@1", "ndcg@10": "nDCG@10", "mc_acc": "MC"}
    for name in scores.retrievers:
        per = scores.values.get(name, {})
        if not any(c in per for c in order if c != "clean"):
            continue
        for i, m in enumerate(heads):
            cells = [f3(per[c][m]) if c in per else "-" for c in order]
            label = f"`{name}`" if i == 0 else ""
            rows.append(f"| {label} | {heads[m]} | " + " | ".join(cells) + " |")
    rows += ["", "| detected | measure | " + " | ".join(order) + " |", "|---|---|" + "---|" * len(order)]
    measures = {"events_precision": "event P", "events_recall": "event R", "events_f1": "event F1",
                "tagging_f1": "tagging F1"}
    for name, per in sorted(scores.perception.items()):
        if not any(c in per for c in order if c != "clean"):
            continue
        for i, (k, head) in enumerate(measures.items()):
            cells = [f3(per[c][k]) if c in per else "-" for c in order]
            label = f"`{name}`" if i == 0 else ""
            rows.append(f"| {label} | {head} | " + " | ".join(cells) + " |")
    return rows


def block_robustness(ctx: "Context") -> list[str]:
    """docs/evaluation.md: every retriever with saved results under every formulation."""
    from reasonaudio.evaluation.robustness import robustness
    from reasonaudio.views.robustness import robustness_markdown

    s = ctx.demo
    rob = robustness(s.bench)
    # the demo asks every formulation of its eval step's retrievers; the detect step's and the
    # spectrum rungs (and anything it did not run) are asked after
    extra = [r.name for r in rob.rows if r.name.startswith("detected:") or spectrum_rung(r.name)
             or r.name not in s.job_runs]
    commands = [DEMO_COMMANDS[0]] + ([
        "bench eval --data data/demo-full/bench --formulation all " + " ".join(f"-r '{n}'" for n in extra)]
        if extra else []) + ["bench report --data data/demo-full/bench", DEMO_COMMANDS[1]]
    return header(s, commands) + robustness_markdown(rob)


def block_train_formulations(ctx: "Context") -> list[str]:
    """docs/training.md: the trained model and the baselines under every formulation, those
    kept out of the training captions marked."""
    from reasonaudio.evaluation.robustness import robustness
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.tasks.base import FORMULATIONS
    from reasonaudio.tasks.formulation_records import default_formulation, is_default
    from reasonaudio.train.data import DataOptions, make_examples, query_text_overlap
    from reasonaudio.views.robustness import robustness_markdown

    exp = ctx.experiments["held-out-formulations"]
    card = card_of(exp, TRAINED[0])
    recipe = card["recipe"]["data"]
    forms = recipe.get("hold_out_formulations")
    data = DataOptions(**{**recipe, "hold_out_formulations": None if forms is None else tuple(forms)})
    examples = make_examples(load_benchmark(card["training_build"]["path"]), data)
    leaked = {f: query_text_overlap(examples, exp.bench if is_default(f) else exp.bench.with_view(f))
              for f in FORMULATIONS}
    names = [n for n in (*TRAINED, *BASELINES) if n in exp.results.runs]
    held = tuple(data.hold_out_formulations or ())
    return experiment_header(exp, card, tuple(leaked[default_formulation()])) + robustness_markdown(
        robustness(exp.bench, names, ("acc@1", "mc_acc")), held) + [
        "", "Benchmark texts among the training captions, per formulation: " + ", ".join(
            f"{f} {len(v)} of {len(exp.bench.formulations[f])}"
            for f, v in leaked.items()) + "."]


def block_spectrum(ctx: "Context") -> list[str]:
    """docs/qdrant.md: the spectrum `bench report` prints (``bench.report.spectrum``), with
    nDCG@10, multiple choice, each combined row's parameters and a hybrid's recall at N."""
    from reasonaudio.evaluation.report import spectrum

    s = ctx.demo
    spec = spectrum(s.results)
    if spec is None:
        raise SystemExit(f"error: {s.root}: no learned retriever among the saved results")
    tasks = tasks_of(s)
    rows = header(s, [DEMO_COMMANDS[0],
                      ".venv/bin/bench report --data data/demo-full/bench     # prints \"The spectrum\"",
                      "python scripts/doc_figures.py --demo data/demo-full --check"])
    rows += ["| rung | retriever | reads | " + " | ".join(tasks) + " | overall Acc@1 | p vs best learned | "
             "p vs bag-of-sounds | nDCG@10 | MC |", "|---|---|---|" + "---|" * (len(tasks) + 5)]
    notes = []

    def p_text(c: Any) -> str:
        t = c.tests[("overall", "acc@1")]
        return ((f"{t.p_value:.4f}" if t.p_value >= 1e-4 else f"{t.p_value:.1e}")
                + (" *" if c.significant("overall", "acc@1") else ""))

    for rung, r in spec.rows:
        c = spec.comparisons.get(r.name)
        cells = []
        for t in tasks:
            test = c.tests.get((t, "acc@1")) if c is not None else None
            cells.append(f3(r.per_task.get(t, {}).get("acc@1"))
                         + ("*" if test and c.significant(t, "acc@1") else ""))
        p = "(best learned)" if c is None else p_text(c)
        bag = spec.vs_control.get(r.name)
        rows.append(f"| {rung} | `{r.name}` | {spec.inputs.get(r.name, '?')} | " + " | ".join(cells)
                    + f" | **{f3(r.overall.get('acc@1'))}** | {p} | {'-' if bag is None else p_text(bag)} "
                    f"| {f3(r.overall.get('ndcg@10'))} | {f3(r.overall.get('mc_acc'))} |")
        params = (r.describe or {}).get("params")
        if params:
            recall = r.describe.get("recall_at_prefetch")
            notes.append(f"- `{r.name}`: N {params['prefetch']}"
                         + (f", w {params['weight']:g}" if rung == "hybrid" else "")
                         + (f", k {params['rrf_k']}" if r.name.startswith("rrf:") else "")
                         + f" (source: {params['source']})"
                         + (f"; recall at N {recall:.3f}" if recall is not None else ""))
    some = next(iter(spec.comparisons.values()))
    rows += ["", f"Best learned: `{spec.best_learned}` (it reads {spec.inputs.get(spec.best_learned, '?')}); "
             "`*` after a task value: against the best learned retriever, Holm-corrected p < 0.05 over the "
             f"tasks (paired randomization test, {some.n_permutations:,} sign flips, seed {some.seed}, "
             "two-sided); p for overall Acc@1, against the best learned retriever and against "
             "`bag-of-sounds` (true labels, no logic: the perfect-hearing control). \"reads\": ground "
             "truth, perceived audio or a learned embedding. Combined retrievers' parameters (recall at N: "
             "the mean share of a query's relevant clips among the model's N nearest, the hybrid's ceiling):", "",
             *notes]
    return rows


@dataclass
class Context:
    demo: Saved | None
    experiments: dict[str, Saved]
    interleaved: Saved | None = None
    """a copy of the demo's benchmark with `bench interleave` and its named and by-example results"""
    quick: Saved | None = None
    """the quick demo (``bench demo``): the README's table"""
    paper: Saved | None = None
    """the main job at the paper's size (:data:`PAPER_DEMO`): docs/evaluation.md's headline"""


BY_EXAMPLE_COLUMNS = ("negation", "order", "overlap", "duration", "mix", "all",
                      "all, other recording", "all, same recording")


def block_by_example(ctx: "Context") -> list[str]:
    """docs/interleaved.md: named vs by-example Acc@1 per retriever and task (evaluation/by_example.py,
    what `bench report` writes as by_example.json), then the perceived-example oracle's losses
    against the tagger's error."""
    from reasonaudio.evaluation.by_example import ALL_TASKS, by_example

    s = ctx.interleaved
    table = by_example(s.bench)
    rec = s.bench.manifest["interleaved"]
    counts = {t.task: t.n for t in table.rows[0].tasks} if table.rows else {}
    commands = ["bench demo --full && cp -r data/demo-full data/interleaved   # a copy: interleaving changes the manifest",
                f"bench interleave --data data/interleaved/bench --share {rec['share']:g}",
                'R="' + " ".join(f"-r {shell_word(r.name)}" for r in table.rows) + '"',
                "bench eval --data data/interleaved/bench $R               # named, on the copy",
                "bench eval --data data/interleaved/bench --interleaved $R # prints the table",
                "bench report --data data/interleaved/bench                # writes results/plots/by_example.json",
                "python scripts/doc_figures.py --demo data/demo-full --interleaved data/interleaved --check"]
    lines = header(s, commands) + [
        f"{rec['queries']} interleaved queries ({', '.join(f'{t} {n}' for t, n in rec['queries_by_task'].items())}); "
        f"{table.examples} examples, {table.same_recording} cut from the recording the clips use "
        "(the optimistic case). Acc@1 named -> by example over the same queries; p: the paired "
        f"randomization test of the change over all {counts.get(ALL_TASKS, '?')} (10,000 sign flips, seed 0):", "",
        "| retriever | reading | " + " | ".join(c for c in BY_EXAMPLE_COLUMNS) + " | p (all) |",
        "|---|---|" + "---|" * len(BY_EXAMPLE_COLUMNS) + "---|"]
    for row in table.rows:
        cells = {t.task: t for t in row.tasks}
        out = [f"`{row.name}`", row.reading]
        for c in BY_EXAMPLE_COLUMNS:
            t = cells.get(c)
            out.append("-" if t is None else f"{f3(t.named['acc@1'])} -> {f3(t.by_example['acc@1'])}")
        allt = cells.get(ALL_TASKS)
        out.append("-" if allt is None else f"{allt.p_values['acc@1']:.2g}")
        lines.append("| " + " | ".join(out) + " |")
    perceived = next((r for r in table.rows if r.name == "oracle-perceived"), None)
    if perceived is not None:
        cells = {t.task: t for t in perceived.tasks}
        lines += ["", "The perceived-example oracle against the tagger's error on the examples (share of "
                  "the queries with an example the tagger labels wrong or hears nothing in):", "",
                  "| `oracle-perceived` | " + " | ".join(BY_EXAMPLE_COLUMNS) + " |",
                  "|---|" + "---|" * len(BY_EXAMPLE_COLUMNS)]
        for label, get in (("exact-answer loss", lambda t: t.exact_loss),
                           ("tagger error on the examples", lambda t: t.tagger_error),
                           ("Acc@1 loss", lambda t: -t.delta("acc@1"))):
            lines.append(f"| {label} | " + " | ".join(
                "-" if c not in cells else f3(get(cells[c])) for c in BY_EXAMPLE_COLUMNS) + " |")
    return lines + perceivers_table(table) + detector_heard_examples(s.bench, table)


PERCEIVERS = (("tagger-label", "the tagger (zero-shot YAMNet)"),
              ("detector-label", "the trained detector"))
"""the readings whose labels a perceiver chose, and what each row of the refusal table calls it"""


def perceivers_table(table: "ByExample") -> list[str]:
    """Each perceiver's reading of the examples, from the first retriever that read them so (every
    retriever of a reading hears the same labels): the share of the interleaved queries with an
    example it refuses (nothing heard, a tie), and with one it refuses or labels wrong."""
    lines: list[str] = []
    for reading, who in PERCEIVERS:
        row = next((r for r in table.rows if r.reading == reading), None)
        if row is None:
            continue
        cells = {t.task: t for t in row.tasks}
        shown = ((f"{who}: refused", lambda t: t.refused),)
        if reading != "tagger-label":  # the tagger's is the oracle table's "tagger error" row
            shown += ((f"{who}: refused or labelled wrong", lambda t: t.tagger_error),)
        for label, get in shown:
            lines.append(f"| {label} | `{row.name}` | " + " | ".join(
                "-" if c not in cells or get(cells[c]) is None else f3(get(cells[c]))
                for c in BY_EXAMPLE_COLUMNS) + " |")
    if not lines:
        return []
    return ["", "How each perceiver reads the examples: the share of the interleaved queries with an "
            "example it refuses (hears nothing, or ties between labels) or labels wrong, as recorded "
            "by the retriever named:", "",
            "| perceiver | as read by | " + " | ".join(BY_EXAMPLE_COLUMNS) + " |",
            "|---|---|" + "---|" * len(BY_EXAMPLE_COLUMNS), *lines]


def detector_heard_examples(bench: "BenchmarkView", table: "ByExample") -> list[str]:
    """How many examples are cut from recordings the trained detector heard in training (what
    makes its reading optimistic), from the model ``bench detect --mode trained`` recorded."""
    if not any(r.reading == "detector-label" for r in table.rows):
        return []
    from reasonaudio.dataset.interleaved import examples
    from reasonaudio.detect.trained import load_detector
    from reasonaudio.evaluation.results import results_dir
    from reasonaudio.fileio import read_json

    record = read_json(results_dir(bench) / "detect-yamnet-trained.json")
    detector = load_detector(record["label_map"]["model"])
    found = examples(bench.files).values()
    heard = sum(e.atom_id in detector.atoms for e in found)
    return ["", f"The trained detector heard the recordings of {heard} of the {len(found)} examples "
            f"in training (its builds' atoms): its reading is the enrolled case, not a sound it "
            "never heard."]


def block_paper_results(ctx: "Context") -> list[str]:
    """docs/evaluation.md: the main job's table at the paper's size, every row the job evaluated
    (both detectors among them)."""
    s = ctx.paper
    return header(s, PAPER_COMMANDS) + acc_table(s, headline_names(s.results, s.job_runs))


BLOCKS: dict[str, Callable[[Context], list[str]]] = {
    "demo-results": block_demo_results,
    "paper-results": block_paper_results,
    "detect-results": block_detect_results,
    "detect-decomposition": block_detect_decomposition,
    "detect-perception": block_detect_perception,
    "detect-labels": block_detect_labels,
    "perception-ladder": block_perception_ladder,
    "train-held-out-templates": lambda ctx: block_train(ctx, "held-out-templates"),
    "train-benchmark-templates": lambda ctx: block_train(ctx, "benchmark-templates"),
    "train-headline": block_train_headline,
    "conditions": block_conditions,
    "robustness": block_robustness,
    "train-held-out-formulations": block_train_formulations,
    "spectrum": block_spectrum,
    "by-example": block_by_example,
}
"""block name -> its lines; a doc block whose name is not here is an error"""


def render(ctx: Context, name: str) -> str:
    if name not in BLOCKS:
        raise SystemExit(f"error: no figure block named {name!r} (known: {', '.join(BLOCKS)})")
    return "\n".join(BLOCKS[name](ctx)) + "\n"


def rewrite(text: str, ctx: Context, only: set[str] | None = None) -> str:
    def sub(m: re.Match) -> str:
        name = m.group("name")
        if only is not None and name not in only:
            return m.group(0)
        return m.group(1) + render(ctx, name) + m.group(4)
    return BLOCK.sub(sub, text)


def scored_under_noise(saved: Saved) -> bool:
    """Whether the demo's benchmark has saved results under a condition other than clean."""
    from reasonaudio.evaluation.condition_scores import condition_scores

    return any(c != "clean" for c in condition_scores(saved.bench).conditions)


def available(ctx: Context) -> set[str]:
    """The blocks the given inputs can make (a training block needs its experiment; the
    conditions block a demo scored under a noisy condition, the robustness block one scored
    under the formulations; else their measured tables stay)."""
    from reasonaudio.evaluation.robustness import robustness

    noisy = ctx.demo is not None and scored_under_noise(ctx.demo)
    formulated = ctx.demo is not None and bool(robustness(ctx.demo.bench).rows)
    return {n for n in BLOCKS if (n.startswith("train-") and n[len("train-"):] in ctx.experiments)
            or (n == "train-headline" and "held-out-templates" in ctx.experiments)
            or (n == "conditions" and noisy) or (n == "robustness" and formulated)
            or (n == "by-example" and ctx.interleaved is not None)
            or (n == "demo-results" and ctx.quick is not None)
            or (n == "paper-results" and ctx.paper is not None)
            or (not n.startswith("train-") and n not in ("conditions", "robustness", "by-example",
                                                          "demo-results", "paper-results")
                and ctx.demo is not None)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--demo", type=Path, help="a `bench demo --full` folder: the docs' figures")
    ap.add_argument("--quick", type=Path, help="a `bench demo` folder (the quick size): the README's table")
    ap.add_argument("--experiment", action="append", default=[], metavar="NAME=BENCH",
                    help="a training experiment's benchmark copy with its saved results")
    ap.add_argument("--interleaved", type=Path, metavar="DIR",
                    help="a copy of the demo folder (or its evaluation/) with `bench interleave` and its "
                         "named and by-example results (docs/interleaved.md's table)")
    ap.add_argument("--paper", type=Path, metavar="DIR",
                    help="a `bench demo` folder of the paper's size (PAPER_DEMO): its headline table")
    ap.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 on a difference")
    ap.add_argument("--allow-small-bank", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    demo = Saved.load(args.demo / "bench") if args.demo else None
    quick = Saved.load(args.quick / "bench") if args.quick else None
    paper = Saved.load(args.paper / "bench") if args.paper else None
    from reasonaudio.atoms.fetch.recipes import full_install_classes

    for folder, saved in ((args.demo, demo), (args.quick, quick), (args.paper, paper)):
        if saved is None or args.allow_small_bank:
            continue
        have, want = saved.bench.manifest.get("bank", {}).get("n_classes"), full_install_classes()
        if have != want:
            print(f"error: {folder}: built from a bank of {have} classes, not the full install's "
                  f"{want}; docs quote the canonical setup only", file=sys.stderr)
            return 2
    experiments = {}
    for spec in args.experiment:
        name, _, paths = spec.partition("=")
        bench_dir, _, models = paths.partition(":")
        if not name or not models:
            print(f"error: --experiment {spec!r}: expected NAME=BENCH_DIR:MODELS_DIR", file=sys.stderr)
            return 2
        experiments[name] = Saved.load(Path(bench_dir))
        experiments[name].models, experiments[name].label = Path(models), name
    inter = None
    if args.interleaved is not None:
        root = args.interleaved / "bench" if (args.interleaved / "bench").is_dir() else args.interleaved
        inter = Saved.load(root)
        if "interleaved" not in inter.bench.manifest:
            print(f"error: --interleaved {args.interleaved}: no interleaved queries (run `bench "
                  "interleave` on it first)", file=sys.stderr)
            return 2
    ctx = Context(demo, experiments, inter, quick, paper)
    only = available(ctx)
    changed = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        new = rewrite(text, ctx, only)
        if new != text:
            changed.append(doc)
            if not args.check:
                doc.write_text(new, encoding="utf-8")
    if demo is not None:
        record = reference_record(demo)
        if not REFERENCE.is_file() or REFERENCE.read_text(encoding="utf-8") != record:
            changed.append(REFERENCE)
            if not args.check:
                REFERENCE.write_text(record, encoding="utf-8")
    verb = "differ from the saved results" if args.check else "rewritten"
    for doc in changed:
        print(f"{doc.relative_to(ROOT)}: {verb}")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
