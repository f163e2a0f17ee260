"""Formulations: one :class:`Formulation` record per way a query is asked, in one registry
(:data:`FORMULATIONS`, the names in the order a build writes them), the way
:mod:`reasonaudio.tasks.registry` holds the shapes.

A record says how its text is written from a query: ``caption`` (the default) is the query's
own text; a templated formulation draws one of its templates for the query's shape (the
shape's :attr:`~reasonaudio.tasks.base.Shape.formulations` entry, or the record's own
``templates``) from the formulations' seeded stream; a derived one rewrites the caption
(``derive``); a registered one draws from a stream of its own, so adding it moves no existing
row. :func:`reasonaudio.generator.formulations.formulate` writes the rows; training
(``--hold-out-formulations``), MTEB subsets and the robustness table read the records. A new
formulation is one record passed to :func:`register_formulation` plus its templates
(docs/extending.md). This module imports nothing of the package, so ``tasks/base.py`` can
re-export the names.
"""

from __future__ import annotations

import random
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from reasonaudio.registries import LiveNames, registered_for

CAPTION = "caption"


@dataclass(frozen=True)
class Formulation:
    """One way of asking the queries."""

    name: str
    """the name in ``formulations.jsonl``, ``--formulation`` and saved results"""
    default: bool = False
    """the query's own text (``queries.jsonl``); exactly one record (``caption``) is; results
    under it keep the retriever's bare name"""
    templates: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """shape name -> templates (placeholders as in ``Shape.texts``), beside the shape's own
    ``Shape.formulations[name]``; a shape with neither gets no row in this formulation"""
    derive: Callable[[str], str] | None = None
    """caption text -> this formulation's text (no templates, no draw); its rows keep the
    caption's template id. Training has no templates of it, so never sees it"""
    summary: str = ""
    """one line for docs and errors"""
    own_stream: bool = True
    """draws its templates from a stream of its own (``reasonaudio-formulations-<seed>-<name>``),
    so adding it moves no other row; the built-in ones share the one stream they were first
    written with"""

    def templates_for(self, shape: Any) -> tuple[str, ...]:
        """This formulation's templates for ``shape`` (a ``Shape``): the record's own, then the
        shape's; the default and a derived formulation have none here."""
        if self.default or self.derive is not None:
            return ()
        return tuple(self.templates.get(shape.name, ())) + tuple(shape.formulations.get(self.name, ()))

    def write(self, shape: Any, caption: str, template: str, values: Mapping[str, Any],
              rng: random.Random) -> tuple[str, str] | None:
        """(text, template id) of one query in this formulation, None when its shape has no
        template of it. ``values``: the query's slots as templates read them; ``rng``: the
        formulations' stream, drawn from once per templated row (in registry order)."""
        if self.default:
            return caption, template
        if self.derive is not None:
            return self.derive(caption), template
        texts = self.templates_for(shape)
        if not texts:
            return None
        i = rng.randrange(len(texts))
        return texts[i].format(**values), f"{shape.name}-{self.name}-{i + 1}"


BUILT_IN = tuple(Formulation(name, default=name == CAPTION, summary=summary, own_stream=False)
                 for name, summary in (
    (CAPTION, "the query's own text (queries.jsonl)"),
    ("question", "a question (which clips have ...?)"),
    ("command", "an instruction (find ...)"),
    ("keywords", "terse keywords and arrows"),
    ("paraphrase", "other words, same logic"),
    ("exclusion", "the excluded sound as a separate clause (negation shapes only)"),
))

_RECORDS: dict[str, Formulation] = {f.name: f for f in BUILT_IN}


def formulation(name: str) -> Formulation:
    """The record of ``name``; ValueError naming the known ones."""
    try:
        return _RECORDS[name]
    except KeyError:
        raise ValueError(f"unknown formulation {name!r}; expected one of {', '.join(_RECORDS)}") from None


def formulations() -> tuple[Formulation, ...]:
    """Every registered record, in the order a build writes them."""
    return tuple(_RECORDS.values())


def default_formulation() -> str:
    """The default formulation's name (``caption``)."""
    return next(f.name for f in _RECORDS.values() if f.default)


def is_default(name: str) -> bool:
    """Whether ``name`` is the default formulation (the query's own text). A name no record
    has (``interleaved``, a removed formulation's saved results) is not."""
    found = _RECORDS.get(name)
    return found is not None and found.default


def register_formulation(record: Formulation) -> None:
    """Add a formulation after the registered ones (a build writes its rows last)."""
    if record.name in _RECORDS:
        raise ValueError(f"formulation {record.name!r} is already registered")
    if record.default:
        raise ValueError(f"formulation {record.name!r}: {CAPTION} is the one default formulation")
    if record.derive is not None and record.templates:
        raise ValueError(f"formulation {record.name!r}: derived from the caption or templated, not both")
    _RECORDS[record.name] = record


def unregister_formulation(name: str) -> None:
    """Remove a formulation added by :func:`register_formulation` (the built-in ones stay)."""
    if any(f.name == name for f in BUILT_IN):
        raise ValueError(f"formulation {name!r} is built in")
    _RECORDS.pop(name, None)


def registered_formulations(*records: Formulation) -> AbstractContextManager[None]:
    """Formulations registered for the duration of a ``with`` block."""
    return registered_for(register_formulation, unregister_formulation, records)


FORMULATIONS: Sequence[str] = LiveNames(lambda: _RECORDS)
"""Every formulation's name, in the order a build writes them (``caption`` first)."""
