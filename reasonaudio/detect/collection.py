"""``bench detect``: perceived events of every clip into their own Qdrant collection.

Steps (:func:`run_detection`): frame scores from the YAMNet ingest's cache
(:mod:`reasonaudio.detect.clip_frames`) -> per-label score tracks (:mod:`reasonaudio.detect.labelmap`)
-> one event per label (:mod:`reasonaudio.detect.events`) with parameters calibrated on a separate
build (:mod:`reasonaudio.detect.calibrate`) -> a :class:`Clip` of the detected events -> the
project's own payload (``store.payload.clip_payload``: labels, ``before``, ``overlaps``, ``dur``)
plus each label's confidence and track summary -> ``reasonaudio-detected-<tagger>-<mode>``.
The collection records the tagger revision, the label map and the whole calibration record.

The main job calls :func:`run_detection` after its YAMNet ingest; the frames come from the
cache that ingest filled, so the tagger does not run again.

``--mode trained`` (``bench train-detector``'s model, :mod:`reasonaudio.detect.trained`) puts
the detector behind the label map's interface: its tracks (every 80 ms, from the cached YAMNet
rows and a mel track, :mod:`reasonaudio.detect.detector_features`) go through the same
calibration, events, payload and soft evidence, into ``reasonaudio-detected-<tagger>-trained``;
the model's training builds are refused when they share a seed or a clip with the evaluated or
the calibration build.

Under every condition the truth is the clip as the audio holds it
(:func:`~reasonaudio.detect.clip_frames.heard_clips`): under ``long`` the clip placed in its long
recording, so the calibration, the detection's length and the perception report read the
recording's times, and the payload is in them too. The evaluated build's frames are read in
chunks of bounded size (docs/conditions.md, "Detection under long").
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.conditions import CLEAN, collection_for
from reasonaudio.detect.base import DetectorProtocol
from reasonaudio.detect.calibrate import GRID_VERSION, Calibration, calibrate
from reasonaudio.detect.events import DetectParams, detect_in, track_summary
from reasonaudio.detect.clip_frames import (
    CHUNK_FRAME_BYTES, clip_frames, frame_chunks, heard_clips, load_tagger, merged_stats,
)
from reasonaudio.detect.labelmap import MODES, build_label_map
from reasonaudio.detect.trained import MODE as TRAINED, check_training_separate, heard_share, trained_map
from reasonaudio.detect.event_metrics import PerceptionReport, perception
from reasonaudio.detect.soft import SEMANTICS, SoftIndex
from reasonaudio.errors import DataError
from reasonaudio.fileio import write_json
from reasonaudio.atoms.registry import open_bank
from reasonaudio.generator.calibration import resolve_calibration
from reasonaudio.models.base import EmbedderProtocol
from reasonaudio.models.yamnet_embedder import FrameTagger
from reasonaudio.render.clips import NOISY_MIX, ClipRenderer, bench_renderer
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.store.base import CollectionMeta, PointIn, Store, collection_name
from reasonaudio.store.collections import corpus_fingerprint, load_collection
from reasonaudio.store.formula import (SEARCH_SEGMENTS, evidence_dims, evidence_layout,
                                       evidence_point, evidence_record)
from reasonaudio.store.payload import COUNT_FIELD, clip_payload

if TYPE_CHECKING:
    from reasonaudio.ingest.ray_engine import RayEngine

TAGGERS = ("yamnet",)
DETECT_MODES = (*MODES, TRAINED)
"""zero-shot and enrolled (label maps over the tagger's classes), trained (``bench
train-detector``'s model over the tagger's frames and a finer mel track)"""
TRACK_FLOOR = 0.02
"""labels whose peak track score reaches this get a track summary in the payload (soft score)"""
FORMAT = "reasonaudio-detected-v5"
"""v2: the track summaries replaced by the soft evidence as float fields (``soft_p``, ``soft_p3``, ``soft_on``, ``soft_off``,
``soft_dur``: label -> value) and ``soft_labels``, which the score formulas read; v4: the same
evidence also as sparse vectors (``store.formula.EVIDENCE_VECTORS``, their labels in the record's
``evidence_labels``), from which Qdrant reads a formula's variables; v5: ``soft_label_ids``
(integer index) instead of the keyword index on ``soft_labels``, the dense clip-order vector
``soft_clip_order`` and per-label evidence counts in the record (``evidence_counts``): what makes
a soft query twice as fast (``store.formula.evidence_point``, docs/qdrant.md)"""



@dataclass(frozen=True)
class DetectOptions:
    tagger: str = "yamnet"
    mode: str = "zero-shot"
    calibration: Path | None = None
    """the calibration build (``bench build --calibration-for``); None: ``DATA-calibration``;
    never built here"""
    top_k: int | None = None
    model_path: Path | None = None
    """``--mode trained``: the ``bench train-detector`` model directory"""
    """classes per label (zero-shot, default 3) or signature size (enrolled, default 5)"""
    cache_dir: Path | None = None
    upsert_batch: int = 1024
    engine: RayEngine | None = None
    """the frame pass's scheduler (``--engine ray``: a RayEngine); None: this process"""
    chunk_frame_bytes: int = CHUNK_FRAME_BYTES
    """the evaluated build's frames are read and detected in chunks of at most this many bytes
    of frame rows (``detect.clip_frames.chunked``; a clean build of 2,000 clips is one chunk)"""


def detected_name(tagger: str, mode: str) -> str:
    """The retriever name: ``detected:yamnet`` (zero-shot), ``detected:yamnet-enrolled`` or
    ``detected:yamnet-trained``."""
    return f"detected:{tagger}" + ("" if mode == "zero-shot" else f"-{mode}")


def detected_collection(tagger: str, mode: str, condition: str = CLEAN) -> str:
    return collection_for(collection_name(f"detected-{tagger}-{mode}"), condition)


def detect_command(root: Path | str, tagger: str, mode: str, condition: str = CLEAN) -> str:
    """The ``bench detect`` command that writes the collection a ``detected:``/``soft:``
    retriever reads (what its "no collection" error tells the user to run)."""
    command = f"bench detect --data {root} --tagger {tagger} --mode {mode}"
    command += " --model-path DIR" if mode == TRAINED else ""
    return command + ("" if condition == CLEAN else f" --condition {condition}")


def parse_detected(name: str) -> tuple[str, str]:
    """``detected:yamnet[-enrolled|-trained]`` -> (tagger, mode)."""
    body = name.split(":", 1)[1] if ":" in name else name
    for mode in DETECT_MODES:
        if mode != "zero-shot" and body.endswith(f"-{mode}"):
            return body[: -len(mode) - 1], mode
    return body, "zero-shot"


def _check(options: DetectOptions) -> None:
    if options.tagger not in TAGGERS:
        raise DataError(f"--tagger: unknown tagger {options.tagger!r} (known: {', '.join(TAGGERS)})")
    if options.mode not in DETECT_MODES:
        raise DataError(f"--mode: unknown detection mode {options.mode!r} "
                        f"(known: {', '.join(DETECT_MODES)})")


@dataclass
class DetectSummary:
    name: str
    collection: str
    mode: str
    tagger: str
    tagger_revision: str
    clips: int
    detected_events: int
    true_events: int
    calibration: Calibration
    label_map: DetectorProtocol
    perception: PerceptionReport
    frames: dict[str, Any]
    event_point: PerceptionReport | None = None
    """the same tracks' events at calibration's step-2 parameters, where step 3 moved the
    collection's away from them (``Calibration.event_params``): the detector's hearing at its
    event operating point"""
    timings: dict[str, float] = field(default_factory=dict)
    training: dict[str, Any] | None = None
    """``--mode trained``: the model's weights, training seeds and how many of the evaluated
    clips' atoms it heard in training (:func:`reasonaudio.detect.trained.heard_share`)"""

    @property
    def optimistic(self) -> bool:
        """whether the detector knew the very recordings the clips are mixed from"""
        return is_optimistic(self.mode, self.training)

    def to_json(self) -> dict[str, Any]:
        out = {"format": FORMAT, "name": self.name, "collection": self.collection,
               "mode": self.mode, "tagger": self.tagger, "tagger_revision": self.tagger_revision,
               "optimistic": self.optimistic, "clips": self.clips,
               "detected_events": self.detected_events, "true_events": self.true_events,
               "calibration": self.calibration.to_json(), "label_map": self.label_map.to_json(),
               "perception": self.perception.to_json(), "frames": self.frames,
               "timings": {k: round(v, 3) for k, v in self.timings.items()}}
        if self.training is not None:
            out["training"] = self.training
        if self.event_point is not None:
            out["perception_event_point"] = self.event_point.to_json()
        return out


def is_optimistic(mode: str, training: dict[str, Any] | None) -> bool:
    """enrolled: always; trained: when it heard any atom the evaluated clips use."""
    heard = (training or {}).get("heard", {})
    return mode == "enrolled" or bool(heard.get("heard_in_training"))


def _calibration_file(calib: BenchmarkView, tagger: FrameTagger, label_map: DetectorProtocol,
                      top_ks: Sequence[int]) -> Path:
    spec: dict[str, Any] = {"tagger": tagger.revision, "map": label_map.to_json(),
                            "grid": GRID_VERSION, "top_k": list(top_ks)}
    condition = calib.condition
    if not condition.is_clean:  # clean keeps the key it always had
        spec["condition"] = condition.to_json()
        spec["mix"] = NOISY_MIX  # how its bed and events are summed
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return calib.root / "detect" / f"calibration-{label_map.mode}-{key}.json"


def calibrated(calib: BenchmarkView, label_map: DetectorProtocol, tagger: FrameTagger, options: DetectOptions,
               hooks: Hooks = SILENT) -> Calibration:
    """The calibration for this label map on ``calib``, computed once and kept in the build,
    against ``calib``'s clips as its condition renders them (:func:`heard_clips`)."""
    top_ks = (options.top_k,) if options.top_k else label_map.top_k_choices
    path = _calibration_file(calib, tagger, label_map, top_ks)
    if path.is_file():
        try:
            found = Calibration.from_json(json.loads(path.read_text()))
            if found.corpus_sha256 == corpus_fingerprint(calib):
                return found
        except (KeyError, TypeError, ValueError, json.JSONDecodeError):
            pass  # recomputed and rewritten below
    renderer = _renderer(calib, options)
    frames = clip_frames(calib, tagger=tagger, cache_dir=options.cache_dir, hooks=hooks,
                         engine=options.engine, renderer=renderer, reader=label_map.reader)
    result = calibrate(calib, frames.probs, label_map, top_ks,
                       truth=heard_clips(calib, renderer=renderer))
    write_json(path, result.to_json())
    return result


def add_soft_evidence(payloads: Sequence[dict[str, Any]], calibration: Calibration) -> None:
    """Add each clip's soft evidence (calibrated presence, onset, offset, duration per label) to
    its detected payload, with the thresholds as the collection records them (rounded): those of
    the event operating point where calibration's step 3 moved the events' (``event_params``).
    Step 3 caps thresholds low to assert more events; presence calibrated against such a cap
    would saturate, and the soft score that ranks clips (and breaks the detected retriever's
    ties) would stop telling a clear sound from a faint one."""
    record = calibration.to_json()
    params = record.get("event_params") or record.get("params") or {}
    thresholds = {str(k): float(v) for k, v in (params.get("thresholds") or {}).items()}
    index = SoftIndex.from_payloads(payloads, thresholds, float(params.get("on", 0.3)))
    for i, payload in enumerate(payloads):
        payload.update(index.payload(i))
        # the track summaries are in the soft fields now; every formula variable read parses the
        # whole payload, so a point carries nothing twice
        payload.pop("track", None)


def run_detection(bench: BenchmarkView, store: Store, options: DetectOptions = DetectOptions(), *,
                  tagger: FrameTagger | None = None, embedder: EmbedderProtocol | None = None,
                  hooks: Hooks = SILENT) -> DetectSummary:
    """Detect every clip's events and (re)write ``reasonaudio-detected-<tagger>-<mode>``.

    The main job calls this after its YAMNet ingest (the frame rows come from that ingest's
    cache). ``options.calibration`` names the calibration build (default ``DATA-calibration``),
    which must exist: ``bench build --calibration-for DATA`` makes it
    (:func:`reasonaudio.generator.calibration.resolve_calibration`); nothing is built here."""
    _check(options)
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    calib = resolve_calibration(bench, options.calibration)
    # thresholds chosen under the same condition: the evaluated build's record of it
    calib = calib.with_condition(bench.condition)
    tagger = tagger or load_tagger()
    label_map, training = _label_map(bench, calib, tagger, options, embedder)
    timings["label_map_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    calibration = calibrated(calib, label_map, tagger, options)
    timings["calibration_s"] = time.perf_counter() - t1

    if calibration.params.top_k:
        label_map = label_map.truncated(calibration.params.top_k)
    renderer = _renderer(bench, options)
    heard = heard_clips(bench, renderer=renderer)  # the truth and the length detected in
    found = _detect_clips(bench, heard, label_map, calibration, tagger, renderer, options,
                          hooks, timings)
    t3 = time.perf_counter()
    add_soft_evidence([found.payloads[c.id] for c in bench.clips], calibration)
    timings["detect_s"] += time.perf_counter() - t3

    t4 = time.perf_counter()
    name = _write_collection(bench, store, options, tagger.revision, label_map, calibration,
                             training, found.payloads)
    timings["upsert_s"] = time.perf_counter() - t4
    timings["total_s"] = time.perf_counter() - t0
    report = perception(heard, found.detected, label_map.labels)
    event_point = perception(heard, found.event_point, label_map.labels) if found.event_point else None
    return DetectSummary(
        name=detected_name(options.tagger, options.mode), collection=name, mode=options.mode,
        tagger=options.tagger, tagger_revision=tagger.revision, clips=len(heard),
        detected_events=sum(len(d.events) for d in found.detected.values()),
        true_events=sum(len(c.events) for c in heard), calibration=calibration,
        label_map=label_map, perception=report, frames=merged_stats(found.stats).to_json(),
        event_point=event_point, timings=timings, training=training)


@dataclass
class _Found:
    """What :func:`_detect_clips` made: each clip's payload and detected clip, each chunk's frame
    statistics."""

    payloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    detected: dict[str, Clip] = field(default_factory=dict)
    event_point: dict[str, Clip] = field(default_factory=dict)
    """the detected clips at ``Calibration.event_params``, when it is set"""
    stats: list[Any] = field(default_factory=list)


def _detect_clips(bench: BenchmarkView, heard: Sequence[Clip], label_map: DetectorProtocol,
                  calibration: Calibration, tagger: FrameTagger, renderer: ClipRenderer | None,
                  options: DetectOptions, hooks: Hooks,
                  timings: dict[str, float]) -> _Found:
    """Every clip's events and payload, chunk by chunk of frame rows (``frames_s``: reading
    them, ``detect_s``: detecting in them); with ``calibration.event_params``, each clip's
    events at that operating point too (for the perception report only)."""
    params, event_params = calibration.params, calibration.event_params
    found = _Found()
    timings["frames_s"] = timings["detect_s"] = 0.0
    t2 = time.perf_counter()
    by_id = {c.id: c for c in heard}
    for frames in frame_chunks(bench, heard, tagger=tagger, cache_dir=options.cache_dir,
                               renderer=renderer, hooks=hooks, engine=options.engine,
                               budget_bytes=options.chunk_frame_bytes, reader=label_map.reader):
        t3 = time.perf_counter()
        timings["frames_s"] += t3 - t2
        found.stats.append(frames.stats)
        for cid in frames.probs:
            tracks = label_map.tracks(frames.probs[cid])
            found.detected[cid], found.payloads[cid] = _clip_payload(by_id[cid], tracks, label_map, params)
            if event_params is not None:
                found.event_point[cid] = detect_in(by_id[cid], tracks, label_map.labels, event_params,
                                                   label_map.grid)
        del frames  # this chunk's rows go before the next chunk is read
        t2 = time.perf_counter()
        timings["detect_s"] += t2 - t3
    return found


def _clip_payload(clip: Clip, tracks: np.ndarray, label_map: DetectorProtocol, params: DetectParams
                  ) -> tuple[Clip, dict[str, Any]]:
    """One clip's detected events and its payload (labels, relations, confidence, count, track
    summaries)."""
    det = detect_in(clip, tracks, label_map.labels, params, label_map.grid)
    payload = clip_payload(det)
    payload["confidence"] = det.extra["confidence"]
    if "count" in det.extra:
        payload[COUNT_FIELD] = det.extra["count"]
    payload["track"] = track_summary(tracks, label_map.labels, round(clip.duration * 1000), TRACK_FLOOR,
                                     label_map.grid)
    return det, payload


def _write_collection(bench: BenchmarkView, store: Store, options: DetectOptions, revision: str,
                      label_map: DetectorProtocol, calibration: Calibration, training: dict[str, Any] | None,
                      payloads: dict[str, dict[str, Any]]) -> str:
    """(Re)write the detected collection with its record (tagger revision, label map, the whole
    calibration, the soft evidence's layout); returns its name."""
    name = detected_collection(options.tagger, options.mode, bench.condition.name)
    dims = evidence_dims(bench.labels)
    meta = CollectionMeta(
        model=detected_name(options.tagger, options.mode),
        revision=f"{revision}+map-{label_map.digest()}+cal-{calibration.digest()}",
        dimension=1, distance="dot", pooling="none", corpus_sha256=corpus_fingerprint(bench),
        extra={"kind": "detected", "format": FORMAT, "tagger": options.tagger, "mode": options.mode,
               "optimistic": is_optimistic(options.mode, training),
               "calibration": calibration.to_json(),
               "label_map": label_map.to_json(), "soft": SEMANTICS, "track_floor": TRACK_FLOOR,
               **evidence_record(dims, payloads.values())})

    def make(ids: Sequence[str]) -> list[PointIn]:
        return [evidence_point(cid, payloads[cid], dims) for cid in ids]

    load_collection(store, name, meta, [c.id for c in bench.clips], make, force=True,
                    index_labels=bench.labels, batch_size=options.upsert_batch,
                    segments=SEARCH_SEGMENTS, **evidence_layout())
    return name


def _label_map(bench: BenchmarkView, calib: BenchmarkView, tagger: FrameTagger, options: DetectOptions,
               embedder: EmbedderProtocol | None) -> tuple[DetectorProtocol, dict[str, Any] | None]:
    """The label map of ``options.mode`` over the benchmark's labels, and for ``trained`` the
    model's record (its training builds refused when they are not separate from ``bench`` or
    ``calib``, as ``bench train``'s are)."""
    if options.mode == TRAINED:
        if options.model_path is None:
            raise DataError("--mode trained: give the detector with --model-path DIR "
                            "(made by `bench train-detector`)")
        if options.top_k:
            raise DataError("--top-k: the trained detector has one output per label; omit --top-k")
        tmap = trained_map(options.model_path, bench.labels)
        check_training_separate(tmap.detector, bench, calib)
        return tmap, {"model": str(tmap.detector.path),
                      "weights_sha256": tmap.detector.weights_sha256,
                      "seeds": [b.seed for b in tmap.detector.builds],
                      "heard": heard_share(tmap.detector, bench)}
    if options.model_path is not None:
        raise DataError(f"--model-path: only --mode trained reads a model (this is {options.mode})")
    bank_spec = (bench.manifest.get("parameters") or {}).get("atoms")
    bank = open_bank(str(bank_spec))
    return build_label_map(options.mode, bank, bench.labels, tagger, top_k=options.top_k,
                           embedder=embedder, cache_dir=options.cache_dir), None


def _renderer(bench: BenchmarkView, options: DetectOptions) -> ClipRenderer | None:
    """The renderer the frame pass and :func:`heard_clips` share (None: the frame reader makes
    its own; under clean nothing is placed, and ``--engine ray`` renders in its workers)."""
    if options.engine is not None or bench.condition.is_clean:
        return None
    return bench_renderer(bench)
