"""ReasonAudio as MTEB tasks: one text-to-audio retrieval task per reasoning task, and the overall set.

``mteb_tasks(SOURCE)`` returns MTEB ``AbsTaskRetrieval`` tasks (type ``Any2AnyRetrieval``,
category ``t2a``, like MAEB's AudioCaps and Clotho tasks) that load locally, never from the hub:

- ``ReasonAudioT2ARetrieval``: every query;
- ``ReasonAudio<Task>T2ARetrieval`` for each of negation, order, overlap, duration and mix:
  that task's queries, against the whole corpus.

SOURCE is a benchmark directory (clips rendered from its atom bank) or a ``bench export --format
hf`` folder (audio decoded from its FLAC/WAV bytes or files). Each task's metadata names the
paper (arXiv 2605.03361), the licence of the atoms (one MTEB licence id, ``multiple`` when they
differ; the exact licences are in the description) and, as the dataset revision, the sha256 of
the benchmark's ``manifest.json`` (the benchmark's fingerprint, which
:mod:`reasonaudio.evaluation.results` also records), so MTEB's results name the exact build.
``mteb.evaluate(model, tasks)`` then runs any MTEB audio-text model on them and writes MTEB's
result files; with ``prediction_folder`` it saves the rankings that ``bench eval --run`` reads.

Subsets: every task has one subset, ``default``. The builder takes ``subsets`` (subset name ->
which queries), so a split of the queries becomes further subsets of the same tasks, each scored
on its own by MTEB, without new tasks or new loading code; ``subsets=formulation_subsets()`` gives
one subset per query formulation (``default`` the captions, then ``question``, ``command``,
``keywords``, ``paraphrase``, ``exclusion``), their texts from the build's formulations.

The corpus is the same for every task and is rendered (or decoded) once per source, at
``sample_rate`` (default: each clip's own rate), as ``audio`` items ``{"array", "sampling_rate"}``
(a plain struct: decoding a ``datasets.Audio`` column would need torchcodec). MTEB encodes the
corpus once per task, so running all six tasks embeds every clip six times; the overall task
alone gives every per-task figure from its saved rankings (``bench eval --run``).
"""

from __future__ import annotations

import io
import json
import logging
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import soundfile as sf
import soxr

from reasonaudio.dataset.benchmark import FORMULATIONS as FORMULATIONS_FILE
from reasonaudio.dataset.benchmark import MANIFEST, TASKS
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.errors import DataError
from reasonaudio.evaluation.results import fingerprint
from reasonaudio.output_dirs import EXPORT_OUTPUT
from reasonaudio.tasks.base import FORMULATIONS
from reasonaudio.tasks.formulation_records import is_default
from reasonaudio.models.mteb_models import (AUDIO, OVERALL_TASK, SPLIT, SUBSET, TEXT, import_mteb,
                                            mteb_licence, task_metadata)

if TYPE_CHECKING:
    from datasets import Dataset

EXPORT_FILE = EXPORT_OUTPUT.marker
"""what marks a ``bench export --format hf`` folder (its provenance record)"""


@dataclass(frozen=True)
class QueryRow:
    id: str
    text: str
    task: str


QuerySelector = Callable[[QueryRow], bool]
DEFAULT_SUBSETS: Mapping[str, QuerySelector] = {SUBSET: lambda q: True}


@dataclass(frozen=True)
class InFormulation:
    """A subset's selector that takes every query, asked in formulation ``name`` (its texts from
    ``formulations.jsonl`` or the export's ``formulations`` table; ``caption``: the queries)."""

    name: str

    def __call__(self, q: QueryRow) -> bool:
        return True


def formulation_subsets(names: Sequence[str] = FORMULATIONS) -> dict[str, QuerySelector]:
    """One subset per formulation, ``caption`` as MTEB's ``default``: ``mteb_tasks(path,
    subsets=formulation_subsets())`` scores every way of asking as a subset of the same tasks."""
    return {(SUBSET if is_default(n) else n): InFormulation(n) for n in names}


def task_name(task: str | None) -> str:
    """``ReasonAudioT2ARetrieval`` (None: every query) or ``ReasonAudio<Task>T2ARetrieval``."""
    if task is None:
        return OVERALL_TASK
    if task not in TASKS:
        raise DataError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    return OVERALL_TASK.replace("ReasonAudio", "ReasonAudio" + task.capitalize(), 1)


def task_names() -> list[str]:
    return [task_name(None)] + [task_name(t) for t in TASKS]


def task_of_name(name: str) -> str | None:
    """The reasoning task of an MTEB task name (None for the overall task)."""
    for t in (None, *TASKS):
        if task_name(t) == name:
            return t
    raise DataError(f"{name!r} is not a ReasonAudio MTEB task; known: {', '.join(task_names())}")


@dataclass
class TaskSource:
    """What every task reads, loaded once: queries, qrels, provenance and a corpus loader."""

    root: Path
    kind: str
    """``benchmark`` or ``hf-export``"""
    revision: str
    """sha256 of the benchmark's manifest.json"""
    seed: int | None
    licences: list[str]
    queries: list[QueryRow]
    qrels: dict[str, dict[str, int]]
    clip_ids: list[str]
    _waves: Callable[[int | None], Any]
    """``sample_rate -> iterator of (clip id, wave, rate)``"""
    _corpus: dict[Any, Any] = field(default_factory=dict)
    formulations: dict[str, dict[str, str]] = field(default_factory=dict)
    """formulation -> query id -> text (empty for a build without formulations)"""

    def asked(self, formulation: str) -> list[QueryRow]:
        """The queries with their text in ``formulation`` (those that have it)."""
        if is_default(formulation):
            return list(self.queries)
        texts = self.formulations.get(formulation)
        if not texts:
            raise DataError(f"{self.root}: no queries in formulation {formulation!r} (a build "
                            "without formulations: add them with `bench formulate`)")
        return [replace(q, text=texts[q.id]) for q in self.queries if q.id in texts]

    def corpus(self, sample_rate: int | None = None) -> Dataset:
        """The corpus as a ``datasets.Dataset`` (``id``, ``audio``), built once per rate."""
        if sample_rate not in self._corpus:
            from datasets import Dataset

            ids, audio = [], []
            for cid, wave, rate in self._waves(sample_rate):
                ids.append(cid)
                audio.append({"array": np.asarray(wave, dtype=np.float32), "sampling_rate": int(rate)})
            ds = Dataset.from_dict({"id": ids, AUDIO: audio})
            self._corpus[sample_rate] = ds.with_format("numpy", columns=[AUDIO], output_all_columns=True)
        return self._corpus[sample_rate]


def _benchmark_source(root: Path, atoms: str | None, verify: bool) -> TaskSource:
    from reasonaudio.render.clips import bench_renderer

    bench = load_benchmark(root, verify=verify)
    if not (atoms or (bench.manifest.get("parameters") or {}).get("atoms")):
        bench_renderer(bench, atoms)  # refuses a manifest without an atom bank, up front

    def waves(rate: int | None) -> Iterator[tuple[str, np.ndarray, int]]:
        renderer = bench_renderer(bench, atoms)
        log = logging.getLogger("reasonaudio.render")
        level = log.level
        log.setLevel(logging.ERROR)  # per-atom adjustments: silent, as in bench export
        try:
            for clip in bench.clips:
                r = rate or clip.sample_rate
                yield clip.id, renderer.render(replace(clip, sample_rate=r)), r
        finally:
            log.setLevel(level)

    return TaskSource(
        root=root, kind="benchmark", revision=fingerprint(bench), seed=bench.seed,
        licences=sorted({a.license for a in bench.atoms}),
        queries=[QueryRow(q.id, q.text, q.task) for q in bench.queries],
        qrels={q: {c: 1 for c in sorted(cs)} for q, cs in bench.qrels.items()},
        clip_ids=[c.id for c in bench.clips], _waves=waves,
        formulations=bench.formulations if (root / FORMULATIONS_FILE).is_file() else {})


def _table(root: Path, folder: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    files = sorted((root / folder).glob(f"{SPLIT}*.parquet"))
    if not files:
        raise DataError(f"{root}/{folder}: no {SPLIT}*.parquet file (not a bench export folder?)")
    rows: list[dict[str, Any]] = []
    for f in files:
        rows.extend(pq.read_table(f).to_pylist())
    return rows


def _export_source(root: Path) -> TaskSource:
    record_path = root / EXPORT_FILE
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        revision = str(record["benchmark"]["manifest_sha256"])
        audio_mode = str(record["options"]["audio"])
        seed = record["benchmark"].get("seed")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{record_path}: not a readable export record ({exc})") from None
    if audio_mode == "none":
        raise DataError(f"{root}: exported with --audio none; MTEB tasks need the audio "
                        "(export with --audio embed or files, or pass the benchmark directory)")
    queries = [QueryRow(str(r["_id"]), str(r["text"]), str(r["task"])) for r in _table(root, "queries")]
    qrels: dict[str, dict[str, int]] = {}
    for r in _table(root, "qrels"):
        if int(r["score"]) > 0:
            qrels.setdefault(str(r["query-id"]), {})[str(r["corpus-id"])] = int(r["score"])
    licences = sorted({str(r["license"]) for r in _table(root, "atoms")})
    corpus_rows = _table(root, "corpus")

    def decode(row: dict[str, Any]) -> tuple[np.ndarray, int]:
        cid = row["_id"]
        try:
            if audio_mode == "embed":
                wave, rate = sf.read(io.BytesIO(row[AUDIO]["bytes"]), dtype="float32", always_2d=True)
            else:
                wave, rate = sf.read(str(root / row["audio_path"]), dtype="float32", always_2d=True)
        except (sf.LibsndfileError, OSError, TypeError, KeyError) as exc:
            raise DataError(f"{root}: cannot decode the audio of clip {cid!r} ({exc})") from None
        return wave.mean(axis=1), int(rate)

    def waves(rate: int | None) -> Iterator[tuple[str, np.ndarray, int]]:
        for row in corpus_rows:
            wave, r = decode(row)
            if rate and r != rate:
                wave, r = soxr.resample(wave, r, rate).astype(np.float32), rate
            yield str(row["_id"]), wave, r

    forms: dict[str, dict[str, str]] = {}
    if (root / "formulations").is_dir():
        for r in _table(root, "formulations"):
            forms.setdefault(str(r["formulation"]), {})[str(r["query-id"])] = str(r["text"])
    return TaskSource(root=root, kind="hf-export", revision=revision, seed=seed, licences=licences,
                      queries=queries, qrels=qrels, clip_ids=[str(r["_id"]) for r in corpus_rows],
                      _waves=waves, formulations=forms)


def open_source(path: Path | str, *, atoms: str | None = None, verify: bool = True) -> TaskSource:
    """A benchmark directory (``manifest.json``) or an HF export folder (``reasonaudio-export.json``)."""
    root = Path(path)
    if (root / EXPORT_FILE).is_file():
        return _export_source(root)
    if (root / MANIFEST).is_file():
        return _benchmark_source(root, atoms, verify)
    raise DataError(f"{root}: neither a benchmark directory ({MANIFEST}) nor a bench export "
                    f"folder ({EXPORT_FILE})")


def _description(source: TaskSource, task: str | None) -> str:
    return (f"{_description_of(task)} Built with seed {source.seed}, {len(source.clip_ids)} clips. "
            f"Atom licences: {', '.join(source.licences) or 'none recorded'}.")


@lru_cache(maxsize=1)
def _task_class() -> type:
    import_mteb()
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    class ReasonAudioRetrieval(AbsTaskRetrieval):
        """One ReasonAudio task; data from its :class:`TaskSource`, never from the hub. MTEB
        reads ``metadata`` from the class (it drops an instance's own on unloading), so each
        task is a subclass holding its metadata."""

        def __init__(self, source: TaskSource, task: str | None,
                     subsets: Mapping[str, QuerySelector], sample_rate: int | None) -> None:
            self.source = source
            self.task = task
            self.subsets = dict(subsets)
            self.sample_rate = sample_rate
            super().__init__()

        def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
            if self.data_loaded:
                return
            from datasets import Dataset

            corpus = self.source.corpus(self.sample_rate)
            self.dataset = {}
            for subset, select in self.subsets.items():
                pool = (self.source.asked(select.name) if isinstance(select, InFormulation)
                        else self.source.queries)
                rows = [q for q in pool if (self.task is None or q.task == self.task) and select(q)]
                queries = Dataset.from_dict({"id": [q.id for q in rows], TEXT: [q.text for q in rows]})
                self.dataset[subset] = {SPLIT: {
                    "corpus": corpus, "queries": queries, "top_ranked": None,
                    "relevant_docs": {q.id: dict(self.source.qrels.get(q.id, {})) for q in rows}}}
            self.data_loaded = True

    return ReasonAudioRetrieval


def mteb_tasks(path: Path | str | TaskSource, tasks: Sequence[str | None] | None = None, *,
               sample_rate: int | None = None, subsets: Mapping[str, QuerySelector] | None = None,
               atoms: str | None = None, verify: bool = True) -> list[Any]:
    """MTEB tasks over a benchmark directory or an HF export (see the module docstring).

    ``tasks``: reasoning task names (``None`` in the list: the overall task); default all six.
    ``subsets``: subset name -> query selector (default: one ``default`` subset of every query)."""
    source = path if isinstance(path, TaskSource) else open_source(path, atoms=atoms, verify=verify)
    wanted = [None, *TASKS] if tasks is None else list(tasks)
    for t in wanted:
        task_name(t)  # unknown task names refused before anything renders
    subsets = dict(subsets or DEFAULT_SUBSETS)
    if not subsets:
        raise DataError("an MTEB task needs at least one subset")
    licence = mteb_licence(source.licences)
    return [task_class(t, source.revision, description=_description(source, t), licence=licence,
                       subsets=list(subsets), kind=source.kind)(source, t, subsets, sample_rate)
            for t in wanted]


def task_class(task: str | None, revision: str, *, description: str = "",
               licence: str = "not specified", subsets: Sequence[str] = (SUBSET,),
               kind: str = "benchmark") -> type:
    """The task class of ``task`` (None: overall) with its metadata: what MTEB's result files
    are written against (:mod:`reasonaudio.evaluation.mteb_results`) and what :func:`mteb_tasks`
    instantiates over its data."""
    langs: Any = ["eng-Latn"] if list(subsets) == [SUBSET] else {s: ["eng-Latn"] for s in subsets}
    meta = task_metadata(task_name(task), description=description or _description_of(task),
                         revision=revision, path=f"reasonaudio-local:{kind}", licence=licence,
                         eval_langs=langs)
    return type(task_name(task), (_task_class(),), {"metadata": meta, "__module__": __name__})


def _description_of(task: str | None) -> str:
    which = "every query" if task is None else f"the {task} queries"
    return (f"ReasonAudio (arXiv 2605.03361) text-to-audio retrieval, {which}: composite clips of "
            "atomic sounds; relevance decided by a program over each clip's event metadata.")
