"""Overlap: ``overlap(A, B)``; the hard negative plays the two apart."""

from __future__ import annotations

import random
from typing import Optional

from reasonaudio.logic import Node, Overlap
from reasonaudio.tasks.base import Facts, Planted, PlantKit, Shape, Slots, Variants, replace


def logic(s: Slots) -> Node:
    return Overlap(s["A"], s["B"])


def plant(k: PlantKit) -> Planted:
    a, b = k.labels(2)
    pos = [k.pair(k.item(a), k.item(b))]
    x, y = k.copy(pos[0]).items
    neg = [k.block(x), k.block(y)] if k.rng.random() < 0.5 else [k.block(y), k.block(x)]
    return Planted(logic({"A": a, "B": b}), pos, neg, "overlap removed")


def draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    if f.overlap:
        a, b = rng.choice(f.overlap)
        return {"A": a, "B": b}
    return None


def corrupt(f: Facts, s: Slots) -> Variants:
    return replace(s, "B", f.present, "overlap partner that does not overlap")


OVERLAP = Shape(
    name="overlap", task="overlap", labels=("A", "B"), numbers=(),
    logic=logic, plant=plant, draw=draw, corrupt=corrupt,
    texts=(
        "{A} while {B}",
        "{A} and {B} at the same time",
        "{A} overlapping with {B}",
        "{A} and {B} simultaneously",
        "{A} can be heard during {B}",
    ),
    paraphrases=(
        "{A} together with {B}",
        "{A} playing over {B}",
        "{A} and {B} sounding at once",
    ),
    summary="overlap(A, B)",
    formulations={
        "question": ("which clips have {A} while {B}?",
                     "is there a recording of {A} at the same time as {B}?",
                     "which recordings have {A} overlapping with {B}?"),
        "command": ("find clips of {A} and {B} at once",
                    "show me {A} during {B}",
                    "search for {A} and {B} simultaneously"),
        "keywords": ("{A} + {B} together", "{A} + {B} at the same time"),
        "paraphrase": ("{A} concurrent with {B}", "{A} amid {B}", "{A} and {B} in parallel"),
    },
)
