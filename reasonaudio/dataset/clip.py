"""Clip specs: the metadata of a composite clip, enough to re-render it exactly (Scaper-style).

A clip is data, not audio: events with labels, times, the atom each was cut from and its gain.
The renderer turns a spec plus the atom bank into samples on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reasonaudio.errors import DataError
from reasonaudio.types import AtomId, ClipId, Decibels, Hertz, Label, Seconds

MODES = ("sequential", "overlap")
REPEAT_GAP_MS = 500
"""Occurrences of one label in a clip are at least this far apart (one's offset to the next
one's onset), so they can be counted."""


@dataclass(frozen=True)
class Event:
    label: Label
    onset: Seconds
    """seconds from the clip start, rounded to ms"""
    offset: Seconds
    atom_id: AtomId
    gain_db: Decibels
    """gain relative to the bank's loudness reference (see the manifest's render parameters)"""

    @property
    def duration(self) -> Seconds:
        return round(self.offset - self.onset, 3)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "onset": self.onset, "offset": self.offset,
                "atom_id": self.atom_id, "gain_db": self.gain_db}


@dataclass(frozen=True)
class Clip:
    id: ClipId
    mode: str
    duration: Seconds
    sample_rate: Hertz
    events: tuple[Event, ...]
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """other corpus fields kept as they were read (e.g. which query planted the clip)"""

    @property
    def labels(self) -> tuple[Label, ...]:
        return tuple(e.label for e in self.events)

    def event(self, label: Label) -> Event | None:
        for e in self.events:
            if e.label == label:
                return e
        return None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"_id": self.id, "mode": self.mode, "duration": self.duration,
                               "sample_rate": self.sample_rate,
                               "events": [e.to_json() for e in self.events]}
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: object, where: str = "corpus") -> "Clip":
        if not isinstance(obj, dict):
            raise DataError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        try:
            clip_id = obj["_id"]
            mode = obj["mode"]
            duration = float(obj["duration"])
            sample_rate = int(obj["sample_rate"])
            raw_events = obj["events"]
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where}: missing or malformed field {exc}") from None
        if not isinstance(clip_id, str) or not clip_id:
            raise DataError(f"{where}: field '_id' must be a non-empty string, got {clip_id!r:.60}")
        if mode not in MODES:
            raise DataError(f"{where} ({clip_id}): field 'mode' must be one of {MODES}, got {mode!r:.60}")
        if not isinstance(raw_events, list):
            raise DataError(f"{where} ({clip_id}): field 'events' must be a list, got {raw_events!r:.60}")
        events = []
        for i, e in enumerate(raw_events):
            try:
                events.append(Event(str(e["label"]), float(e["onset"]), float(e["offset"]),
                                    str(e["atom_id"]), float(e["gain_db"])))
            except (KeyError, TypeError, ValueError) as exc:
                raise DataError(f"{where} ({clip_id}): events[{i}] missing or malformed field {exc}") from None
        clip = cls(clip_id, mode, duration, sample_rate, tuple(events),
                   {k: v for k, v in obj.items()
                    if k not in ("_id", "mode", "duration", "sample_rate", "events")})
        validate_clip(clip, where)
        return clip


def validate_clip(clip: Clip, where: str = "corpus") -> None:
    """docs/benchmark.md invariants: times in range, occurrences of one label at least
    ``REPEAT_GAP_MS`` apart, mode consistent with times."""
    last_offset: dict[str, int] = {}
    for e in sorted(clip.events, key=lambda e: e.onset):
        on = int(round(e.onset * 1000))
        if e.label in last_offset and on - last_offset[e.label] < REPEAT_GAP_MS:
            raise DataError(f"{where} ({clip.id}): label {e.label!r} occurs twice less than "
                            f"{REPEAT_GAP_MS / 1000:g} s apart (occurrences must be countable)")
        last_offset[e.label] = int(round(e.offset * 1000))
        if not (0 <= e.onset < e.offset <= clip.duration + 1e-9):
            raise DataError(f"{where} ({clip.id}): event {e.label!r} needs 0 <= onset < offset <= "
                            f"duration, got onset={e.onset}, offset={e.offset}, duration={clip.duration}")
    if clip.mode == "sequential":
        ordered = sorted(clip.events, key=lambda e: e.onset)
        for x, y in zip(ordered, ordered[1:]):
            if x.offset > y.onset + 1e-9:
                raise DataError(f"{where} ({clip.id}): sequential clip has intersecting events "
                                f"{x.label!r} and {y.label!r}")
