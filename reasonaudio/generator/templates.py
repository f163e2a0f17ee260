"""Query text templates: rendering a generated query's logic with one of its shape's paraphrases.

The templates themselves live in the task records (:mod:`reasonaudio.tasks`, one module per
task, the table of shapes and logic in docs/benchmark.md); this module renders them and keeps
the names the build, the training data and the tests import. Every template is read back by
:mod:`reasonaudio.querylang.parser` to exactly its logic (tests check this for every template
over random labels), so the oracle retriever sees the same constraints the judge used.

Placeholders: ``{A}`` .. ``{D}`` labels, ``{N}`` seconds as digits, ``{Nw}`` seconds as English
words (digits when not a whole number below 100), ``{secs}`` "second" or "seconds"; ``{K}`` a
count as digits, ``{Kw}`` in words, ``{Ktimes}`` "twice", "three times", ...
"""

from __future__ import annotations

import random
from typing import Any

from reasonaudio.logic import Node
from reasonaudio.tasks.base import Template
from reasonaudio.tasks.registry import (
    SHAPE_NAMES,
    TASK_SHAPES,
    TASK_TEMPLATES,
    recognise,
    shape,
)

__all__ = ["SHAPES", "TASK_SHAPES", "TEMPLATES", "Template", "match_shape", "number_words",
           "render_query", "templates_for_shape", "format_slots"]

TEMPLATES = TASK_TEMPLATES
"""task -> its templates (for ``mix``, the templates of all its shapes); read from the registry."""

SHAPES = SHAPE_NAMES
"""every generator shape (``negation`` .. ``duration``, ``m1`` .. ``m5``); read from the registry."""

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


def match_shape(logic: Node) -> tuple[str, dict[str, Any]]:
    """The generator shape of ``logic`` and its slots (A..D, N); ValueError for any other logic.

    And-arguments may come in any order; overlap pairs in either order.
    """
    found, slots = recognise(logic)
    return found.name, slots


def render_query(logic: Node, task: str, rng: random.Random) -> tuple[str, str]:
    """Render ``logic`` (a generator shape of ``task``) with one template drawn from ``rng``.

    Returns ``(text, template_id)``. Draws exactly one ``rng.choice`` per call, so the caller's
    random stream stays reproducible. ValueError when the logic is not a shape of ``task``.
    """
    if task not in TASK_SHAPES:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASK_SHAPES)}")
    found, slots = recognise(logic)
    if found.task != task:
        raise ValueError(f"logic of shape {found.name!r} does not belong to task {task!r}")
    template = rng.choice(found.templates)
    return template.render(format_slots(slots)), template.id


def format_slots(slots: dict[str, Any]) -> dict[str, Any]:
    """Slots as a template's placeholders: ``N`` as digits plus ``Nw`` and ``secs``."""
    out = dict(slots)
    if "N" in slots:
        n = float(slots["N"])
        out["N"] = f"{n:g}"
        out["Nw"] = number_words(n)
        out["secs"] = "second" if n == 1 else "seconds"
    if "K" in slots:
        k = int(slots["K"])
        out["Kw"] = number_words(k)
        out["Ktimes"] = "twice" if k == 2 else f"{number_words(k)} times"
    return out


_format_slots = format_slots  # the name tests and older callers import


def templates_for_shape(name: str) -> list[Template]:
    """The templates of one generator shape (``negation`` .. ``duration``, ``m1`` .. ``m5``)."""
    return list(shape(name).templates)
