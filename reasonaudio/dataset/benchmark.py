"""Reading a benchmark directory (BEIR layout, docs/benchmark.md) into typed objects.

:class:`BenchmarkFiles` is the directory's files, parsed lazily and checked on load; every
consumer (search, ingest, eval) reads them through a
:class:`~reasonaudio.dataset.view.BenchmarkView` (the files under one condition, in one view),
which :func:`~reasonaudio.dataset.view.load_benchmark` returns, so a half-written or hand-edited
directory fails here with the file and field named, not deep inside a retriever.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar, Mapping

from reasonaudio.logic import Node, from_json, to_json
from reasonaudio.dataset.atom import Atom
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError
from reasonaudio.fileio import read_json, read_jsonl, reading_text, sha256_file, write_json
from reasonaudio.output_dirs import BENCHMARK_OUTPUT
from reasonaudio.tasks.registry import (ALL_TASKS, TASKS,  # task names; importers read them here
                                       tasks_present)
from reasonaudio.types import ClipId, Label, Qrels, QueryId

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS = "qrels/test.tsv"
CHOICES = "choices.jsonl"
ATOMS = "atoms.jsonl"
MANIFEST = BENCHMARK_OUTPUT.marker
FORMULATIONS = "formulations.jsonl"
"""every query in each user-intent formulation (reasonaudio.generator.formulations); optional:
benchmarks built before it have none"""
INTERLEAVED_FILE = "interleaved.jsonl"
EXAMPLES_FILE = "examples.jsonl"
EXAMPLES_DIR = "examples"
"""interleaved queries and their audio examples (reasonaudio.dataset.interleaved); optional"""
BENCHMARK_FILES = (CORPUS, QUERIES, QRELS, CHOICES, ATOMS)
OPTIONAL_FILES = (FORMULATIONS, INTERLEAVED_FILE, EXAMPLES_FILE)
"""files hashed into the manifest when the build wrote them"""
QRELS_HEADER = "query-id\tcorpus-id\tscore"
FORMAT = str(BENCHMARK_OUTPUT.format)
FORMAT_VERSION = 1
"""The manifest's ``format`` and ``format_version``; a loader refuses any other."""
REQUIRED_MANIFEST = {"format": str, "format_version": int, "seed": int, "files": dict}
"""Manifest fields every benchmark has (``files``: name -> {"sha256", "bytes"})."""
OPTIONAL_OBJECTS = ("parameters", "render", "bank", "versions", "counts", "adjustments")
"""Manifest fields that, when present, must be JSON objects (readers index into them)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Query:
    id: QueryId
    text: str
    task: str
    logic: Node
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        out = {"_id": self.id, "text": self.text, "task": self.task, "logic": to_json(self.logic)}
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: object, where: str = QUERIES) -> "Query":
        if not isinstance(obj, dict):
            raise DataError(f"{where}: expected a JSON object")
        for key in ("_id", "text", "task", "logic"):
            if key not in obj:
                raise DataError(f"{where}: missing field {key!r}")
        if obj["task"] not in ALL_TASKS:
            raise DataError(f"{where} ({obj['_id']}): field 'task' must be one of {ALL_TASKS}, "
                            f"got {obj['task']!r}")
        logic = from_json(obj["logic"], f"{where} ({obj['_id']}).logic")
        return cls(str(obj["_id"]), str(obj["text"]), obj["task"], logic,
                   {k: v for k, v in obj.items() if k not in ("_id", "text", "task", "logic")})


@dataclass(frozen=True)
class Choice:
    query_id: str
    positive: str
    negative: str


def choice_score(positive: float, negative: float) -> float:
    """A :class:`Choice` answered by two scores: 1 if the positive scores higher, 0.5 on a tie,
    else 0 (NaN = -inf). One pair of :func:`multiple_choice`."""
    p = -math.inf if math.isnan(positive) else positive
    n = -math.inf if math.isnan(negative) else negative
    if p > n:
        return 1.0
    if p == n:
        return 0.5
    return 0.0


PairScores = Callable[[Choice], "tuple[float, float] | None"]
"""A choice -> (the positive's score, the negative's score), or None: the pair is not asked (its
query or one of its clips is not in what is scored). A reader that cannot tell the two apart
answers a tie, e.g. ``(-inf, -inf)``."""


def multiple_choice(choices: Iterable[Choice], scores: PairScores) -> dict[str, float]:
    """The multiple-choice rule (``mc_acc``), the one place it is written: each choice answered
    by ``scores`` and scored by :func:`choice_score`; per query the mean over its choices; a
    query with no choice asked is left out. Evaluation (a retriever's scores, a run file's),
    the perception ladder and calibration's step 3 all answer pairs through it."""
    by_query: dict[str, list[float]] = {}
    for ch in choices:
        pair = scores(ch)
        if pair is not None:
            by_query.setdefault(ch.query_id, []).append(choice_score(float(pair[0]), float(pair[1])))
    return {qid: sum(v) / len(v) for qid, v in by_query.items()}


def write_qrels(path: Path, qrels: Mapping[QueryId, Iterable[ClipId]]) -> None:
    """One row per relevant pair, score 1, queries and clips in id order."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(QRELS_HEADER + "\n")
        for qid in sorted(qrels):
            for cid in sorted(qrels[qid]):
                fh.write(f"{qid}\t{cid}\t1\n")


def read_qrels(path: Path) -> Qrels:
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    out: Qrels = {}
    with reading_text(path), open(path, encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n")
        if header != QRELS_HEADER:
            raise DataError(f"{path}:1: expected header {QRELS_HEADER!r}, got {header!r}")
        for lineno, line in enumerate(fh, 2):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                raise DataError(f"{path}:{lineno}: expected 3 tab-separated fields, got {len(parts)}")
            qid, cid, score = parts
            try:
                relevant = int(score) > 0
            except ValueError:
                raise DataError(f"{path}:{lineno}: score must be an integer, got {score!r}") from None
            if relevant:
                out.setdefault(qid, set()).add(cid)
    if not out:
        raise DataError(f"{path}: no relevance judgements (only a header); the file is cut or empty")
    return out


def file_records(root: Path) -> dict[str, dict[str, Any]]:
    """The manifest's ``files``: sha256 and size of every benchmark file under ``root``."""
    names = BENCHMARK_FILES + tuple(n for n in OPTIONAL_FILES if (root / n).is_file())
    if (root / EXAMPLES_FILE).is_file():  # each example's audio, by path
        names += tuple(sorted(p.relative_to(root).as_posix() for p in (root / EXAMPLES_DIR).glob("*.wav")))
    return {name: {"sha256": sha256_file(root / name), "bytes": (root / name).stat().st_size}
            for name in names}


MACHINE_FIELDS = ("versions",)
"""manifest fields that describe the install that built a benchmark, not the benchmark"""


def content_digest(manifest: dict[str, Any]) -> str:
    """sha256 of a manifest without its :data:`MACHINE_FIELDS`: the same for every user who
    builds the same benchmark (its files' hashes, seed, parameters, the bank's portable record),
    whatever their package versions; the docs quote it beside every figure."""
    kept = {k: v for k, v in manifest.items() if k not in MACHINE_FIELDS}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def write_manifest(root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write ``manifest`` with the format fields and the files' hashes filled in (last, so a
    folder with a manifest is complete); returns what was written."""
    full = {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest,
            "files": file_records(Path(root))}
    write_json(Path(root) / MANIFEST, full)
    return full


def check_manifest(manifest: object, path: Path) -> dict[str, Any]:
    """The manifest's format rules (always applied, even without hash verification)."""
    if not isinstance(manifest, dict):
        raise DataError(f"{path}: expected a JSON object, got {type(manifest).__name__ if manifest is not None else 'null'}")
    for key, kind in REQUIRED_MANIFEST.items():
        if key not in manifest:
            raise DataError(f"{path}: missing field {key!r}; not a benchmark manifest "
                            "(rebuild with `bench build`)")
        value = manifest[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise DataError(f"{path}: field {key!r} must be {kind.__name__}, got {value!r:.60}")
    if manifest["format"] != FORMAT:
        raise DataError(f"{path}: format is {manifest['format']!r:.60}, expected {FORMAT!r}")
    if manifest["format_version"] != FORMAT_VERSION:
        raise DataError(f"{path}: format_version {manifest['format_version']} is not supported "
                        f"(this version reads {FORMAT_VERSION}); rebuild with `bench build`")
    for key in OPTIONAL_OBJECTS:
        if key in manifest and not isinstance(manifest[key], dict):
            raise DataError(f"{path}: field {key!r} must be a JSON object, got {manifest[key]!r:.60}")
    return manifest


def verify_files(root: Path, manifest: dict[str, Any]) -> None:
    """Every benchmark file against the sha256 the manifest recorded; names the first that differs."""
    files = manifest["files"]
    for name in BENCHMARK_FILES + tuple(n for n in files if n in OPTIONAL_FILES
                                        or n.startswith(EXAMPLES_DIR + "/")):
        if ".." in Path(name).parts:
            raise DataError(f"{root / MANIFEST}: files.{name!s:.80} lies outside the benchmark; refused")
        path = root / name
        record = files.get(name)
        if not isinstance(record, dict) or not isinstance(record.get("sha256"), str):
            raise DataError(f"{root / MANIFEST}: files.{name}.sha256 is missing; cannot verify "
                            f"{name} (pass --no-verify to load it anyway)")
        if not path.is_file():
            raise DataError(f"{path}: file missing (the manifest lists it)")
        size = record.get("bytes")
        if isinstance(size, int) and path.stat().st_size != size:
            raise DataError(f"{path}: {path.stat().st_size} bytes, the manifest recorded {size}; "
                            "the file was changed after the build (pass --no-verify to load it anyway)")
        if sha256_file(path) != record["sha256"]:
            raise DataError(f"{path}: sha256 differs from {MANIFEST}; the file was changed after "
                            "the build (pass --no-verify to load it anyway)")


class BenchmarkFiles:
    """A loaded benchmark directory's files, the same under every condition and view. Large
    parts load lazily; ids are checked on load. Readers take the
    :class:`~reasonaudio.dataset.view.BenchmarkView` that holds it.

    Loading checks the manifest's format and, unless ``verify`` is False, every file against
    the sha256 the manifest recorded (a few MB: milliseconds), so a cut or edited file fails
    here, named, rather than as wrong numbers later.
    """

    def __init__(self, root: Path, verify: bool = True) -> None:
        self.root = Path(root)
        self.verified = verify
        if not self.root.is_dir():
            raise DataError(f"{self.root}: benchmark directory not found (build one with `bench build --out DIR`)")
        manifest_path = self.root / MANIFEST
        if not manifest_path.is_file():
            raise DataError(f"{self.root}: no {MANIFEST}; not a complete benchmark directory "
                            "(an interrupted build, or not built by `bench build`)")
        self.manifest: dict[str, Any] = check_manifest(read_json(manifest_path), manifest_path)
        if verify:
            verify_files(self.root, self.manifest)
        self._derived: dict[str, Any] = {}

    def derived(self, key: str, make: Callable[[], T]) -> T:
        """A value computed from these files once and kept with them (the judge's index, the
        hard negatives): the layers above own the computation, the files own the cache. Only
        what the files alone determine belongs here (never a condition's or a view's value)."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    @cached_property
    def clips(self) -> list[Clip]:
        path = self.root / CORPUS
        clips = [Clip.from_json(o, f"{path}:{i + 1}") for i, o in enumerate(read_jsonl(path))]
        ids = [c.id for c in clips]
        if len(set(ids)) != len(ids):
            raise DataError(f"{path}: duplicate clip ids")
        return clips

    @cached_property
    def clip_by_id(self) -> dict[ClipId, Clip]:
        return {c.id: c for c in self.clips}

    @cached_property
    def queries(self) -> list[Query]:
        path = self.root / QUERIES
        queries = [Query.from_json(o, f"{path}:{i + 1}") for i, o in enumerate(read_jsonl(path))]
        if not queries:
            raise DataError(f"{path}: no queries; nothing to evaluate")
        ids = [q.id for q in queries]
        if len(set(ids)) != len(ids):
            raise DataError(f"{path}: duplicate query ids")
        clash = set(ids) & set(self.clip_by_id)
        if clash:
            raise DataError(f"{path}: query ids also used as clip ids: {sorted(clash)[:3]}")
        return queries

    @cached_property
    def query_by_id(self) -> dict[QueryId, Query]:
        return {q.id: q for q in self.queries}

    @cached_property
    def qrels(self) -> Qrels:
        path = self.root / QRELS
        qrels = read_qrels(path)
        for qid, cids in qrels.items():
            if qid not in self.query_by_id:
                raise DataError(f"{path}: unknown query id {qid!r}")
            missing = cids - self.clip_by_id.keys()
            if missing:
                raise DataError(f"{path}: unknown clip id {sorted(missing)[0]!r} for {qid}")
        return qrels

    @cached_property
    def choices(self) -> list[Choice]:
        path = self.root / CHOICES
        out = []
        for i, o in enumerate(read_jsonl(path)):
            try:
                out.append(Choice(o["query_id"], o["positive"], o["negative"]))
            except (KeyError, TypeError):
                raise DataError(f"{path}:{i + 1}: needs fields query_id, positive, negative") from None
        return out

    @cached_property
    def formulations(self) -> dict[str, dict[str, str]]:
        """formulation -> query id -> text (``formulations.jsonl``); DataError when the
        benchmark has none (built before formulations: ``bench formulate DIR`` adds them)."""
        path = self.root / FORMULATIONS
        if not path.is_file():
            raise DataError(f"{path}: file not found; this benchmark was built without "
                            "formulations (add them with `bench formulate --data DIR`)")
        if FORMULATIONS not in self.manifest["files"]:
            raise DataError(f"{path}: not listed in {MANIFEST}, so it may belong to another "
                            "build; write it again with `bench formulate --data DIR`")
        out: dict[str, dict[str, str]] = {}
        for i, o in enumerate(read_jsonl(path)):
            try:
                qid, name, text = o["query_id"], o["formulation"], o["text"]
            except (KeyError, TypeError):
                raise DataError(f"{path}:{i + 1}: needs fields query_id, formulation, text") from None
            if qid not in self.query_by_id:
                raise DataError(f"{path}:{i + 1}: unknown query id {qid!r}")
            out.setdefault(str(name), {})[str(qid)] = str(text)
        return out

    @cached_property
    def atoms(self) -> list[Atom]:
        path = self.root / ATOMS
        return [Atom.from_json(o, f"{path}:{i + 1}") for i, o in enumerate(read_jsonl(path))]

    @cached_property
    def labels(self) -> tuple[Label, ...]:
        """The bank's vocabulary: every class label, sorted."""
        return tuple(sorted({a.label for a in self.atoms}))

    @property
    def seed(self) -> int:
        return int(self.manifest["seed"])

    def verify(self) -> None:
        """Check every file against the sha256 the manifest recorded."""
        verify_files(self.root, self.manifest)

