"""Query text templates: the paraphrases a generated query's logic is rendered with.

Each task has several templates so a retriever cannot learn one fixed wording. Every template is
read back by :mod:`reasonaudio.constraints.parser` to exactly its logic (tests check this for
every template over random labels), so the oracle retriever sees the same constraints the judge
used. The generator's logic shapes are fixed (docs/benchmark.md and ``reasonaudio.ingest.plant``):

| shape | logic |
|---|---|
| negation | and(has A, has B, not has C) |
| order | before(A, B) |
| overlap | overlap(A, B) |
| duration | lasts(A, N) |
| m1 | and(lasts(A, N), before(A, B)) |
| m2 | and(before(A, B), not has C) |
| m3 | and(overlap(A, B), lasts(A, N)) |
| m4 | and(before(A, B), before(A, C), overlap(B, C)) |
| m5 | and(lasts(A, N), before(A, B), before(B, C), before(B, D), overlap(C, D)) |

Placeholders: ``{A}`` .. ``{D}`` labels, ``{N}`` seconds as digits, ``{Nw}`` seconds as English
words (digits when not a whole number below 100), ``{secs}`` "second" or "seconds".
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from reasonaudio.constraints.logic import And, Before, Has, Lasts, Node, Not, Overlap, describe

TASK_SHAPES: dict[str, tuple[str, ...]] = {
    "negation": ("negation",),
    "order": ("order",),
    "overlap": ("overlap",),
    "duration": ("duration",),
    "mix": ("m1", "m2", "m3", "m4", "m5"),
}


@dataclass(frozen=True)
class Template:
    id: str
    """stable name recorded in ``queries.jsonl`` (``template`` field), e.g. ``order-3``"""
    shape: str
    text: str

    def render(self, slots: dict[str, Any]) -> str:
        return self.text.format(**slots)


def _t(shape: str, *texts: str) -> list[Template]:
    return [Template(f"{shape}-{i}", shape, text) for i, text in enumerate(texts, 1)]


_BY_SHAPE: dict[str, list[Template]] = {
    "negation": _t(
        "negation",
        "{A} and {B}, but no {C}",
        "contains {A} and {B}, but does not contain {C}",
        "{A} and {B} without {C}",
        "{A} as well as {B}, excluding {C}",
        "both {A} and {B} can be heard, but there is no {C}",
        "{A} with {B}, and no {C}",
    ),
    "order": _t(
        "order",
        "{A}, then {B}",
        "{A} happens first, followed by {B}",
        "{B} occurs after {A}",
        "{A} before {B}",
        "first {A}, then {B}",
        "{A} is followed by {B}",
    ),
    "overlap": _t(
        "overlap",
        "{A} while {B}",
        "{A} and {B} at the same time",
        "{A} overlapping with {B}",
        "{A} and {B} simultaneously",
        "{A} can be heard during {B}",
    ),
    "duration": _t(
        "duration",
        "{A} for {N} {secs}",
        "{A} lasting around {N} {secs}",
        "{A} can be heard continuously for {N} {secs}",
        "{A} that lasts about {Nw} {secs}",
        "{N} {secs} of {A}",
    ),
    "m1": _t(
        "m1",
        "{A} for {N} {secs}, then {B}",
        "{A} lasting around {N} {secs}, followed by {B}",
        "{B} occurs after {A}, which lasts {N} {secs}",
        "first {A} for about {Nw} {secs}, then {B}",
    ),
    "m2": _t(
        "m2",
        "{A}, then {B}, but no {C}",
        "{A} happens first, followed by {B}, without {C}",
        "{B} occurs after {A}, and there is no {C}",
        "{A} before {B}, excluding {C}",
    ),
    "m3": _t(
        "m3",
        "{A} for {N} {secs} while {B}",
        "{A} lasting around {N} {secs}, overlapping with {B}",
        "{A} and {B} at the same time, with {A} lasting {N} {secs}",
        "{A} can be heard continuously for {N} {secs}, simultaneously with {B}",
    ),
    "m4": _t(
        "m4",
        "{A}, then {B} and {C} at the same time",
        "{A} happens first, followed by {B} overlapping with {C}",
        "first {A}, then {B} while {C}",
        "{B} and {C} overlap, after {A}",
    ),
    "m5": _t(
        "m5",
        "{A} for {N} {secs}, then {B}, and finally {C} and {D} overlap",
        "first {A} lasting around {N} {secs}, followed by {B}, then {C} and {D} at the same time",
        "{A} can be heard continuously for {N} {secs}, then {B}, and finally {C} while {D}",
        "{A} ({N} s), then {B}, followed by {C} overlapping with {D}",
    ),
}

TEMPLATES: dict[str, list[Template]] = {
    task: [t for shape in shapes for t in _BY_SHAPE[shape]] for task, shapes in TASK_SHAPES.items()
}
"""task -> its templates (for ``mix``, the templates of all five shapes)."""

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty",
         9: "ninety"}


def number_words(value: float) -> str:
    """English words for a whole number below 100 ("fifteen", "twenty-five"); digits otherwise."""
    if float(value).is_integer() and 0 <= value < 100:
        n = int(value)
        if n < 20:
            return _ONES[n]
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    return f"{value:g}"


def _labels_distinct(*labels: str) -> bool:
    return len(set(labels)) == len(labels)


def match_shape(logic: Node) -> tuple[str, dict[str, Any]]:
    """The generator shape of ``logic`` and its slots (A..D, N); ValueError for any other logic.

    And-arguments may come in any order; overlap pairs in either order.
    """
    def fail() -> ValueError:
        return ValueError(f"logic {describe(logic)} is not one of the generator's query shapes")

    if isinstance(logic, Before):
        return "order", {"A": logic.a, "B": logic.b}
    if isinstance(logic, Overlap):
        return "overlap", {"A": logic.a, "B": logic.b}
    if isinstance(logic, Lasts):
        return "duration", {"A": logic.label, "N": logic.seconds}
    if not isinstance(logic, And):
        raise fail()
    args = logic.args
    has = [a for a in args if isinstance(a, Has)]
    nots = [a.arg.label for a in args if isinstance(a, Not) and isinstance(a.arg, Has)]
    bef = [a for a in args if isinstance(a, Before)]
    ovl = [a for a in args if isinstance(a, Overlap)]
    las = [a for a in args if isinstance(a, Lasts)]
    if len(has) + len(nots) + len(bef) + len(ovl) + len(las) != len(args):
        raise fail()
    kinds = (len(has), len(nots), len(bef), len(ovl), len(las))
    slots: dict[str, Any]
    if kinds == (2, 1, 0, 0, 0):
        shape, slots = "negation", {"A": has[0].label, "B": has[1].label, "C": nots[0]}
    elif kinds == (0, 0, 1, 0, 1) and las[0].label == bef[0].a:
        shape, slots = "m1", {"A": bef[0].a, "B": bef[0].b, "N": las[0].seconds}
    elif kinds == (0, 1, 1, 0, 0):
        shape, slots = "m2", {"A": bef[0].a, "B": bef[0].b, "C": nots[0]}
    elif kinds == (0, 0, 0, 1, 1) and las[0].label in (ovl[0].a, ovl[0].b):
        other = ovl[0].b if las[0].label == ovl[0].a else ovl[0].a
        shape, slots = "m3", {"A": las[0].label, "B": other, "N": las[0].seconds}
    elif (kinds == (0, 0, 2, 1, 0) and bef[0].a == bef[1].a
          and {bef[0].b, bef[1].b} == {ovl[0].a, ovl[0].b}):
        shape, slots = "m4", {"A": bef[0].a, "B": bef[0].b, "C": bef[1].b}
    elif kinds == (0, 0, 3, 1, 1):
        a = las[0].label
        first = [x for x in bef if x.a == a]
        if len(first) != 1:
            raise fail()
        b = first[0].b
        later = sorted((x for x in bef if x.a == b), key=lambda x: (x.b != ovl[0].a, x.b))
        if len(later) != 2 or {later[0].b, later[1].b} != {ovl[0].a, ovl[0].b}:
            raise fail()
        shape, slots = "m5", {"A": a, "B": b, "C": ovl[0].a, "D": ovl[0].b, "N": las[0].seconds}
    else:
        raise fail()
    labels = [v for k, v in slots.items() if k != "N"]
    if not _labels_distinct(*labels):
        raise fail()
    return shape, slots


def render_query(logic: Node, task: str, rng: random.Random) -> tuple[str, str]:
    """Render ``logic`` (a generator shape of ``task``) with one template drawn from ``rng``.

    Returns ``(text, template_id)``. Draws exactly one ``rng.choice`` per call, so the caller's
    random stream stays reproducible. ValueError when the logic is not a shape of ``task``.
    """
    if task not in TASK_SHAPES:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASK_SHAPES)}")
    shape, slots = match_shape(logic)
    if shape not in TASK_SHAPES[task]:
        raise ValueError(f"logic of shape {shape!r} does not belong to task {task!r}")
    template = rng.choice(_BY_SHAPE[shape])
    return template.render(_format_slots(slots)), template.id


def _format_slots(slots: dict[str, Any]) -> dict[str, Any]:
    out = dict(slots)
    if "N" in slots:
        n = float(slots["N"])
        out["N"] = f"{n:g}"
        out["Nw"] = number_words(n)
        out["secs"] = "second" if n == 1 else "seconds"
    return out


def templates_for_shape(shape: str) -> list[Template]:
    """The templates of one generator shape (``negation`` .. ``duration``, ``m1`` .. ``m5``)."""
    return list(_BY_SHAPE[shape])


SHAPES: tuple[str, ...] = tuple(_BY_SHAPE)
