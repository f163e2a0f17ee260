"""Stage 1c, shared verbs: "a man and a woman speaking" says that both speak.

A verb written after the last of several sounds joined by and/or/nor/commas ("a man and a
woman speaking", "neither a dog nor a wolf howling") is said of each bare noun before it that
names a family of labels ("man", "a dog": a head noun or a kind with no verb of its own). That
noun is read again with the verb: man -> man speaking. When no label is that noun with that verb
the query is refused ("a dog and a wolf howling" with no dog howling label), if the family
table says the thing makes that sound ("dogs howl") or does not know the thing's sounds while
its labels differ by verb. A noun whose sounds the table knows and do not include the verb keeps
its family: "a bell and a dog barking" (bells do not bark).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from reasonaudio.querylang.families import Families, families, fits, label_parts, verb_use
from reasonaudio.querylang.lexicon import AND, BOTH, COMMA, FILLER, NEG, NOR, OR
from reasonaudio.querylang.parser.parts import Item, Resolved
from reasonaudio.querylang.resolve import FAMILY_PREFIX, Resolution, noun_of, resolve_words
from reasonaudio.querylang.vocabulary import AUX_INSIDE_LABEL, SOUND_WORDS, stem
from reasonaudio.errors import QueryParseError

_JOINERS = frozenset({"and", "&", "+", "plus", "with", "as well as", "along with",
                      "together with", "or", "/", "nor", ","})
"""The words that list sounds sharing one verb"""
_BETWEEN = {AND: _JOINERS, OR: _JOINERS, NOR: _JOINERS, COMMA: _JOINERS, BOTH: None,
            NEG: frozenset({"no", "not", "neither"}), FILLER: frozenset({"a", "an", "the"})}
"""kind -> the words of that kind that may stand between the sounds (None: any)"""


def share_verbs(text: str, items: list[Item], labels: tuple[str, ...], res: Resolved) -> None:
    """Give the verb after the last sound of a list to the bare nouns listed before it (in
    place); QueryParseError when no label is such a noun with that verb and the noun could make
    that sound."""
    fams = families(labels)
    where = [k for k, it in enumerate(items) if it.kind == "label"]
    for pos in range(len(where) - 1, 0, -1):
        verb = _trailing_verb(items[where[pos]], res)
        j = pos
        while verb and j > 0 and _listed(items[where[j - 1] + 1:where[j]]):
            x = items[where[j - 1]]
            noun = _bare_noun(x, res, fams)
            if noun is None or not _share(text, items, where[j - 1], noun, verb,
                                          items[where[pos]], fams, res):
                break
            j -= 1


def _listed(between: list[Item]) -> bool:
    """Whether the items between two sounds only list them ("and a", ", and", "nor")."""
    ok = all(it.kind in _BETWEEN and (_BETWEEN[it.kind] is None or it.text in _BETWEEN[it.kind])
             for it in between)
    return ok and any(it.text in _JOINERS for it in between)


def _labels_of(it: Item, res: Resolved) -> tuple[str, ...]:
    name = it.label.label  # type: ignore[union-attr]
    return res.families.get(name, (name,))


def _trailing_verb(it: Item, res: Resolved) -> list[str]:
    """The verb words written after a sound's noun ("woman speaking", "a wolf howls"): words
    at the end of its text that are a verb of each of its labels."""
    words = it.text.split()
    while words and words[-1] in SOUND_WORDS:
        words.pop()
    labels = _labels_of(it, res)
    out: list[str] = []
    while len(words) > 1 and all(stem(words[-1]) in label_parts(lab).verbs
                                 or fits(stem(words[-1]), lab) for lab in labels):
        out.insert(0, words.pop())
    return out


def _bare_noun(it: Item, res: Resolved, fams: Families) -> Optional[str]:
    """The word of a sound written as one noun that named a family ("man", "dogs"), or None."""
    words = it.text.split()
    rec = next((r for r in res.records if r.start == it.start and r.end == it.end), None)
    if rec is None or rec.kind != "family" or len(words) != 1 or verb_use(words[0]):
        return None
    return words[0] if noun_of(words, fams) is not None else None


def _share(text: str, items: list[Item], k: int, noun: str, verb: list[str], y: Item,
           fams: Families, res: Resolved) -> bool:
    """Read the noun at ``items[k]`` with the verb; False when it keeps its own reading."""
    x = items[k]
    found = resolve_words([noun] + verb, fams)
    said = " ".join(verb)
    written = [w for w in y.text.split() if w not in AUX_INSIDE_LABEL]
    subject = " ".join(written[:-len(verb)])
    if found is None:
        if _may_sound(noun, verb, _labels_of(x, res), fams):
            raise QueryParseError(
                f"cannot read {text!r}: {said!r} after {subject!r} is said of {x.text!r} too, "
                f"and no label is '{x.text} {said}'; give {x.text!r} its own verb, or name it "
                f"after: '{' '.join(written)} and {x.text}'")
        return False
    labs, _, _ = found
    name = labs[0] if len(labs) == 1 else f"{FAMILY_PREFIX}{x.text} {said}"
    if len(labs) > 1:
        res.families[name] = tuple(labs)
    res.records[:] = [r for r in res.records if not (r.start == x.start and r.end == x.end)]
    res.records.append(Resolution(x.text, tuple(labs), "family", 1.0, x.start, x.end,
                                  f"{said!r} after {subject!r} is said of {x.text!r} too"))
    items[k] = replace(x, label=replace(x.label, label=name))  # type: ignore[type-var]
    return True


def _may_sound(noun: str, verb: list[str], labels: tuple[str, ...], fams: Families) -> bool:
    """Whether the thing could make the sound the verb says: the table lists the verb among its
    sounds (or, when it has none of its own, its kind's: a man laughs, as a person does), or
    lists none for it while its labels differ by verb (man laughing, man speaking)."""
    t = fams.table
    s = t.aliases.get(stem(noun), stem(noun))
    keys = [s] if s in t.sounds else [k for k in t.kinds_of(s) if k in t.sounds]
    if not keys:
        return any(label_parts(lab).verbs for lab in labels)
    return any(stem(v) in g for v in verb for k in keys for g in t.sounds[k])
