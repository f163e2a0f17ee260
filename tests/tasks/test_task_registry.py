"""The task registry: each shape is one record, and everything that knows shapes reads it.

Registry-driven checks over every built-in shape (logic from slots and back, in any argument
order), and an extra mix shape registered only for these tests that is planted, rendered,
recognised, parsed, built into a benchmark and drawn as training captions without any other
module knowing it.
"""

from __future__ import annotations

import ast
import random
from collections import Counter
from pathlib import Path
from typing import Optional

import pytest

import reasonaudio
from reasonaudio.querylang.canonical import same_logic
from reasonaudio.logic import And, Has, Lasts, Node, Not, Overlap
from reasonaudio.querylang.parser import parse
from reasonaudio.querylang.semantics import holds, intervals
from reasonaudio.generator.templates import (
    SHAPES,
    TASK_SHAPES,
    TEMPLATES,
    match_shape,
    render_query,
    templates_for_shape,
)
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.atoms.registry import open_bank
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.generator.compose import ComposeParams, Composer
from reasonaudio.generator.plant import QueryPlanter
from reasonaudio.tasks import registry
from reasonaudio.tasks.base import Facts, Planted, PlantKit, Shape, Slots, Variants, other_n, replace
from reasonaudio.train.data import ClipFacts, DataOptions, make_examples
from reasonaudio.train.paraphrases import PARAPHRASES

LABELS = ["dog barking", "siren", "rain", "church bell", "thunder"]


def _slots(shape: Shape, rng: random.Random) -> Slots:
    labels = rng.sample(LABELS, len(shape.labels))
    return {**dict(zip(shape.labels, labels)), **{n: rng.choice([2, 5, 10, 15, 20]) for n in shape.numbers}}


def _shuffled(logic: Node, rng: random.Random) -> Node:
    """The same logic with and-arguments reordered and overlap pairs flipped at random."""
    if isinstance(logic, And):
        args = [_shuffled(a, rng) for a in logic.args]
        rng.shuffle(args)
        return And(tuple(args))
    if isinstance(logic, Overlap) and rng.random() < 0.5:
        return Overlap(logic.b, logic.a)
    return logic


# --- every built-in shape --------------------------------------------------------------------------

def test_tasks_and_shapes_come_from_the_registry() -> None:
    assert TASKS == ("negation", "order", "overlap", "duration", "mix")
    assert tuple(TASK_SHAPES) == TASKS
    assert TASK_SHAPES["mix"] == ("m1", "m2", "m3", "m4", "m5")
    assert tuple(SHAPES) == tuple(s.name for s in registry.shapes())
    for s in registry.shapes():
        assert s.task in TASKS and s.name in TASK_SHAPES[s.task]
        assert [t.id for t in templates_for_shape(s.name)] == [f"{s.name}-{i}" for i in
                                                                range(1, len(s.texts) + 1)]
        assert [t.id for t in PARAPHRASES[s.name]] == [f"train-{s.name}-{i}" for i in
                                                        range(1, len(s.paraphrases) + 1)]


@pytest.mark.parametrize("name", [s.name for s in registry.BUILT_IN])
def test_logic_from_slots_is_recognised_as_its_shape_in_any_order(name) -> None:
    shape = registry.shape(name)
    rng = random.Random(name)
    for _ in range(30):
        slots = _slots(shape, rng)
        logic = shape.logic(slots)
        assert match_shape(logic) == (name, slots)
        assert [s.name for s in registry.BUILT_IN if s.match(logic) is not None] == [name]
        found, got = registry.recognise(_shuffled(logic, rng))
        assert found is shape
        assert same_logic(shape.logic(got), logic), (logic, got)


@pytest.mark.parametrize("name", [s.name for s in registry.BUILT_IN if s.labels[1:]])
def test_repeated_labels_are_not_a_shape(name) -> None:
    shape = registry.shape(name)
    slots = _slots(shape, random.Random(0))
    slots[shape.labels[1]] = slots[shape.labels[0]]
    with pytest.raises(ValueError, match="not one of the generator's query shapes"):
        match_shape(shape.logic(slots))


def test_only_the_task_package_names_a_mix_shape() -> None:
    """No module outside reasonaudio/tasks spells out a shape that is not a task name."""
    package = Path(reasonaudio.__file__).parent
    own = {s.name for s in registry.shapes()} - set(TASKS)
    found = []
    for path in package.rglob("*.py"):
        if path.parent.name == "tasks" and path.parent.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in own:
                found.append(f"{path.relative_to(package)}:{node.lineno} {node.value!r}")
    assert found == []


def test_register_refuses_a_clash_or_an_unknown_task() -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.shape("m1"))
    with pytest.raises(ValueError, match="unknown task"):
        registry.register(Shape(**{**M6.__dict__, "task": "sorting"}))
    with pytest.raises(ValueError, match="built in"):
        registry.unregister("m5")


# --- a test-only sixth mix shape: lasts(A, N) & not has(C) ------------------------------------------

def m6_logic(s: Slots) -> Node:
    return And((Lasts(s["A"], s["N"]), Not(Has(s["C"]))))


def m6_plant(k: PlantKit) -> Planted:
    a, x = k.labels(2)
    n = k.n()
    pos = [k.block(k.item(a, k.inside_ms(n), fixed=True))]
    neg = [k.copy(pos[0])]
    neg.insert(k.rng.randint(0, 1), k.block(k.item(x)))
    return Planted(m6_logic({"A": a, "C": x, "N": n}), pos, neg, "excluded sound added")


def m6_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    timed = [lab for lab in f.present if lab in f.n_of]
    if timed and f.absent:
        a = rng.choice(timed)
        return {"A": a, "C": rng.choice(f.absent), "N": f.n_of[a]}
    return None


def m6_corrupt(f: Facts, s: Slots) -> Variants:
    return other_n(s, f.durations) + replace(s, "C", f.present, "negation flipped")


M6 = Shape(
    name="m6", task="mix", labels=("A", "C"), numbers=("N",),
    logic=m6_logic, plant=m6_plant, draw=m6_draw, corrupt=m6_corrupt,
    texts=("{A} for {N} {secs}, but no {C}", "{A} lasting around {N} {secs}, without {C}"),
    paraphrases=("{A} going on for {N} {secs}, with no sign of {C}",),
    summary="and(lasts(A, N), not has C)",
)


@pytest.fixture
def m6():
    with registry.registered(M6):
        yield M6
    assert "m6" not in SHAPES


def test_an_extra_mix_shape_is_read_everywhere(m6) -> None:
    assert TASK_SHAPES["mix"] == ("m1", "m2", "m3", "m4", "m5", "m6")
    assert "m6" in SHAPES and {t.id for t in TEMPLATES["mix"]} >= {"m6-1", "m6-2"}
    assert [t.id for t in PARAPHRASES["m6"]] == ["train-m6-1"]
    slots = {"A": "dog barking", "C": "siren", "N": 5}
    logic = m6_logic(slots)
    # recognised, in any argument order
    assert match_shape(logic) == ("m6", slots)
    assert match_shape(And(tuple(reversed(logic.args)))) == ("m6", slots)
    # rendered with each of its templates, and parsed back to exactly its logic
    rng = random.Random(0)
    ids = set()
    for _ in range(40):
        text, tid = render_query(logic, "mix", rng)
        ids.add(tid)
        assert same_logic(parse(text, LABELS), logic), text
    assert ids == {"m6-1", "m6-2"}


def test_an_extra_mix_shape_is_planted_as_a_minimal_pair(m6) -> None:
    bank = open_bank("synthetic:40")
    planter = QueryPlanter(Composer(bank, ComposeParams(), random.Random(3)))
    planted = []
    while len(planted) < 60:
        try:
            planted.append(planter.plant("mix"))
        except ValueError:  # a layout that did not fit: the builder redraws too
            continue
    shapes = Counter(pq.shape for pq in planted)
    assert set(shapes) == {"m1", "m2", "m3", "m4", "m5", "m6"}
    for pq in planted:
        assert pq.task == "mix"
        assert holds(pq.logic, intervals(pq.positive.events)), pq
        assert not holds(pq.logic, intervals(pq.negative.events)), pq
        if pq.shape == "m6":
            assert pq.violation == "excluded sound added"
            assert match_shape(pq.logic)[0] == "m6"


def test_an_extra_mix_shape_goes_into_a_build_and_its_training_data(m6, tmp_path) -> None:
    build_benchmark(tmp_path / "b", BuildParams(atoms="synthetic:40", seed=4, n_clips=240, n_queries=60))
    bench = load_benchmark(tmp_path / "b")
    ours = [q for q in bench.queries if q.extra.get("shape") == "m6"]
    assert ours and all(q.task == "mix" and q.extra["template"].startswith("m6-") for q in ours)
    qrels = bench.qrels
    for q in ours:
        assert same_logic(parse(q.text, bench.labels), q.logic), q.text
        assert qrels.get(q.id), q.id
    data = make_examples(bench, DataOptions(captions_per_clip=6, templates_per_query=1))
    examples = [ex for ex in data.train + data.val if ex.shape == "m6"]
    assert {ex.source for ex in examples} == {"planted", "caption"}
    clips = bench.clip_by_id
    for ex in examples:
        iv = intervals(clips[ex.clip].events)
        assert holds(ex.logic, iv)
        if ex.neg_logic is not None:
            assert not holds(ex.neg_logic, iv)
    facts = ClipFacts(clips[examples[0].clip], bench.labels, frozenset())
    drawn = facts.slots("m6", random.Random(0))
    assert drawn is not None and holds(m6_logic(drawn), facts.iv)
