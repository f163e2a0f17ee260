"""TREC run files: round trip, order kept, bad input named by file and line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.evaluation.runs import Run, read_trec, trec_scores, write_trec
from reasonaudio.errors import DataError
from reasonaudio.retrievers.base import Hit, rank

pytestmark = pytest.mark.fast

ids = st.text(alphabet="abcdefghij-0123456789", min_size=1, max_size=8)
scores = st.floats(allow_nan=False, width=64) | st.sampled_from([math.inf, -math.inf, 0.0, -0.0])


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(ids, st.dictionaries(ids, scores, max_size=12), max_size=5))
def test_round_trip_keeps_order_and_untied_scores(tmp_path_factory, data):
    run = Run("my-run", {q: rank(s) for q, s in data.items() if s})
    path = write_trec(tmp_path_factory.mktemp("r") / "run.trec", run)
    back = read_trec(path)
    assert back.tag == ("my-run" if run.hits else "run")   # an empty file falls back to its name
    assert {q: [h.clip_id for h in hs] for q, hs in back.hits.items()} == \
        {q: [h.clip_id for h in hs] for q, hs in run.hits.items()}
    for qid, hits in run.hits.items():
        written = [h.score for h in back.hits[qid]]
        as_f32 = [float(np.float32(x)) for x in written]
        assert all(a > b for a, b in zip(written, written[1:]))  # a float64 reader's order is ours
        assert all(a > b for a, b in zip(as_f32, as_f32[1:]))    # and so is trec_eval's (float32)
        assert as_f32 == trec_scores(h.score for h in hits)
        with np.errstate(over="ignore"):
            f32 = [float(np.float32(h.score)) for h in hits]
        if all(a > b for a, b in zip(f32, f32[1:])) and all(abs(x) >= 1.2e-38 or x == 0 for x in f32):
            assert as_f32 == f32  # scores distinct in float32 are kept (as float32)


def test_format_and_tag(tmp_path):
    run = Run("bag of sounds", {"q-1": [Hit("clip-2", 1.5), Hit("clip-1", 1.5)], "q-0": [Hit("clip-9", 0.25)]})
    path = write_trec(tmp_path / "x" / "r.trec", run, ["q-1", "q-0"])
    assert path.read_text().splitlines() == [
        "q-1 Q0 clip-2 1 1.5 bag_of_sounds",
        "q-1 Q0 clip-1 2 1.4999999 bag_of_sounds",  # the tie, one float32 step down
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
    ("q1 Q0 a 1 nan t\n", "score is NaN"),
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


def test_a_tag_with_spaces_is_kept_whole(tmp_path):
    """The same line rule as run files from elsewhere (ranx writes its run name verbatim)."""
    p = tmp_path / "r.trec"
    p.write_text("q1 Q0 a 1 0.5 my run\nq1 Q0 b 2 0.4 my run\n")
    run = read_trec(p)
    assert run.tag == "my run" and run.ranking("q1") == ["a", "b"]


def test_ids_with_spaces_refused(tmp_path):
    with pytest.raises(DataError, match="spaces"):
        write_trec(tmp_path / "r.trec", Run("t", {"q 1": [Hit("a", 1.0)]}))
    assert not (tmp_path / "r.trec").exists()


def test_trec_scores_break_every_tie_downwards():
    below = lambda x: float(np.nextafter(np.float32(x), np.float32(-np.inf)))  # noqa: E731
    assert trec_scores([2.0, 1.0, 1.0, 0.5]) == [2.0, 1.0, below(1.0), 0.5]
    assert trec_scores([1.0, 1.0, 1.0]) == [1.0, below(1.0), below(below(1.0))]
    assert trec_scores([0.3, 0.30000000001]) == [float(np.float32(0.3)), below(0.3)]  # equal in f32
    tiny = float(np.finfo(np.float32).tiny)
    assert trec_scores([0.0, 0.0, 5.0]) == [0.0, -tiny, below(-tiny)]  # no subnormals
    assert trec_scores([math.nan, math.nan])[0] == math.inf
    assert trec_scores([1.0, -math.inf, -math.inf, -math.inf]) == [4.0, 3.0, 2.0, 1.0]  # rank-based
