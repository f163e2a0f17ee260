"""User-intent formulations: every generated query written in each way people ask (issue 21).

Each formulation is a record (:mod:`reasonaudio.tasks.formulation_records`) that says how its
text is written. ``caption`` is the query's own text (``queries.jsonl``); ``question``,
``command``, ``keywords``, ``paraphrase`` and ``exclusion`` (only for a shape with a negation: the
excluded sound as a separate negative clause) come from the templates in each shape's record
(:attr:`reasonaudio.tasks.base.Shape.formulations`). The draws come from their own seeded stream
(``reasonaudio-formulations-<seed>``), one ``rng.choice`` per query and formulation in file order,
so the build's own stream, and with it ``queries.jsonl``, qrels and choices, does not move; a
registered formulation draws from a stream of its own, so adding one moves no existing row.
"""

from __future__ import annotations

import random
from typing import Any, Iterable, Mapping

from reasonaudio.logic import Node, from_json
from reasonaudio import seeds
from reasonaudio.generator.templates import format_slots
from reasonaudio.seeds import named_random
from reasonaudio.tasks.base import CAPTION, FORMULATIONS
from reasonaudio.tasks.formulation_records import formulation, formulations
from reasonaudio.tasks.registry import recognise, shape

__all__ = ["ALL", "CAPTION", "FORMULATIONS", "check_formulation", "expand", "formulate",
           "formulation_counts", "stream", "stream_name"]

ALL = "all"
"""``--formulation all``: every formulation in turn."""


def stream_name(seed: int) -> str:
    """The string that seeds the formulations' own random stream for build seed ``seed``."""
    return seeds.stream_name("formulations", seed)


def stream(seed: int) -> random.Random:
    return named_random("formulations", seed)


def formulation_counts(rows: Iterable[Mapping[str, str]]) -> dict[str, int]:
    """Rows per formulation, in :data:`FORMULATIONS` order."""
    counts = {name: 0 for name in FORMULATIONS}
    for r in rows:
        counts[r["formulation"]] += 1
    return counts


def formulate(queries: Iterable[Mapping[str, Any]], seed: int) -> list[dict[str, str]]:
    """One row per query and formulation it has: ``query_id``, ``formulation``, ``text``,
    ``template`` (the caption row repeats the query's text and template id).

    ``queries`` are ``queries.jsonl`` rows (``_id``, ``text``, ``logic``, and ``shape`` /
    ``template`` when the build wrote them)."""
    shared = stream(seed)
    own = {f.name: named_random("formulations", seed, f.name)
           for f in formulations() if f.own_stream}
    rows: list[dict[str, str]] = []
    for q in queries:
        logic = q["logic"]
        node: Node = from_json(logic) if isinstance(logic, dict) else logic
        found, slots = (shape(q["shape"]), None) if q.get("shape") else recognise(node)
        if slots is None:
            slots = found.match(node)
            if slots is None:
                raise ValueError(f"query {q['_id']}: logic is not of shape {found.name!r}")
        values = format_slots(slots)
        for form in formulations():
            written = form.write(found, str(q["text"]), str(q.get("template", "")), values,
                                 own.get(form.name, shared))
            if written is not None:
                rows.append({"query_id": str(q["_id"]), "formulation": form.name,
                             "text": written[0], "template": written[1]})
    return rows


def check_formulation(name: str) -> str:
    """``name`` if it is a formulation or ``all``; ValueError naming the choices otherwise."""
    if name != ALL:
        try:
            formulation(name)
        except ValueError as exc:
            raise ValueError(f"{exc} or {ALL}") from None
    return name


def expand(name: str) -> tuple[str, ...]:
    """The formulations ``--formulation name`` stands for."""
    return tuple(FORMULATIONS) if check_formulation(name) == ALL else (name,)
