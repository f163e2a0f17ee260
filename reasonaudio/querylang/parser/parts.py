"""The pieces the parser's stages pass on: items (stage 1), durations and counts (stage 2),
resolutions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from reasonaudio.querylang.resolve import Resolution, ResolveOptions
from reasonaudio.querylang.vocabulary import LabelMatch


@dataclass(frozen=True)
class Duration:
    seconds: float
    text: str
    start: int
    end: int
    for_cue: bool
    of_cue: bool
    each: bool = False
    cue: str = ""
    """the word that makes it a duration: lasting (lasts, last, lasted), for, long, of, or ''
    (a unit alone: "rain (5 s)", "a 5-second rain")"""


@dataclass
class Item:
    """A label, a cue word (kind from the lexicon), a number or (after stage 2) a duration or a
    count (kind CNT, the number of occurrences in ``value``)."""
    kind: str
    text: str
    start: int
    end: int
    words: tuple[str, ...] = ()
    value: float = 0.0
    label: Optional[LabelMatch] = None
    dur: Optional[Duration] = None


@dataclass
class Resolved:
    """What resolution added to a parse: one record per phrase, and family placeholders."""
    options: ResolveOptions
    records: list[Resolution] = field(default_factory=list)
    families: dict[str, tuple[str, ...]] = field(default_factory=dict)
