"""Negation: ``and(has A, has B, not has C)``; the hard negative adds the excluded sound."""

from __future__ import annotations

import random
from typing import Any, Optional

from reasonaudio.logic import And, Has, Node, Not
from reasonaudio.tasks.base import Facts, Planted, PlantKit, Shape, Slots, Variants, swap


def logic(s: Slots) -> Node:
    return And((Has(s["A"]), Has(s["B"]), Not(Has(s["C"]))))


def seq_or_pair(k: PlantKit, a: Any, b: Any) -> list[Any]:
    """A and B both present, in either order, sometimes overlapping."""
    r = k.rng.random()
    if r < 0.25:
        return [k.pair(a, b)]
    return [k.block(a), k.block(b)] if r < 0.625 else [k.block(b), k.block(a)]


def plant(k: PlantKit) -> Planted:
    a, b, x = k.labels(3)
    core = seq_or_pair(k, k.item(a), k.item(b))
    excluded = k.block(k.item(x))
    neg = [k.copy(bl) for bl in core]
    neg.insert(k.rng.randint(0, len(neg)), excluded)
    return Planted(logic({"A": a, "B": b, "C": x}), core, neg, "excluded sound added")


def draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    if len(f.present) >= 2 and f.absent:
        a, b = rng.sample(f.present, 2)
        return {"A": a, "B": b, "C": rng.choice(f.absent)}
    return None


def corrupt(f: Facts, s: Slots) -> Variants:
    return swap(s, "B", "C", "negation flipped") + swap(s, "A", "C", "negation flipped")


NEGATION = Shape(
    name="negation", task="negation", labels=("A", "B", "C"), numbers=(),
    logic=logic, plant=plant, draw=draw, corrupt=corrupt,
    texts=(
        "{A} and {B}, but no {C}",
        "contains {A} and {B}, but does not contain {C}",
        "{A} and {B} without {C}",
        "{A} as well as {B}, excluding {C}",
        "both {A} and {B} can be heard, but there is no {C}",
        "{A} with {B}, and no {C}",
    ),
    paraphrases=(
        "{A} plus {B}, with no sign of {C}",
        "you hear {A} and {B} but never {C}",
        "{A} and {B} present, {C} absent",
    ),
    summary="and(has A, has B, not has C)",
    formulations={
        "question": ("which clips have {A} and {B} but no {C}?",
                     "is there a recording with {A} and {B} and no {C}?",
                     "are there clips where {A} and {B} can be heard without {C}?"),
        "command": ("find clips with {A} and {B} but no {C}",
                    "show me recordings of {A} and {B} without {C}",
                    "search for {A} and {B}, excluding {C}"),
        "keywords": ("{A}, {B}, -{C}", "{A} AND {B} NOT {C}", "{A}, {B}, NOT {C}"),
        "paraphrase": ("{A} along with {B}, free of {C}",
                       "{A} and also {B}, but never {C}",
                       "{A} together with {B}, lacking {C}"),
        "exclusion": ("{A} and {B}. Exclude {C}.",
                      "{A} and {B}. There is no {C}.",
                      "{A} and {B}; not {C}"),
    },
)
