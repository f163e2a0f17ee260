"""Every template of every generator shape reads back to exactly its logic (issue 3 item 4).

Hypothesis draws labels from vocabularies that try to confuse the parser: the synthetic bank's
labels (words such as low/high/fast/noise), labels that share words (dog barking / dog growling,
bell / church bell), labels containing query words (first, no, long, sound of) and folder-bank
labels with punctuation (rock & roll, fill (with liquid)).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.logic import And, Before, Has, Lasts, Node, Not, Overlap
from reasonaudio.querylang.parser import parse, same_logic
from reasonaudio.generator.templates import (
    SHAPES,
    TASK_SHAPES,
    _format_slots,
    render_query,
    templates_for_shape,
)

TRICKY = ["dog barking", "dog growling", "car horn", "car engine", "rain", "thunder", "siren",
          "church bell", "bell", "low hum", "high whistle", "fast click train", "white noise",
          "sound of waves", "long beep", "first light chime", "no signal tone", "bird chirping",
          "hammering", "glass breaking", "rock & roll", "fill (with liquid)", "hi-hat"]


def synthetic_labels() -> list[str]:
    from reasonaudio.atoms.synthetic import RECIPES

    return [r.label for r in RECIPES]


VOCABS = {"tricky": TRICKY, "synthetic": synthetic_labels()}


def logic_for(shape: str, a: str, b: str, c: str, d: str, n: float) -> Node:
    return {
        "negation": And((Has(a), Has(b), Not(Has(c)))),
        "order": Before(a, b),
        "overlap": Overlap(a, b),
        "duration": Lasts(a, n),
        "m1": And((Lasts(a, n), Before(a, b))),
        "m2": And((Before(a, b), Not(Has(c)))),
        "m3": And((Overlap(a, b), Lasts(a, n))),
        "m4": And((Before(a, b), Before(a, c), Overlap(b, c))),
        "m5": And((Lasts(a, n), Before(a, b), Before(b, c), Before(b, d), Overlap(c, d))),
    }[shape]


ALL_TEMPLATES = [t for shape in SHAPES for t in templates_for_shape(shape)]
DURATIONS = st.sampled_from([2, 5, 10, 15, 20]) | st.sampled_from([1, 2.5, 25, 0.5, 60])


@pytest.mark.parametrize("vocab_name", sorted(VOCABS))
@pytest.mark.parametrize("template", ALL_TEMPLATES, ids=lambda t: t.id)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_template_reads_back(vocab_name, template, data) -> None:
    vocab = VOCABS[vocab_name]
    a, b, c, d = data.draw(st.lists(st.sampled_from(vocab), min_size=4, max_size=4, unique=True))
    n = data.draw(DURATIONS)
    text = template.render(_format_slots({"A": a, "B": b, "C": c, "D": d, "N": n}))
    want = logic_for(template.shape, a, b, c, d, n)
    got = parse(text, vocab)
    assert same_logic(got, want), (text, got, want)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), task=st.sampled_from(sorted(TASK_SHAPES)))
def test_render_query_then_parse(seed, task) -> None:
    """The builder's path: render_query picks the template; the parser must undo it."""
    rng = random.Random(seed)
    vocab = VOCABS["synthetic"]
    shape = rng.choice(TASK_SHAPES[task])
    a, b, c, d = rng.sample(vocab, 4)
    logic = logic_for(shape, a, b, c, d, rng.choice([2, 5, 10, 15, 20]))
    text, template_id = render_query(logic, task, rng)
    assert template_id.startswith(shape + "-")
    assert same_logic(parse(text, vocab), logic), text


def test_built_benchmark_queries_read_back(small_bench_dir) -> None:
    """100% on the generated queries of a real build (the issue's acceptance figure)."""
    from reasonaudio.dataset.view import load_benchmark

    bench = load_benchmark(small_bench_dir)
    assert bench.queries
    for q in bench.queries:
        assert same_logic(parse(q.text, bench.labels), q.logic), (q.id, q.text)
