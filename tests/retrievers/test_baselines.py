"""Baselines through the same store (random, bag-of-sounds) and the retriever registry."""

from __future__ import annotations

import pytest
from store_helpers import write_fake_benchmark

from reasonaudio.logic import And, Before, Has, Not
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.retrievers.base import Retriever
from reasonaudio.retrievers.registry import (
    RetrieverSpec,
    UnknownRetriever,
    get_retriever,
    register,
    retriever_names,
    spec_for,
)

pytestmark = pytest.mark.fast


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return load_benchmark(write_fake_benchmark(tmp_path_factory.mktemp("bl") / "b",
                                               n_clips=150, n_queries=10, seed=5))


def test_random_is_deterministic_and_depends_on_text(bench):
    r = get_retriever("random", bench)
    a, b = r.search("dog barking then siren", 20), r.search("dog barking then siren", 20)
    assert a == b and len(a) == 20
    assert [h.clip_id for h in r.search("rain", 20)] != [h.clip_id for h in a]
    scores = [h.score for h in a]
    assert scores == sorted(scores, reverse=True)
    # score() agrees with search()
    assert r.score("dog barking then siren", [h.clip_id for h in a[:3]]) == scores[:3]
    assert r.score("x", ["clip-not-there"]) == [float("-inf")]
    # a second retriever instance (another process, same seed) gives the same ranking
    assert get_retriever("random", bench).search("dog barking then siren", 20) == a


def test_bag_of_sounds_counts_mentioned_sounds_ignoring_reasoning(bench):
    r = get_retriever("bag-of-sounds", bench)
    logic = And((Has("dog barking"), Not(Has("siren")), Before("rain", "thunder")))
    hits = r.search_logic(logic, len(bench.clips))
    mentioned = {"dog barking", "siren", "rain", "thunder"}
    want = {c.id: len(mentioned & set(c.labels)) for c in bench.clips if mentioned & set(c.labels)}
    assert {h.clip_id: h.score for h in hits} == want
    assert [(-h.score, h.clip_id) for h in hits] == sorted((-h.score, h.clip_id) for h in hits)
    # negation ignored: a clip with the siren is not penalised
    with_siren = next(c for c in bench.clips if "siren" in c.labels and "dog barking" in c.labels)
    r._parsed["q"] = logic
    assert r.score("q", [with_siren.id])[0] >= 2


def test_registry_names_and_unknown_names(bench):
    assert {"oracle", "bag-of-sounds", "random"} <= set(retriever_names())
    assert spec_for("oracle").needs_logic and not spec_for("random").needs_logic
    with pytest.raises(UnknownRetriever, match="did you mean oracle"):
        spec_for("oracel")


def test_registry_families_are_one_record(bench):
    class Echo(Retriever):
        def __init__(self, name):
            self.name = name

        def search(self, text, k):
            return []

    spec = register(RetrieverSpec("echo-test:", lambda name, bench, store, options: Echo(name),
                                  "test family", family=True, example="echo-test:a"),
                    replace=True)
    assert spec_for("echo-test:whatever") is spec
    assert "echo-test:a" in retriever_names()
    assert get_retriever("echo-test:b", bench).name == "echo-test:b"


def test_model_retrievers_register_through_the_plugin_hook():
    names = retriever_names()
    assert "clap" in names and any(n.startswith("two-stage:") for n in names)
    assert spec_for("two-stage:oracle-caption+minilm").family
