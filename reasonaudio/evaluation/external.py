"""Scoring run files from elsewhere exactly like a built-in retriever's run.

``bench eval --run NAME=PATH`` reads the file (:mod:`reasonaudio.evaluation.run_files`), cuts each
query's ranking to the eval depth (``-k``, as a built-in retriever returns its top ``k``), scores
it with :func:`~reasonaudio.evaluation.evaluate.evaluate_run`, and saves the result, the run and
``describe()`` under ``DATA/results/`` like any retriever, so ``bench compare`` and
``bench report`` treat it as one.

Multiple choice reads the run's own scores for each planted (positive, hard negative) pair,
over every row of the file (not only the top ``k``): a pair clip the run does not list scores
``-inf``, so a pair with neither clip listed is a tie (0.5), as for a built-in retriever whose
search misses both. A query missing from the file scores 0 on every rank metric and 0.5 in
multiple choice, and is recorded under ``failures``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from reasonaudio.evaluation.evaluate import EvalContext, evaluate_run
from reasonaudio.dataset.keys import VIEW_TAG, ResultKey
from reasonaudio.dataset.benchmark import Choice, multiple_choice
from reasonaudio.evaluation.results import (
    Results,
    RetrieverResult,
    data_summary,
    embeddings_path,
    run_path,
    save_result,
    slug,
    versions,
)
from reasonaudio.evaluation.run_files import RunFile, read_run_file
from reasonaudio.evaluation.runs import Run, write_trec
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import DataError
from reasonaudio.retrievers.registry import UnknownRetriever, spec_for
from reasonaudio.render.clips import check_renders
from reasonaudio.store.lock import writes_benchmark

MISSING = "not in the run file"


@dataclass(frozen=True)
class RunSpec:
    """One ``--run NAME=PATH``."""

    name: str
    path: Path
    format: str | None = None
    """``trec`` | ``json``; None: decided by the file's first character"""


@dataclass(frozen=True)
class ExternalRun:
    """What scoring one run file produced, and what the CLI should say about it."""

    result: RetrieverResult
    file: RunFile
    cut_queries: int
    """queries whose ranking had more than ``depth`` clips and was cut"""


def check_run_name(name: str, taken: Sequence[str] = ()) -> None:
    """A run's name is never a built-in retriever's key: saved results are found by key, and one
    run would otherwise overwrite another's. So the name is no retriever's (nor a family
    member's, ``vectors:NAME``) and holds no view tag ``@``: ``NAME@VIEW`` is the stored name of
    NAME's result in that view (``oracle@question``), which ``bench compare`` never takes either."""
    if name in taken:
        raise DataError(f"--run {name}=...: the name {name!r} is used twice in this evaluation")
    if VIEW_TAG in name:
        raise DataError(f"--run {name}=...: a run's name holds no {VIEW_TAG!r} ({VIEW_TAG}VIEW names "
                        f"a result's formulation, as in oracle{VIEW_TAG}question); name the run "
                        f"{name.replace(VIEW_TAG, '-').replace(' ', '')!r} and ask the view with "
                        "--formulation")
    try:
        spec_for(name)
    except UnknownRetriever:
        return
    raise DataError(f"--run {name}=...: {name!r} is a built-in retriever's name; "
                    f"call the run something else (e.g. {name.replace(':', '-')}-run)")


def pair_choices(bench: BenchmarkView, scores: dict[str, dict[str, float]]) -> dict[str, float]:
    """Multiple choice per query (:func:`multiple_choice`) from a run's scores (an unlisted
    clip scores ``-inf``)."""
    def pair(ch: Choice) -> tuple[float, float] | None:
        if ch.query_id not in bench.query_by_id:
            return None
        per = scores.get(ch.query_id, {})
        return per.get(ch.positive, float("-inf")), per.get(ch.negative, float("-inf"))

    return multiple_choice(bench.choices, pair)


def score_run_file(bench: BenchmarkView, rf: RunFile, key: ResultKey,
                   context: EvalContext = EvalContext()) -> ExternalRun:
    """Score a run file already read by :func:`read_run_file` (named ``rf.run.tag``, ``key``'s
    stored name) as what ``key`` answers, cut to
    ``context.depth``, saved unless ``context.save`` is off, also into ``context.trec_dir``."""
    depth = context.depth
    if depth < 1:
        raise DataError(f"depth must be at least 1, got {depth}")
    spec = RunSpec(rf.run.tag, rf.path, rf.format)
    cut = Run(spec.name, {q: hits[:depth] for q, hits in rf.run.hits.items()})
    n_cut = sum(1 for hits in rf.run.hits.values() if len(hits) > depth)
    describe = {"name": spec.name, **rf.describe(), "cut_to_depth": n_cut}
    result = evaluate_run(bench, cut, name=spec.name, mc=pair_choices(bench, rf.scores),
                          depth=depth, describe=describe)
    result.failures = {q: MISSING for q in rf.missing_queries}
    result.formulation = bench.view  # the texts the run answered: the key's view
    result.retriever, result.condition = key.name, key.condition
    qids = [q.id for q in bench.queries]
    if context.save:
        write_trec(run_path(bench, spec.name), cut, qids)
        embeddings_path(bench, spec.name).unlink(missing_ok=True)  # no vectors behind a run file
        save_result(bench, result)
    if context.trec_dir is not None:
        write_trec(Path(context.trec_dir) / f"{slug(spec.name)}.trec", cut, qids)
    return ExternalRun(result, rf, n_cut)


@writes_benchmark
def evaluate_run_files(bench: BenchmarkView, specs: Sequence[RunSpec],
                       context: EvalContext = EvalContext(), results: Results | None = None,
                       taken: Sequence[str] = ()) -> tuple[Results, list[ExternalRun]]:
    """Score every run file into ``results`` (a fresh :class:`Results` when None), each as
    :func:`score_run_file` does with ``context``.

    Every file is read and checked before anything is saved, so a bad second file leaves no
    result of the first behind. ``taken``: other names of this evaluation (``--retriever``).
    """
    results = results or Results(data_summary(bench), versions())
    taken = list(results.runs) + list(taken)
    for spec in specs:
        check_run_name(spec.name, taken)
        taken.append(spec.name)
    if context.depth < 1:
        raise DataError(f"depth must be at least 1, got {context.depth}")
    if specs:
        check_renders(bench)  # under a condition the build cannot render: nothing saved
    # read everything first: one bad file, nothing saved
    keys = [bench.key(spec.name) for spec in specs]
    files = [read_run_file(spec.path, bench, key.stored_name, spec.format) for spec, key in zip(specs, keys)]
    done = []
    for rf, key in zip(files, keys):
        ext = score_run_file(bench, rf, key, context)
        results.runs[rf.run.tag] = ext.result
        done.append(ext)
    return results, done
