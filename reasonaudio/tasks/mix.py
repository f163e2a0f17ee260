"""Mix: conjunctions of two or more kinds of constraint, one record per shape (m1 .. m5).

A mix query draws its shape uniformly from :data:`SHAPES` (in this order); adding a mix shape is
one more :class:`~reasonaudio.tasks.base.Shape` record in that tuple (and a new build's draws).
"""

from __future__ import annotations

import random
from typing import Optional

from reasonaudio.logic import And, Before, Has, Lasts, Node, Not, Overlap
from reasonaudio.tasks.base import (
    Facts,
    Planted,
    PlantKit,
    Shape,
    Slots,
    Variants,
    other_n,
    replace,
    swap,
)

PARTNER = "overlap partner that does not overlap"


# --- m1: lasts(A, N) & before(A, B) -------------------------------------------------------------

def m1_logic(s: Slots) -> Node:
    return And((Lasts(s["A"], s["N"]), Before(s["A"], s["B"])))


def m1_plant(k: PlantKit) -> Planted:
    a, b = k.labels(2)
    n = k.n()
    ia = k.item(a, k.inside_ms(n), fixed=True)
    ib = k.item(b)
    pos = [k.block(ia), k.block(ib)]
    if k.rng.random() < 0.5:
        bad = k.copy(pos[0])
        bad.items[0].dur_ms = k.outside_ms(n)
        neg, why = [bad, k.copy(pos[1])], "duration out of tolerance"
    else:
        neg, why = [k.copy(pos[1]), k.copy(pos[0])], "order reversed"
    return Planted(m1_logic({"A": a, "B": b, "N": n}), pos, neg, why)


def m1_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    cands = [(a, b) for a, b in f.before if a in f.n_of]
    if cands:
        a, b = rng.choice(cands)
        return {"A": a, "B": b, "N": f.n_of[a]}
    return None


def m1_corrupt(f: Facts, s: Slots) -> Variants:
    return swap(s, "A", "B", "order swapped") + other_n(s, f.durations)


M1 = Shape(
    name="m1", task="mix", labels=("A", "B"), numbers=("N",),
    logic=m1_logic, plant=m1_plant, draw=m1_draw, corrupt=m1_corrupt,
    texts=(
        "{A} for {N} {secs}, then {B}",
        "{A} lasting around {N} {secs}, followed by {B}",
        "{B} occurs after {A}, which lasts {N} {secs}",
        "first {A} for about {Nw} {secs}, then {B}",
    ),
    paraphrases=(
        "{A} going on for {N} {secs}, and after that {B}",
        "roughly {N} {secs} of {A}, then later {B}",
    ),
    summary="and(lasts(A, N), before(A, B))",
    formulations={
        "question": ("which clips have {A} for {N} {secs}, then {B}?",
                     "is there a recording where {A} lasts {N} {secs} and is followed by {B}?"),
        "command": ("find {A} lasting {N} {secs}, followed by {B}",
                    "show me clips of {A} for about {Nw} {secs}, then {B}"),
        "keywords": ("{A} {N}s -> {B}", "{A} {N}s then {B}"),
        "paraphrase": ("{A} that goes on for {N} {secs} and precedes {B}",
                       "{A}, {Nw} {secs} long, and next {B}"),
    },
)


# --- m2: before(A, B) & not has(C) --------------------------------------------------------------

def m2_logic(s: Slots) -> Node:
    return And((Before(s["A"], s["B"]), Not(Has(s["C"]))))


def m2_plant(k: PlantKit) -> Planted:
    a, b, x = k.labels(3)
    pos = [k.block(k.item(a)), k.block(k.item(b))]
    neg = [k.copy(bl) for bl in pos]
    neg.insert(k.rng.randint(0, 2), k.block(k.item(x)))
    return Planted(m2_logic({"A": a, "B": b, "C": x}), pos, neg, "excluded sound added")


def m2_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    if f.before and f.absent:
        a, b = rng.choice(f.before)
        return {"A": a, "B": b, "C": rng.choice(f.absent)}
    return None


def m2_corrupt(f: Facts, s: Slots) -> Variants:
    return swap(s, "A", "B", "order swapped") + replace(s, "C", f.present, "negation flipped")


M2 = Shape(
    name="m2", task="mix", labels=("A", "B", "C"), numbers=(),
    logic=m2_logic, plant=m2_plant, draw=m2_draw, corrupt=m2_corrupt,
    texts=(
        "{A}, then {B}, but no {C}",
        "{A} happens first, followed by {B}, without {C}",
        "{B} occurs after {A}, and there is no {C}",
        "{A} before {B}, excluding {C}",
    ),
    paraphrases=(
        "{A} and after that {B}, with no sign of {C}",
        "{A} comes before {B}; {C} is absent",
    ),
    summary="and(before(A, B), not has C)",
    formulations={
        "question": ("which clips have {A} followed by {B}, but no {C}?",
                     "is there a recording where {A} happens before {B} and there is no {C}?"),
        "command": ("find clips where {A} is followed by {B}, without {C}",
                    "show me {A}, then {B}, excluding {C}"),
        "keywords": ("{A} -> {B}, -{C}", "{A} -> {B} NOT {C}"),
        "paraphrase": ("{A} precedes {B}, free of {C}", "{A} leading to {B}, but never {C}"),
        "exclusion": ("{A}, then {B}. Exclude {C}.", "{A} before {B}. There is no {C}."),
    },
)


# --- m3: overlap(A, B) & lasts(A, N) ------------------------------------------------------------

def m3_logic(s: Slots) -> Node:
    return And((Overlap(s["A"], s["B"]), Lasts(s["A"], s["N"])))


def m3_plant(k: PlantKit) -> Planted:
    a, b = k.labels(2)
    n = k.n()
    ia = k.item(a, k.inside_ms(n), fixed=True)
    pos = [k.pair(ia, k.item(b))]
    if k.rng.random() < 0.5:
        x, y = k.copy(pos[0]).items
        x.dur_ms = k.outside_ms(n)
        neg, why = [k.pair(x, y)], "duration out of tolerance"
    else:
        x, y = k.copy(pos[0]).items
        neg, why = [k.block(x), k.block(y)], "overlap removed"
    return Planted(m3_logic({"A": a, "B": b, "N": n}), pos, neg, why)


def m3_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    cands = [(a, b) for a, b in f.overlap if a in f.n_of]
    if cands:
        a, b = rng.choice(cands)
        return {"A": a, "B": b, "N": f.n_of[a]}
    return None


def m3_corrupt(f: Facts, s: Slots) -> Variants:
    return other_n(s, f.durations) + replace(s, "B", f.present, PARTNER)


M3 = Shape(
    name="m3", task="mix", labels=("A", "B"), numbers=("N",),
    logic=m3_logic, plant=m3_plant, draw=m3_draw, corrupt=m3_corrupt,
    texts=(
        "{A} for {N} {secs} while {B}",
        "{A} lasting around {N} {secs}, overlapping with {B}",
        "{A} and {B} at the same time, with {A} lasting {N} {secs}",
        "{A} can be heard continuously for {N} {secs}, simultaneously with {B}",
    ),
    paraphrases=(
        "{A} going on for {N} {secs} together with {B}",
        "roughly {N} {secs} of {A}, playing over {B}",
    ),
    summary="and(overlap(A, B), lasts(A, N))",
    formulations={
        "question": ("which clips have {A} for {N} {secs} while {B}?",
                     "is there a recording where {A} lasts {N} {secs}, overlapping with {B}?"),
        "command": ("find {A} lasting {N} {secs} at the same time as {B}",
                    "show me clips of {A} for about {Nw} {secs} while {B}"),
        "keywords": ("{A} {N}s + {B} together",),
        "paraphrase": ("{A} that goes on for {N} {secs}, concurrent with {B}",
                       "{A}, {Nw} {secs} long, amid {B}"),
    },
)


# --- m4: before(A, B) & before(A, C) & overlap(B, C) --------------------------------------------

def m4_logic(s: Slots) -> Node:
    return And((Before(s["A"], s["B"]), Before(s["A"], s["C"]), Overlap(s["B"], s["C"])))


def m4_plant(k: PlantKit) -> Planted:
    a, b, x = k.labels(3)
    pos = [k.block(k.item(a)), k.pair(k.item(b), k.item(x))]
    if k.rng.random() < 0.5:
        neg, why = [k.copy(pos[1]), k.copy(pos[0])], "order reversed"
    else:
        ib, ix = k.copy(pos[1]).items
        neg, why = [k.copy(pos[0]), k.block(ib), k.block(ix)], "overlap removed"
    return Planted(m4_logic({"A": a, "B": b, "C": x}), pos, neg, why)


def m4_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    befs = set(f.before)
    cands = [(a, b, c) for b, c in f.overlap for a in f.present if (a, b) in befs and (a, c) in befs]
    if cands:
        a, b, c = rng.choice(cands)
        return {"A": a, "B": b, "C": c}
    return None


def m4_corrupt(f: Facts, s: Slots) -> Variants:
    return swap(s, "A", "B", "order swapped") + replace(s, "C", f.present, PARTNER)


M4 = Shape(
    name="m4", task="mix", labels=("A", "B", "C"), numbers=(),
    logic=m4_logic, plant=m4_plant, draw=m4_draw, corrupt=m4_corrupt,
    texts=(
        "{A}, then {B} and {C} at the same time",
        "{A} happens first, followed by {B} overlapping with {C}",
        "first {A}, then {B} while {C}",
        "{B} and {C} overlap, after {A}",
    ),
    paraphrases=(
        "{A} first, afterwards {B} together with {C}",
        "{A} comes before {B} and {C}, which sound at once",
    ),
    summary="and(before(A, B), before(A, C), overlap(B, C))",
    formulations={
        "question": ("which clips have {A}, then {B} and {C} at the same time?",
                     "is there a recording where {A} is followed by {B} overlapping with {C}?"),
        "command": ("find {A}, followed by {B} while {C}",
                    "show me clips of {A}, then {B} and {C} at once"),
        "keywords": ("{A} -> {B} + {C} together",),
        "paraphrase": ("{A}, and next {B} concurrent with {C}",
                       "{A} leading to {B} and {C} in parallel"),
    },
)


# --- m5 (the paper's): lasts(A, N) & before(A, B) & before(B, C) & before(B, D) & overlap(C, D) ---

def m5_logic(s: Slots) -> Node:
    return And((Lasts(s["A"], s["N"]), Before(s["A"], s["B"]), Before(s["B"], s["C"]),
                Before(s["B"], s["D"]), Overlap(s["C"], s["D"])))


def m5_plant(k: PlantKit) -> Planted:
    a, b, x, y = k.labels(4)
    n = k.n()
    ia = k.item(a, k.inside_ms(n), fixed=True)
    pos = [k.block(ia), k.block(k.item(b)), k.pair(k.item(x), k.item(y))]
    r = k.rng.random()
    if r < 1 / 3:
        bad = k.copy(pos[0])
        bad.items[0].dur_ms = k.outside_ms(n, side="short")
        neg, why = [bad, k.copy(pos[1]), k.copy(pos[2])], "duration out of tolerance"
    elif r < 2 / 3:
        neg, why = [k.copy(pos[0]), k.copy(pos[2]), k.copy(pos[1])], "order reversed"
    else:
        ix, iy = k.copy(pos[2]).items
        neg, why = [k.copy(pos[0]), k.copy(pos[1]), k.block(ix), k.block(iy)], "overlap removed"
    return Planted(m5_logic({"A": a, "B": b, "C": x, "D": y, "N": n}), pos, neg, why)


def m5_draw(f: Facts, rng: random.Random) -> Optional[Slots]:
    befs = set(f.before)
    p = f.present
    cands = [(a, b, c, d) for c, d in f.overlap for b in p if (b, c) in befs and (b, d) in befs
             for a in p if (a, b) in befs and a in f.n_of]
    if cands:
        a, b, c, d = rng.choice(cands)
        return {"A": a, "B": b, "C": c, "D": d, "N": f.n_of[a]}
    return None


def m5_corrupt(f: Facts, s: Slots) -> Variants:
    return (other_n(s, f.durations) + swap(s, "A", "B", "order swapped")
            + replace(s, "D", f.present, PARTNER))


M5 = Shape(
    name="m5", task="mix", labels=("A", "B", "C", "D"), numbers=("N",),
    logic=m5_logic, plant=m5_plant, draw=m5_draw, corrupt=m5_corrupt,
    texts=(
        "{A} for {N} {secs}, then {B}, and finally {C} and {D} overlap",
        "first {A} lasting around {N} {secs}, followed by {B}, then {C} and {D} at the same time",
        "{A} can be heard continuously for {N} {secs}, then {B}, and finally {C} while {D}",
        "{A} ({N} s), then {B}, followed by {C} overlapping with {D}",
    ),
    paraphrases=(
        "{A} going on for {N} {secs}, after that {B}, then {C} together with {D}",
        "roughly {N} {secs} of {A}, then {B}, then {C} and {D} sounding at once",
    ),
    summary="and(lasts(A, N), before(A, B), before(B, C), before(B, D), overlap(C, D))",
    formulations={
        "question": ("which clips have {A} for {N} {secs}, then {B}, and finally {C} and {D} "
                     "at the same time?",),
        "command": ("find {A} lasting {N} {secs}, followed by {B}, then {C} while {D}",
                    "show me clips of {A} for {N} {secs}, then {B}, then {C} and {D} at once"),
        "keywords": ("{A} {N}s -> {B} -> {C} + {D} together",),
        "paraphrase": ("{A} that goes on for {N} {secs}, next {B}, and next {C} concurrent "
                       "with {D}",),
    },
)

SHAPES: tuple[Shape, ...] = (M1, M2, M3, M4, M5)
