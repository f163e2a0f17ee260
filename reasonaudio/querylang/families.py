"""Which words of a vocabulary's labels name the thing and which say how it sounds, and the
labels a query word names (its *family*), from the labels' own words and the family table.

A label is a noun phrase with perhaps a verb: "church bell tolling" (nouns church, bell; head
bell; verb toll), "bubbling water" (verb bubble), "railroad crossing bell" (no verb: a word
inside the noun is no verb), "knocking on door" (no head: it names no sound-maker). A query word
names a label as the *thing* (a noun of it, a kind or alias of its head noun) or as *how it
sounds* (its verb), never across the two through a shared stem: "no crows" is not "rooster
crowing", and "no crowing" is not "crow cawing". A word that is both a noun and a sound verb
(beep, click, crash) names the sound itself, so it reaches both. Every table entry is in
:mod:`.family_table` (``data/sound_families.json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

from reasonaudio.querylang.family_table import SoundGroups, family_table
from reasonaudio.querylang.vocabulary import stem, tokenize

_HEAD_STOP = frozenset("on of by with in off away from into to at".split())


def raw_words(label: str) -> list[str]:
    return [t.text for t in tokenize(label) if t.kind == "word"]


def sound_verb(word_stem: str) -> bool:
    """Whether a stem is a verb that says how a thing sounds (the family table's list)."""
    return word_stem in family_table().sound_verbs


@dataclass(frozen=True)
class LabelParts:
    """One label's words by role, stemmed."""
    nouns: frozenset[str]
    """the words that name the thing: the noun phrase and a preposition's object"""
    verbs: frozenset[str]
    """the label's own verbs: trailing -ing words and sound verbs after its head noun, a
    leading -ing word before a noun ("bubbling water") and an -ing sound verb inside the noun
    ("pure wailing siren")"""
    participles: frozenset[str]
    """other -ing words inside the noun phrase ("deep pulsing tone", "railroad crossing bell"):
    words of the thing, not a verb of its own, that a word written either way names"""
    head: Optional[str]
    """the head noun (None: the label names no sound-maker, "knocking on door")"""


def _core(words: list[str]) -> tuple[list[str], list[str]]:
    """The words before the first preposition (not the first word), and those after it."""
    for k, w in enumerate(words):
        if k and w in _HEAD_STOP:
            return words[:k], [x for x in words[k + 1:] if x not in _HEAD_STOP]
    return words, []


@lru_cache(maxsize=8192)
def label_parts(label: str) -> LabelParts:
    """The label's nouns, verbs and head noun; a trailing sound word that is also a noun
    ("desk bell ding", "car crash", "high double beeps") is both."""
    core, tail = _core(raw_words(label))
    j = len(core)
    while j and core[j - 1].endswith("ing"):
        j -= 1
    while j > 1 and sound_verb(stem(core[j - 1])):
        j -= 1
    verbs = {stem(w) for w in core[j:]}
    lead = 1 if j > 1 and core[0].endswith("ing") else 0
    verbs |= {stem(w) for w in core[:lead]}
    said = family_table().said
    inner = [stem(w) for w in core[1:j - 1] if w.endswith("ing")]
    verbs |= {w for w in inner if sound_verb(w) or w in said}      # "pure wailing siren"
    inside = {w for w in inner if not (sound_verb(w) or w in said)}  # "railroad crossing bell"
    nouns = [stem(w) for k, w in enumerate(core[:j])
             if k >= lead and not (0 < k < j - 1 and w.endswith("ing"))]
    if core[j:] and not core[-1].endswith("ing"):
        nouns.append(stem(core[-1]))
    head = stem(core[j - 1]) if j else None
    return LabelParts(frozenset(nouns + [stem(w) for w in tail]), frozenset(verbs),
                      frozenset(inside), head)


def head_noun(label: str) -> Optional[str]:
    """The stem of a label's head noun: words before a preposition, minus trailing verbs
    ("church bell tolling" -> bell, "dog barking" -> dog, "acoustic piano" -> piano)."""
    return label_parts(label).head


def head_nouns(label: str) -> set[str]:
    """:func:`head_noun`, plus the last word when it is a sound word that is also a noun
    ("desk bell ding" -> bell, ding; "tiny chime" -> chime; "car crash" -> car, crash)."""
    out = {head_noun(label)} - {None}
    core, _ = _core(raw_words(label))
    tail = [w for w in core if not w.endswith("ing")]
    if tail:
        out.add(stem(tail[-1]))
    return out  # type: ignore[return-value]


def has_verb(label: str) -> bool:
    """Whether a label already says how its sound sounds (a verb of its own)."""
    return bool(label_parts(label).verbs)


def sounds_of(label: str) -> SoundGroups:
    """The sounds the family table gives the label's thing: its two-word noun's ("french
    horn", "alarm clock"), else its head nouns', else those of a kind its head belongs to
    ("cowbell" -> bell, "man" -> person); empty when the table has none."""
    t = family_table()
    core, _ = _core(raw_words(label))
    stems = [stem(w) for w in core]
    for a, b in zip(stems, stems[1:]):
        if f"{a} {b}" in t.sounds:
            return t.sounds[f"{a} {b}"]
    heads = [h for h in [head_noun(label)] + sorted(head_nouns(label)) if h]
    for h in heads:
        if h in t.sounds:
            return t.sounds[h]
    for h in heads:
        for kind in t.kinds_of(h):
            if kind in t.sounds:
                return t.sounds[kind]
    return ()


def fits(verb_stem: str, label: str) -> bool:
    """Whether a verb says the label's sound: a general verb of a sound of its thing
    (:func:`sounds_of`, :class:`.family_table.Sound`) that the label, if it has a verb of its
    own, says too ("ringing" fits cowbell and church bell tolling, "tolling" only the label
    that says it; "howling" does not fit dog barking; "honking" does not fit french horn)."""
    own = label_parts(label).verbs
    return any(verb_stem in g.general and (not own or own & g.verbs)
               for g in sounds_of(label))


def verb_of(label: str, words: Sequence[str]) -> bool:
    """Whether ``words`` are verbs of the label's sound ("wails" for siren), for a label that
    has no verb of its own."""
    return bool(words) and not has_verb(label) and all(fits(stem(w), label) for w in words)


def verb_use(word: str) -> bool:
    """Whether a query word is written as a verb (an -ing form: "crowing", not "crows")."""
    return word.endswith("ing") and stem(word) != word


class Families:
    """Head noun stem -> the labels it names, for one vocabulary, with the family table
    (:mod:`.family_table`): kinds, aliases, compounds, forms and sounds."""

    def __init__(self, labels: Sequence[str]) -> None:
        table = family_table()
        self.labels = tuple(labels)
        self.heads: dict[str, list[str]] = {}
        self.stems = {label: {stem(w) for w in raw_words(label)} for label in self.labels}
        self.blocked: dict[str, set[str]] = {}
        """label -> stems that occur in it only inside a compound they do not name"""
        for label in self.labels:
            words = [stem(w) for w in raw_words(label)]
            pairs = [(a, b) for a, b in zip(words, words[1:]) if (a, b) in table.compounds]
            blocked = {table.compounds[p] for p in pairs}
            blocked = {w for w in blocked if words.count(w) == 1}
            self.blocked[label] = blocked
            for h in sorted(head_nouns(label) - blocked) + [f"{a} {b}" for a, b in pairs]:
                self.heads.setdefault(h, []).append(label)
        self.all_stems = frozenset(x for st in self.stems.values() for x in st)
        self.verb_stems = frozenset(v for label in self.labels for v in label_parts(label).verbs)
        self.table = table

    def is_verb(self, word_stem: str) -> bool:
        """Whether a word names labels only as their verb ("barking"), heading none."""
        return word_stem in self.verb_stems and word_stem not in self.heads

    def same_sound(self, word_stem: str) -> bool:
        """Whether the noun and the verb of this stem are one sound (a beep beeps, a saw
        saws), unlike a crow, which caws (a rooster crows)."""
        return sound_verb(word_stem) or any(word_stem in g
                                            for g in self.table.sounds.get(word_stem, ()))

    def names(self, word_stem: str, label: str, as_verb: Optional[bool] = None) -> bool:
        """Whether a word of this stem is a word of the label that may name it: as the thing
        (``as_verb`` False: a noun of it, or its verb where no label's head is that word or
        the word is the sound itself), as its sound (True: its verb, or a noun that is that
        sound), or either (None, a word beside a head noun)."""
        if word_stem not in self.stems[label] or word_stem in self.blocked[label]:
            return False
        p = label_parts(label)
        if as_verb is None or word_stem in p.participles:
            return True
        if as_verb:
            return word_stem in p.verbs or (word_stem in p.nouns and self.same_sound(word_stem))
        return word_stem in p.nouns or (word_stem in p.verbs and (
            word_stem not in self.heads or self.same_sound(word_stem)))

    def family(self, word_stem: str, as_verb: bool = False) -> list[str]:
        """Labels a word (or a two-word compound, stems joined by a space) names: those whose
        head noun it is, those of the kind it names (with the labels naming no sound-maker
        whose verb is a sound of that kind: "someone" -> coughing), those of the head noun it
        is an alias of; when it names some label, every label it names as the thing
        (:meth:`names`: "a car" includes car horn), except where the word only sits inside a
        compound it does not name (sea lion, wind chimes). A word written as a verb
        ("barking", ``as_verb``) names every label with that verb. A word that is only the
        tail of a label's word ("phone" in saxophone) names nothing."""
        t = self.table
        word_stem = t.aliases.get(word_stem, word_stem)
        if as_verb and word_stem in self.verb_stems:
            return sorted(lab for lab in self.labels if self.names(word_stem, lab, True))
        out = list(self.heads.get(word_stem, []))
        for member in t.kinds.get(word_stem, ()):
            out += self.heads.get(t.aliases.get(member, member), [])
        out += self._headless(word_stem)
        if out or word_stem in self.verb_stems:
            out += [lab for lab in self.labels if self.names(word_stem, lab, False)]
        return sorted(dict.fromkeys(out))

    def _headless(self, kind: str) -> list[str]:
        """Labels naming no sound-maker ("coughing") whose verb is a sound of the kind."""
        groups = self.table.sounds.get(kind, ()) if kind in self.table.kinds else ()
        return [lab for lab in self.labels if label_parts(lab).head is None
                and any(label_parts(lab).verbs & g.verbs for g in groups)]

    def form_words(self, word: str) -> tuple[str, ...]:
        """The words a query word stands for ("rainfall" -> rain), or the word itself."""
        return self.table.forms.get(stem(word), (word,))

    def known(self, word: str) -> bool:
        """Whether a query word is a word of some label or of the family table (a kind, an
        alias, a form, a thing with sounds, one of its verbs): a word neither knows is one the
        logic has no way to say."""
        t = self.table
        s = stem(word)
        return (s in self.all_stems or s in t.kinds or s in t.aliases or s in t.forms
                or s in t.sounds or sound_verb(s)
                or any(s in g for groups in t.sounds.values() for g in groups))


@lru_cache(maxsize=16)
def families(labels: tuple[str, ...]) -> Families:
    return Families(labels)
