"""What ``bench ingest`` loads, as one checked request, and the one function that loads it.

A request is of one of four kinds (:func:`request_kind`):

- ``payload``: ``--model none``, the payload-only collection the oracle and the baselines search;
- ``model``: a registry model (or ``two-stage:CAPTIONER+EMBEDDER``): render, embed, upsert
  (:func:`reasonaudio.ingest.run.ingest_model`);
- ``derived``: a collection a retriever builds from other collections (a joint ``hybrid:`` /
  ``rrf:`` / ``dbsf:`` collection, BM25 over captions);
- ``precomputed``: vectors made elsewhere (``--vectors``, docs/bring-your-own.md).

Only a model ingest renders audio, so only it may run under a condition other than clean.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.conditions import CLEAN
from reasonaudio.errors import ReasonAudioError
from reasonaudio.ingest.run import IngestOptions
from reasonaudio.ingest.vector_files import ingest_precomputed
from reasonaudio.models.names import is_combined, is_lexical
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.retrievers.registry import get_retriever
from reasonaudio.store.base import Store
from reasonaudio.store.collections import ingest_payload

PAYLOAD, MODEL, DERIVED, PRECOMPUTED = "payload", "model", "derived", "precomputed"
PROGRESS_UNIT = {MODEL: "clips"}
"""the unit a kind's progress counts in (others: items)"""


def request_kind(model: str | None, precomputed: bool) -> str:
    if precomputed or model is None:
        return PRECOMPUTED
    if model == "none":
        return PAYLOAD

    return DERIVED if is_combined(model) or is_lexical(model) else MODEL


def check_condition(kind: str, condition: str) -> None:
    """Only a model ingest renders audio: any other kind under a condition is refused."""
    if condition != CLEAN and kind != MODEL:
        raise ReasonAudioError(f"--condition {condition}: only a model ingest renders audio; the "
                               "payload and precomputed vectors are the same under every condition")


@dataclass(frozen=True)
class IngestRequest:
    """One ``bench ingest``: what to load and how (its kind from ``model`` and ``precomputed``)."""

    model: str | None
    options: IngestOptions = IngestOptions()
    precomputed: Any = None
    """the checked input of a precomputed ingest (``vector_files.CheckedInput``)"""
    condition: str = CLEAN
    shard_number: int | None = None
    replication_factor: int | None = None

    @property
    def kind(self) -> str:
        return request_kind(self.model, self.precomputed is not None)

    def check(self) -> "IngestRequest":
        check_condition(self.kind, self.condition)
        return self


@dataclass
class IngestOutcome:
    """What one request loaded: its kind, the store's backend, and the kind's own summary
    (``IngestSummary``, ``PrecomputedSummary``, the payload's ``LoadResult``, or the derived
    collection's name)."""

    kind: str
    backend: str
    summary: Any
    model: str | None = None


def run_ingest(bench: BenchmarkView, store: Store, request: IngestRequest, hooks: Hooks = SILENT,
               engine: Callable[[], Any] | None = None) -> IngestOutcome:
    """Load what ``request`` asks into ``store`` (opened for writing). ``engine`` makes a model
    ingest's scheduler (``--engine ray``), asked only for a model ingest."""
    kind = request.check().kind
    if kind == PRECOMPUTED:
        summary: Any = ingest_precomputed(bench, store, request.precomputed, hooks=hooks)
    elif kind == DERIVED:
        opts = RetrieverOptions(auto_ingest=True, model_path=request.options.model_path,
                                device=request.options.device, hooks=hooks)
        with get_retriever(request.model, bench, opts, store=store) as made:
            summary = str(getattr(made, "collection", ""))
    elif kind == MODEL:
        from reasonaudio.ingest.run import ingest_model

        options = request.options if engine is None else replace(request.options, engine=engine())
        summary = ingest_model(bench, store, request.model, options, hooks=hooks)
    else:
        summary = ingest_payload(bench, store, force=request.options.force,
                                 shard_number=request.shard_number,
                                 replication_factor=request.replication_factor, hooks=hooks)
    return IngestOutcome(kind, store.backend, summary, request.model)
