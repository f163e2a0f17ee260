"""The family table: which query words name which labels beyond a label's own head noun.

One source of truth, kept as data (``reasonaudio/data/sound_families.json``) and read by
:class:`reasonaudio.constraints.resolve.Families`:

- **kinds**: a word that names every label of its member head nouns ("bird" -> owls, crows,
  gulls, hens, songbirds...);
- **aliases**: a word that is another name for a head noun ("phone" -> telephone);
- **compounds**: a two-word noun whose first word makes a different thing, with the word of the
  pair that does *not* name it ("sea lion": a lion is not a sea lion; "wind chime": wind is not
  a wind chime, a chime is).

Every entry is stemmed by the stemmer labels and queries share, so plurals and verb forms meet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from reasonaudio.constraints.vocabulary import stem


@dataclass(frozen=True)
class FamilyTable:
    kinds: dict[str, tuple[str, ...]]
    """stem of a kind word -> stems of its members' head nouns"""
    aliases: dict[str, str]
    """stem of a word -> stem of the head noun it names"""
    compounds: dict[tuple[str, str], str]
    """stems of a two-word noun -> the stem of the word that does not name it"""


@lru_cache(maxsize=1)
def family_table() -> FamilyTable:
    raw = json.loads(resources.files("reasonaudio.data").joinpath("sound_families.json")
                     .read_text("utf-8"))
    kinds = {stem(k): tuple(stem(m) for m in v) for k, v in raw["kinds"].items()}
    aliases = {stem(k): stem(v) for k, v in raw["aliases"].items()}
    compounds = {}
    for phrase, word in raw["compounds"].items():
        a, b = (stem(w) for w in phrase.split())
        compounds[(a, b)] = stem(word)
    return FamilyTable(kinds, aliases, compounds)
