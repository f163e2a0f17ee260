"""Evaluation: every retriever answers every query into a run, then the run is scored.

The main job and ``bench eval`` call :func:`evaluate_retrievers`; a run from elsewhere (a TREC
file) is scored with :func:`evaluate_run`. Relevance comes from ``qrels/test.tsv``; hard
negatives from the judge (clips with every label the query mentions that are not relevant).
Silent from Python: progress, notes and warnings go to the context's hooks.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from reasonaudio.evaluation.embeddings import has_embedding_hook, save_projection_data
from reasonaudio.dataset.keys import ResultKey
from reasonaudio.evaluation.metrics import MC_METRIC, query_metrics
from reasonaudio.evaluation.results import (
    Results,
    RetrieverResult,
    data_summary,
    embeddings_path,
    fingerprint,
    load_result,
    run_path,
    save_result,
    slug,
    versions,
)
from reasonaudio.evaluation.runs import Run, write_trec
from reasonaudio.querylang.judge import hard_negatives
from reasonaudio.dataset.benchmark import Choice, multiple_choice
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import QueryParseError, ReasonAudioError
from reasonaudio.progress import SILENT, Counter, Hooks
from reasonaudio.retrievers.base import QueryVectors, Retriever, RetrieverOptions
from reasonaudio.retrievers.registry import get_retriever, spec_for
from reasonaudio.store.base import Store
from reasonaudio.store.lock import writes_benchmark
from reasonaudio.store.open import open_store

DEFAULT_DEPTH = 100
SEARCH_BATCH = 64
"""queries per ``Retriever.search_batch`` call (one Qdrant batch for vector, formula, hybrid
and fusion retrievers)"""


@dataclass(frozen=True)
class EvalContext:
    """How an evaluation runs, built once (by ``bench eval`` / ``compare``, the main job, the
    training experiment) and passed whole instead of a dozen loose arguments."""

    depth: int = DEFAULT_DEPTH
    """hits asked of each retriever per query"""
    options: RetrieverOptions | None = None
    """given to every named retriever's builder"""
    retriever_options: Mapping[str, RetrieverOptions] | None = None
    """``{name: options}`` for one retriever (e.g. ``{"clap": RetrieverOptions(model_path=...)}``)"""
    trec_dir: Path | None = None
    """also write one TREC run file per retriever here"""
    save: bool = True
    """save runs, per-query metrics and projection data under ``DATA/results/``"""
    backend: str | None = None
    url: str | None = None
    """the store named retrievers share, opened as in ``open_store`` (unless ``store`` is given)"""
    store: Store | None = None
    hooks: Hooks = SILENT
    """progress per retriever and stage, notes (e.g. a payload collection loaded on demand) and
    warnings"""
    def with_(self, **changes: Any) -> "EvalContext":
        return replace(self, **changes)


def run_retriever(bench: BenchmarkView, retriever: Retriever, depth: int = DEFAULT_DEPTH,
                  progress: Counter | None = None, tag: str | None = None,
                  failures: dict[str, str] | None = None) -> Run:
    """Ask ``retriever`` every query (top ``depth``); the run keeps the retriever's order.

    A query the retriever cannot read (:class:`QueryParseError`, e.g. the oracle's parser) is
    left out of the run, so it scores 0, and its message goes into ``failures``.
    ``progress(queries done, queries)`` after each query.
    """
    run = Run(tag or retriever.name)
    retriever.prepare([q.text for q in bench.queries])
    queries = list(bench.queries)
    for start in range(0, len(queries), SEARCH_BATCH):
        chunk = queries[start:start + SEARCH_BATCH]
        for q, got in zip(chunk, retriever.search_batch([q.text for q in chunk], depth)):
            if isinstance(got, QueryParseError):
                if failures is not None:
                    failures[q.id] = str(got)
            elif isinstance(got, Exception):
                raise got
            else:
                run.hits[q.id] = list(got)[:depth]
        if progress:
            progress(start + len(chunk), len(queries))
    return run


def choice_values(bench: BenchmarkView, retriever: Retriever, progress: Counter | None = None,
                  failures: dict[str, str] | None = None) -> dict[str, float]:
    """Multiple choice per query (:func:`multiple_choice`) from the retriever's scores of each
    pair. A query the retriever cannot read is a tie (it cannot tell the pair apart: 0.5).
    ``progress(choices done, choices)`` after each choice.
    """
    queries = bench.query_by_id
    done = 0

    def scores(ch: Choice) -> tuple[float, float] | None:
        nonlocal done
        q = queries.get(ch.query_id)
        if q is None:
            return None
        try:
            pos, neg = retriever.score(q.text, [ch.positive, ch.negative])
        except QueryParseError as exc:
            if failures is not None:
                failures[q.id] = str(exc)
            pos = neg = float("-inf")
        done += 1
        if progress:
            progress(done, len(bench.choices))
        return pos, neg

    return multiple_choice(bench.choices, scores)


def evaluate_run(bench: BenchmarkView, run: Run, name: str | None = None,
                 mc: Mapping[str, float] | None = None, depth: int = DEFAULT_DEPTH,
                 describe: dict[str, Any] | None = None) -> RetrieverResult:
    """Score a run on every query of ``bench`` (a query the run does not answer scores 0)."""
    hard = hard_negatives(bench)
    per_query: dict[str, dict[str, float]] = {}
    task_of: dict[str, str] = {}
    for q in bench.queries:
        values = query_metrics(run.ranking(q.id), bench.qrels.get(q.id, set()), hard.get(q.id, frozenset()))
        if mc is not None and q.id in mc:
            values[MC_METRIC] = float(mc[q.id])
        per_query[q.id] = values
        task_of[q.id] = q.task
    return RetrieverResult(name=name or run.tag, per_query=per_query, task_of=task_of,
                           describe=describe or {"name": name or run.tag}, depth=depth,
                           fingerprint=fingerprint(bench), versions=versions())


def evaluate_retriever(bench: BenchmarkView, retriever: Retriever, context: EvalContext = EvalContext(),
                       key: ResultKey | None = None) -> RetrieverResult:
    """Run, multiple choice and metrics for one retriever; saved under ``DATA/results/`` unless
    ``context.save`` is off (``context.store``, ``backend`` and retriever options are not read:
    the retriever is already built). ``key``: what the result answers (default: the retriever's
    name under the benchmark's condition and formulation)."""
    key = key or bench.key(retriever.name)
    name = key.stored_name
    hooks, depth = context.hooks, context.depth
    n_q, n_c = len(bench.queries), len(bench.choices)
    t0 = time.perf_counter()
    failures: dict[str, str] = {}
    hooks.progress(f"{name}: search", 0, n_q)
    run = run_retriever(bench, retriever, depth, hooks.counter(f"{name}: search"), tag=name,
                        failures=failures)
    t1 = time.perf_counter()
    hooks.progress(f"{name}: choices", 0, n_c)
    mc = choice_values(bench, retriever, hooks.counter(f"{name}: choices"), failures)
    t2 = time.perf_counter()
    # describe() may hold paths or other objects: keep what JSON can say about them.
    describe = json.loads(json.dumps(retriever.describe() or {"name": name}, default=str))
    result = evaluate_run(bench, run, name=name, mc=mc, depth=depth, describe=describe)
    result.timing = {"search_s": round(t1 - t0, 3), "choices_s": round(t2 - t1, 3),
                     "search_ms_per_query": round(1000 * (t1 - t0) / max(n_q, 1), 3)}
    result.failures = dict(sorted(failures.items()))
    result.formulation = bench.view
    result.retriever, result.condition = key.name, key.condition
    if failures:
        first = next(iter(result.failures.items()))
        hooks.warn(f"{name}: {len(failures)} queries could not be read and score 0 "
                   f"(first: {first[0]}: {first[1]})")
    if context.save:
        write_trec(run_path(bench, name), run, [q.id for q in bench.queries])
        _save_embeddings(bench, retriever, name, hooks)
        save_result(bench, result)
    if context.trec_dir is not None:
        write_trec(Path(context.trec_dir) / f"{slug(name)}.trec", run, [q.id for q in bench.queries])
    return result


def _save_embeddings(bench: BenchmarkView, retriever: Retriever, name: str, hooks: Hooks) -> None:
    """Projection data for ``bench report`` (embedding retrievers only; never fails the eval)."""
    path = embeddings_path(bench, name)
    if not has_embedding_hook(retriever):
        path.unlink(missing_ok=True)  # an older file would describe another retriever
        return
    try:
        save_projection_data(bench, retriever, name)
    except Exception as exc:  # noqa: BLE001 - a plot's data must not lose the metrics
        path.unlink(missing_ok=True)
        hooks.warn(f"{name}: embeddings for the projection plot not saved ({exc})")


@writes_benchmark
def evaluate_retrievers(bench: BenchmarkView, names: Sequence[str | Retriever],
                        context: EvalContext = EvalContext()) -> Results:
    """Evaluate retrievers (registry names or Retriever objects) on every query of ``bench``, asked
    in its view (``bench.with_view("question")``: the question formulation, saved as
    ``NAME@question``).

    Each retriever's run, per-query metrics and multiple-choice values are saved under
    ``DATA/results/`` (unless ``context.save`` is off) so ``bench report`` and ``bench compare``
    need no recomputation; ``context.trec_dir`` also gets one TREC run file per retriever. Named
    retrievers share one store, opened here (``context.backend`` / ``url`` as in ``open_store``)
    unless ``context.store`` is given, and are closed after their evaluation.
    ``context.options`` go to every named retriever's builder, ``context.retriever_options[name]``
    to one; a retriever's options without hooks of their own get the context's (its notes).
    """
    if context.depth < 1:
        raise ReasonAudioError(f"depth must be at least 1, got {context.depth}")
    if not names:
        raise ReasonAudioError("no retriever to evaluate (pass --retriever NAME)")
    from reasonaudio.render.clips import check_renders  # the renderer loads scipy: only to evaluate

    check_renders(bench)  # under a condition the build cannot render: refused, nothing saved
    results = Results(data_summary(bench), versions())
    store = context.store
    own_store = None
    if store is None and any(isinstance(n, str) for n in names):
        for n in names:  # unknown names fail before anything is opened or loaded
            if isinstance(n, str):
                spec_for(n)
        store = own_store = open_store(bench.root, context.backend, context.url)
    base = context.options or RetrieverOptions()
    if base.hooks == SILENT:
        base = replace(base, hooks=context.hooks)
    if base.query_vectors is None:  # retrievers with the same text model embed a query once
        base = replace(base, query_vectors=QueryVectors())
    try:
        for item in names:
            if isinstance(item, Retriever):
                retriever, owned = item, False
            else:
                opts = (context.retriever_options or {}).get(item, base)
                if opts is not base and opts.hooks == SILENT:
                    opts = replace(opts, hooks=base.hooks)
                retriever, owned = get_retriever(item, bench, opts, store=store), True
            key = bench.key(item if isinstance(item, str) else retriever.name)
            try:
                if key.stored_name not in results.runs:
                    results.runs[key.stored_name] = evaluate_retriever(bench, retriever, context, key)
            finally:
                if owned:
                    retriever.close()
    finally:
        if own_store is not None:
            own_store.close()
    return results


def ensure_results(bench: BenchmarkView, names: Sequence[str],
                   context: EvalContext = EvalContext()) -> Results:
    """Saved results for ``names``; any missing (or stale) one is evaluated now, saying so.

    A name given weights (``model_path`` in its options) is always evaluated: a saved result is
    keyed by the retriever's name, and the same name with other weights (``trained:x`` after
    retraining) would otherwise return the old model's figures."""
    results = Results(data_summary(bench), versions())
    missing = []
    weighted = [n for n in names if given_weights(n, context.options, context.retriever_options)]
    key = {n: bench.key(n).stored_name for n in names}
    for name in names:
        saved = None if name in weighted else load_result(bench, key[name])
        if saved is None:
            missing.append(name)
        else:
            results.runs[key[name]] = saved
    if missing:
        absent = [n for n in missing if n not in weighted]
        if absent:
            context.hooks.notify(f"no saved results for {', '.join(absent)} on this benchmark: "
                                 "evaluating now (saved under results/ for next time)")
        if weighted:
            context.hooks.notify(f"weights given for {', '.join(weighted)}: evaluating them "
                                 "rather than reusing saved results")
        fresh = evaluate_retrievers(bench, missing, context=context)
        results.runs.update(fresh.runs)
    results.runs = {key[n]: results.runs[key[n]] for n in names}
    return results


def given_weights(name: str, options: RetrieverOptions | None,
                  retriever_options: Mapping[str, RetrieverOptions] | None) -> bool:
    """Whether ``name`` runs with weights the caller chose (``--model-path``)."""
    chosen = (retriever_options or {}).get(name) or options
    return bool(chosen is not None and chosen.model_path)


def model_options(model_paths: Sequence[str] = (), device: str | None = None,
                  dtype: str | None = None, batch_size: int | None = None
                  ) -> tuple[RetrieverOptions, dict[str, RetrieverOptions]]:
    """CLI ``--model-path [NAME=]PATH``, ``--device``, ``--dtype`` and ``--batch-size`` as
    (options, per-retriever options).

    ``NAME=PATH`` gives one retriever its weights; a bare ``PATH`` goes to every model retriever
    (builders that load no model ignore it). Per-retriever options start from the shared ones.
    """
    base = RetrieverOptions().merged(device=device, dtype=dtype, batch_size=batch_size)
    paths: dict[str, str] = {}
    for item in model_paths:
        name, sep, path = item.partition("=")
        if sep and name and path:
            paths[name] = path
        elif not sep:
            base = base.merged(model_path=item)
        else:
            raise ReasonAudioError(f"--model-path {item!r}: expected PATH or NAME=PATH")
    return base, {name: base.merged(model_path=path) for name, path in paths.items()}
