"""What the explorer's pages show, gathered from the library (no HTML here).

Everything is read from the benchmark directory as the other commands leave it: saved results
(``evaluation/results.py``), their TREC runs, the minimal pairs in ``choices.jsonl``, the Qdrant
collections (captions of two-stage collections, events of detected collections) and, for the
search box, the same retrievers ``bench search`` builds. Nothing is written.

New kinds of results appear without new page code: every saved retriever is listed, and the
fields of :data:`DIMENSIONS` (formulation, condition, examples: how a ``NAME@interleaved`` result read
its audio examples) become columns wherever a result records
them in its ``describe``; a query's extra fields (formulations, templates, shapes) are listed as
they are.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.dataset.interleaved import INTERLEAVED
from reasonaudio.evaluation.compare import Comparison, compare
from reasonaudio.evaluation.failures import Breakdown, breakdown, no_evidence
from reasonaudio.evaluation.intervals import metric_interval
from reasonaudio.evaluation.metrics import LABELS, METRICS, OVERALL, first_rank
from reasonaudio.evaluation.results import Results, load_results, run_path
from reasonaudio.evaluation.runs import Run, read_trec
from reasonaudio.models.label_matcher import shared_matcher
from reasonaudio.querylang.ablation import ABLATIONS
from reasonaudio.logic import Node, conjuncts, describe, labels
from reasonaudio.dataset.benchmark import CHOICES, TASKS, Choice, Query
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import QueryParseError, ReasonAudioError, error_line
from reasonaudio.explorer.store_access import StoreAccess
from reasonaudio.explorer.retriever_view import CAPTION, DETECTED, EVENTS, FIELDS, sources
from reasonaudio.explorer.verdicts import Seen, breaking, broken, checks, measurements, verdict
from reasonaudio.fileio import read_jsonl
from reasonaudio.models.captioners import oracle_caption
from reasonaudio.models.names import TWO_STAGE, parse_two_stage
from reasonaudio.querylang.parser import ResolveOptions, parse_detailed
from reasonaudio.retrievers.base import Retriever, RetrieverOptions
from reasonaudio.retrievers.registry import TRUTH, get_retriever, input_kind, spec_for
from reasonaudio.store.collections import PAYLOAD_COLLECTION
from reasonaudio.store.open import resolve_backend
from reasonaudio.tasks.formulation_records import is_default

DIMENSIONS = ("formulation", "condition", "examples")
"""fields of a result's ``describe`` shown as columns beside its name when any result has them"""
TOP = 10
PLOT_SUFFIXES = (".png", ".svg")
PAYLOAD_RETRIEVERS = ("oracle", "bag-of-sounds", "random", *(a.retriever for a in ABLATIONS))


class NotFound(ReasonAudioError):
    """An id in a URL that names nothing in this benchmark (the pages answer 404)."""


@dataclass(frozen=True)
class Ranked:
    """A clip in a retriever's ranking for one query, with the judge's verdict per constraint."""

    rank: int
    clip_id: str
    score: float
    checks: tuple[bool, ...]
    relevant: bool
    role: str
    """"positive", "hard negative" (the planted pair) or ""."""
    evidence: bool = True
    """False when the score holds no evidence (``evaluation.failures.no_evidence``): the clip's
    place is its id's order, not the retriever's choice"""

    @property
    def verdict(self) -> str:
        """``meets the query`` / ``breaks C2`` (the logic's word on the clip, with or without qrels)."""
        return verdict(self.checks)

    @property
    def meets(self) -> bool:
        return bool(self.checks) and not broken(self.checks)


@dataclass
class Timeline:
    """Events of one clip (true or detected) for an SVG timeline."""

    duration: float
    events: list[dict[str, Any]]
    """label, onset, offset, mentioned (bool), confidence (detected only, else None), breaks (the
    numbers of the broken constraints that mention its sound: outlined)"""
    checks: tuple[bool, ...] = ()
    """whether these events meet each constraint of the query (none without a query)"""


def events_timeline(events: Sequence[Any], duration: float, logic: Node | None,
                    confidence: dict[str, float] | None = None) -> Timeline:
    """A timeline of ``events`` (true or perceived), each marked mentioned by the query and
    outlined when it belongs to a constraint these events break."""
    mentioned = set(labels(logic)) if logic is not None else None  # None: no query, all drawn alike
    marks = checks(logic, events)
    breaks = breaking(logic, marks)
    rows = [{"label": e.label, "onset": e.onset, "offset": e.offset,
             "mentioned": mentioned is None or e.label in mentioned,
             "confidence": None if confidence is None else confidence.get(e.label),
             "breaks": breaks.get(e.label, [])}
            for e in sorted(events, key=lambda e: (e.onset, e.label))]
    return Timeline(duration, rows, marks)


@dataclass
class Failure:
    qid: str
    text: str
    task: str
    first_relevant: float
    """rank of the first relevant clip (inf: not in the run)"""
    positive_rank: float
    negative_rank: float
    values: dict[str, float] = field(default_factory=dict)
    kind: str = ""
    """why it failed (``evaluation/failures.py``'s kind of the clip ranked first)"""
    top_clip: str | None = None
    broken: list[str] = field(default_factory=list)
    """the constraints the first clip breaks, as ``C2 !has(siren)``"""


def shown_results(bench: BenchmarkView) -> Results:
    """The saved results the pages show: every result of the caption formulation (``load_results``'
    default), then the ``NAME@interleaved`` ones (their "examples" column), read in one pass."""
    saved = load_results(bench, formulations=True)
    runs = {n: r for n, r in saved.runs.items() if is_default(r.formulation)}
    runs.update((n, r) for n, r in saved.runs.items() if r.formulation == INTERLEAVED)
    saved.runs = runs
    return saved


def best_marks(rows: Sequence[Sequence[float | None]]) -> list[list[bool]]:
    """Per row and column, whether the value is the column's highest (every metric: higher is
    better; ties all marked; a column of no values marks none)."""
    columns = list(zip(*rows)) if rows else []
    tops = [max((v for v in col if v is not None and not math.isnan(v)), default=None) for col in columns]
    return [[v is not None and top is not None and v == top for v, top in zip(row, tops)] for row in rows]


def rank_text(rank: float) -> str:
    return "-" if math.isinf(rank) else str(int(rank))


def sort_value(rank: float, depth: int) -> int:
    """A rank for sorting: past the run's depth sorts after every rank in it."""
    return depth + 1 if math.isinf(rank) else int(rank)


class Catalog:
    """One benchmark and its saved results, as the pages read them; thread-safe."""

    def __init__(self, bench: BenchmarkView, plots_dir: Path | None = None,
                 backend: str | None = None, url: str | None = None,
                 bank_spec: str | None = None) -> None:
        self.bench = bench
        self.backend = backend
        self.url = url
        resolve_backend(backend, url)  # a URL that does not parse: one line at start, not a 500 page
        self.bank_spec = bank_spec
        self.results: Results = shown_results(bench)
        self.plots_dir = plots_dir
        self.plots = self._list_plots(plots_dir)
        self._runs: dict[str, Run | None] = {}
        self.run_notes: dict[str, str] = {}
        """retriever -> why its saved run cannot be shown (the file, and what is wrong with it)"""
        self._lock = threading.RLock()
        self.access = StoreAccess(bench.root, backend, url, self._lock)
        self._retrievers: dict[str, Any] = {}
        self._building: dict[str, threading.Lock] = {}
        self._breakdown: Breakdown | None = None
        self._tables: dict[str, list[dict[str, Any]]] = {}
        self._paired: dict[tuple[str, str], Any] = {}
        self._failed: dict[tuple[str, str], Any] = {}
        raw = read_jsonl(bench.root / CHOICES) if (bench.root / CHOICES).is_file() else []
        self.violation = {str(r.get("query_id")): str(r.get("violation", "")) for r in raw
                          if isinstance(r, dict)}
        self.choice: dict[str, Choice] = {c.query_id: c for c in bench.choices}
        self.queries_by_task = {t: [q for q in bench.queries if q.task == t] for t in TASKS}
        self._query_ids = [q.id for q in bench.queries]
        self.planted_in: dict[str, list[tuple[str, str]]] = {}
        for c in bench.choices:
            self.planted_in.setdefault(c.positive, []).append((c.query_id, "positive"))
            self.planted_in.setdefault(c.negative, []).append((c.query_id, "hard negative"))

    # --- ids ------------------------------------------------------------------------------

    @staticmethod
    def _list_plots(folder: Path | None) -> dict[str, Path]:
        if folder is None or not folder.is_dir():
            return {}
        return {p.name: p for p in sorted(folder.iterdir())
                if p.is_file() and not p.is_symlink() and p.suffix.lower() in PLOT_SUFFIXES}

    def clip(self, clip_id: str) -> Clip:
        clip = self.bench.clip_by_id.get(clip_id)
        if clip is None:
            raise NotFound(f"no clip with id {clip_id!r} in this benchmark")
        return clip

    def query(self, qid: str) -> Query:
        q = self.bench.query_by_id.get(qid)
        if q is None:
            raise NotFound(f"no query with id {qid!r} in this benchmark")
        return q

    def retriever(self, name: str) -> str:
        if name not in self.results.runs:
            raise NotFound(f"no saved results for retriever {name!r}")
        return name

    def task(self, task: str) -> str:
        if task not in TASKS and task != "all":
            raise NotFound(f"no task {task!r} (tasks: {', '.join(TASKS)}, all)")
        return task

    def plot(self, name: str) -> Path:
        path = self.plots.get(name)
        if path is None:
            raise NotFound(f"no plot named {name!r}")
        return path

    # --- results ----------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return list(self.results.runs)

    def dimensions(self) -> list[str]:
        """The :data:`DIMENSIONS` some saved result records (columns of the tables)."""
        return [d for d in DIMENSIONS if any(d in r.describe for r in self.results.runs.values())]

    def dimension_values(self, name: str) -> list[str]:
        describe_ = self.results.runs[name].describe
        return [str(describe_.get(d, "")) for d in self.dimensions()]

    def metrics(self) -> list[tuple[str, str]]:
        return [(m, LABELS.get(m, m)) for m in METRICS]

    def table(self, task: str) -> list[dict[str, Any]]:
        """One row per saved retriever: what it reads, its dimensions, every metric on ``task``
        ("all": overall) with its 95% interval (``evaluation/intervals.metric_interval``: Wilson for
        Acc@1 and MC, a bootstrap of the mean for the others), whether it is the best of its column
        (``best``) and the best of the retrievers that do not read the ground truth
        (``best_heard``), and how many queries it got wrong. Kept: the results do not change."""
        with self._lock:
            if task not in self._tables:
                self._tables[task] = self._table(task)
            return self._tables[task]

    def _table(self, task: str) -> list[dict[str, Any]]:
        rows = []
        group = OVERALL if task == "all" else task
        for name, r in self.results.runs.items():
            values = r.overall if task == "all" else r.per_task.get(task, {})
            rows.append({"name": name, "dims": self.dimension_values(name), "reads": input_kind(r.key.name),
                         "values": [values.get(m) for m in METRICS],
                         "intervals": [metric_interval(r, group, m) if values.get(m) is not None else None
                                       for m in METRICS],
                         "failures": self.count_failures(name, task)})
        for key, keep in (("best", lambda row: True), ("best_heard", lambda row: row["reads"] != TRUTH)):
            for row, marks in zip(rows, best_marks([row["values"] if keep(row) else [None] * len(METRICS)
                                                    for row in rows])):
                row[key] = marks
        return rows

    def run(self, name: str) -> Run | None:
        """The saved TREC run of ``name``, read once (None when the results have none or it cannot
        be read: :meth:`run_note` says why, and only the views of that run lack it)."""
        with self._lock:
            if name not in self._runs:
                self._runs[name] = self._read_run(name)
            return self._runs[name]

    def _read_run(self, name: str) -> Run | None:
        path = run_path(self.bench, name)
        shown = path.relative_to(self.bench.root) if path.is_relative_to(self.bench.root) else path
        try:
            if not path.is_file():
                return None
            run = read_trec(path, tag=name)
        except ReasonAudioError as exc:
            self.run_notes[name] = f"{shown} cannot be read: {error_line(exc).split(': ', 1)[-1]}"
        except (OSError, UnicodeError, ValueError) as exc:
            self.run_notes[name] = f"{shown} cannot be read: {exc}"
        else:
            if not run.hits:
                self.run_notes[name] = f"{shown} holds no ranking (the file is empty)"
            return run
        return None

    def run_note(self, name: str) -> str | None:
        """Why the saved run of ``name`` shows no ranking (unreadable, empty), or None."""
        self.run(name)
        return self.run_notes.get(name)

    def warm(self) -> None:
        """Read every saved run, classify the failures and open the store now (a server calls this
        in the background after it starts, so the first query page does not wait for them)."""
        for name in self.names:
            self.run(name)
        self.breakdown()
        self.collections()

    def run_saved(self, name: str) -> bool:
        """Whether ``name`` has a saved TREC run (without reading it)."""
        return run_path(self.bench, name).is_file()

    def ranking(self, name: str, qid: str) -> list[str]:
        run = self.run(name)
        return run.ranking(qid) if run is not None else []

    def rank_of(self, name: str, qid: str, clip_id: str | None) -> float:
        if clip_id is None:
            return math.inf
        return first_rank(self.ranking(name, qid), {clip_id})

    def depth(self, name: str) -> int:
        return self.results.runs[name].depth

    # --- one query -----------------------------------------------------------------------------

    def logic_parts(self, logic: Node | None) -> list[str]:
        return [describe(c) for c in conjuncts(logic)] if logic is not None else []

    def top(self, name: str, qid: str, k: int = TOP) -> list[Ranked]:
        q = self.query(qid)
        run = self.run(name)
        if run is None:
            return []
        return self.ranked(run.hits.get(qid, [])[:k], q.logic, qid)

    def ranked(self, hits: Sequence[Any], logic: Node | None, qid: str | None, start: int = 1) -> list[Ranked]:
        """``hits`` (ranked from ``start``) with the judge's checks, relevance, role and evidence."""
        relevant = self.bench.qrels.get(qid, set()) if qid else set()
        choice = self.choice.get(qid) if qid else None
        out = []
        for i, h in enumerate(hits, start):
            clip = self.bench.clip_by_id.get(h.clip_id)
            marks = checks(logic, clip.events) if clip is not None else ()
            role = ""
            if choice is not None:
                role = {choice.positive: "positive", choice.negative: "hard negative"}.get(h.clip_id, "")
            score = float(h.score)
            out.append(Ranked(i, h.clip_id, score, marks, h.clip_id in relevant, role,
                              math.isnan(score) or not no_evidence(score)))
        return out

    def pair(self, q: Query) -> list[dict[str, Any]]:
        """The planted minimal pair of query ``q`` (none without one): per side its role, clip,
        timeline, checks, verdict and measured facts (``verdicts.measurements``)."""
        choice = self.choice.get(q.id)
        if choice is None:
            return []
        out = []
        for role, cid in (("positive", choice.positive), ("hard negative", choice.negative)):
            clip = self.clip(cid)
            marks = checks(q.logic, clip.events)
            out.append({"role": role, "clip": clip, "timeline": self.timeline(clip, q.logic),
                        "checks": marks, "verdict": verdict(marks),
                        "meets": bool(marks) and not broken(marks),
                        "facts": measurements(q.logic, clip.events)})
        return out

    def neighbours(self, qid: str) -> tuple[str | None, str | None]:
        """The previous and next query id in the benchmark's order (None at either end)."""
        ids = self._query_ids
        i = ids.index(qid)
        return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

    def pair_ranks(self, qid: str) -> list[dict[str, Any]]:
        """Per saved retriever: rank of the first relevant clip, of the planted positive and of the
        hard negative, the query's metric values and, when it failed, the kind of its failure."""
        choice = self.choice.get(qid)
        relevant = self.bench.qrels.get(qid, set())
        rows = []
        for name, r in self.results.runs.items():
            ranking = self.ranking(name, qid)
            rows.append({
                "name": name, "dims": self.dimension_values(name), "has_run": self.run(name) is not None,
                "note": self.run_note(name),
                "first_relevant": first_rank(ranking, relevant),
                "positive": self.rank_of(name, qid, choice.positive if choice else None),
                "negative": self.rank_of(name, qid, choice.negative if choice else None),
                "values": r.per_query.get(qid, {}), "failure": r.failures.get(qid),
                "kind": self.failure_kind(name, qid), "depth": r.depth})
        return rows

    def timeline(self, clip: Clip, logic: Node | None = None) -> Timeline:
        return events_timeline(clip.events, clip.duration, logic)

    # --- failures and comparisons ---------------------------------------------------------------

    def _queries(self, task: str) -> list[Any]:
        return list(self.bench.queries) if task == "all" else self.queries_by_task[task]

    def count_failures(self, name: str, task: str) -> int:
        r = self.results.runs[name]
        return sum(1 for q in self._queries(task) if r.per_query.get(q.id, {}).get("acc@1", 0.0) < 1.0)

    def failures(self, name: str, task: str, kind: str | None = None) -> list[Failure]:
        """Queries of ``task`` whose top clip is not relevant under ``name`` (Acc@1 = 0), each with
        the kind of its failure, the clip ranked first and the constraints it breaks (``kind``:
        only failures of that kind)."""
        r = self.results.runs[name]
        records = {rec.qid: rec for rec in self.breakdown().of(name)}
        out = []
        for q in self._queries(task):
            values = r.per_query.get(q.id, {})
            rec = records.get(q.id)
            if values.get("acc@1", 0.0) >= 1.0 or (kind is not None and (rec is None or rec.kind != kind)):
                continue
            choice = self.choice.get(q.id)
            ranking = self.ranking(name, q.id)
            out.append(Failure(q.id, q.text, q.task, first_rank(ranking, self.bench.qrels.get(q.id, set())),
                               first_rank(ranking, {choice.positive}) if choice else math.inf,
                               first_rank(ranking, {choice.negative}) if choice else math.inf,
                               dict(values), rec.kind if rec else "", rec.top_clip if rec else None,
                               [f"C{b.index} {b.node}" for b in rec.broken] if rec else []))
        return out

    def breakdown(self) -> Breakdown:
        """Every saved retriever's failures by task and kind (``evaluation/failures.breakdown`` over the
        saved results and the runs read here), computed once."""
        with self._lock:
            if self._breakdown is None:
                runs = {n: self.run(n) for n in self.names}  # None: no run, or one that cannot be read
                self._breakdown = breakdown(self.bench, self.results, runs)
                self._failed = {(r.retriever, r.qid): r for r in self._breakdown.records}
            return self._breakdown

    def failure_kind(self, name: str, qid: str) -> str:
        """The kind of ``name``'s failure on ``qid`` ("" when its first clip is relevant)."""
        self.breakdown()
        found = self._failed.get((name, qid))
        return found.kind if found is not None else ""

    def compare(self, a: str, b: str, task: str, metric: str = "acc@1") -> dict[str, list[dict[str, Any]]]:
        """Queries where A beats B on ``metric`` (wins), where B beats A (losses), and the count of ties."""
        if metric not in METRICS:
            raise NotFound(f"no metric {metric!r} (metrics: {', '.join(METRICS)})")
        ra, rb = self.results.runs[a], self.results.runs[b]
        wins, losses, ties = [], [], 0
        for q in self._queries(task):
            va = ra.per_query.get(q.id, {}).get(metric, 0.0)
            vb = rb.per_query.get(q.id, {}).get(metric, 0.0)
            if va == vb:
                ties += 1
                continue
            relevant = self.bench.qrels.get(q.id, set())
            row = {"qid": q.id, "text": q.text, "task": q.task, "a": va, "b": vb,
                   "rank_a": first_rank(self.ranking(a, q.id), relevant),
                   "rank_b": first_rank(self.ranking(b, q.id), relevant)}
            (wins if va > vb else losses).append(row)
        return {"wins": wins, "losses": losses, "ties": [{"n": ties}]}

    def paired(self, a: str, b: str) -> Comparison:
        """``bench compare``'s paired tests of ``a`` against ``b`` (``evaluation/compare.compare``: a
        randomization test per task and overall, Holm-corrected over the tasks), computed once."""
        with self._lock:
            key = (a, b)
            if key not in self._paired:
                self._paired[key] = compare(self.results.runs[a], self.results.runs[b])
            return self._paired[key]

    # --- the store: captions, detected events, search ----------------------------------------------

    def store_note(self) -> str | None:
        """Why the store cannot be read, or that the pages read a copy of it (None: all is well)."""
        with self._lock:
            return self.access.note()

    def collections(self) -> list[tuple[str, Any]]:
        """(collection name, meta) of every complete collection the store holds (listed once:
        the store is opened read-only)."""
        with self._lock:
            return self.access.collections()

    def searchable(self) -> list[str]:
        """Retrievers the store can answer with (payload retrievers, then one per collection)."""
        names: list[str] = []
        for cname, meta in self.collections():
            if cname == PAYLOAD_COLLECTION:
                names[:0] = list(PAYLOAD_RETRIEVERS)
            else:  # a collection records the retriever that reads it (clap, two-stage:..., detected:...)
                names.append(meta.model)
        known = []
        for n in names:
            try:
                spec_for(n)
            except ReasonAudioError:
                continue
            if n not in known:
                known.append(n)
        return known

    def captions(self, clip: Clip) -> list[tuple[str, str]]:
        """(captioner or collection, caption): the ground truth's, then every stored one."""
        out = [("oracle-caption (ground truth)", oracle_caption(clip))]
        with self._lock:
            for cname, meta in self.collections():
                if not meta.model.startswith(TWO_STAGE):
                    continue
                for payload in self._payloads(cname, CAPTION, [clip.id]).values():
                    if payload.get("caption") is not None:
                        captioner = parse_two_stage(meta.model, lexical=True)[0]
                        out.append((f"{captioner} ({meta.model})", str(payload["caption"])))
        return out

    def detected(self, clip: Clip, logic: Node | None = None) -> list[tuple[str, Timeline]]:
        """(detected retriever, timeline of its events) for every detected collection."""
        out = []
        with self._lock:
            for cname, meta in self.collections():
                if meta.model.startswith(DETECTED):
                    for payload in self._payloads(cname, EVENTS, [clip.id]).values():
                        out.append((meta.model, detected_timeline(payload, clip.duration, logic)))
        return out

    def _payloads(self, collection: str, kind: str, clip_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """clip id -> the payload fields a view of ``kind`` reads (caller holds the lock)."""
        return self.access.payloads(collection, FIELDS[kind], clip_ids)

    def seen(self, name: str, clip_ids: Sequence[str], logic: Node | None) -> dict[str, list[dict[str, Any]]]:
        """What the saved retriever ``name`` saw of each clip, from the collections it reads
        (``retriever_view.sources``): clip id -> [{"kind": "caption", "model", "caption"} or
        {"kind": "events", "model", "timeline"}]. Empty for retrievers that read no caption or
        event (the oracle, embeddings) and when the store lacks the collection."""
        condition = str(self.results.runs[name].describe.get("condition", "clean")) \
            if name in self.results.runs else "clean"
        ids = [c for c in clip_ids if c in self.bench.clip_by_id]
        out: dict[str, list[dict[str, Any]]] = {}
        with self._lock:
            own = self.results.runs[name].key.name if name in self.results.runs else name
            for src in sources(own, condition, self.collections()):
                for cid, payload in self._payloads(src.collection, src.kind, ids).items():
                    view: dict[str, Any] = {"kind": src.kind, "model": src.model}
                    if src.kind == CAPTION:
                        view["caption"] = str(payload.get("caption", ""))
                    else:
                        view["timeline"] = detected_timeline(payload, self.clip(cid).duration, logic)
                    out.setdefault(cid, []).append(view)
        return out

    def explanations(self, name: str, clip_ids: Sequence[str], logic: Node | None) -> dict[str, str]:
        """clip id -> how the saved retriever ``name`` scored it where the store can say: the
        soft value of each constraint (``soft: C1 0.912; C2 0.055``, the search page's line) for
        a retriever that reads a detected collection; none for the others."""
        from reasonaudio.retrievers.soft_rank import SOFT_PAYLOAD_FIELDS, soft_line

        if logic is None or name not in self.results.runs:
            return {}
        condition = str(self.results.runs[name].describe.get("condition", "clean"))
        out: dict[str, str] = {}
        with self._lock:
            for src in sources(self.results.runs[name].key.name, condition, self.collections()):
                if src.kind == EVENTS:
                    for cid, payload in self.access.payloads(src.collection, SOFT_PAYLOAD_FIELDS,
                                                             clip_ids).items():
                        out.setdefault(cid, soft_line(payload, logic))
        return out

    def prepared(self, retriever: str) -> bool:
        """Whether ``retriever`` is built (its model loaded) and answers searches at once."""
        with self._lock:
            return retriever in self._retrievers

    def instant(self, retriever: str) -> bool:
        """Whether building ``retriever`` loads no model (the payload retrievers): the search page
        builds it while answering; any other is built in the background first (``model_loading``)."""
        return retriever in PAYLOAD_RETRIEVERS or self.prepared(retriever)

    def prepare(self, retriever: str) -> Retriever:
        """The retriever ``retriever`` of the store, built on first use (its model's weights
        loaded) and kept; the search box and the background loading both come here."""
        if retriever not in self.searchable():
            raise NotFound(f"the store has no retriever {retriever!r} (it has: "
                           f"{', '.join(self.searchable()) or 'none'})")
        with self._lock:
            building = self._building.setdefault(retriever, threading.Lock())
        with building:  # one build per retriever; pages keep reading the store meanwhile
            with self._lock:
                found = self._retrievers.get(retriever)
                self.access.open()
            if found is None:
                options = RetrieverOptions(resolve=resolve_options(), auto_ingest=False)
                found = self.access.attempt(lambda: get_retriever(retriever, self.bench, options,
                                                                  store=self.access.live()))
                with self._lock:
                    self._retrievers[retriever] = found
            return found

    def search(self, text: str, retriever: str, k: int) -> dict[str, Any]:
        """``bench search`` for the page: logic, sound-name resolutions, ranked hits with checks."""
        from reasonaudio.retrievers.stored_vectors import resolve_query_text

        if retriever not in self.searchable():
            raise NotFound(f"the store has no retriever {retriever!r} (it has: "
                           f"{', '.join(self.searchable()) or 'none'})")
        qid = text.strip() if text.strip() in self.bench.query_by_id else None
        text = resolve_query_text(self.bench, text.strip())
        spec = spec_for(retriever)
        resolve = resolve_options()
        parsed, note = None, None
        try:
            parsed = parse_detailed(text, self.bench.labels, resolve)
        except QueryParseError as exc:
            if spec.needs_logic:
                raise
            note = f"no constraint checks: {exc}"
        logic = parsed.logic if parsed is not None else None
        found = self.prepare(retriever)  # before the lock: a build takes it call by call
        with self._lock:
            hits = self.access.attempt(lambda: found.search(text, k))
            ids = [h.clip_id for h in hits]
            own = self.access.attempt(lambda: found.captions(ids))
        seen = self.seen(retriever, ids, logic)
        captions = {cid: line for cid, line in own.items()  # a caption the view shows already, once
                    if line not in {v.get("caption") for v in seen.get(cid, ())}}
        return {"text": text, "logic": logic, "parts": self.logic_parts(logic), "note": note,
                "resolutions": list(parsed.resolutions) if parsed is not None else [],
                "hits": self.ranked(hits, logic, qid), "captions": captions, "seen": seen, "qid": qid}

    def close(self) -> None:
        with self._lock:
            for r in self._retrievers.values():
                r.close()
            self._retrievers.clear()
            self.access.close()


def detected_timeline(payload: dict[str, Any], duration: float, logic: Node | None) -> Timeline:
    """The timeline of a detected collection's payload (its events, each with its confidence)."""
    events = [Seen(str(e["label"]), float(e["onset"]), float(e["offset"]))
              for e in payload.get("events") or ()]
    return events_timeline(events, duration, logic, dict(payload.get("confidence") or {}))


def resolve_options() -> ResolveOptions:
    """How the search box reads sound phrases: as ``bench search`` does by default (labels, then
    MiniLM's semantic fallback, loaded on the first phrase that needs it)."""
    return ResolveOptions(semantic=shared_matcher())


def json_text(value: object) -> str:
    """A query's extra field as text: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
