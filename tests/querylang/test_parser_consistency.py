"""Canonical form and the contradiction check, tested against the judge's semantics.

Soundness: logic built only from facts true in some clip is never called contradictory.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.querylang.canonical import canonical, check_consistent, same_logic
from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, Overlap
from reasonaudio.querylang.semantics import holds
from reasonaudio.errors import QueryParseError

pytestmark = pytest.mark.fast

LABELS = ["a", "b", "c", "d", "e"]


@st.composite
def clip_and_true_facts(draw):
    """Random events (integer ms) and a conjunction of facts the clip satisfies."""
    present = draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=5, unique=True))
    iv = {}
    for lab in present:
        on = draw(st.integers(0, 20_000))
        iv[lab] = (on, on + draw(st.integers(100, 20_000)))
    facts = [Has(x) for x in present]
    facts += [Not(Has(x)) for x in LABELS if x not in present]
    for x in present:
        dur = (iv[x][1] - iv[x][0]) / 1000
        facts += [Lasts(x, dur), Not(Lasts(x, dur + 5)), Not(Lasts(x, round(dur, 1)))]
        for y in present:
            if x != y:
                facts += [Before(x, y), Overlap(x, y), Not(Before(x, y)), Not(Overlap(x, y))]
    true = [f for f in facts if holds(f, iv)]
    chosen = draw(st.lists(st.sampled_from(true), min_size=1, max_size=8))
    return iv, And(tuple(chosen))


@settings(max_examples=300, deadline=None)
@given(clip_and_true_facts())
def test_satisfiable_logic_is_never_called_contradictory(case) -> None:
    iv, logic = case
    assert holds(logic, iv)
    check_consistent(logic)


@pytest.mark.parametrize("logic,needle", [
    (And((Has("a"), Not(Has("a")))), "both required and excluded"),
    (And((Before("a", "b"), Before("b", "a"))), "cycle"),
    (And((Before("a", "b"), Before("b", "c"), Before("c", "a"))), "cycle"),
    (And((Before("a", "b"), Overlap("a", "b"))), "cannot overlap"),
    (And((Before("a", "b"), Before("b", "c"), Overlap("c", "a"))), "cannot overlap"),
    (And((Overlap("a", "b"), Not(Overlap("b", "a")))), "both required and excluded"),
    (And((Lasts("a", 2), Lasts("a", 10))), "cannot last"),
    (And((Lasts("a", 5), Not(Lasts("a", 5)))), "must and must not"),
    (And((Overlap("a", "b"), Not(Has("b")))), "both required and excluded"),
])
def test_contradictions(logic, needle) -> None:
    with pytest.raises(QueryParseError, match=needle):
        check_consistent(logic)


def test_canonical_form() -> None:
    x = And((Overlap("b", "a"), And((Has("c"), Lasts("a", 5))), Has("c")))
    y = And((Lasts("a", 5.0), Has("c"), Overlap("a", "b")))
    assert canonical(x) == canonical(y) and same_logic(x, y)
    assert not same_logic(Before("a", "b"), Before("b", "a"))
    assert same_logic(Or((Has("a"), Has("b"))), Or((Has("b"), Has("a"))))
    assert canonical(And((Has("a"),))) == Has("a")
