"""The MiniLM label matcher (models layer) as the parser's semantic fallback, with the
calibrated threshold and margin of reasonaudio.querylang.resolve."""

from __future__ import annotations

import pytest

from reasonaudio.logic import Before, Has
from reasonaudio.querylang.parser import ResolveOptions, parse_detailed
from reasonaudio.querylang.resolve import SEMANTIC_THRESHOLD
from reasonaudio.errors import QueryParseError
from reasonaudio.models.label_matcher import LabelMatcher

from model_fixtures import minilm

LABELS = ["dog barking", "sea lion barking", "bear growling", "siren", "rain", "thunder",
          "glass breaking", "door slamming", "cat meowing", "applause", "crowd cheering"]


@pytest.fixture(scope="module")
def matcher():
    return LabelMatcher(embedder=minilm())


def test_scores_are_cosines_best_first(matcher) -> None:
    got = matcher("puppy barking", LABELS)
    assert got[0][0] == "dog barking"
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True) and -1 <= scores[-1] <= scores[0] <= 1
    matcher("kitten meowing", LABELS)
    assert len(matcher._labels) == 1   # the labels were embedded once


@pytest.mark.parametrize("text,want", [
    ("puppy barking then rain", Before("dog barking", "rain")),
    ("glass shattering", Has("glass breaking")),
    ("kitten meowing", Has("cat meowing")),
])
def test_clear_paraphrases_resolve(matcher, text, want) -> None:
    r = parse_detailed(text, LABELS, ResolveOptions(semantic=matcher))
    assert r.logic == want
    assert any(x.kind == "semantic" and x.score >= SEMANTIC_THRESHOLD for x in r.resolutions)


@pytest.mark.parametrize("text", ["dog growls", "white noise", "car honking"])
def test_unclear_phrases_are_refused_with_candidates(matcher, text) -> None:
    with pytest.raises(QueryParseError, match="semantic candidates"):
        parse_detailed(text, LABELS, ResolveOptions(semantic=matcher))
