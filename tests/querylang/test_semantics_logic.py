"""Semantics at their edges, logic JSON round trip, and the vectorised judge vs the plain evaluator."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.logic import (
    And,
    Before,
    Has,
    Lasts,
    Not,
    Or,
    Overlap,
    describe,
    from_json,
    labels,
    to_json,
)
from reasonaudio.querylang.semantics import duration_bounds, evaluate, holds, intervals
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.errors import LogicError

pytestmark = pytest.mark.fast

LABELS = ["dog barking", "siren", "rain", "thunder", "low hum"]


def clip(*events: tuple[str, float, float], cid: str = "c") -> Clip:
    evs = tuple(Event(label, on, off, "atom", 0.0) for label, on, off in events)
    return Clip(cid, "overlap", max([e.offset for e in evs] + [1.0]), 48000, evs)


# --- edges -----------------------------------------------------------------------------------

def test_touching_events_are_before_and_not_overlapping():
    c = clip(("rain", 0.0, 2.0), ("siren", 2.0, 4.0))
    assert evaluate(Before("rain", "siren"), c.events)
    assert not evaluate(Before("siren", "rain"), c.events)
    assert not evaluate(Overlap("rain", "siren"), c.events)


def test_overlap_of_exactly_half_a_second_counts():
    assert evaluate(Overlap("rain", "siren"), clip(("rain", 0.0, 2.5), ("siren", 2.0, 4.0)).events)
    assert not evaluate(Overlap("rain", "siren"), clip(("rain", 0.0, 2.499), ("siren", 2.0, 4.0)).events)
    # float-unfriendly times: 3.7 - 3.2 is 0.5000000000000004 in floats, exactly 500 ms here
    assert evaluate(Overlap("rain", "siren"), clip(("rain", 1.1, 3.7), ("siren", 3.2, 5.0)).events)
    assert evaluate(Overlap("siren", "rain"), clip(("rain", 0.3, 0.8), ("siren", 0.0, 9.0)).events)


def test_overlap_is_not_before():
    c = clip(("rain", 0.0, 3.0), ("siren", 1.0, 4.0))
    assert not evaluate(Before("rain", "siren"), c.events)
    assert evaluate(Overlap("rain", "siren"), c.events)


@pytest.mark.parametrize("n, lo, hi", [(2, 1.5, 2.5), (5, 4.25, 5.75), (10, 8.5, 11.5),
                                        (15, 12.75, 17.25), (20, 17.0, 23.0)])
def test_duration_tolerance_bounds_are_inclusive(n, lo, hi):
    assert duration_bounds(n) == (lo, hi)
    for dur, want in ((lo, True), (hi, True), (lo - 0.001, False), (hi + 0.001, False), (n, True)):
        c = clip(("rain", 1.0, round(1.0 + dur, 3)))
        assert evaluate(Lasts("rain", n), c.events) is want, (n, dur)


def test_absent_labels_make_relations_false_and_negations_true():
    c = clip(("rain", 0.0, 2.0))
    for node in (Has("siren"), Before("rain", "siren"), Before("siren", "rain"),
                 Overlap("rain", "siren"), Lasts("siren", 2)):
        assert not evaluate(node, c.events)
        assert evaluate(Not(node), c.events)


def test_a_label_twice_in_a_clip_is_rejected():
    with pytest.raises(ValueError):
        intervals([Event("rain", 0, 1, "a", 0), Event("rain", 2, 3, "a", 0)])


# --- JSON --------------------------------------------------------------------------------------

label_st = st.sampled_from(LABELS)
seconds_st = st.sampled_from([2, 5, 10, 15, 20, 2.5, 7.25])


def _pair(cls):
    return st.tuples(label_st, label_st).filter(lambda ab: ab[0] != ab[1]).map(lambda ab: cls(*ab))


leaf_st = st.one_of(label_st.map(Has), _pair(Before), _pair(Overlap),
                    st.builds(Lasts, label_st, seconds_st))
logic_st = st.recursive(leaf_st, lambda kids: st.one_of(
    kids.map(Not),
    st.lists(kids, min_size=1, max_size=3).map(lambda xs: And(tuple(xs))),
    st.lists(kids, min_size=1, max_size=3).map(lambda xs: Or(tuple(xs)))), max_leaves=8)


@given(logic_st)
def test_logic_json_round_trip(node):
    assert from_json(to_json(node)) == node
    assert set(labels(node)) <= set(LABELS)
    assert describe(node)


def test_design_examples_parse():
    assert from_json({"op": "lasts", "label": "rain", "seconds": 10}) == Lasts("rain", 10.0)
    assert to_json(Lasts("rain", 10.0)) == {"op": "lasts", "label": "rain", "seconds": 10}
    node = from_json({"op": "and", "args": [{"op": "has", "label": "dog barking"},
                                            {"op": "not", "arg": {"op": "has", "label": "siren"}}]})
    assert node == And((Has("dog barking"), Not(Has("siren"))))


@pytest.mark.parametrize("bad, field", [
    ({"op": "maybe"}, "unknown op"),
    ({"op": "has"}, "'label'"),
    ({"op": "has", "label": ""}, "'label'"),
    ({"op": "before", "a": "rain", "b": "rain"}, "two different"),
    ({"op": "lasts", "label": "rain", "seconds": -1}, "'seconds'"),
    ({"op": "lasts", "label": "rain", "seconds": True}, "'seconds'"),
    ({"op": "and", "args": []}, "'args'"),
    ({"op": "not", "arg": 3}, "logic.arg"),
    ([], "expected an object"),
])
def test_bad_logic_json_names_the_field(bad, field):
    with pytest.raises(LogicError, match=field):
        from_json(bad)


# --- judge vs evaluator ------------------------------------------------------------------------

@st.composite
def clips_st(draw):
    out = []
    for i in range(draw(st.integers(1, 6))):
        chosen = draw(st.lists(label_st, unique=True, max_size=4))
        events = []
        for label in chosen:
            # coarse grid so touching, exact-0.5 overlaps and exact bounds occur often
            on = draw(st.integers(0, 40)) * 0.25
            dur = draw(st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 4.25, 5.75, 8.5, 11.5])
                       | st.integers(1, 400).map(lambda x: x * 0.05))
            events.append((label, on, round(on + dur, 3)))
        out.append(clip(*events, cid=f"c{i}"))
    return out


@settings(max_examples=300, deadline=None)
@given(clips_st(), logic_st)
def test_vectorised_judge_agrees_with_plain_evaluator(clips, node):
    index = ClipIndex(clips)
    mask = index.relevant(node)
    assert [bool(x) for x in mask] == [holds(node, intervals(c.events)) for c in clips]
    hard = index.hard_negatives(node)
    for c, is_hard in zip(clips, hard):
        has_all = all(lab in c.labels for lab in labels(node))
        assert bool(is_hard) == (has_all and not holds(node, intervals(c.events)))
