"""Condition kinds: one :class:`ConditionKind` record per kind of acoustic condition, in one
registry (:data:`CONDITION_KINDS`), the way :mod:`reasonaudio.tasks.registry` holds the query
shapes and :mod:`reasonaudio.models.registry` the models.

A record says everything code asks of a kind: how its condition names are written (``pattern``,
``parse``, ``grammar``), its own parameters and their defaults, whether it lays background beds,
and the behaviour the renderer, export, training and the reports read: where a clip's events
go (``place``: ``long`` moves them into a longer recording), where the bed lies under them
(``bed_spans``), in which order bed and events are summed (``mix``), and where the condition sits
on the report's SNR axis (``snr_axis``). The renderer
(:class:`reasonaudio.render.clips.ConditionRenderer`) calls these hooks with itself, so a hook
uses the renderer's primitives (``base.events_mix``, ``bed_stem``, ``add_bed``) and never
imports a layer above. A new kind is one record passed to :func:`register_condition_kind`
(docs/extending.md); the built-in ``clean``, ``snr`` and ``long`` are below.
"""

from __future__ import annotations

import random
import re
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.errors import DataError
from reasonaudio.registries import LiveNames, registered_for

if TYPE_CHECKING:
    import numpy as np

CLEAN = "clean"
"""the reference condition: the events over digital silence; adds nothing to any name"""
SNR_RANGE = (-20, 60)
"""``snrNN`` accepts integers in this range (dB)"""


@dataclass(frozen=True)
class BedSpan:
    """One stretch of bed under a rendered clip: samples [start, start + n) of the clip get the
    bed ``bed_id`` from step ``bed_step`` on, at ``level_db`` relative to the loudness reference."""

    start_s: float
    n_s: float
    bed_id: str
    bed_step: int
    level_db: float
    """the stretch's target loudness relative to the loudness reference (-SNR)"""
    faded: bool = False
    """the stretch fades in and out (``long``'s stretches of background); an unfaded span is
    gained as a whole"""


RngFor = Callable[[str], random.Random]
"""stream name -> the clip's own seeded stream (build seed and clip id)"""
BedDraw = Callable[[random.Random, float], tuple[str, int]]
"""(rng, seconds) -> (bed id, start step): a bed the tagger check accepted, drawn from ``rng``"""


@dataclass(frozen=True)
class ConditionKind:
    """One kind of acoustic condition. Every hook receives the :class:`Condition` record
    (``reasonaudio.dataset.conditions``) as ``c``; its own parameters are ``c.param(NAME)``."""

    name: str
    """the kind (``Condition.kind``): ``clean``, ``snr``, ``long``"""
    pattern: str
    """regular expression a condition name of this kind matches in full (``snr(-?\\d{1,2})``)"""
    grammar: str
    """how its names read, for the error that lists the known ones (``snrNN (an SNR in dB, ...)``)"""
    parse: Callable[[re.Match[str], str], dict[str, Any]] | None = None
    """(match, where) -> the condition record's values the name fixes (``name``, the canonical
    name; ``snr_db``; ``params``); a one-line DataError for a bad value. None: the name alone"""
    params: Mapping[str, float] = field(default_factory=dict)
    """the kind's own parameters and their defaults, recorded in ``Condition.params`` (the
    built-in kinds read the record's schema-1 fields instead: ``snr_db``, ``beds``, ``long_*``)"""
    needs_beds: bool = False
    """lays background beds (``bench build --conditions`` checks its bed bank with the tagger)"""
    place: Callable[[Any, Clip, RngFor], Clip] | None = None
    """the clip as heard: its events placed in a longer recording (``long``); None keeps the
    clip. Training refuses a kind that places (it reads clip-relative times); an export writes
    fewer of its clips per shard"""
    bed_spans: Callable[[Any, Clip, RngFor, BedDraw], list[BedSpan]] | None = None
    """(c, placed clip, rng_for, draw) -> where its bed lies; required when ``needs_beds``"""
    mix: Callable[[Any, Clip, Clip], Any] | None = None
    """(renderer, clip, placed clip) -> the float64 mix before the peak rule; None: the placed
    clip's events alone"""
    snr_axis: Callable[[Any], float | None] | None = None
    """the condition's place on the report's SNR axis (dB); None: not on the axis"""

    @property
    def places_events(self) -> bool:
        return self.place is not None

    def fixed(self, text: str, where: str) -> dict[str, Any] | None:
        """What condition name ``text`` fixes when it is of this kind (``parse``), else None."""
        m = re.fullmatch(self.pattern, text)
        if m is None:
            return None
        return dict(self.parse(m, where)) if self.parse is not None else {"name": text}

    def values(self, text: str, where: str) -> dict[str, Any] | None:
        """The record values of condition name ``text`` (its parameters at their defaults
        unless the name fixes them) when it is of this kind, else None."""
        out = self.fixed(text, where)
        if out is not None:
            out["params"] = tuple({**self.params, **out.get("params", {})}.items())
        return out


# --- the built-in kinds -----------------------------------------------------------------------

def events_onto_bed(r: Any, clip: Clip, placed: Clip) -> np.ndarray:
    """The events added onto the gained bed (one pass reads the bed where a clean render zeroes
    its mix)."""
    return r.base.events_mix(placed, onto=r.bed_stem(clip))


def bed_onto_events(r: Any, clip: Clip, placed: Clip) -> np.ndarray:
    """The bed's stretches added onto the events, one at a time (a long recording holds one
    stretch at a time)."""
    return r.add_bed(r.base.events_mix(placed), clip)


def _snr_values(m: re.Match[str], where: str) -> dict[str, Any]:
    text, snr = m.group(0), int(m.group(1))
    if not SNR_RANGE[0] <= snr <= SNR_RANGE[1]:
        raise DataError(f"{where}: {text}: the SNR must lie in {SNR_RANGE[0]}..{SNR_RANGE[1]} dB")
    if m.group(1) != str(snr):
        raise DataError(f"{where}: {text!r}: write the SNR without leading zeros (snr{snr})")
    return {"name": f"snr{snr}", "snr_db": float(snr)}


def _snr_spans(c: Any, placed: Clip, rng_for: RngFor, draw: BedDraw) -> list[BedSpan]:
    bed_id, step = draw(rng_for("bed"), placed.duration)
    return [BedSpan(0.0, placed.duration, bed_id, step, -float(c.snr_db))]


def _long_place(c: Any, clip: Clip, rng_for: RngFor) -> Clip:
    rng = rng_for("long")
    lo, hi = round(c.long_min_s * 1000), round(c.long_max_s * 1000)
    length_ms = max(rng.randint(lo, hi), round(clip.duration * 1000))
    shift_ms = rng.randint(0, length_ms - round(clip.duration * 1000))
    events = tuple(Event(e.label, round(e.onset + shift_ms / 1000, 3),
                         round(e.offset + shift_ms / 1000, 3), e.atom_id, e.gain_db)
                   for e in clip.events)
    return Clip(clip.id, clip.mode, length_ms / 1000, clip.sample_rate, events, clip.extra)


def _long_spans(c: Any, placed: Clip, rng_for: RngFor, draw: BedDraw) -> list[BedSpan]:
    rng = rng_for("stretches")
    spans, t = [], 0.0
    lo, hi = c.long_stretch_s
    on = rng.random() < 0.5
    while t < placed.duration:
        n_s = min(round(rng.uniform(lo, hi), 1), round(placed.duration - t, 3))
        if on:
            bed_id, step = draw(rng, n_s)
            spans.append(BedSpan(round(t, 3), n_s, bed_id, step, -float(c.long_bed_snr_db), faded=True))
        t = round(t + n_s, 3)
        on = not on
    return spans


CLEAN_KIND = ConditionKind(CLEAN, CLEAN, CLEAN)
SNR_KIND = ConditionKind("snr", r"snr(-?\d{1,2})", "snrNN (an SNR in dB, e.g. snr20, snr5, snr0, snr-5)",
                         parse=_snr_values, needs_beds=True, bed_spans=_snr_spans,
                         mix=events_onto_bed, snr_axis=lambda c: c.snr_db)
LONG_KIND = ConditionKind("long", "long", "long", needs_beds=True, place=_long_place,
                          bed_spans=_long_spans, mix=bed_onto_events)
BUILT_IN = (CLEAN_KIND, SNR_KIND, LONG_KIND)

CONDITION_KINDS: dict[str, ConditionKind] = {k.name: k for k in BUILT_IN}
"""kind name -> record, in the order names are tried (built-in kinds first)."""


def condition_kind(name: str) -> ConditionKind:
    try:
        return CONDITION_KINDS[name]
    except KeyError:
        raise DataError(f"unknown condition kind {name!r}; known: {', '.join(CONDITION_KINDS)}") from None


def register_condition_kind(record: ConditionKind) -> None:
    """Add a kind after the registered ones (a name the earlier kinds read stays theirs)."""
    if record.name in CONDITION_KINDS:
        raise ValueError(f"condition kind {record.name!r} is already registered")
    if record.needs_beds != (record.bed_spans is not None):
        raise ValueError(f"condition kind {record.name!r}: a kind that needs beds says where they "
                         "lie (bed_spans), and only such a kind")
    re.compile(record.pattern)
    CONDITION_KINDS[record.name] = record


def unregister_condition_kind(name: str) -> None:
    """Remove a kind added by :func:`register_condition_kind` (the built-in ones stay)."""
    if any(k.name == name for k in BUILT_IN):
        raise ValueError(f"condition kind {name!r} is built in")
    CONDITION_KINDS.pop(name, None)


def registered_condition_kinds(*records: ConditionKind) -> AbstractContextManager[None]:
    """Kinds registered for the duration of a ``with`` block."""
    return registered_for(register_condition_kind, unregister_condition_kind, records)


def grammar() -> str:
    """Every kind's names, for an error: ``clean, snrNN (...) and long``."""
    texts = [k.grammar for k in CONDITION_KINDS.values()]
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"


KINDS: Sequence[str] = LiveNames(lambda: CONDITION_KINDS)
