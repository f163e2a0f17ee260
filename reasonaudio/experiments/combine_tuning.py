"""Choosing a combined retriever's parameters on the calibration build, never the evaluated one.

A hybrid (``hybrid:V,soft:T``) rescores V's nearest ``N`` with ``(1 - w) $score + w soft``; a
fusion (``rrf:A,B`` / ``dbsf:A,B``) fuses two lists of ``N`` (RRF with its ``k``). This module
picks ``N``, ``w`` and ``k`` the way ``bench detect`` picks its thresholds: on the calibration
build (another seed, no shared clip: :func:`reasonaudio.generator.calibration.resolve_calibration`), over a
small fixed grid, by Acc@1 on the calibration build's queries (ties: nDCG@10, then the earlier
grid entry, so the choice is deterministic). The evaluated build is only read for its name and
corpus size.

- ``N`` is chosen as a share of the corpus (:data:`SHARES`) and applied as that share of the
  evaluated build's clips: the calibration build is smaller (500 clips against 2,000 in the
  demo), and the number of relevant clips a prefetch must reach grows with the corpus.
- Everything a part needs is made on the calibration build itself, in its own store, reusing
  what is there: the model collections (``ingest_model``: cached embeddings), BM25 and joint
  collections (derived, made by the retriever), and for a ``soft:`` part its detected collection
  (``run_detection`` on the calibration build, calibrated in turn on *its* calibration build,
  ``<calibration>-calibration``, so no build ever calibrates on itself). Both calibration builds
  are inputs (``bench build --calibration-for DATA`` makes them); tuning builds no benchmark.
- The choice goes into ``DATA/results/combine-params.json`` (``{NAME: {...}}``), which
  :func:`reasonaudio.retrievers.combined.combine_params` reads: ``prefetch``, ``weight``,
  ``rrf_k``, ``source: calibration:<calibration build's content digest, 12 hex>``, and ``tuning`` (the
  calibration build, the objective, the grid with each point's figures, the chosen point).
  Without that file every combined retriever runs with the defaults (``source: default``).

Silent: progress and notes go through the ``Hooks`` (``tune NAME`` bars, one note per choice).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.evaluation.evaluate import evaluate_run, run_retriever
from reasonaudio.dataset.benchmark import content_digest
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.detect.collection import (FORMAT, TRAINED, DetectOptions, detect_command,
                                          detected_collection, run_detection)
from reasonaudio.errors import DataError, ModelError, StoreError
from reasonaudio.fileio import atomic_file
from reasonaudio.ingest.run import ingest_model
from reasonaudio.ingest.vector_files import FAMILY as PRECOMPUTED
from reasonaudio.generator.calibration import resolve_calibration
from reasonaudio.models.names import is_lexical, is_two_stage, parse_combined, parse_two_stage
from reasonaudio.models.registry import get_record
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.retrievers.base import QueryVectors, RetrieverOptions
from reasonaudio.retrievers.combined import PARAMS_FILE, CombineParams, CombinedRetriever, build_combined
from reasonaudio.retrievers.registry import spec_for
from reasonaudio.retrievers.soft_rank import SOFT, parse_soft
from reasonaudio.store.base import STATE_COMPLETE, Store
from reasonaudio.store.collections import corpus_fingerprint
from reasonaudio.store.lock import writes_benchmark
from reasonaudio.store.open import open_store

GRID_VERSION = 1
"""bumped whenever the grid or the objective changes (a saved choice with another is redone)"""
SHARES = (0.05, 0.1, 0.2)
"""N as a share of the corpus (the default N = 200 is 0.1 of the demo's 2,000 clips)"""
WEIGHTS = (0.25, 0.5, 0.75)
RRF_KS = (10, 60)
DEPTH = 10
"""the calibration runs rank 10 clips: Acc@1 and nDCG@10 need no more, and a deeper run would
prefetch more than N"""
OBJECTIVE = "acc@1 (ties: ndcg@10, then the earlier grid entry)"
MIN_PREFETCH = DEPTH
MODEL, LEXICAL = "model", "lexical"
"""kinds of combined parts (:func:`part_kind`) besides ``soft:`` and ``vectors:``"""


@dataclass(frozen=True)
class Tuned:
    """One combined retriever's choice (what ``combine-params.json`` holds for it)."""

    name: str
    params: CombineParams
    grid: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.params.to_json()


def grid_points(kind: str) -> list[dict[str, float]]:
    """The grid of one kind of combined retriever: share x w (hybrid), share x k (rrf), share
    (dbsf), in a fixed order."""
    if kind == "hybrid":
        return [{"share": s, "weight": w} for s, w in itertools.product(SHARES, WEIGHTS)]
    if kind == "rrf":
        return [{"share": s, "rrf_k": k} for s, k in itertools.product(SHARES, RRF_KS)]
    return [{"share": s} for s in SHARES]


def prefetch_for(share: float, clips: int) -> int:
    return max(MIN_PREFETCH, round(share * clips))


def params_text(name: str, params: CombineParams) -> str:
    """``N 400, w 0.75 (source)``: the parameters that kind of combined retriever uses."""
    kind = parse_combined(name).kind
    parts = [f"N {params.prefetch}"]
    if kind == "hybrid":
        parts.append(f"w {params.weight:g}")
    if kind == "rrf":
        parts.append(f"k {params.rrf_k}")
    return f"{', '.join(parts)} ({params.source})"


def calibration_source(calib: BenchmarkView) -> str:
    """``calibration:<12 hex>``: the calibration build's content digest, the same for every user
    who builds it whatever their package versions (never the manifest file's bytes)."""
    return "calibration:" + content_digest(calib.manifest)[:12]


def _params(point: dict[str, float], clips: int, source: str,
            tuning: dict[str, Any] | None = None) -> CombineParams:
    default = CombineParams()
    return CombineParams(prefetch=prefetch_for(point["share"], clips),
                         weight=float(point.get("weight", default.weight)),
                         rrf_k=int(point.get("rrf_k", default.rrf_k)), source=source, tuning=tuning)


def _detected_ready(store: Store, calib: BenchmarkView, name: str) -> bool:
    tagger, mode = parse_soft(name)
    coll = detected_collection(tagger, mode)
    if not store.exists(coll):
        return False
    meta = store.meta(coll)
    return (meta.state == STATE_COMPLETE and (meta.extra or {}).get("format") == FORMAT
            and meta.corpus_sha256 == corpus_fingerprint(calib))


def prepare_parts(calib: BenchmarkView, store: Store, names: Sequence[str], hooks: Hooks = SILENT) -> None:
    """Make on the calibration build what the parts of ``names`` read, reusing what is there:
    model collections (``ingest_model``), detected collections for ``soft:`` parts (calibrated on
    the calibration build's own calibration build, which must exist). BM25 and joint collections
    are derived; the retriever makes them. ``vectors:NAME`` parts were made elsewhere: ingest them
    into the calibration build with ``bench ingest --vectors`` first."""
    parts = sorted({p for n in names for p in parse_combined(n).parts})
    to_detect = [p for p in parts if part_kind(p) == SOFT and not _detected_ready(store, calib, p)]
    for part in to_detect:  # refused before any part is made
        tagger, mode = parse_soft(part)
        if mode == TRAINED:  # the model directory is the user's to name
            raise DataError(f"{part}: detect on the calibration build first: "
                            f"{detect_command(calib.root, tagger, mode)}")
    if to_detect:
        _own_calibration(calib, to_detect[0])
    for part in parts:
        kind = part_kind(part)
        if part in to_detect:
            tagger, mode = parse_soft(part)
            hooks.notify(f"detecting events on the calibration build {calib.root.name} for {part}")
            run_detection(calib, store, DetectOptions(  # its own calibration: CALIB-calibration
                tagger=tagger, mode=mode), hooks=hooks)
        elif kind == MODEL:
            hooks.event(ingest_model(calib, store, part, hooks=hooks))
        # PRECOMPUTED: vectors made elsewhere (`bench ingest --vectors` them into this build
        # too); LEXICAL: BM25 collections are derived, the retriever makes them


def _own_calibration(calib: BenchmarkView, part: str) -> BenchmarkView:
    """The calibration build's own calibration build, which detecting ``part`` on it needs."""
    try:
        return resolve_calibration(calib)
    except DataError as exc:
        raise DataError(f"{part}: tuning detects events on the calibration build {calib.root}, "
                        f"calibrated on its own; {exc}") from None


def part_kind(part: str) -> str:
    """What :func:`prepare_parts` makes for a combined retriever's part: ``soft:`` (a detected
    collection), ``vectors:`` (nothing: ingested elsewhere), a BM25 two-stage (nothing: derived)
    or an audio model's collection; a one-line error for anything else (a symbolic retriever, an
    unknown model, a text-only model), before a calibration build is made."""
    if part.startswith(SOFT):
        parse_soft(part)
        return SOFT
    if part.startswith(PRECOMPUTED):
        return PRECOMPUTED
    if is_two_stage(part):
        parse_two_stage(part, lexical=True)
        return LEXICAL if is_lexical(part) else MODEL
    record = get_record(part)  # unknown: one line naming the known models
    if record.kind == "captioner" or not record.has_audio:
        raise ModelError(f"{part!r} cannot be tuned: bench tune prepares model parts by ingesting "
                         "them, and it has no audio tower")
    return MODEL


def tune_one(name: str, calib: BenchmarkView, store: Store, clips: int, hooks: Hooks = SILENT,
             query_vectors: QueryVectors | None = None) -> Tuned:
    """Every grid point of ``name`` on the calibration build; the best by :data:`OBJECTIVE`,
    with ``N`` for a corpus of ``clips``. ``query_vectors``: the calibration queries' vectors,
    shared by the names tuned together."""
    kind = parse_combined(name).kind
    source = calibration_source(calib)
    options = RetrieverOptions(auto_ingest=True, hooks=hooks, query_vectors=query_vectors)
    points = grid_points(kind)
    rows: list[dict[str, Any]] = []
    retriever = build_combined(name, calib, store, options,
                               lambda part: spec_for(part).build(part, calib, store, options),
                               params=CombineParams())
    try:
        hooks.progress(f"tune {name}", 0, len(points))
        for i, point in enumerate(points):
            retriever.params = _params(point, len(calib.clips), source)
            run = run_retriever(calib, retriever, DEPTH, tag=name)
            overall = evaluate_run(calib, run, name=name, depth=DEPTH).overall
            rows.append({**point, "prefetch_calibration": retriever.params.prefetch,
                         "acc@1": round(float(overall.get("acc@1", 0.0)), 4),
                         "ndcg@10": round(float(overall.get("ndcg@10", 0.0)), 4)})
            hooks.progress(f"tune {name}", i + 1, len(points))
    finally:
        retriever.close()
    best = max(range(len(rows)), key=lambda i: (rows[i]["acc@1"], rows[i]["ndcg@10"], -i))
    chosen = points[best]
    tuning = {"grid_version": GRID_VERSION, "objective": OBJECTIVE, "depth": DEPTH,
              "calibration": {"build": calib.root.name, "seed": calib.seed,
                              "clips": len(calib.clips), "queries": len(calib.queries),
                              "content_digest": content_digest(calib.manifest)},
              "prefetch_rule": f"round(share x clips), at least {MIN_PREFETCH}",
              "evaluated_clips": clips, "grid": rows, "chosen": {**chosen, **rows[best]}}
    return Tuned(name, _params(chosen, clips, source, tuning), rows)


def _saved(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: unreadable ({exc}); delete it to tune again") from None
    if not isinstance(obj, dict):
        raise DataError(f"{path}: expected an object of retriever name -> parameters")
    return obj


@writes_benchmark
def tune_combined(bench: BenchmarkView, names: Sequence[str], calibration: Path | None = None, *,
                  backend: str | None = None, url: str | None = None, force: bool = False,
                  hooks: Hooks = SILENT) -> dict[str, Tuned]:
    """Choose N, w and k for each combined retriever in ``names`` on the calibration build
    (``calibration``, default ``DATA-calibration``, made by ``bench build --calibration-for``;
    refused in one line when missing, like ``bench detect``'s) and save them in
    ``DATA/results/combine-params.json``. A name already tuned on the same calibration build
    with the same grid is kept (``force`` redoes it)."""
    for n in names:  # a name tune cannot prepare fails before anything is built or run
        for part in parse_combined(n).parts:
            part_kind(part)
    if backend not in (None, "edge", "local") or url:
        raise StoreError("bench tune runs the calibration build in its own embedded store "
                         "(--backend edge or local): a server holds one collection per name, "
                         "shared by every build")
    calib = resolve_calibration(bench, calibration)
    source = calibration_source(calib)
    path = bench.root / "results" / PARAMS_FILE
    saved = _saved(path)
    todo = [n for n in names if force or not (
        isinstance(saved.get(n), dict) and saved[n].get("source") == source
        and (saved[n].get("tuning") or {}).get("grid_version") == GRID_VERSION
        and (saved[n].get("tuning") or {}).get("evaluated_clips") == len(bench.clips))]
    out: dict[str, Tuned] = {}
    if todo:
        with open_store(calib.root, backend, None, write=True) as store:
            prepare_parts(calib, store, todo, hooks)
            queries = QueryVectors()
            for name in todo:
                tuned = tune_one(name, calib, store, len(bench.clips), hooks, queries)
                out[name] = tuned
                saved[name] = tuned.to_json()
                hooks.notify(f"{name}: {params_text(name, tuned.params)}")
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(path, encoding="utf-8") as fh:
            json.dump(saved, fh, indent=2, sort_keys=True)
            fh.write("\n")
    return out
