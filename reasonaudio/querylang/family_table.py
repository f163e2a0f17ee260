"""The family table: which query words name which labels beyond a label's own words, and which
verbs say how a thing sounds.

One source of truth, kept as data (``reasonaudio/data/sound_families.json``) and read by
:class:`reasonaudio.querylang.resolve.Families`:

- **kinds**: a word that names every label of its member head nouns ("bird" -> owls, crows,
  gulls, hens, songbirds...; "person" -> man, woman, child...);
- **aliases**: a word that is another name for a head noun or a kind ("phone" -> telephone,
  "someone" -> person);
- **compounds**: a two-word noun whose first word makes a different thing, with the word of the
  pair that does *not* name it ("sea lion": a lion is not a sea lion; "wind chime": wind is not
  a wind chime, a chime is);
- **forms**: a word that stands for other words ("rainfall" -> rain, "a speaker" -> a person
  speaking);
- **sound verbs**: the verbs that say how a thing sounds; a label's trailing sound verb is its
  verb ("desk bell ding"), and a word that is both noun and sound verb names the sound itself
  ("no beeps" excludes "high beeping");
- **sounds**: a head noun (or a two-word noun) -> the sounds it makes, each a group of verbs that
  say the same sound (:class:`Sound`: "a bell ringing" takes "church bell tolling"; "a dog
  howling" never takes "dog barking"). An empty list: no such verb describes the thing ("a horn
  honking" is not a French horn).

Every entry is stemmed by the stemmer labels and queries share, so plurals and verb forms meet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from reasonaudio.querylang.vocabulary import stem

@dataclass(frozen=True)
class Sound:
    """One sound of a thing: the stems of the verbs that say it. Written "ring: toll ding" in
    the table, the verbs before the colon are *general* and say it of a label whose own verb
    is any of them ("a bell ringing" takes church bell tolling); a verb after it is narrower
    and names only labels that say it ("a bell tolling" is not a cowbell). Without a colon
    every verb is general (bark, woof, yap: one sound)."""
    verbs: frozenset[str]
    general: frozenset[str]

    def __contains__(self, verb_stem: object) -> bool:
        return verb_stem in self.verbs


SoundGroups = tuple[Sound, ...]
"""the sounds of one thing"""


@dataclass(frozen=True)
class FamilyTable:
    kinds: dict[str, tuple[str, ...]]
    """stem of a kind word -> stems of its members' head nouns"""
    aliases: dict[str, str]
    """stem of a word -> stem of the head noun (or kind) it names"""
    compounds: dict[tuple[str, str], str]
    """stems of a two-word noun -> the stem of the word that does not name it"""
    forms: dict[str, tuple[str, ...]]
    """stem of a word -> the words it stands for, as written (resolved like query words)"""
    sound_verbs: frozenset[str]
    """stems of the verbs that say how a thing sounds and, as nouns, are that sound (a beep)"""
    sounds: dict[str, SoundGroups]
    """stem of a head noun, or the stems of a two-word noun joined by a space -> its sounds"""
    said: frozenset[str]
    """stems of every verb of ``sounds`` (an elephant trumpets: a verb, though a trumpet is a
    thing)"""

    def kinds_of(self, noun: str) -> tuple[str, ...]:
        """The kinds a head noun stem is a member of ("man" -> person)."""
        return tuple(k for k, members in self.kinds.items() if noun in members)


def verb_stems(word: str) -> frozenset[str]:
    """Every stem a verb's forms take (purr, purrs, purring: the stemmer undoubles -rr-ing)."""
    return frozenset({stem(word), stem(word + "s"), stem(word + "ing")})


def _stems(words: str) -> frozenset[str]:
    return frozenset().union(*(verb_stems(w) for w in words.replace(":", " ").split()))


def _groups(groups: list[str]) -> SoundGroups:
    return tuple(Sound(_stems(g), _stems(g.split(":")[0])) for g in groups)


def _key(phrase: str) -> str:
    return " ".join(stem(w) for w in phrase.split())


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
    forms = {stem(k): tuple(v.split()) for k, v in raw["forms"].items()}
    sounds = {_key(k): _groups(v) for k, v in raw["sounds"].items()}
    sound_verbs = frozenset().union(*(verb_stems(w) for w in raw["sound_verbs"].split()))
    said = frozenset().union(*(g.verbs for groups in sounds.values() for g in groups))
    return FamilyTable(kinds, aliases, compounds, forms, sound_verbs, sounds, said)
