"""Query templates: shapes, determinism, coverage and refusal of other logic."""

from __future__ import annotations

import random

import pytest

from reasonaudio.logic import And, Before, Has, Lasts, Not, Or, Overlap
from reasonaudio.generator.templates import (SHAPES, TASK_SHAPES, TEMPLATES, match_shape,
                                               number_words, render_query, templates_for_shape)

pytestmark = pytest.mark.fast

A, B, C, D = "dog barking", "siren", "rain", "church bell"
LOGIC = {
    "negation": And((Has(A), Has(B), Not(Has(C)))),
    "order": Before(A, B),
    "overlap": Overlap(A, B),
    "duration": Lasts(A, 10),
    "m1": And((Lasts(A, 5), Before(A, B))),
    "m2": And((Before(A, B), Not(Has(C)))),
    "m3": And((Overlap(A, B), Lasts(A, 15))),
    "m4": And((Before(A, B), Before(A, C), Overlap(B, C))),
    "m5": And((Lasts(A, 2), Before(A, B), Before(B, C), Before(B, D), Overlap(C, D))),
}
TASK_OF = {s: t for t, shapes in TASK_SHAPES.items() for s in shapes}


def test_at_least_four_templates_per_task_and_shape() -> None:
    for task, templates in TEMPLATES.items():
        assert len(templates) >= 4, task
    for shape in SHAPES:
        assert len(templates_for_shape(shape)) >= 4, shape
    ids = [t.id for ts in TEMPLATES.values() for t in ts]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("shape", SHAPES)
def test_every_template_of_a_shape_is_reachable_and_mentions_every_label(shape) -> None:
    logic = LOGIC[shape]
    rng = random.Random(0)
    seen = {}
    for _ in range(200):
        text, tid = render_query(logic, TASK_OF[shape], rng)
        seen[tid] = text
    assert set(seen) == {t.id for t in templates_for_shape(shape)}
    from reasonaudio.logic import labels
    for text in seen.values():
        for label in labels(logic):
            assert label in text
        assert "{" not in text and "}" not in text


def test_render_is_deterministic_and_draws_once() -> None:
    r1, r2 = random.Random(7), random.Random(7)
    assert render_query(LOGIC["m5"], "mix", r1) == render_query(LOGIC["m5"], "mix", r2)
    r3, r4 = random.Random(7), random.Random(7)
    render_query(LOGIC["order"], "order", r3)
    r4.choice([0, 1, 2, 3, 4, 5])  # one draw from a list of the same length
    assert r3.random() == r4.random()


def test_shape_matching_ignores_and_order_and_overlap_pair_order() -> None:
    m5 = And((Overlap(D, C), Before(B, D), Before(A, B), Before(B, C), Lasts(A, 2)))
    shape, slots = match_shape(m5)
    assert shape == "m5" and slots["A"] == A and slots["B"] == B and {slots["C"], slots["D"]} == {C, D}
    m3 = And((Lasts(A, 5), Overlap(B, A)))
    assert match_shape(m3) == ("m3", {"A": A, "B": B, "N": 5})


@pytest.mark.parametrize("logic,task", [
    (Has(A), "negation"),
    (Or((Has(A), Has(B))), "mix"),
    (And((Has(A), Has(A), Not(Has(C)))), "negation"),      # labels not distinct
    (And((Lasts(B, 5), Before(A, B))), "mix"),              # m1 with the duration on B
    (And((Before(A, B), Before(C, B), Overlap(A, C))), "mix"),
    (Before(A, B), "overlap"),                                # shape of another task
    (Before(A, B), "sorting"),                                # unknown task
])
def test_other_logic_is_refused(logic, task) -> None:
    with pytest.raises(ValueError):
        render_query(logic, task, random.Random(0))


def test_number_words() -> None:
    assert [number_words(n) for n in (2, 5, 10, 15, 20, 25, 1)] == \
        ["two", "five", "ten", "fifteen", "twenty", "twenty-five", "one"]
    assert number_words(2.5) == "2.5" and number_words(120) == "120"


def test_singular_second() -> None:
    rng = random.Random(0)
    texts = {render_query(Lasts(A, 1), "duration", rng)[0] for _ in range(60)}
    assert all("1 seconds" not in t and "one seconds" not in t for t in texts)
