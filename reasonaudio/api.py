"""The public Python API: what ``import reasonaudio as ra`` offers a notebook (docs/python.md).

Each function wraps the library function a ``bench`` command calls, runs silently (no printing,
no progress bars: pass ``hooks`` for those) and returns values:

- :func:`build` (``bench build``) and :func:`load` (every command's ``--data``): a benchmark;
- :func:`parse` and :func:`parse_detailed` (``bench parse``): query text -> logic;
- :func:`retriever_names`, :func:`get_retriever` (the registry) and :func:`search`
  (``bench search``): a retriever by name, one query answered;
- :func:`evaluate` (``bench eval``) and :func:`load_results` (``bench report``): results;
- :func:`scores` and :func:`load_run`: per-task Acc@1 / MC / nDCG@10 of each retriever, its
  ranked run.

Errors are :class:`~reasonaudio.errors.ReasonAudioError` subclasses with a one-line message (the
line the command line prints). The package root loads this module on first use of one of its
names, so ``import reasonaudio`` stays cheap; this module loads scipy (the renderer) only to
build or evaluate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from reasonaudio.dataset.conditions import CLEAN
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.dataset.interleaved import INTERLEAVED
from reasonaudio.errors import DataError, ReasonAudioError
from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
from reasonaudio.evaluation.metrics import OVERALL
from reasonaudio.evaluation.results import Results, RetrieverResult, load_results as _load_results, run_path
from reasonaudio.evaluation.runs import Run, read_trec
from reasonaudio.logic import Node
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.querylang.parser import ParseResult
from reasonaudio.querylang.parser import parse_detailed as _parse_detailed
from reasonaudio.querylang.resolve import STRICT, ResolveOptions
from reasonaudio.retrievers.base import Retriever, RetrieverOptions
from reasonaudio.retrievers.one_query import SearchOutcome, search_one
from reasonaudio.retrievers.registry import get_retriever as _get_retriever
from reasonaudio.retrievers.registry import retriever_names as _retriever_names
from reasonaudio.store.open import open_store
from reasonaudio.tasks.base import CAPTION
from reasonaudio.tasks.registry import select_tasks

Pathlike = str | Path
"""a folder given as text or as a path"""


# --- a benchmark ------------------------------------------------------------------------------

def build(out: Pathlike, *, clips: int = 10_000, queries: int = 1_000, seed: int = 0,
          bank: str = "synthetic", tasks: str | Sequence[str] | None = None, audio: str | None = None,
          conditions: str | None = None, interleaved: float | None = None, overwrite: bool = False,
          hooks: Hooks = SILENT) -> BenchmarkView:
    """Build a benchmark directory at ``out`` (``bench build``: same arguments, same bytes for
    the same seed) and return it loaded. ``bank``: ``synthetic``, a folder of recordings,
    ``fsd50k:PATH``; ``tasks``: names or ``"all"`` (default: the five built-in tasks);
    ``overwrite``: replace a previous benchmark at ``out`` (``--force``)."""
    from reasonaudio.generator.build import BuildParams, build_benchmark  # the renderer: scipy

    try:
        chosen = select_tasks(tasks)
    except ValueError as exc:
        raise DataError(f"tasks: {exc}") from None
    params = BuildParams(atoms=bank, seed=seed, n_clips=clips, n_queries=queries, audio=audio,
                         tasks=chosen, conditions=conditions, interleaved=interleaved)
    build_benchmark(out, params, overwrite=overwrite, hooks=hooks)
    return load(out)


def load(path: Pathlike, *, condition: str = CLEAN, verify: bool = True) -> BenchmarkView:
    """The benchmark directory at ``path``, its files checked against ``manifest.json`` unless
    ``verify`` is off, read under ``condition`` (``clean``, ``snrNN``, ``long``: what the
    commands' ``--data`` and ``--condition`` give)."""
    return load_benchmark(path, verify=verify).with_condition(condition)


# --- a query ----------------------------------------------------------------------------------

def _labels(vocabulary: BenchmarkView | Sequence[str]) -> Sequence[str]:
    return vocabulary.labels if isinstance(vocabulary, BenchmarkView) else list(vocabulary)


def _resolve(strict: bool) -> ResolveOptions:
    return STRICT if strict else ResolveOptions()


def parse_detailed(text: str, vocabulary: BenchmarkView | Sequence[str], *,
                   strict: bool = False) -> ParseResult:
    """``text`` read into logic over ``vocabulary`` (a benchmark's labels, or a list of labels),
    with which words matched which label (``.logic``, ``.resolutions``). ``strict``: exact and
    stemmed labels only. A text that cannot be read raises
    :class:`~reasonaudio.errors.QueryParseError`."""
    return _parse_detailed(text, _labels(vocabulary), _resolve(strict))


def parse(text: str, vocabulary: BenchmarkView | Sequence[str], *, strict: bool = False) -> Node:
    """``text`` read into logic (what the oracle runs as a Qdrant filter); see
    :func:`parse_detailed`. ``reasonaudio.logic.to_json`` gives its JSON form."""
    return parse_detailed(text, vocabulary, strict=strict).logic


# --- retrievers -------------------------------------------------------------------------------

def retriever_names() -> list[str]:
    """Every registered retriever name (a family shown by an example member)."""
    return _retriever_names()


def get_retriever(name: str, bench: BenchmarkView, **options: Any) -> Retriever:
    """Retriever ``name`` over ``bench`` (its store opened: embedded unless ``QDRANT_URL``);
    ``options`` are :class:`~reasonaudio.retrievers.base.RetrieverOptions` fields
    (``model_path``, ``device``, ``batch_size``, ``dtype``, ...). ``.search(text, k)`` returns
    its hits; use it in a ``with`` block to release a model's memory after."""
    return _get_retriever(name, bench, RetrieverOptions(**options))


def search(bench: BenchmarkView, text: str, retriever: str = "oracle", k: int = 10, *,
           strict: bool = False, examples: Sequence[str] = (), **options: Any) -> SearchOutcome:
    """``bench search``: ``text`` (or a query id) answered by ``retriever``, parsed once;
    ``.logic`` (None where the text did not parse and the retriever needs no logic), ``.hits``
    (clip id, score), ``.captions``. ``examples``: ``NAME=PATH`` recordings the text gives as
    ``<audio:NAME>`` (``--example``, docs/interleaved.md)."""
    resolve = _resolve(strict)
    with open_store(bench.root) as store:
        return search_one(bench, text, retriever, k, store, RetrieverOptions(**options), resolve,
                          examples)


# --- evaluation and results -------------------------------------------------------------------

def evaluate(bench: BenchmarkView, retrievers: Sequence[str | Retriever], *, formulation: str = CAPTION,
             depth: int = 100, save: bool = True, options: RetrieverOptions | None = None,
             retriever_options: dict[str, RetrieverOptions] | None = None,
             hooks: Hooks = SILENT) -> Results:
    """``bench eval``: every query of ``bench`` (under its condition) asked of each retriever,
    in one ``formulation`` (``caption``, ``question``, ``keywords``, ..., or ``interleaved``);
    the results, saved under ``DATA/results/`` unless ``save`` is off. A retriever is a
    registry name or a :class:`~reasonaudio.retrievers.base.Retriever` of your own (its
    ``.name`` names its results). ``.runs[name]`` is each retriever's
    :class:`~reasonaudio.evaluation.results.RetrieverResult`; :func:`scores` tabulates them."""
    from reasonaudio.experiments.plan import make_plan, run_plan

    if formulation == "all":
        raise ReasonAudioError("evaluate asks one formulation: call it once per formulation "
                               "(bench eval --formulation all does the same)")
    interleaved = formulation == INTERLEAVED
    context = EvalContext(depth=depth, save=save, options=options,
                          retriever_options=retriever_options, hooks=hooks)
    if not all(isinstance(r, str) for r in retrievers):  # objects: the plan's one cell, by hand
        if interleaved:
            raise ReasonAudioError("evaluate: the interleaved view asks retrievers by name "
                                   "(each reads an example by its record)")
        return evaluate_retrievers(bench.with_view(formulation), list(retrievers), context)
    plan = make_plan(bench, [str(r) for r in retrievers], condition=bench.condition.name,
                     formulation=CAPTION if interleaved else formulation, interleaved=interleaved)
    (cell,) = run_plan(bench, plan, context).cells
    return cell.results


def load_results(bench: BenchmarkView, names: Sequence[str] | None = None) -> Results:
    """The results saved for ``bench`` (under its condition): ``names`` in that order, or every
    one (the oracle first). Results of another build are listed in ``.stale``, not returned."""
    return _load_results(bench, names)


def scores(results: Results, metric: str = "acc@1") -> dict[str, dict[str, float]]:
    """retriever -> task -> ``metric`` (``acc@1``, ``mc_acc``, ``ndcg@10``, ...), with
    ``overall`` last: the per-task table (``pandas.DataFrame(scores(r)).T`` shows it). A task
    without the metric (``mc_acc`` where no query has a pair) is left out."""
    out: dict[str, dict[str, float]] = {}
    for name, r in results.runs.items():
        row = {task: values[metric] for task, values in r.per_task.items() if metric in values}
        if metric in r.overall:
            row[OVERALL] = r.overall[metric]
        out[name] = row
    return out


def load_run(bench: BenchmarkView, name: str) -> Run:
    """The ranked hits a saved evaluation of ``name`` gave each query (``.hits[query_id]``, best
    first), read from its TREC file."""
    path = run_path(bench, name)
    if not path.is_file():
        raise DataError(f"{path}: no saved run of {name!r} (evaluate it with save on)")
    return read_trec(path, name)


__all__ = ["BenchmarkView", "Node", "ParseResult", "Pathlike", "Results", "Retriever", "RetrieverOptions",
           "RetrieverResult", "Run", "SearchOutcome", "build", "evaluate", "get_retriever", "load",
           "load_results", "load_run", "parse", "parse_detailed", "retriever_names", "scores", "search"]
