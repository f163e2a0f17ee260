"""Interleaved queries scored apart (issue 28): evaluation, and named vs by-example per task.

``bench eval --interleaved`` asks every retriever the build's interleaved variants (the view
``bench.with_view(INTERLEAVED)``, :class:`reasonaudio.dataset.view.BenchmarkView`), each reading the examples its way
(:mod:`reasonaudio.retrievers.example_readers`); results are saved as ``NAME@interleaved`` (the
formulations' ``@`` grammar). :func:`by_example` then pairs, per retriever and task, its named
result and its by-example result over the same query ids, with the change and the paired
randomization test of :mod:`reasonaudio.evaluation.robustness` (the same cell code). For a retriever
that reads examples by a perceiver (the tagger: ``oracle-perceived``; a trained detector:
``detected:yamnet-trained``) the row also carries the perceiver's error on those queries'
examples and the share it refused, from the labels its result recorded; for a filter (a retriever
answering every named query with exactly its relevant set: the oracle, ``oracle-perceived``) the
share answered exactly both ways, from the saved run files. The perceived-example oracle's loss
in that share *is* the tagger's error: a misheard example changes the logic, hence the set
(Acc@1 can keep a relevant first match: a misheard excluded sound often leaves the relevant
clip passing, so its Acc@1 loss is at most the error). After the tasks and ``all``
come the queries whose example is another recording, then those whose example is the same
recording as the clips (the optimistic case), each where there are any.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Sequence

from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
from reasonaudio.evaluation.results import (Results, RetrieverResult, data_summary,
                                      load_results, run_path, versions)
from reasonaudio.evaluation.robustness import ROBUSTNESS_METRICS, paired_cell
from reasonaudio.evaluation.runs import read_trec
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.interleaved import INTERLEAVED, examples, interleaved_rows
from reasonaudio.progress import SILENT
from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.retrievers.example_hearing import REFUSED
from reasonaudio.retrievers.registry import get_retriever, spec_for
from reasonaudio.store.open import open_store
from reasonaudio.tasks.base import CAPTION

if TYPE_CHECKING:  # the example readers (the tagger, the payload baselines) load only to evaluate
    from reasonaudio.retrievers.example_readers import ExampleSet

ALL_TASKS = "all"
SAME_RECORDING = "all, same recording"
OTHER_RECORDING = "all, other recording"
"""the rows after ``all``: queries whose example is (not) cut from the recording the clips use"""


def evaluate_interleaved(bench: BenchmarkView, names: Sequence[str],
                         context: EvalContext = EvalContext(), example_set: ExampleSet | None = None
                         ) -> Results:
    """Every retriever in ``names`` on the interleaved variants; saved as ``NAME@interleaved``.
    A retriever with no way to read an example is refused (one line) before any is evaluated."""
    view = bench.with_view(INTERLEAVED)
    for n in names:
        spec_for(n)
    from reasonaudio.retrievers.example_readers import ExampleSet, with_examples

    found = example_set or ExampleSet.of_build(view)
    store = context.store
    own = store is None
    if own:
        store = open_store(view.root, context.backend, context.url)
    base = context.options or RetrieverOptions()
    if base.hooks == SILENT:
        base = replace(base, hooks=context.hooks)
    built = []
    try:
        for n in names:
            opts = (context.retriever_options or {}).get(n, base)
            built.append(with_examples(get_retriever(n, view, opts, store=store), found))
        return evaluate_retrievers(view, built, context.with_(store=store))
    finally:
        for r in built:
            r.close()
        if own:
            store.close()


@dataclass(frozen=True)
class TaskPair:
    task: str
    n: int
    named: dict[str, float]
    by_example: dict[str, float]
    p_values: dict[str, float]
    tagger_error: float | None = None
    """share of these queries with an example the perceiver mislabels or refuses (perceiving
    readers only: ``tagger-label``, ``detector-label``)"""
    exact: tuple[float, float] | None = None
    """(named, by example): share of these queries answered exactly, the retriever's answer (its
    run) being the relevant set; only for a retriever that answers every named query so (a
    filter: the oracle, ``oracle-perceived``), whose loss in it is then the tagger's error"""
    refused: float | None = None
    """share of these queries with an example the perceiver refuses (hears nothing, or a tie)"""

    def delta(self, metric: str) -> float:
        return self.by_example[metric] - self.named[metric]

    @property
    def exact_loss(self) -> float | None:
        return None if self.exact is None else self.exact[0] - self.exact[1]

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "n": self.n, "named": self.named, "by_example": self.by_example,
                "delta": {m: self.delta(m) for m in self.named}, "p_values": self.p_values,
                "tagger_error": self.tagger_error, "refused": self.refused,
                "exact": None if self.exact is None else {"named": self.exact[0],
                                                          "by_example": self.exact[1],
                                                          "loss": self.exact_loss}}


@dataclass(frozen=True)
class RetrieverPairs:
    name: str
    reading: str
    tasks: list[TaskPair]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "reading": self.reading, "tasks": [t.to_json() for t in self.tasks]}


@dataclass(frozen=True)
class ByExample:
    rows: list[RetrieverPairs] = field(default_factory=list)
    same_recording: int = 0
    examples: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"metrics": list(ROBUSTNESS_METRICS), "examples": self.examples,
                "same_recording": self.same_recording, "retrievers": [r.to_json() for r in self.rows]}


def _subset(result: RetrieverResult, qids: set[str]) -> RetrieverResult:
    return replace(result, per_query={q: v for q, v in result.per_query.items() if q in qids},
                   task_of={q: t for q, t in result.task_of.items() if q in qids})


def tagger_errors(bench: BenchmarkView, result: RetrieverResult, refused_only: bool = False
                  ) -> dict[str, bool] | None:
    """query id -> whether the perceiver mislabelled or refused one of its examples (only
    refused: ``refused_only``), from the labels the result recorded (None when it read examples
    otherwise)."""
    heard = (result.describe or {}).get("heard")
    if not isinstance(heard, dict):
        return None
    truth = examples(bench.files)

    def wrong(e: str) -> bool:
        return heard.get(e) == REFUSED if refused_only else heard.get(e) != truth[e].label

    return {qid: any(wrong(e) for e in row.examples)
            for qid, row in interleaved_rows(bench.files).items()}


def answered_exactly(bench: BenchmarkView, key: str) -> dict[str, bool] | None:
    """query id -> whether the saved run ``key`` answers it with exactly its relevant set (every
    hit relevant, every relevant clip a hit; a query left out of the run has no answer); None
    without a saved run file."""
    path = run_path(bench, key)
    if not path.is_file():
        return None
    run = read_trec(path)
    return {qid: {h.clip_id for h in run.hits.get(qid, ())} == set(rel)
            for qid, rel in bench.qrels.items()}


def _exact_shares(named: dict[str, bool] | None, inter: dict[str, bool] | None,
                  qids: set[str]) -> tuple[float, float] | None:
    """(named, by example) shares answered exactly, for a filter-like retriever only: one
    whose named run answers every query exactly (else exactness is not what it promises)."""
    if named is None or inter is None or not qids or not all(named.get(q, False) for q in qids):
        return None
    return 1.0, sum(inter.get(q, False) for q in qids) / len(qids)


def by_example(bench: BenchmarkView, names: Sequence[str] | None = None) -> ByExample:
    """Named vs by-example per retriever and task, for every retriever with both saved."""
    if "interleaved" not in bench.manifest:
        return ByExample()
    saved = load_results(bench, formulations=True).runs
    found = examples(bench.files)
    rec = {qid: any(found[e].same_recording for e in row.examples)
           for qid, row in interleaved_rows(bench.files).items()}
    rows = []
    for key, inter in saved.items():
        if inter.formulation != INTERLEAVED:
            continue
        name = inter.key.name
        named = saved.get(inter.key.with_(view=CAPTION).stored_name)
        if named is None or (names is not None and name not in names):
            continue
        errors = tagger_errors(bench, inter)
        refusals = tagger_errors(bench, inter, refused_only=True)
        exact_named = answered_exactly(bench, named.name)
        exact_inter = answered_exactly(bench, key)
        tasks = list(dict.fromkeys(inter.task_of.values()))
        groups = {task: {q for q, t in inter.task_of.items() if t == task} for task in tasks}
        groups[ALL_TASKS] = set(inter.task_of)
        for name_, same in ((OTHER_RECORDING, False), (SAME_RECORDING, True)):
            groups[name_] = {q for q in inter.task_of if q in rec and rec[q] == same}
        pairs = []
        for task, members in groups.items():
            qids = {q for q in members if q in named.task_of}
            if not qids:
                continue
            cell = paired_cell(_subset(named, qids), _subset(inter, qids))
            err, ref = (None if found_ is None else sum(found_.get(q, False) for q in qids) / len(qids)
                        for found_ in (errors, refusals))
            pairs.append(TaskPair(task, cell.n, cell.caption, cell.values, cell.p_values, err,
                                  _exact_shares(exact_named, exact_inter, qids), ref))
        rows.append(RetrieverPairs(name, str((inter.describe or {}).get("examples", "")), pairs))
    rows.sort(key=lambda r: (r.name != "oracle", r.name != "oracle-perceived", r.name))
    return ByExample(rows, sum(e.same_recording for e in found.values()), len(found))


def interleaved_results(bench: BenchmarkView) -> Results:
    """The saved ``NAME@interleaved`` results (for ``--json`` and the explorer)."""
    saved = load_results(bench, formulations=True).runs
    return Results(data_summary(bench), versions(),
                   {k: r for k, r in saved.items() if r.formulation == INTERLEAVED})
