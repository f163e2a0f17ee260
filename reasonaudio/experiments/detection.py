"""``bench detect`` end to end: detect, evaluate the detected retriever, decompose the losses.

Per task, Acc@1 of *oracle (truth + logic) -> detected (perception + logic) -> best embedding
retriever* (:func:`reasonaudio.evaluation.report.decomposition`): ``oracle - detected`` is what
imperfect hearing costs, ``detected - best embedding`` what the embedding loses beyond hearing
(reasoning and matching). Saved results of other retrievers (``bench eval``) are read from
``DATA/results``; none are recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retriever
from reasonaudio.evaluation.report import METRIC, decomposition  # noqa: F401 - METRIC: read from here too
from reasonaudio.evaluation.results import RetrieverResult, load_results, results_dir
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.detect.collection import DetectOptions, DetectSummary, run_detection
from reasonaudio.fileio import write_json
from reasonaudio.models.base import EmbedderProtocol
from reasonaudio.models.names import is_embedding
from reasonaudio.models.yamnet_embedder import FrameTagger
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.retrievers.registry import get_retriever
from reasonaudio.store.base import Store
from reasonaudio.store.lock import writes_benchmark


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
def detect_and_evaluate(bench: BenchmarkView, store: Store, options: DetectOptions = DetectOptions(), *,
                        depth: int = 100, hooks: Hooks = SILENT,
                        tagger: FrameTagger | None = None, embedder: EmbedderProtocol | None = None
                        ) -> DetectRun:
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
