"""Order: ``before(A, B)``; the hard negative reverses the two."""

from __future__ import annotations

import random
from typing import Optional

from reasonaudio.logic import Before, Node
from reasonaudio.tasks.base import Facts, Planted, PlantKit, Shape, Slots, Variants, swap


def logic(s: Slots) -> Node:
    return Before(s["A"], s["B"])


def plant(k: PlantKit) -> Planted:
    a, b = k.labels(2)
    ia, ib = k.item(a), k.item(b)
    pos = [k.block(ia), k.block(ib)]
    neg = [k.copy(pos[1]), k.copy(pos[0])]
    return Planted(logic({"A": a, "B": b}), pos, neg, "order reversed")


def draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    if f.before:
        a, b = rng.choice(f.before)
        return {"A": a, "B": b}
    return None


def corrupt(f: Facts, s: Slots) -> Variants:
    return swap(s, "A", "B", "order swapped")


ORDER = Shape(
    name="order", task="order", labels=("A", "B"), numbers=(),
    logic=logic, plant=plant, draw=draw, corrupt=corrupt,
    texts=(
        "{A}, then {B}",
        "{A} happens first, followed by {B}",
        "{B} occurs after {A}",
        "{A} before {B}",
        "first {A}, then {B}",
        "{A} is followed by {B}",
    ),
    paraphrases=(
        "{A} and after that {B}",
        "{A} comes before {B}",
        "{A} first, {B} afterwards",
    ),
    summary="before(A, B)",
    formulations={
        "question": ("which clips have {A} followed by {B}?",
                     "is there a recording where {A} happens before {B}?",
                     "which recordings have {B} after {A}?"),
        "command": ("find clips where {A} is followed by {B}",
                    "show me {A}, then {B}",
                    "search for {A} before {B}"),
        "keywords": ("{A} -> {B}", "{A} then {B}"),
        "paraphrase": ("{A} precedes {B}", "{A}, and next {B}", "{A} leading to {B}"),
    },
)
