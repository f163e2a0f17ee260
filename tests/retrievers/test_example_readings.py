"""One record per retriever: its spec names how it reads a sound given by example, and every
way of reading (``READINGS``) is some retriever's."""

from __future__ import annotations

import pytest

from reasonaudio.retrievers.example_readers import BY_NAME, READINGS
from reasonaudio.retrievers.registry import BUILT_IN, spec_for

pytestmark = pytest.mark.fast


def test_each_spec_names_a_reading_that_exists():
    static = {s.name: s.examples for s in BUILT_IN if isinstance(s.examples, str)}
    assert set(static.values()) <= set(BY_NAME)
    assert static["oracle"] == static["bag-of-sounds"] == "true-label"
    assert static["oracle-perceived"] == "tagger-label"
    assert static["random"] == "as-written" and static["vectors:"] == "variant-vectors"
    assert static["hybrid:"] == static["rrf:"] == static["dbsf:"] == "per-part"
    assert spec_for("oracle-without:negation").examples is None  # refused, as before


def test_a_family_picks_its_reading_by_the_member():
    two_stage = spec_for("two-stage:oracle-caption+minilm").examples
    assert callable(two_stage)
    assert two_stage("two-stage:oracle-caption+minilm", object()) == "oracle-caption"
    assert two_stage("two-stage:yamnet-caption+bm25", object()) == "tagger-caption"
    vector = spec_for("trained:LABEL").examples
    assert callable(vector) and vector("trained:x", object()) is None  # no audio tower: none
    for family in ("detected:", "soft:"):  # clips and examples heard by one detector
        reading = spec_for(family).examples
        assert callable(reading)
        assert reading(f"{family}yamnet", object()) == "tagger-label"
        assert reading(f"{family}yamnet-enrolled", object()) == "tagger-label"
        assert reading(f"{family}yamnet-trained", object()) == "detector-label"


def test_every_reading_is_some_retrievers():
    named = {s.examples for s in BUILT_IN if isinstance(s.examples, str)}
    chosen = {"oracle-caption", "tagger-caption", "model-caption", "interleaved", "audio+text",
              "tagger-label", "detector-label"}
    assert {r.name for r in READINGS} == named | chosen
