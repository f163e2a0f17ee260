"""Why a retriever failed a query: what it ranked first and which constraint that clip breaks.

A query is *failed* when the clip a retriever ranked first is not relevant (its Acc@1 is 0).
The failure's *kind* is read from the query's logic evaluated on the first clip's event metadata
(the judge's semantics, :mod:`reasonaudio.querylang.semantics`): each top-level constraint
(``C1``, ``C2``, ... as :func:`reasonaudio.logic.conjuncts` numbers them) that the
clip breaks gets a kind from the broken relation, and the failure takes the first kind of
:data:`KINDS` among them. :data:`KINDS` is the one table of kind names, in priority order, with
what each means (docs/evaluation.md prints the same definitions).

Everything is computed from what ``bench eval`` saved (the TREC run under ``results/runs/``),
``qrels/test.tsv``, ``choices.jsonl`` and the corpus's events: no retriever is run again. A
failed query whose run was not saved (a result without its run file) is still counted, as
``run not saved``, so a breakdown always counts every query whose saved Acc@1 is 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from reasonaudio.evaluation.metrics import first_rank
from reasonaudio.evaluation.results import Results, load_results, run_path
from reasonaudio.evaluation.runs import Run, read_trec
from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap, conjuncts, describe)
from reasonaudio.querylang.semantics import HOLDS, OVERLAP_MIN_MS, Occurrences, occurrences
from reasonaudio.dataset.benchmark import ALL_TASKS
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.store.formula import ORDER_WEIGHT


@dataclass(frozen=True)
class FailureKind:
    """One kind of failure: its name (the key everywhere) and what it means."""

    name: str
    means: str
    short: str = ""
    """its label in a terminal table's narrow first column (at most 16 characters)"""

    @property
    def header(self) -> str:
        return self.short or self.name


NO_ANSWER = FailureKind("no answer", "the run holds no clip for the query (the retriever could "
                        "not read it, or returned nothing)", "no answer")
NO_EVIDENCE = FailureKind("no evidence", "every score is at most the clip-order tie term "
                          f"({ORDER_WEIGHT:g}): no clip holds evidence, the order is clip ids'",
                          "no evidence")
NO_RUN = FailureKind("run not saved", "Acc@1 is 0 but the retriever's run was not saved, so "
                     "its first clip is unknown", "no run saved")
HARD_NEGATIVE = FailureKind("hard negative on top", "the first clip is the query's planted hard "
                            "negative (choices.jsonl), which breaks one constraint on purpose",
                            "hard neg on top")
MISSING = FailureKind("mentioned sound missing", "a sound the query asks for is absent from the "
                      "first clip", "sound missing")
EXCLUDED = FailureKind("excluded sound present", "a sound the query excludes (not has) is in "
                       "the first clip", "excluded present")
ORDER = FailureKind("order reversed", "both sounds of a before(A, B) are there, but A does not "
                    "end before B starts", "order reversed")
OVERLAP = FailureKind("overlap missing", "both sounds of an overlap(A, B) are there, but they "
                      f"share less than {OVERLAP_MIN_MS / 1000:g} s", "overlap missing")
DURATION = FailureKind("duration off", "the sound of a lasts(A, N) is there, but an occurrence "
                       "lasts outside N's tolerance", "duration off")
COUNT = FailureKind("count off", "the sound of a count(A, K) is there, but not exactly K times",
                    "count off")
OTHER = FailureKind("other", "none of the above: a negated relation or an 'or' that the first "
                    "clip breaks, a first clip outside the corpus, or one that meets the logic "
                    "yet is not in the qrels", "other")

KINDS: tuple[FailureKind, ...] = (NO_ANSWER, NO_EVIDENCE, NO_RUN, HARD_NEGATIVE, MISSING, EXCLUDED, ORDER,
                                  OVERLAP, DURATION, COUNT, OTHER)
"""Every failure kind, in priority order: a failure whose first clip breaks constraints of
several kinds takes the first of them here (a missing sound before the relation it spoils)."""
KIND_NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
_RANK = {k.name: i for i, k in enumerate(KINDS)}


@dataclass(frozen=True)
class Broken:
    """One constraint the first clip breaks."""

    index: int
    """1-based number of the top-level constraint it lies in (``C1``, ``C2``, ...)"""
    node: str
    """the broken relation, described (``before(dog barking, rain)``; ``!has(siren)``)"""
    kind: str
    """a name of :data:`KINDS`"""


@dataclass(frozen=True)
class FailureRecord:
    """One failed query of one retriever."""

    retriever: str
    qid: str
    task: str
    kind: str
    """a name of :data:`KINDS`: the failure's one kind"""
    top_clip: str | None
    """the clip ranked first (None: no answer, or the run was not saved)"""
    broken: tuple[Broken, ...] = ()
    """every constraint the first clip breaks (empty when it is unknown or breaks none)"""
    planted_negative: bool = False
    """whether the first clip is the query's planted hard negative"""
    first_relevant: float = math.inf
    """rank of the first relevant clip in the run (inf: not in it, or no run)"""

    def to_json(self) -> dict[str, Any]:
        return {"retriever": self.retriever, "qid": self.qid, "task": self.task,
                "kind": self.kind, "top_clip": self.top_clip,
                "broken": [{"constraint": f"C{b.index}", "node": b.node, "kind": b.kind}
                           for b in self.broken],
                "planted_negative": self.planted_negative,
                "first_relevant": None if math.isinf(self.first_relevant)
                else int(self.first_relevant)}


# --- which constraints a clip breaks --------------------------------------------------------

BROKEN = Interpreter("failure kinds (bench.failures)")
"""node, clip occurrences, positive (False under a ``not``) -> [(described node, kind name)]
for every relation the clip breaks; empty when the node, read with that polarity, holds."""


def _present(clip: Occurrences, *labels: str) -> bool:
    return all(clip.get(label) for label in labels)


def _relation(node: Node, clip: Occurrences, positive: bool, kind: FailureKind,
              *labels: str) -> list[tuple[str, str]]:
    """A leaf relation: unbroken when it holds as asked; a missing sound before ``kind``; any
    negated relation but ``not has`` is ``other``."""
    if HOLDS(node, clip) == positive:
        return []
    if not positive:
        return [(f"!{describe(node)}", OTHER.name)]
    return [(describe(node), (kind if _present(clip, *labels) else MISSING).name)]


@BROKEN.register(Has)
def _has(node: Has, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    if HOLDS(node, clip) == positive:
        return []
    return [(describe(node), MISSING.name) if positive else (f"!{describe(node)}", EXCLUDED.name)]


@BROKEN.register(Before)
def _before(node: Before, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    return _relation(node, clip, positive, ORDER, node.a, node.b)


@BROKEN.register(Overlap)
def _overlap(node: Overlap, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    return _relation(node, clip, positive, OVERLAP, node.a, node.b)


@BROKEN.register(Lasts)
def _lasts(node: Lasts, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    return _relation(node, clip, positive, DURATION, node.label)


@BROKEN.register(Count)
def _count(node: Count, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    return _relation(node, clip, positive, COUNT, node.label)


@BROKEN.register(Not)
def _not(node: Not, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    return BROKEN(node.arg, clip, not positive)


@BROKEN.register(And)
def _and(node: And, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    if positive:  # every broken argument
        return [b for arg in node.args for b in BROKEN(arg, clip, True)]
    if HOLDS(node, clip):  # not(a & b) broken only when all hold: the conjunction itself
        return [(f"!{describe(node)}", OTHER.name)]
    return []


@BROKEN.register(Or)
def _or(node: Or, clip: Occurrences, positive: bool) -> list[tuple[str, str]]:
    if not positive:  # not(a | b) = !a & !b: every argument that holds
        return [b for arg in node.args for b in BROKEN(arg, clip, False)]
    if not HOLDS(node, clip):
        return [(describe(node), OTHER.name)]
    return []


def broken_constraints(logic: Node, clip: Clip) -> tuple[Broken, ...]:
    """Every relation of ``logic`` that ``clip`` breaks, numbered by its top-level constraint
    (empty exactly when the clip satisfies the logic)."""
    occ = occurrences(clip.events)
    return tuple(Broken(i, node, kind) for i, part in enumerate(conjuncts(logic), 1)
                 for node, kind in BROKEN(part, occ, True))


def first_kind(kinds: Iterable[str]) -> str:
    """The kind of :data:`KINDS` that comes first among ``kinds`` (``other`` when none)."""
    return min(kinds, key=_RANK.__getitem__, default=OTHER.name)


# --- one failure -----------------------------------------------------------------------------

def no_evidence(score: float) -> bool:
    """Whether a hit's score holds no evidence for the query: zero, or only the clip-order tie
    term every ranking formula ends with (``store.formula.ORDER_WEIGHT``), so its place in the
    ranking is its clip id's, not a retriever's choice."""
    return abs(score) <= ORDER_WEIGHT


def classify(bench: BenchmarkView, qid: str, ranking: Sequence[str] | None,
             retriever: str = "", top_score: float | None = None) -> FailureRecord | None:
    """Why ``ranking`` (a retriever's clip ids for query ``qid``, best first) fails the query, or
    None when its first clip is relevant. ``ranking`` None: the run was not saved (the caller
    knows from the saved Acc@1 that the query failed). ``top_score``: the first clip's score; one
    with :func:`no_evidence` is that kind, with no first clip named (its place is its id's)."""
    query = bench.query_by_id[qid]
    relevant = bench.qrels.get(qid, set())
    if ranking is None:
        return FailureRecord(retriever, qid, query.task, NO_RUN.name, None)
    if ranking and ranking[0] in relevant:
        return None
    if not ranking:
        return FailureRecord(retriever, qid, query.task, NO_ANSWER.name, None)
    if top_score is not None and no_evidence(top_score):
        return FailureRecord(retriever, qid, query.task, NO_EVIDENCE.name, None,
                             first_relevant=first_rank(ranking, relevant))
    top = ranking[0]
    planted = top in _planted_negatives(bench).get(qid, frozenset())
    clip = bench.clip_by_id.get(top)
    broken = broken_constraints(query.logic, clip) if clip is not None else ()
    kind = HARD_NEGATIVE.name if planted else first_kind(b.kind for b in broken)
    return FailureRecord(retriever, qid, query.task, kind, top, broken, planted,
                         first_rank(ranking, relevant))


def _planted_negatives(bench: BenchmarkView) -> dict[str, frozenset[str]]:
    def make() -> dict[str, frozenset[str]]:
        out: dict[str, set[str]] = {}
        for c in bench.choices:
            out.setdefault(c.query_id, set()).add(c.negative)
        return {q: frozenset(s) for q, s in out.items()}

    return bench.files.derived("planted_negatives", make)


# --- every failure of saved results ---------------------------------------------------------

@dataclass(frozen=True)
class Breakdown:
    """Every failure of some retrievers on one benchmark, by retriever x task x kind."""

    retrievers: tuple[str, ...]
    tasks: tuple[str, ...]
    """the tasks the retrievers answered, in the benchmark's task order"""
    records: tuple[FailureRecord, ...]
    queries: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """retriever -> task -> queries scored (failed or not)"""

    def of(self, retriever: str, task: str | None = None) -> list[FailureRecord]:
        """The failures of ``retriever`` (in ``task``; None: every task), in query order."""
        return [r for r in self.records
                if r.retriever == retriever and (task is None or r.task == task)]

    def cell(self, retriever: str, task: str | None = None) -> dict[str, list[str]]:
        """kind -> failed query ids, kinds in :data:`KINDS` order, only kinds that occur."""
        out: dict[str, list[str]] = {}
        for r in sorted(self.of(retriever, task), key=lambda r: _RANK[r.kind]):
            out.setdefault(r.kind, []).append(r.qid)
        return out

    def counts(self) -> dict[str, dict[str, dict[str, int]]]:
        """retriever -> task -> kind -> failures (every kind of :data:`KINDS`, zeros too)."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for name in self.retrievers:
            out[name] = {}
            for task in self.tasks:
                cell = self.cell(name, task)
                out[name][task] = {k: len(cell.get(k, ())) for k in KIND_NAMES}
        return out

    def kinds_present(self) -> tuple[str, ...]:
        """The kinds some failure has, in :data:`KINDS` order."""
        seen = {r.kind for r in self.records}
        return tuple(k for k in KIND_NAMES if k in seen)

    def to_json(self) -> dict[str, Any]:
        return {"kinds": {k.name: k.means for k in KINDS}, "tasks": list(self.tasks),
                "retrievers": {name: {task: {"queries": self.queries.get(name, {}).get(task, 0),
                                             "failures": self.cell(name, task)}
                                      for task in self.tasks}
                               for name in self.retrievers},
                "records": [r.to_json() for r in self.records]}


def saved_run(bench: BenchmarkView, name: str) -> Run | None:
    """The TREC run ``bench eval`` saved for ``name`` (None when there is none)."""
    path = run_path(bench, name)
    return read_trec(path, tag=name) if path.is_file() else None


def retriever_failures(bench: BenchmarkView, name: str, qids: Iterable[str], run: Run | None,
                       acc: Mapping[str, float] | None = None) -> list[FailureRecord]:
    """The failures of one retriever's run on ``qids`` (in that order). Without a run, the
    queries whose saved Acc@1 (``acc``) is below 1 are failures of kind ``run not saved``."""
    out: list[FailureRecord] = []
    for qid in qids:
        if run is None and (acc is None or acc.get(qid, 0.0) >= 1.0):
            continue
        hits = run.hits.get(qid, []) if run is not None else []
        record = classify(bench, qid, run.ranking(qid) if run is not None else None, name,
                          hits[0].score if hits else None)
        if record is not None:
            out.append(record)
    return out


def breakdown(bench: BenchmarkView, results: Results | None = None,
              runs: Mapping[str, Run | None] | None = None) -> Breakdown:
    """Failures of every retriever of ``results`` (default: the saved results of ``bench``),
    each classified from its saved run (``runs[name]`` when given, None there: no run, else the
    TREC file under ``results/runs/``), over the queries its result scored."""
    results = results if results is not None else load_results(bench)
    records: list[FailureRecord] = []
    queries: dict[str, dict[str, int]] = {}
    seen_tasks: set[str] = set()
    for name, result in results.runs.items():
        qids = [q.id for q in bench.queries if q.id in result.task_of]
        run = runs[name] if runs is not None and name in runs else saved_run(bench, name)
        acc = {q: v.get("acc@1", 0.0) for q, v in result.per_query.items()}
        records.extend(retriever_failures(bench, name, qids, run, acc))
        per_task: dict[str, int] = {}
        for qid in qids:
            task = bench.query_by_id[qid].task
            per_task[task] = per_task.get(task, 0) + 1
        queries[name] = per_task
        seen_tasks.update(per_task)
    tasks = tuple(t for t in ALL_TASKS if t in seen_tasks)
    return Breakdown(tuple(results.runs), tasks, tuple(records), queries)
