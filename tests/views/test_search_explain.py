"""The explanation pieces `bench search` (and vector search) print."""

from __future__ import annotations

import pytest

from reasonaudio.logic import And, Before, Has, Lasts, Not
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.retrievers.base import Hit
from reasonaudio.views.search import bar, bar_width, checks, search_json, timeline

pytestmark = pytest.mark.fast


def _clip():
    return Clip("clip-1", "sequential", 10.0, 16000,
                (Event("siren", 5.0, 10.0, "a", 0.0), Event("dog barking", 0.0, 2.0, "b", 0.0)))


def test_bar_marks_the_cells_an_event_covers():
    assert bar(0.0, 2.0, 10.0, 10) == "██········"
    assert bar(5.0, 10.0, 10.0, 10) == "·····█████"
    assert bar(4.95, 5.05, 10.0, 10) == "····██····"  # a short event still shows
    assert bar(0, 1, 0, 4) == "····"


def test_timeline_is_in_onset_order_with_times():
    text = timeline(_clip(), width=10, mentioned=["siren"]).plain.splitlines()
    assert text[0].startswith("dog barking") and "0.00- 2.00s" in text[0]
    assert text[1].startswith("siren") and text[1].rstrip().endswith("5.00-10.00s")
    assert "2.00" not in timeline(_clip(), width=10, times=False).plain


def test_checks_follow_the_top_level_conjuncts():
    logic = And((Has("dog barking"), Not(Has("siren")), Before("dog barking", "siren"),
                 Lasts("siren", 5)))
    assert checks(logic, _clip()) == [True, False, True, True]
    assert checks(Has("rain"), _clip()) == [False]


def test_search_json_and_widths():
    assert search_json(None, [Hit("clip-1", 0.5)]) == {"logic": None,
                                                       "hits": [{"id": "clip-1", "score": 0.5}]}
    assert bar_width(200, Has("x")) == (30, True)
    assert bar_width(60, And((Has("a"), Has("b"), Has("c"), Has("d"), Has("e"))))[1] is False
