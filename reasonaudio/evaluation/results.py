"""Evaluation results: in memory, as the ``--json`` shape, and saved under ``DATA/results/``.

Layout of ``DATA/results/`` (every file written atomically):

- ``<slug>.json``            one retriever's result: per-query values, means, describe(), depth,
                             versions, benchmark fingerprint
- ``runs/<slug>.trec``       its run as a TREC run file
- ``<slug>.embeddings.npz``  for an embedding retriever: query/clip vectors for the projection plot
- ``conditions/<condition>/`` the same layout for a benchmark read under another acoustic
                             condition than clean (``bench eval --condition snr5``)

``<slug>`` is the retriever name made file-safe (plus a short hash when that changed it). A
result is tied to its benchmark by the sha256 of ``manifest.json``; results from another build
of the directory are reported as stale and not used.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from reasonaudio.dataset.keys import ResultKey, legacy_key
from reasonaudio.evaluation.metrics import METRICS, aggregate
from reasonaudio.dataset.benchmark import ALL_TASKS, MANIFEST, tasks_present
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.conditions import CLEAN, results_subdir
from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_file, read_json, sha256_file
from reasonaudio.dataset.benchmark import BENCHMARK_FILES
from reasonaudio.provenance import versions
from reasonaudio.tasks.base import CAPTION
from reasonaudio.tasks.formulation_records import is_default

RESULTS_DIR = "results"
NOT_RESULTS = ("combine-params.json", "detect-*.json")
"""JSON files a results folder holds besides results files (tuned combined parameters,
``bench detect``'s summaries); every other ``*.json`` there is a results file."""
FORMAT = "reasonaudio-results/1"
def fingerprint(bench: BenchmarkView) -> str:
    """:func:`_fingerprint`, computed once per loaded benchmark (results code asks for it often)."""
    return bench.files.derived("fingerprint", lambda: _fingerprint(bench))


def _fingerprint(bench: BenchmarkView) -> str:
    """sha256 of the manifest, which itself records the sha256 of every benchmark file (the load
    verified them); loaded with --no-verify, the files' own hashes are folded in, since files
    edited on purpose no longer match the manifest."""
    digest = sha256_file(bench.root / MANIFEST)
    if bench.verified:
        return digest
    files = bench.manifest.get("files") or {}
    actual = {name: sha256_file(bench.root / name) for name in BENCHMARK_FILES}
    recorded = {n: r.get("sha256") for n, r in files.items() if isinstance(r, dict)}
    if all(recorded.get(n) == sha for n, sha in actual.items()):
        return digest  # unedited after all: the same fingerprint as a verified load
    h = hashlib.sha256(digest.encode())
    for name, sha in actual.items():
        h.update(f"\n{name}\t{sha}".encode())
    return h.hexdigest()


def data_summary(bench: BenchmarkView) -> dict[str, Any]:
    """What a results file says about the benchmark it was computed on."""
    per_task = {t: 0 for t in tasks_present([q.task for q in bench.queries])}
    for q in bench.queries:
        per_task[q.task] += 1
    manifest = {k: v for k, v in bench.manifest.items() if k != "files"}
    condition = bench.condition
    extra = {} if condition.is_clean else {"condition": condition.to_json()}
    return {
        "path": str(bench.root),
        "fingerprint": fingerprint(bench),
        "seed": bench.seed,
        "n_clips": len(bench.clips),
        "n_queries": len(bench.queries),
        "queries_per_task": per_task,
        "n_choices": len(bench.choices),
        "manifest": manifest,
        **extra,
    }


def slug(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "retriever"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return safe


@dataclass
class RetrieverResult:
    """One retriever on one benchmark."""

    name: str
    per_query: dict[str, dict[str, float]]
    """query id -> metric -> value (``mc_acc`` only where the query has a choice)"""
    task_of: dict[str, str]
    overall: dict[str, float] = field(default_factory=dict)
    per_task: dict[str, dict[str, float]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    describe: dict[str, Any] = field(default_factory=dict)
    depth: int = 100
    timing: dict[str, float] = field(default_factory=dict)
    """seconds spent; the only field that differs between two identical evaluations"""
    fingerprint: str = ""
    versions: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    """query id -> why the retriever could not answer it (those queries score 0)"""
    formulation: str = CAPTION
    """the formulation of the query texts it answered (``bench eval --formulation``): its key's view"""
    retriever: str = ""
    """the retriever's (or run file's) own name: its key's name (``name`` is the stored name)"""
    condition: str = CLEAN
    """the acoustic condition it was evaluated under: its key's condition"""

    def __post_init__(self) -> None:
        if not self.overall:
            self.recompute()

    @property
    def key(self) -> ResultKey:
        return ResultKey(self.retriever or self.name, self.condition, self.formulation)

    def recompute(self) -> None:
        agg = aggregate(self.per_query, self.task_of, ALL_TASKS, METRICS)
        self.overall, self.per_task, self.counts = agg.overall, agg.per_task, agg.counts

    def values(self, metric: str, qids: Iterable[str]) -> list[float]:
        """Per-query values in ``qids`` order (0 for a query missing the metric)."""
        return [float(self.per_query.get(q, {}).get(metric, 0.0)) for q in qids]

    def summary_json(self) -> dict[str, Any]:
        return {"overall": dict(self.overall), "per_task": {t: dict(v) for t, v in self.per_task.items()}}

    def to_json(self) -> dict[str, Any]:
        out = self.summary_json()
        out.update({
            "format": FORMAT,
            "name": self.name,
            "describe": self.describe,
            "depth": self.depth,
            "counts": self.counts,
            "timing": self.timing,
            "fingerprint": self.fingerprint,
            "versions": self.versions,
            "failures": self.failures,
            "formulation": self.formulation,
            "key": self.key.to_json(),
            "per_query": {q: {"task": self.task_of[q], **self.per_query.get(q, {})}
                          for q in sorted(self.task_of)},
        })
        return out

    @classmethod
    def from_json(cls, obj: object, where: str) -> "RetrieverResult":
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise DataError(f"{where}: not a results file of format {FORMAT!r}")
        try:
            per_query_raw = obj["per_query"]
            task_of = {q: str(v["task"]) for q, v in per_query_raw.items()}
            per_query = {q: {m: float(x) for m, x in v.items() if m in METRICS}
                         for q, v in per_query_raw.items()}
            name, formulation = str(obj["name"]), str(obj.get("formulation", CAPTION))
            key = (ResultKey.from_json(obj["key"], where) if "key" in obj
                   else legacy_key(name, formulation, CLEAN, where))
            return cls(name=name, per_query=per_query, task_of=task_of,
                       describe=dict(obj.get("describe", {})), depth=int(obj.get("depth", 100)),
                       timing=dict(obj.get("timing", {})), fingerprint=str(obj.get("fingerprint", "")),
                       versions=dict(obj.get("versions", {})),
                       failures=dict(obj.get("failures", {})),
                       formulation=formulation, retriever=key.name, condition=key.condition)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{where}: malformed results file ({exc})") from None


@dataclass
class Results:
    """Every retriever evaluated on one benchmark (the ``--json`` document)."""

    data: dict[str, Any]
    versions: dict[str, Any]
    runs: dict[str, RetrieverResult] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    """names of saved results that belong to another build of the benchmark (not in ``runs``)"""
    unreadable: list[str] = field(default_factory=list)
    """results files that could not be read, each as ``PATH: why`` (not in ``runs``)"""

    def to_json(self, per_query: bool = True) -> dict[str, Any]:
        runs = {}
        for name, r in self.runs.items():
            entry = r.summary_json()
            entry.update({"describe": r.describe, "depth": r.depth, "counts": r.counts,
                          "timing": r.timing, "failures": r.failures,
                          "formulation": r.formulation})
            if per_query:
                entry["per_query"] = r.to_json()["per_query"]
            runs[name] = entry
        return {"data": self.data, "versions": self.versions, "runs": runs}


def results_dir(bench: BenchmarkView) -> Path:
    """``DATA/results/``; under a condition other than clean ``DATA/results/conditions/NAME/``."""
    sub = results_subdir(bench.condition.name)
    return bench.root / RESULTS_DIR / sub if sub else bench.root / RESULTS_DIR


def result_path(bench: BenchmarkView, name: str) -> Path:
    return results_dir(bench) / f"{slug(name)}.json"


def run_path(bench: BenchmarkView, name: str) -> Path:
    return results_dir(bench) / "runs" / f"{slug(name)}.trec"


def embeddings_path(bench: BenchmarkView, name: str) -> Path:
    return results_dir(bench) / f"{slug(name)}.embeddings.npz"


def save_result(bench: BenchmarkView, result: RetrieverResult) -> Path:
    path = result_path(bench, result.name)
    with atomic_file(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(result.to_json(), ensure_ascii=False, indent=1, allow_nan=False) + "\n")
    return path


def load_result(bench: BenchmarkView, name: str) -> RetrieverResult | None:
    """The saved result of ``name`` on this build of the benchmark, or None (missing or stale)."""
    path = result_path(bench, name)
    if not path.is_file():
        return None
    result = RetrieverResult.from_json(read_json(path), str(path))
    if result.fingerprint != fingerprint(bench):
        return None
    result.condition = bench.condition.name  # the folder it was saved in
    return result


def load_results(bench: BenchmarkView, names: Iterable[str] | None = None,
                 formulations: bool = False) -> Results:
    """Saved results (``names`` in that order, or all: oracle first, then by name); results of
    another build of the benchmark are listed in ``Results.stale``, files that cannot be read
    (corrupt, cut, not results) in ``Results.unreadable``, never dropped unsaid. Without ``names``, results
    of formulations other than ``caption`` (``NAME@FORMULATION``) only with ``formulations``."""
    fp = fingerprint(bench)
    found: dict[str, RetrieverResult] = {}
    stale: list[str] = []
    unreadable: list[str] = []
    folder = results_dir(bench)
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            if any(fnmatch.fnmatch(path.name, other) for other in NOT_RESULTS):
                continue
            try:
                r = RetrieverResult.from_json(read_json(path), str(path))
                r.condition = bench.condition.name  # the folder it was saved in
            except DataError as exc:
                unreadable.append(str(exc))
                continue
            if r.fingerprint != fp:
                stale.append(r.name)
            elif not is_default(r.formulation) and names is None and not formulations:
                continue
            else:
                found[r.name] = r
    if names is not None:
        found = {n: found[n] for n in names if n in found}
    else:  # the upper bound first, then by name
        found = dict(sorted(found.items(), key=lambda kv: (kv[0] != "oracle", kv[0])))
    return Results(data_summary(bench), versions(), found, sorted(stale), unreadable)
