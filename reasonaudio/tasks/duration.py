"""Duration: ``lasts(A, N)``; the hard negative moves A's length out of tolerance."""

from __future__ import annotations

import random
from typing import Optional

from reasonaudio.logic import Lasts, Node
from reasonaudio.tasks.base import Facts, Planted, PlantKit, Shape, Slots, Variants, other_n


def logic(s: Slots) -> Node:
    return Lasts(s["A"], s["N"])


def plant(k: PlantKit) -> Planted:
    (a,) = k.labels(1)
    n = k.n()
    pos = [k.block(k.item(a, k.inside_ms(n), fixed=True))]
    neg = [k.block(k.item(a, k.outside_ms(n), fixed=True))]
    neg[0].items[0].atom_id = pos[0].items[0].atom_id
    neg[0].items[0].gain_db = pos[0].items[0].gain_db
    return Planted(logic({"A": a, "N": n}), pos, neg, "duration out of tolerance")


def draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    timed = [lab for lab in f.present if lab in f.n_of]
    if timed:
        a = rng.choice(timed)
        return {"A": a, "N": f.n_of[a]}
    return None


def corrupt(f: Facts, s: Slots) -> Variants:
    return other_n(s, f.durations)


DURATION = Shape(
    name="duration", task="duration", labels=("A",), numbers=("N",),
    logic=logic, plant=plant, draw=draw, corrupt=corrupt,
    texts=(
        "{A} for {N} {secs}",
        "{A} lasting around {N} {secs}",
        "{A} can be heard continuously for {N} {secs}",
        "{A} that lasts about {Nw} {secs}",
        "{N} {secs} of {A}",
    ),
    paraphrases=(
        "{A} going on for {N} {secs}",
        "roughly {N} {secs} of {A}",
        "{A} heard for about {Nw} {secs}",
    ),
    summary="lasts(A, N)",
    formulations={
        "question": ("which clips have {A} for {N} {secs}?",
                     "is there a recording where {A} lasts {N} {secs}?",
                     "which recordings contain about {Nw} {secs} of {A}?"),
        "command": ("find {A} lasting {N} {secs}",
                    "show me clips of {A} for about {Nw} {secs}",
                    "search for {N} {secs} of {A}"),
        "keywords": ("{A} {N}s", "{A}, {N} sec"),
        "paraphrase": ("{A} that goes on for {N} {secs}", "{A}, {Nw} {secs} long",
                       "{A} lasting approximately {N} {secs}"),
    },
)
