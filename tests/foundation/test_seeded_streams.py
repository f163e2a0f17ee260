"""The one helper that names the seeded random streams draws exactly what each stream drew when
it was written out by hand, so a build, an interval or a random run keeps its bytes."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from reasonaudio.seeds import hashed_rng, name_hash, named_random, seeded_rng, stream_name

pytestmark = pytest.mark.fast


def _draws(rng: random.Random) -> list[float]:
    return [rng.random() for _ in range(5)]


@pytest.mark.parametrize("made, written", [
    (("build", 7), "reasonaudio-build-7"),
    (("formulations", 0), "reasonaudio-formulations-0"),
    (("formulations", 3, "keywords"), "reasonaudio-formulations-3-keywords"),
    (("interleaved", 12), "reasonaudio-interleaved-12"),
    (("condition", "bed", 5, "clip-00042"), "reasonaudio-condition-bed-5-clip-00042"),
    (("train-holdout", 1), "reasonaudio-train-holdout-1"),
])
def test_a_python_stream_is_the_string_it_was_seeded_by(made, written):
    assert stream_name(*made) == written
    assert _draws(named_random(*made)) == _draws(random.Random(written))


def test_a_numpy_stream_under_a_seed_is_its_names_hash():
    text = "dog barking, then a siren"
    by_hand = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    assert name_hash(text) == by_hand
    assert np.array_equal(seeded_rng(4, text).random(6), np.random.default_rng([4, by_hand]).random(6))
    key = ("oracle", "overall", "ndcg@10")
    joined = int.from_bytes(hashlib.sha256("\x1f".join(key).encode()).digest()[:8], "big")
    assert np.array_equal(seeded_rng(0, *key).random(6), np.random.default_rng([0, joined]).random(6))
    assert np.array_equal(seeded_rng(9).random(6), np.random.default_rng(9).random(6))
    assert not np.array_equal(seeded_rng(0, "a").random(6), seeded_rng(0, "b").random(6))


def test_a_named_numpy_stream_without_a_seed():
    by_hand = int.from_bytes(hashlib.sha256(b"reasonaudio-bed-street-1").digest()[:8], "big")
    assert np.array_equal(hashed_rng("bed", "street-1").standard_normal(4),
                          np.random.default_rng(by_hand).standard_normal(4))
