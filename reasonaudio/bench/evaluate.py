"""Evaluation: every retriever answers every query into a run, then the run is scored.

The main job and ``bench eval`` call :func:`evaluate_retrievers`; a run from elsewhere (a TREC
file) is scored with :func:`evaluate_run`. Relevance comes from ``qrels/test.tsv``; hard
negatives from the judge (clips with every label the query mentions that are not relevant).
"""

from __future__ import annotations

import json
import time
import weakref
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from reasonaudio.bench.metrics import MC_METRIC, choice_score, query_metrics
from reasonaudio.bench.results import (Results, RetrieverResult, data_summary, fingerprint,
                                       run_path, save_result, slug, versions)
from reasonaudio.bench.runs import Run, write_trec
from reasonaudio.errors import QueryParseError, ReasonAudioError
from reasonaudio.ingest.benchmark import Benchmark
from reasonaudio.retrievers.base import Retriever

DEFAULT_DEPTH = 100

ProgressHook = Callable[[int], None]

_HARD_NEGATIVES: "weakref.WeakKeyDictionary[Benchmark, dict[str, frozenset[str]]]" = \
    weakref.WeakKeyDictionary()


def hard_negatives(bench: Benchmark) -> dict[str, frozenset[str]]:
    """Query id -> its hard negatives: clips with every label the query mentions, not relevant
    (qrels are removed too, so a hard negative is never counted as relevant)."""
    cached = _HARD_NEGATIVES.get(bench)
    if cached is not None:
        return cached
    index = bench.clip_index
    out = {q.id: frozenset(index.ids(index.hard_negatives(q.logic))) - bench.qrels.get(q.id, set())
           for q in bench.queries}
    _HARD_NEGATIVES[bench] = out
    return out


def run_retriever(bench: Benchmark, retriever: Retriever, depth: int = DEFAULT_DEPTH,
                  advance: ProgressHook | None = None, tag: str | None = None,
                  failures: dict[str, str] | None = None) -> Run:
    """Ask ``retriever`` every query (top ``depth``); the run keeps the retriever's order.

    A query the retriever cannot read (:class:`QueryParseError`, e.g. the oracle's parser) is
    left out of the run, so it scores 0, and its message goes into ``failures``.
    """
    run = Run(tag or retriever.name)
    retriever.prepare([q.text for q in bench.queries])
    for q in bench.queries:
        try:
            run.hits[q.id] = list(retriever.search(q.text, depth))[:depth]
        except QueryParseError as exc:
            if failures is not None:
                failures[q.id] = str(exc)
        if advance:
            advance(1)
    return run


def choice_values(bench: Benchmark, retriever: Retriever,
                  advance: ProgressHook | None = None,
                  failures: dict[str, str] | None = None) -> dict[str, float]:
    """Multiple choice per query: mean of :func:`choice_score` over that query's choices.

    A query the retriever cannot read scores 0.5 (it cannot tell the pair apart: a tie).
    """
    by_query: dict[str, list[float]] = {}
    queries = bench.query_by_id
    for ch in bench.choices:
        q = queries.get(ch.query_id)
        if q is None:
            continue
        try:
            pos, neg = retriever.score(q.text, [ch.positive, ch.negative])
            value = choice_score(float(pos), float(neg))
        except QueryParseError as exc:
            if failures is not None:
                failures[q.id] = str(exc)
            value = 0.5
        by_query.setdefault(q.id, []).append(value)
        if advance:
            advance(1)
    return {qid: sum(v) / len(v) for qid, v in by_query.items()}


def evaluate_run(bench: Benchmark, run: Run, name: str | None = None,
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


def _progress(console: Console | None, show: bool) -> Progress | None:
    if not show:
        return None
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False)


def _resolve(bench: Benchmark, item: str | Retriever, options: Mapping[str, Any]) -> Retriever:
    if isinstance(item, Retriever):
        return item
    from reasonaudio.retrievers.registry import get_retriever

    return get_retriever(item, bench, **dict(options))


def _accepts(name: str, key: str) -> bool:
    """Whether the registry's builder for ``name`` takes keyword ``key`` (or ``**kwargs``)."""
    import inspect

    from reasonaudio.retrievers.registry import spec_for

    try:
        params = inspect.signature(spec_for(name).build).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD or p.name == key for p in params)


def evaluate_retriever(bench: Benchmark, retriever: Retriever, depth: int = DEFAULT_DEPTH,
                       progress: Progress | None = None, name: str | None = None,
                       trec_dir: Path | None = None, save: bool = True,
                       console: Console | None = None) -> RetrieverResult:
    """Run, multiple choice and metrics for one retriever; saved under ``DATA/results/``."""
    name = name or retriever.name
    n_q, n_c = len(bench.queries), len(bench.choices)
    task = progress.add_task(f"{name}: search", total=n_q) if progress else None
    adv = (lambda n: progress.advance(task, n)) if progress else None  # type: ignore[arg-type]
    t0 = time.perf_counter()
    failures: dict[str, str] = {}
    run = run_retriever(bench, retriever, depth, adv, tag=name, failures=failures)
    t1 = time.perf_counter()
    if progress:
        progress.update(task, description=f"{name}: choices", completed=0, total=n_c)
    mc = choice_values(bench, retriever, adv, failures)
    t2 = time.perf_counter()
    if progress:
        progress.update(task, description=f"{name}: done", completed=n_c)
    # describe() may hold paths or other objects: keep what JSON can say about them.
    describe = json.loads(json.dumps(retriever.describe() or {"name": name}, default=str))
    result = evaluate_run(bench, run, name=name, mc=mc, depth=depth, describe=describe)
    result.timing = {"search_s": round(t1 - t0, 3), "choices_s": round(t2 - t1, 3),
                     "search_ms_per_query": round(1000 * (t1 - t0) / max(n_q, 1), 3)}
    result.failures = dict(sorted(failures.items()))
    if failures and console is not None:
        first = next(iter(result.failures.items()))
        console.print(f"[yellow]warning:[/] {name}: {len(failures)} queries could not be read "
                      f"and score 0 (first: {first[0]}: {first[1]})", soft_wrap=True)
    if save:
        write_trec(run_path(bench, name), run, [q.id for q in bench.queries])
        _save_embeddings(bench, retriever, name, console)
        save_result(bench, result)
    if trec_dir is not None:
        write_trec(Path(trec_dir) / f"{slug(name)}.trec", run, [q.id for q in bench.queries])
    return result


def _save_embeddings(bench: Benchmark, retriever: Retriever, name: str,
                     console: Console | None) -> None:
    """Projection data for ``bench report`` (embedding retrievers only; never fails the eval)."""
    from reasonaudio.bench.embeddings import has_embedding_hook, save_projection_data
    from reasonaudio.bench.results import embeddings_path

    path = embeddings_path(bench, name)
    if not has_embedding_hook(retriever):
        path.unlink(missing_ok=True)  # an older file would describe another retriever
        return
    try:
        save_projection_data(bench, retriever, name)
    except Exception as exc:  # noqa: BLE001 - a plot's data must not lose the metrics
        path.unlink(missing_ok=True)
        (console or Console(stderr=True)).print(
            f"[yellow]warning:[/] {name}: embeddings for the projection plot not saved ({exc})",
            soft_wrap=True)


def evaluate_retrievers(bench: Benchmark, names: Sequence[str | Retriever], depth: int = DEFAULT_DEPTH,
                        options: Mapping[str, Any] | None = None, trec_dir: Path | None = None,
                        save: bool = True, console: Console | None = None,
                        show_progress: bool = True, backend: str | None = None,
                        url: str | None = None, store: Any = None,
                        retriever_options: Mapping[str, Mapping[str, Any]] | None = None) -> Results:
    """Evaluate retrievers (registry names or Retriever objects) on every query of ``bench``.

    Each retriever's run, per-query metrics and multiple-choice values are saved under
    ``DATA/results/`` (unless ``save=False``) so ``bench report`` and ``bench compare`` need no
    recomputation; ``trec_dir`` also gets one TREC run file per retriever. Named retrievers share
    one store, opened here (``backend`` / ``url`` as in ``open_store``) unless ``store`` is given.
    ``options`` go to every named retriever's builder, ``retriever_options[name]`` to one
    (e.g. ``{"clap": {"model_path": ...}}``), overriding ``options``.
    """
    if depth < 1:
        raise ReasonAudioError(f"depth must be at least 1, got {depth}")
    if not names:
        raise ReasonAudioError("no retriever to evaluate (pass --retriever NAME)")
    results = Results(data_summary(bench), versions())
    own_store = None
    if store is None and any(isinstance(n, str) for n in names):
        from reasonaudio.retrievers.registry import spec_for
        from reasonaudio.store.open import open_store

        for n in names:  # unknown names fail before anything is opened or loaded
            if isinstance(n, str):
                spec_for(n)
        store = own_store = open_store(bench.root, backend, url)
    progress = _progress(console, show_progress)
    try:
        with progress if progress is not None else nullcontext():
            for item in names:
                opts = dict(options or {})
                if isinstance(item, str):
                    opts.update((retriever_options or {}).get(item, {}))
                if isinstance(item, str) and store is not None:
                    opts["store"] = store
                    if console is not None and _accepts(item, "notify"):
                        opts.setdefault("notify", lambda msg: console.print(msg, soft_wrap=True))
                retriever = _resolve(bench, item, opts)
                name = item if isinstance(item, str) else retriever.name
                if name in results.runs:
                    continue
                results.runs[name] = evaluate_retriever(bench, retriever, depth, progress, name,
                                                        trec_dir, save, console)
    finally:
        if own_store is not None:
            own_store.close()
    return results


def ensure_results(bench: Benchmark, names: Sequence[str], depth: int = DEFAULT_DEPTH,
                   console: Console | None = None, show_progress: bool = True,
                   backend: str | None = None, url: str | None = None,
                   options: Mapping[str, Any] | None = None,
                   retriever_options: Mapping[str, Mapping[str, Any]] | None = None) -> Results:
    """Saved results for ``names``; any missing (or stale) one is evaluated now, saying so."""
    from reasonaudio.bench.results import load_result

    results = Results(data_summary(bench), versions())
    missing = []
    for name in names:
        saved = load_result(bench, name)
        if saved is None:
            missing.append(name)
        else:
            results.runs[name] = saved
    if missing:
        if console is not None:
            console.print(f"no saved results for {', '.join(missing)} on this benchmark: "
                          "evaluating now (saved under results/ for next time)", soft_wrap=True)
        fresh = evaluate_retrievers(bench, missing, depth=depth, console=console,
                                    show_progress=show_progress, backend=backend, url=url,
                                    options=options, retriever_options=retriever_options)
        results.runs.update(fresh.runs)
    results.runs = {n: results.runs[n] for n in names}
    return results


def model_options(model_paths: Sequence[str] = (), device: str | None = None,
                  dtype: str | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """CLI ``--model-path [NAME=]PATH`` and ``--device`` as (options, retriever_options).

    ``NAME=PATH`` gives one retriever its weights; a bare ``PATH`` goes to every model retriever
    (builders that load no model ignore it).
    """
    options: dict[str, Any] = {}
    per: dict[str, dict[str, Any]] = {}
    if device:
        options["device"] = device
    if dtype:
        options["dtype"] = dtype
    for item in model_paths:
        name, sep, path = item.partition("=")
        if sep and name and path:
            per.setdefault(name, {})["model_path"] = path
        elif not sep:
            options["model_path"] = item
        else:
            raise ReasonAudioError(f"--model-path {item!r}: expected PATH or NAME=PATH")
    return options, per
