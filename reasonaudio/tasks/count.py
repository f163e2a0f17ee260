"""Count: ``count(A, K)``, A occurs exactly K times (K in 2 to 5), alone or before B.

Not in the default build (``bench build --tasks ...,count`` or ``--tasks all``). The planted
positive holds A K times in a run (one atom, gaps of at least 0.6 s), the hard negative the same
run with one occurrence more or fewer; every other sound sits at the same place in both, so both
clips have the same set of labels and a bag-of-sounds matcher cannot tell them apart.

Shapes: ``count`` (``count(A, K)``: "dog barking three times", "exactly two door knock") and
``count-then`` (``count(A, K) & before(A, B)``: "door knock twice, then siren", the mix with
count). ``K`` renders as digits; ``{Kw}`` as words and ``{Ktimes}`` as "twice", "three times".
"""

from __future__ import annotations

import random
from typing import Optional

from reasonaudio.logic import And, Before, Count, Node
from reasonaudio.tasks.base import Facts, Planted, PlantKit, Shape, Slots, Variants

COUNTS = (2, 3, 4, 5)
"""The K values of generated Count queries."""
VIOLATION = "count off by one"


def _other_counts(k: PlantKit, n: int) -> int:
    return n + k.rng.choice((-1, 1))


def count_logic(s: Slots) -> Node:
    return Count(s["A"], s["K"])


def count_plant(k: PlantKit) -> Planted:
    (a,) = k.labels(1)
    n = k.rng.choice(COUNTS)
    pos, neg = k.run(a, [n, _other_counts(k, n)])
    return Planted(count_logic({"A": a, "K": n}), [pos], [neg], VIOLATION)


def count_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    repeated = [lab for lab in f.present if lab in f.count]
    if repeated:
        a = rng.choice(repeated)
        return {"A": a, "K": f.count[a]}
    return None


def count_corrupt(f: Facts, s: Slots) -> Variants:
    return [({**s, "K": s["K"] + d}, VIOLATION) for d in (-1, 1) if s["K"] + d >= 1]


COUNT = Shape(
    name="count", task="count", labels=("A",), numbers=("K",),
    logic=count_logic, plant=count_plant, draw=count_draw, corrupt=count_corrupt,
    texts=(
        "{A} {Ktimes}",
        "exactly {Kw} {A}",
        "{A} occurring exactly {Kw} times",
        "{A} heard exactly {K} times",
        "{A} can be heard {Ktimes}",
    ),
    paraphrases=(
        "{A}, {Kw} times",
        "{A} happening {Ktimes}",
        "exactly {K} {A}",
    ),
    summary="count(A, K)",
    formulations={
        "question": ("which clips have {A} exactly {Kw} times?",
                     "is there a recording where {A} can be heard {Ktimes}?",
                     "which recordings have exactly {K} {A}?"),
        "command": ("find {A} occurring {Ktimes}",
                    "show me clips with exactly {Kw} {A}",
                    "search for {A} heard {K} times"),
        "keywords": ("{A} {K} times", "{A}, {K} times"),
        "paraphrase": ("{A}: exactly {Kw} times", "{A} sounding {Ktimes}",
                       "{A} happening exactly {Kw} times"),
    },
)


def then_logic(s: Slots) -> Node:
    return And((Count(s["A"], s["K"]), Before(s["A"], s["B"])))


def then_plant(k: PlantKit) -> Planted:
    a, b = k.labels(2)
    n = k.rng.choice(COUNTS)
    pos, neg = k.run(a, [n, _other_counts(k, n)])
    after = k.block(k.item(b))
    return Planted(then_logic({"A": a, "B": b, "K": n}), [pos, after], [neg, k.copy(after)],
                   VIOLATION)


def then_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    pairs = [(a, b) for a, b in f.before if a in f.count]
    if pairs:
        a, b = rng.choice(pairs)
        return {"A": a, "B": b, "K": f.count[a]}
    return None


COUNT_THEN = Shape(
    name="count-then", task="count", labels=("A", "B"), numbers=("K",),
    logic=then_logic, plant=then_plant, draw=then_draw, corrupt=count_corrupt,
    texts=(
        "{A} {Ktimes}, then {B}",
        "{A} occurring exactly {Kw} times, followed by {B}",
        "exactly {Kw} {A}, then {B}",
        "first {A} {Ktimes}, then {B}",
        "{A} {Ktimes} before {B}",
    ),
    paraphrases=(
        "{A} {Ktimes} and after that {B}",
        "{A} heard {Ktimes} before {B}",
        "exactly {K} {A}, followed by {B}",
    ),
    summary="count(A, K) & before(A, B)",
    formulations={
        "question": ("which clips have {A} {Ktimes}, then {B}?",
                     "is there a recording where {A} occurs exactly {Kw} times before {B}?"),
        "command": ("find {A} occurring {Ktimes}, followed by {B}",
                    "show me clips with exactly {Kw} {A}, then {B}"),
        "keywords": ("{A} {K} times -> {B}", "{A} {K} times then {B}"),
        "paraphrase": ("{A} sounding exactly {Kw} times, and next {B}",
                       "{A} heard {Ktimes} leading to {B}"),
    },
)

SHAPES: tuple[Shape, ...] = (COUNT, COUNT_THEN)
