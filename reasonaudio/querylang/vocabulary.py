"""Label matching: which words of a query name which label of the bank's vocabulary.

Query text says "dogs barking", "a dog barks" or "Dog Barking sound" where the bank's label is
``dog barking``. Both sides go through the same tokenizer and a small suffix stemmer (plurals,
-ing/-s verb forms, silent e), so the forms meet in the middle; matching is then a greedy
longest match over a trie of stemmed labels, so ``church bell`` wins over ``bell``. A two-word
label whose second word is an -ing form also matches reversed ("barking dog"). Anything that
cannot be told apart (two labels with one stemmed form, two labels that overlap in the text) is
reported, never guessed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from reasonaudio.querylang.lexicon import UNIT_SECONDS
from reasonaudio.errors import QueryParseError

_TOKEN_RE = re.compile(r"(?:(?<![\w.])[-\u2212])?(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)"
                       r"(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
                       r"|[^\W\d_]+(?:['\u2019][^\W\d_]+)*|->|[^\w\s]")
"""A number keeps its sign, exponent and thousands separators ("-5", "1e309", "10,000"), so it
is refused or read as the whole number rather than as "5", "5 e" or "10" and "000"; a unit glued
to a number ("10s") still splits off."""
ARROW = "->"
"""Keyword order mark: "a -> b" reads as "a, then b" (also the arrow character U+2192)."""
EXCLUDE_MARKS = frozenset("-!")
"""Keyword-search exclusion: a mark glued to the front of a word ("-rain", "!rain") reads as
"not"; after a letter it is a hyphen ("hip-hop"), before a space a dash or a full stop."""
_EXCLUDE_AFTER = frozenset(" \t\n\r\f\v,;:([") | EXCLUDE_MARKS
_QUOTES = frozenset("'\"\u2018\u201c`")
SKIPPABLE = frozenset(" \t\n\r\f\v-\u2010\u2011\u2012\u2013\u2014'\"\u2018\u2019\u201c\u201d`*_")
"""Characters a query may contain that carry no meaning (space, hyphens, quotes); any other
character that no token reads is refused (:func:`unread_characters`), never dropped silently."""
_PUNCT_KEPT = frozenset(",;.:!?()[]/&+~\u2192") | {ARROW}
_CONTRACTIONS = {"can't": ("can", "not"), "won't": ("will", "not"), "shan't": ("shall", "not"),
                 "cannot": ("can", "not"), "nobody": ("no", "somebody"),
                 "noone": ("no", "somebody")}
"""Words read as two: "nobody speaking" is "no somebody speaking" (no person speaking); "no
one" before a word that is no unit reads the same way (:func:`tokenize`)."""
AUX_INSIDE_LABEL = frozenset({"is", "are"})
"""Words skipped between the words of one label: "a dog is barking"."""
PUNCT_INSIDE_LABEL = frozenset("()[]/&+~")
"""Punctuation skipped between the words of one label, as the label's own tokenization drops it:
"rock & roll", "fill (with liquid)"."""
SOUND_WORDS = frozenset({"sound", "sounds", "noise", "noises"})
"""Absorbed right after a label: "siren sound", "dog barking noise"."""


@dataclass(frozen=True)
class Token:
    """One word, number or punctuation mark of the query, with its place in the original text."""
    text: str
    """case-folded surface form (contractions expanded: "doesn't" -> "does", "not")"""
    start: int
    end: int
    kind: str
    """``word``, ``num`` or ``punct``"""


def tokenize(text: str) -> list[Token]:
    """Words, numbers and the punctuation the parser reads; hyphens and quotes act as spaces,
    except a "-" or "!" glued to the front of a word, which reads as "not" ("-rain")."""
    out: list[Token] = []
    for m in _TOKEN_RE.finditer(text):
        raw, start, end = m.group(0), m.start(), m.end()
        if raw in (ARROW, "\u2192"):
            out.append(Token(ARROW, start, end, "punct"))
            continue
        if raw[0] in "0123456789" or (raw[0] in "-\u2212" and len(raw) > 1):
            out.append(Token(raw.replace("\u2212", "-").replace(",", ""), start, end, "num"))
            continue
        if raw in EXCLUDE_MARKS and _excludes(text, start):
            out.append(Token("not", start, end, "word"))
            continue
        if raw == "+" and _spaced(text, start):
            out.append(Token("and", start, end, "word"))  # "a + b": a joiner, never inside a label
            continue
        if not raw[0].isalpha() or raw[0].isdigit():
            if raw in _PUNCT_KEPT:
                out.append(Token(raw, start, end, "punct"))
            continue
        word = raw.casefold().replace("\u2019", "'")
        if word in _CONTRACTIONS:
            a, b = _CONTRACTIONS[word]
            out += [Token(a, start, end, "word"), Token(b, start, end, "word")]
        elif word == "one" and out and out[-1].text == "no" and not _unit_follows(text, end):
            out.append(Token("somebody", start, end, "word"))   # "no one speaking"
        elif word.endswith("n't"):
            out += [Token(word[:-3], start, end, "word"), Token("not", start, end, "word")]
        elif "'" in word:
            out.append(Token(word.split("'")[0], start, end, "word"))  # dog's -> dog, it's -> it
        else:
            out.append(Token(word, start, end, "word"))
    return out


def _unit_follows(text: str, i: int) -> bool:
    """Whether the word after ``text[i:]`` is a unit of time ("no one second" is a number)."""
    m = re.match(r"[\s-]*([^\W\d_]+)", text[i:])
    return m is not None and (m.group(1).casefold() in UNIT_SECONDS
                              or m.group(1).casefold() in ("time", "times"))


def _excludes(text: str, i: int) -> bool:
    """Whether the mark at ``text[i]`` starts a word it excludes: at the text start or after a
    space, comma or bracket (or another mark), with a letter (or a quoted phrase: '-"sea
    waves"') right after it."""
    nxt = i + 2 if i + 2 < len(text) and text[i + 1] in _QUOTES else i + 1
    return (nxt < len(text) and text[nxt].isalpha()
            and (i == 0 or text[i - 1] in _EXCLUDE_AFTER))


def loose_marks(text: str) -> list[int]:
    """Positions of a "!" that stands apart from the words on both sides ("rain ! thunder"):
    neither the keyword exclusion ("!thunder", glued to its word) nor a full stop (glued to
    the word before), so it has no one reading."""
    return [i for i, ch in enumerate(text)
            if ch == "!" and (i == 0 or text[i - 1].isspace()) and not _excludes(text, i)
            and any(c.isalnum() for c in text[i + 1:])]


def _spaced(text: str, i: int) -> bool:
    """Whether ``text[i]`` stands alone between spaces (or at an end)."""
    return (i == 0 or text[i - 1].isspace()) and (i + 1 == len(text) or text[i + 1].isspace())


def unread_characters(text: str) -> list[tuple[int, str]]:
    """(position, character) of every character of ``text`` that :func:`tokenize` does not
    read and that is not in :data:`SKIPPABLE`: emoji, control characters, symbols, undecodable
    bytes (surrogate escapes), combining marks, non-ASCII digits."""
    covered = bytearray(len(text))
    for m in _TOKEN_RE.finditer(text):
        raw = m.group(0)
        if raw[0].isalpha() or raw[0] in "0123456789" or len(raw) > 1 or raw in _PUNCT_KEPT:
            covered[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    return [(i, ch) for i, ch in enumerate(text) if not covered[i] and ch not in SKIPPABLE]


_KEEP_DOUBLE = frozenset("lsz")


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A deliberately small suffix stripper: barking/barks -> bark, whistles/whistling ->
    whistl, humming -> hum, flies -> fly. Applied to labels and queries alike, so it only has to
    be consistent, not linguistically right."""
    w = word.casefold()
    if not w.isalpha():
        return w
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in _KEEP_DOUBLE and w[-1] not in "aeiou":
            w = w[:-1]
    if len(w) > 3 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]
    return w


def label_words(label: str) -> tuple[str, ...]:
    """The stemmed words of a label, as matched against the query."""
    return tuple(stem(t.text) for t in tokenize(label) if t.kind != "punct")


@dataclass(frozen=True)
class LabelMatch:
    """Tokens ``[first, last)`` of the query name ``label``."""
    label: str
    first: int
    last: int
    start: int
    end: int
    text: str
    """the words of the query as written"""


class Vocabulary:
    """A bank's labels, indexed for matching inside query text."""

    def __init__(self, labels: Iterable[str]) -> None:
        self.labels: tuple[str, ...] = tuple(dict.fromkeys(str(x) for x in labels))
        if not self.labels:
            raise QueryParseError("the vocabulary is empty: the benchmark's atoms.jsonl has no labels")
        forms: dict[tuple[str, ...], dict[str, bool]] = {}
        for label in self.labels:
            words = label_words(label)
            if not words:
                continue
            forms.setdefault(words, {})[label] = False
            raw = [t.text for t in tokenize(label) if t.kind == "word"]
            if len(words) == 2 and len(raw) == 2 and raw[1].endswith("ing"):
                forms.setdefault((words[1], words[0]), {}).setdefault(label, True)
        self._trie: dict = {}
        for words, labs in forms.items():
            exact = [lab for lab, variant in labs.items() if not variant]
            chosen = tuple(sorted(exact or labs))
            node = self._trie
            for w in words:
                node = node.setdefault(w, {})
            node[None] = chosen
        self._stems = {label: set(label_words(label)) for label in self.labels}
        self._verbs = frozenset(stem(w) for label in self.labels
                                for k, w in enumerate(_raw(label)) if k and w.endswith("ing"))
        """stems some label says as its verb ("trumpet" of elephant trumpeting)"""

    def _verb_for_noun(self, raw: str, label: str) -> bool:
        """Whether a one-word query written as a verb ("trumpeting") would match a one-word
        label written as a noun ("trumpet") whose stem another label says as its verb
        (elephant trumpeting): a verb of one thing does not name another."""
        words = _raw(label)
        return (len(words) == 1 and raw.endswith("ing") and stem(raw) != raw
                and not words[0].endswith("ing") and stem(raw) in self._verbs)

    def _ends_at(self, stems: Sequence[str], raw: Sequence[str], i: int) -> list[tuple[int, tuple[str, ...]]]:
        """Every label match starting at token i: (end token, labels with that form)."""
        out = []
        node, j = self._trie, i
        while j < len(stems):
            nxt = node.get(stems[j])
            if nxt is None:
                if j > i and (raw[j] in AUX_INSIDE_LABEL or raw[j] in PUNCT_INSIDE_LABEL):
                    j += 1
                    continue
                break
            node, j = nxt, j + 1
            if None in node:
                out.append((j, node[None]))
        return out

    def find(self, tokens: Sequence[Token]) -> list[LabelMatch]:
        """Greedy longest matches, left to right; QueryParseError when the reading is ambiguous."""
        stems = [stem(t.text) if t.kind != "punct" else "\0" for t in tokens]
        raw = [t.text for t in tokens]
        matches: list[LabelMatch] = []
        i = 0
        while i < len(tokens):
            ends = self._ends_at(stems, raw, i)
            if not ends:
                i += 1
                continue
            end, labs = max(ends)
            if end == i + 1 and self._verb_for_noun(raw[i], labs[0]):
                i += 1
                continue
            words = _surface(tokens, i, end)
            if len(labs) > 1:
                raise QueryParseError(f"ambiguous sound {words!r}: it matches the labels "
                                      f"{_quote(labs)} equally; write the label exactly")
            for j in range(i + 1, end):
                longer = [(e, ls) for e, ls in self._ends_at(stems, raw, j) if e > end]
                if longer:
                    e, ls = max(longer)
                    raise QueryParseError(
                        f"ambiguous sounds in {_surface(tokens, i, e)!r}: {words!r} "
                        f"({labs[0]!r}) overlaps {_surface(tokens, j, e)!r} ({ls[0]!r}); "
                        "separate the sounds with a word such as 'and' or 'then'")
            if end < len(tokens) and raw[end] in SOUND_WORDS and not any(
                    e > end + 1 for e, _ in self._ends_at(stems, raw, end)):
                end += 1
            matches.append(LabelMatch(labs[0], i, end, tokens[i].start, tokens[end - 1].end,
                                      _surface(tokens, i, end)))
            i = end
        return matches

    def nearest(self, phrase: str, n: int = 3) -> list[str]:
        """Labels closest to an unknown phrase: shared word stems first, then spelling."""
        want = set(label_words(phrase))
        p = phrase.casefold()
        scored = []
        for label in self.labels:
            shared = len(want & self._stems[label])
            match = difflib.SequenceMatcher(None, p, label)
            # a label sharing no stem shows only at ratio >= 0.4: where the lengths alone bound the
            # ratio below that (a very long phrase), the quadratic match is skipped, same answer
            ratio = match.ratio() if shared or match.real_quick_ratio() >= 0.4 else 0.0
            scored.append((shared, ratio, label))
        scored.sort(key=lambda s: (-s[0], -s[1], s[2]))
        return [label for shared, ratio, label in scored[:n] if shared or ratio >= 0.4]


def _raw(label: str) -> list[str]:
    return [t.text for t in tokenize(label) if t.kind == "word"]


def _surface(tokens: Sequence[Token], i: int, j: int) -> str:
    return " ".join(t.text for t in tokens[i:j])


def _quote(items: Iterable[str]) -> str:
    return ", ".join(repr(x) for x in items)


@lru_cache(maxsize=16)
def _cached(labels: tuple[str, ...]) -> Vocabulary:
    return Vocabulary(labels)


def vocabulary(labels: Iterable[str] | Vocabulary) -> Vocabulary:
    """A (cached) :class:`Vocabulary` for these labels; parsing 1,000 queries builds it once."""
    if isinstance(labels, Vocabulary):
        return labels
    return _cached(tuple(labels))
