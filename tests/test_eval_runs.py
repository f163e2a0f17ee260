"""TREC run files: round trip, order kept, bad input named by file and line."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.bench.runs import Run, read_trec, write_trec
from reasonaudio.errors import DataError
from reasonaudio.retrievers.base import Hit, rank

ids = st.text(alphabet="abcdefghij-0123456789", min_size=1, max_size=8)
scores = st.floats(allow_nan=False, width=64) | st.sampled_from([math.inf, -math.inf, 0.0, -0.0])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(ids, st.dictionaries(ids, scores, max_size=12), max_size=5))
def test_round_trip_keeps_order_and_scores(tmp_path_factory, data):
    run = Run("my-run", {q: rank(s) for q, s in data.items() if s})
    path = write_trec(tmp_path_factory.mktemp("r") / "run.trec", run)
    back = read_trec(path)
    assert back.tag == ("my-run" if run.hits else "run")   # an empty file falls back to its name
    assert back.hits == run.hits


def test_format_and_tag(tmp_path):
    run = Run("bag of sounds", {"q-1": [Hit("clip-2", 1.5), Hit("clip-1", 1.5)], "q-0": [Hit("clip-9", 0.25)]})
    path = write_trec(tmp_path / "x" / "r.trec", run, ["q-1", "q-0"])
    assert path.read_text().splitlines() == [
        "q-1 Q0 clip-2 1 1.5 bag_of_sounds",
        "q-1 Q0 clip-1 2 1.5 bag_of_sounds",
        "q-0 Q0 clip-9 1 0.25 bag_of_sounds",
    ]


def test_read_orders_by_rank_column(tmp_path):
    p = tmp_path / "r.trec"
    p.write_text("q1 Q0 b 2 0.9 t\nq1 Q0 a 1 0.1 t\n\n")
    assert read_trec(p).ranking("q1") == ["a", "b"]


@pytest.mark.parametrize("text,msg", [
    ("q1 Q0 a 1 0.5\n", "expected 6 fields"),
    ("q1 Q0 a one 0.5 t\n", "rank must be an integer"),
    ("q1 Q0 a 1 high t\n", "score must be a number"),
    ("q1 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n", "lists a clip twice"),
    ("q1 Q0 a 1 0.5 t\nq1 Q0 b 1 0.4 t\n", "repeated rank"),
    ("q1 Q0 a 1 0.5 t\nq2 Q0 b 1 0.4 u\n", "more than one run tag"),
])
def test_bad_files(tmp_path, text, msg):
    p = tmp_path / "bad.trec"
    p.write_text(text)
    with pytest.raises(DataError, match=msg) as exc:
        read_trec(p)
    assert str(p) in str(exc.value)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_trec(tmp_path / "nope.trec")


def test_ids_with_spaces_refused(tmp_path):
    with pytest.raises(DataError, match="spaces"):
        write_trec(tmp_path / "r.trec", Run("t", {"q 1": [Hit("a", 1.0)]}))
    assert not (tmp_path / "r.trec").exists()
