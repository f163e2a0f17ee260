"""The detected payload goes through the oracle's own filter code: for random detections and
random logic, the Qdrant filter on the detected collection == the judge on the detected events."""

from __future__ import annotations

import random

from store_helpers import WORDS, random_logic, task_logic

import pytest

from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.dataset.clip import Clip
from reasonaudio.detect.events import Detected, detected_clip
from reasonaudio.store.base import CollectionMeta, PointIn
from reasonaudio.store.edge import EdgeStore
from reasonaudio.store.filters import to_filter
from reasonaudio.store.payload import clip_payload

pytestmark = pytest.mark.fast


def _random_detections(rng: random.Random, idx: int) -> Clip:
    truth = Clip(f"clip-{idx:05d}", "sequential", 20.0, 48000, ())
    found = []
    for label in rng.sample(WORDS, rng.randint(0, 6)):
        on = rng.choice([0, 240, 720, 1200]) + 480 * rng.randint(0, 20)
        length = rng.choice([480, 960, 1440, 1500, 2500, 2501, 4250, 4249, 5750, 5751, 8500, 12750])
        found.append(Detected(label, on, min(on + length, 20_000), rng.random()))
    return detected_clip(truth, found)


def test_filter_on_detected_payload_equals_judge_on_detected_events(tmp_path):
    rng = random.Random(11)
    clips = [_random_detections(rng, i) for i in range(300)]
    store = EdgeStore(tmp_path / "edge")
    try:
        name = "reasonaudio-detected-test"
        store.create(name, CollectionMeta(model="detected:test", revision="t", dimension=1,
                                          distance="dot", pooling="none"), index_labels=WORDS)
        store.upsert(name, [PointIn(c.id, (1.0,), clip_payload(c)) for c in clips])
        judge = ClipIndex(clips)
        logics = [random_logic(rng, WORDS) for _ in range(150)]
        logics += [task_logic(rng, WORDS, t) for t in ("negation", "order", "overlap", "duration",
                                                       "mix") for _ in range(20)]
        nonempty = 0
        for logic in logics:
            want = judge.ids(judge.relevant(logic))
            assert store.matching_ids(name, to_filter(logic)) == sorted(want), logic
            nonempty += bool(want)
        assert nonempty > 50  # the check is not vacuous
    finally:
        store.close()
