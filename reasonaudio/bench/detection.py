"""``bench detect`` end to end: detect, evaluate the detected retriever, decompose the losses.

Per task, Acc@1 of *oracle (truth + logic) -> detected (perception + logic) -> best embedding
retriever*: ``oracle - detected`` is what imperfect hearing costs, ``detected - best
embedding`` what the embedding loses beyond hearing (reasoning and matching). Saved results of
other retrievers (``bench eval``) are read from ``DATA/results``; none are recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reasonaudio.bench.evaluate import EvalContext, evaluate_retriever
from reasonaudio.bench.results import Results, RetrieverResult, load_results, results_dir
from reasonaudio.dataset.benchmark import Benchmark, tasks_present
from reasonaudio.detect.collection import DetectOptions, DetectSummary, run_detection
from reasonaudio.fileio import write_json
from reasonaudio.models.names import is_embedding
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.retrievers.registry import get_retriever
from reasonaudio.store.base import Store
from reasonaudio.store.lock import writes_benchmark

METRIC = "acc@1"


def decomposition(results: Results, detected: str, metric: str = METRIC) -> dict[str, dict[str, Any]]:
    """group (task or ``overall``) -> oracle, detected, best embedding (name, value), losses."""
    runs = results.runs
    out: dict[str, dict[str, Any]] = {}
    def value_of(r: RetrieverResult | None, group: str) -> float | None:
        if r is None:
            return None
        src = r.overall if group == "overall" else r.per_task.get(group, {})
        return src.get(metric)

    tasks = tasks_present([t for r in runs.values() for t in r.per_task])
    for group in (*tasks, "overall"):
        def value(r: RetrieverResult | None, group: str = group) -> float | None:
            return value_of(r, group)

        oracle, det = value(runs.get("oracle")), value(runs.get(detected))
        embedded = [(value(r), n) for n, r in runs.items() if is_embedding(n) and value(r) is not None]
        best = max(embedded, key=lambda vn: (vn[0], [-ord(ch) for ch in vn[1]])) if embedded else None
        row: dict[str, Any] = {"oracle": oracle, "detected": det,
                               "best_embedding": best[1] if best else None,
                               "best_embedding_value": best[0] if best else None}
        row["perception_loss"] = (round(oracle - det, 4) if oracle is not None and det is not None
                                  else None)
        row["detected_minus_embedding"] = (round(det - best[0], 4) if det is not None and best
                                           else None)
        out[group] = row
    return out


@dataclass
class DetectRun:
    summary: DetectSummary
    result: RetrieverResult
    decomposition: dict[str, dict[str, Any]]
    embedding_retrievers: list[str]

    def to_json(self) -> dict[str, Any]:
        out = self.summary.to_json()
        out["evaluation"] = self.result.summary_json()
        out["decomposition"] = self.decomposition
        out["embedding_retrievers"] = self.embedding_retrievers
        return out


@writes_benchmark
def detect_and_evaluate(bench: Benchmark, store: Store, options: DetectOptions = DetectOptions(), *,
                        depth: int = 100, hooks: Hooks = SILENT,
                        tagger: Any = None, embedder: Any = None) -> DetectRun:
    """Detect, write the collection, evaluate ``detected:...`` (saved like ``bench eval``), and
    write ``DATA/results/detect-<mode>.json`` (perception report, calibration, decomposition)."""
    summary = run_detection(bench, store, options, tagger=tagger, embedder=embedder,
                            hooks=hooks)
    with get_retriever(summary.name, bench, store=store) as retriever:
        result = evaluate_retriever(bench, retriever, EvalContext(depth=depth, hooks=hooks))
    saved = load_results(bench)
    saved.runs[summary.name] = result
    run = DetectRun(summary, result, decomposition(saved, summary.name),
                    sorted(n for n in saved.runs if is_embedding(n)))
    write_json(results_dir(bench) / f"detect-{options.tagger}-{options.mode}.json", run.to_json())
    return run
