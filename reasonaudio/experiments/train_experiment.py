"""The train-vs-test experiment: train with and without planted hard negatives on a training
build, ingest both into the benchmark under test, evaluate, compare.

Library only (no printing): :func:`run_experiment` returns the results and the paired tests;
``scripts/train_vs_test.py`` prints them. Models already trained with the same recipe are reused
(their card's recipe and training-build manifest must match), so a rerun only evaluates.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, ContextManager

from reasonaudio.evaluation.compare import Comparison, compare
from reasonaudio.evaluation.evaluate import EvalContext, ensure_results, evaluate_retrievers
from reasonaudio.evaluation.results import Results
from reasonaudio.logic import labels
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.errors import DataError
from reasonaudio.fileio import read_json, sha256_file
from reasonaudio.ingest.run import IngestOptions, ingest_model
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.store.open import open_store
from reasonaudio.train.data import check_separate, make_examples, query_text_overlap
from reasonaudio.train.trainer import TrainOptions, TrainResult, train_model

VARIANTS = {"trained:hard-negatives": True, "trained:in-batch-only": False}
"""retriever name -> whether its training used the planted hard negatives"""


@dataclass
class ExperimentResult:
    results: Results
    """``reasonaudio.evaluation.results.Results`` of both variants (and the baselines asked for)"""
    comparison: Comparison | None
    """paired tests, hard negatives minus in-batch only (None when one variant ran)"""
    versus: dict[str, Any] = field(default_factory=dict)
    """baseline name -> paired tests of each variant against it"""
    models: dict[str, Path] = field(default_factory=dict)
    trained: dict[str, TrainResult | None] = field(default_factory=dict)
    separation: dict[str, Any] = field(default_factory=dict)
    leaked_query_texts: int = 0
    """how many benchmark query texts occur verbatim among the training captions"""
    leaked_texts: tuple[str, ...] = ()
    """those texts (the queries :func:`verbatim_split` sets apart)"""


def reusable(model_dir: Path, options: TrainOptions, train_dir: Path) -> bool:
    card_path = model_dir / "card.json"
    if not card_path.is_file() or not (model_dir / "model.safetensors").is_file():
        return False
    card = read_json(card_path)
    return (card.get("recipe") == options.to_json()
            and "condition" not in card.get("training_build", {})  # trained on clean audio
            and card.get("training_build", {}).get("manifest_sha256")
            == sha256_file(train_dir / "manifest.json"))


def run_experiment(train_dir: Path, test_dir: Path, out: Path, options: TrainOptions = TrainOptions(),
                   baselines: tuple[str, ...] = (), hooks: Hooks = SILENT,
                   train_hooks: Callable[[str], ContextManager[Hooks]] | None = None,
                   backend: str | None = None,
                   variants: tuple[str, ...] = tuple(VARIANTS)) -> ExperimentResult:
    """Train the variants (both by default; or reuse them), ingest, evaluate and compare on
    ``test_dir`` (the two variants against each other when both run).

    ``train_hooks(name)`` may return a context manager yielding the hooks one training reports
    to (its ``TrainStatus`` events); ``hooks`` hears about the ingests and evaluations."""

    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        raise DataError(f"--variant must be among {', '.join(VARIANTS)}, got {', '.join(unknown) or 'none'}")
    train_dir, test_dir, out = Path(train_dir), Path(test_dir), Path(out)
    train_bench, test_bench = load_benchmark(train_dir), load_benchmark(test_dir)
    separation = check_separate(train_bench, test_bench)
    leaked = tuple(query_text_overlap(make_examples(train_bench, options.data), test_bench))
    models: dict[str, Path] = {}
    trained: dict[str, TrainResult | None] = {}
    for name, hard in ((n, VARIANTS[n]) for n in variants):
        variant = replace(options, hard_negatives=hard)
        model_dir = out / name.split(":", 1)[1]
        models[name] = model_dir
        if reusable(model_dir, variant, train_dir):
            trained[name] = None
            continue
        ctx = train_hooks(name) if train_hooks else contextlib.nullcontext(SILENT)
        with ctx as one:
            trained[name] = train_model(train_dir, model_dir, variant, hooks=one, overwrite=True)
    with open_store(test_bench.root, backend, None, write=True) as store:
        for name, model_dir in models.items():
            ingest_model(test_bench, store, "trained", IngestOptions(model_path=str(model_dir)),
                         hooks=hooks)
    per = {name: RetrieverOptions(model_path=str(path)) for name, path in models.items()}
    context = EvalContext(backend=backend, hooks=hooks)
    results = evaluate_retrievers(test_bench, list(models), context.with_(retriever_options=per))
    names = list(models)
    comparison = compare(results.runs[names[0]], results.runs[names[1]]) if len(names) > 1 else None
    versus: dict[str, Any] = {}
    if baselines:
        saved = ensure_results(test_bench, list(baselines), context)
        for base in baselines:
            results.runs[base] = saved.runs[base]
            versus[base] = {n: compare(results.runs[n], saved.runs[base]) for n in names}
    return ExperimentResult(results, comparison, versus, models, trained, separation, len(leaked),
                            leaked)


Split = dict[str, dict[str, dict[str, tuple[float, int]]]]
"""retriever -> group -> task (and ``overall``) -> (mean metric, queries)"""


def split_by(results: Results, group_of: dict[str, str], groups: tuple[str, ...],
             metric: str = "acc@1") -> Split:
    """Each retriever's ``metric`` per task on each group of queries (``group_of``: id -> group)."""
    out: Split = {}
    for name, run in results.runs.items():
        per: dict[str, dict[str, tuple[float, int]]] = {}
        for group in groups:
            cells: dict[str, tuple[float, int]] = {}
            for task in (*TASKS, "overall"):
                qids = [q for q, g in group_of.items() if g == group
                        and (task == "overall" or run.task_of.get(q) == task)]
                values = run.values(metric, qids)
                cells[task] = (sum(values) / len(values) if values else float("nan"), len(values))
            per[group] = cells
        out[name] = per
    return out


HELD_OUT_GROUPS = ("mentions a held-out sound", "other")
VERBATIM_GROUPS = ("text among the training captions", "other")


def held_out_split(results: Results, bench: BenchmarkView, held: tuple[str, ...], metric: str = "acc@1") -> Split:
    """Compositional generalisation: queries that name a sound no caption named, and the others."""
    held_set = set(held)
    group_of = {q.id: HELD_OUT_GROUPS[0 if set(labels(q.logic)) & held_set else 1] for q in bench.queries}
    return split_by(results, group_of, HELD_OUT_GROUPS, metric)


def verbatim_split(results: Results, bench: BenchmarkView, leaked: tuple[str, ...], metric: str = "acc@1") -> Split:
    """Queries whose exact text the model was trained on, and the others (the fair figure)."""
    texts = set(leaked)
    group_of = {q.id: VERBATIM_GROUPS[0 if q.text in texts else 1] for q in bench.queries}
    return split_by(results, group_of, VERBATIM_GROUPS, metric)
