"""Random detections written as a ``detected:`` collection (as ``bench detect`` writes one), for the
tests of the soft formula, the combined retrievers and the tuning of combined retrievers."""

from __future__ import annotations

import random

from reasonaudio.detect.collection import FORMAT, detected_collection
from reasonaudio.detect.events import Detected, detected_clip
from reasonaudio.detect.soft import SoftIndex
from reasonaudio.logic import labels
from reasonaudio.store import formula as fm
from reasonaudio.store.base import CollectionMeta
from reasonaudio.store.collections import corpus_fingerprint, load_collection
from reasonaudio.store.payload import clip_payload

THRESHOLDS_ON = 0.3


def dims_of(bench) -> dict[str, int]:
    """The evidence vectors' dimensions of a build's labels (as ``bench detect`` writes them)."""
    return fm.evidence_dims(bench.labels)


def detected_payloads(bench, seed: int = 3, counts: bool = False) -> tuple[list[dict], dict[str, float]]:
    """Random detections and score tracks over the labels the queries mention (plus noise);
    with ``counts``, detected labels heard 1 to 4 times (the payload's ``count``)."""
    rng = random.Random(seed)
    vocab = sorted({lab for q in bench.queries for lab in labels(q.logic)})
    thresholds = {lab: rng.choice([0.1, 0.2, 0.35, 0.5]) for lab in vocab[::2]}
    payloads = []
    for clip in bench.clips:
        dur = round(clip.duration * 1000)
        found, track = [], {}
        for label in rng.sample(vocab, min(len(vocab), rng.randint(0, 7))):
            on = rng.randrange(0, max(dur - 500, 1), 10)
            off = min(dur, on + rng.choice([480, 960, 2000, 4250, 5750, 9000]))
            peak = round(rng.random(), 4)
            track[label] = [peak, on, off, round(peak * rng.random(), 4)]
            if rng.random() < 0.6:
                found.append(Detected(label, on, off, round(min(1.0, peak + 0.1), 4),
                                      rng.choice([1, 1, 2, 3, 4]) if counts else 1))
        det = detected_clip(clip, found)
        pl = clip_payload(det)
        pl["confidence"] = det.extra["confidence"]
        if "count" in det.extra:
            pl["count"] = det.extra["count"]
        pl["track"] = track
        payloads.append(pl)
    index = SoftIndex.from_payloads(payloads, thresholds, THRESHOLDS_ON)
    for i, pl in enumerate(payloads):
        pl.update(index.payload(i))
    return payloads, thresholds


def write_detected(bench, store, payloads, thresholds) -> str:
    name = detected_collection("yamnet", "zero-shot")
    meta = CollectionMeta(model="detected:yamnet", revision="test", dimension=1, distance="dot",
                          pooling="none", corpus_sha256=corpus_fingerprint(bench),
                          extra={"kind": "detected", "format": FORMAT, "mode": "zero-shot",
                                 **fm.evidence_record(dims_of(bench), payloads),
                                 "calibration": {"seed": bench.seed + 1, "params": {
                                     "on": THRESHOLDS_ON, "thresholds": thresholds}}})
    by_id = {p["clip_id"]: p for p in payloads}
    dims = fm.evidence_dims(bench.labels)
    load_collection(store, name, meta, [c.id for c in bench.clips],
                    lambda ids: [fm.evidence_point(c, by_id[c], dims) for c in ids], force=True,
                    index_labels=bench.labels, segments=fm.SEARCH_SEGMENTS, batch_size=7,
                    **fm.evidence_layout())
    if store.backend == "edge":  # as bench detect writes it: two segments, searched in parallel
        assert store._shard(name).info().segments_count == fm.SEARCH_SEGMENTS
    return name
