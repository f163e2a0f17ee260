"""Payload fields and the logic -> filter translation, unit by unit (no store needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qdrant_client.http import models

from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, Overlap
from reasonaudio.querylang.semantics import duration_bounds, lasts_ms
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.errors import DataError
from reasonaudio.store.base import CollectionMeta, collection_name
from reasonaudio.store.filters import lasts_bounds_ms, lasts_range, to_filter
from reasonaudio.store.payload import clip_payload, dur_key, point_id

pytestmark = pytest.mark.fast


def _clip(*events: tuple[str, float, float], mode: str = "overlap") -> Clip:
    evs = tuple(Event(lab, on, off, f"a-{lab}", 0.0) for lab, on, off in events)
    return Clip("clip-x", mode, max(e.offset for e in evs), 16000, evs)


def test_payload_precomputes_every_relation_with_judge_semantics():
    clip = _clip(("dog barking", 0.0, 2.0), ("siren", 2.0, 5.0), ("rain", 1.5, 6.0),
                 ("thunder", 5.5, 6.0))
    p = clip_payload(clip)
    assert p["clip_id"] == "clip-x" and p["labels"] == ["dog barking", "siren", "rain", "thunder"]
    # touching counts as before; rain overlaps dog by exactly 0.5 s (counts), thunder by 0.5 s
    assert "dog barking>siren" in p["before"] and "siren>dog barking" not in p["before"]
    assert "dog barking>thunder" in p["before"] and "siren>thunder" in p["before"]
    assert "rain>thunder" not in p["before"]
    assert p["overlaps"] == ["dog barking|rain", "rain|siren", "rain|thunder"]
    assert p["dur"] == {"dog barking": 2.0, "siren": 3.0, "rain": 4.5, "thunder": 0.5}
    assert not any(isinstance(v, bool) for v in p.values())  # Edge 0.9.0 bool bug


def test_overlap_just_under_half_a_second_is_not_stored():
    p = clip_payload(_clip(("a", 0.0, 1.0), ("b", 0.501, 2.0)))
    assert p["overlaps"] == [] and p["before"] == []


def test_labels_that_would_break_keys_are_refused():
    with pytest.raises(DataError, match="cannot be stored"):
        clip_payload(_clip(("a>b", 0.0, 1.0), ("c", 1.0, 2.0)))
    with pytest.raises(DataError):
        dur_key('say "hi"')


def test_point_ids_are_stable_uuid5():
    assert point_id("clip-00001") == point_id("clip-00001") != point_id("clip-00002")
    assert len(point_id("clip-00001")) == 36


def test_collection_names_and_meta_roundtrip():
    assert collection_name("none") == "reasonaudio-payload"
    assert collection_name("clap") == "reasonaudio-clap"
    assert collection_name("two-stage:minilm") == "reasonaudio-two-stage-minilm"
    meta = CollectionMeta("clap", "abc", 512, "cosine", "mean of 10 s windows", "ff", 3)
    assert CollectionMeta.from_json(meta.to_json(), "x") == meta


@pytest.mark.parametrize("n", [2, 5, 10, 15, 20])
def test_task_duration_bounds_equal_semantics_bounds(n):
    lo, hi = lasts_bounds_ms(n)
    assert (lo / 1000, hi / 1000) == duration_bounds(n)
    assert lo / 1000 * 4 == int(lo / 1000 * 4)  # multiples of 0.25 s


@settings(max_examples=300, deadline=None)
@given(st.floats(0.05, 60, allow_nan=False).map(lambda x: round(x, 4)),
       st.integers(0, 80_000))
def test_lasts_range_agrees_with_integer_ms_semantics(seconds, dur_ms):
    """For any N (also ones whose bounds are not multiples of 0.25 s), the float range on the
    stored seconds admits exactly the integer-ms durations the judge admits."""
    r = lasts_range(seconds)
    stored = dur_ms / 1000.0
    assert (r.gte <= stored <= r.lte) == lasts_ms(dur_ms, seconds)


def test_translation_shapes():
    f = to_filter(And((Has("a"), Not(Has("b")), Or((Before("a", "c"), Overlap("c", "a"))))))
    assert isinstance(f, models.Filter) and len(f.must) == 3
    has, neg, either = f.must
    assert has.key == "labels" and has.match.value == "a"
    assert neg.must_not[0].match.value == "b"
    assert [c.match.value for c in either.should] == ["a>c", "a|c"]  # nested should, sorted pair
    lasts = to_filter(Lasts("rain", 10))
    assert lasts.must[0].key == "labels" and lasts.must[1].key == 'dur."rain"'
