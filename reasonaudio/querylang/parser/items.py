"""Stage 1, items: the query's tokens as labels, cue words and numbers, in text order.

Labels come from :mod:`reasonaudio.querylang.vocabulary`; every other word must be a word of
the query language (:mod:`reasonaudio.querylang.lexicon`) or be resolved by
:mod:`reasonaudio.querylang.resolve` (verb form, family of labels, injected semantic matcher),
each resolution recorded for display. A word nothing reads is an unknown sound with the nearest
labels, so nothing the user wrote is dropped silently.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

from reasonaudio.querylang.families import Families, families, head_noun, verb_of
from reasonaudio.querylang.lexicon import (AND, BACK_REFERENCE_PHRASES, CMP, DETERMINERS,
                                             DUR_CMP_MSG, DURCUE, NUM, OVL, PHRASE_MAX, PHRASES,
                                             REFUSED, REFUSED_PHRASES, UNIT_SECONDS,
                                             UNSUPPORTED_WORDS, WORDS)
from reasonaudio.querylang.parser.numbers import number_words, starts_number
from reasonaudio.querylang.parser.parts import Item, Resolved
from reasonaudio.querylang.resolve import (FAMILY_PREFIX, STRICT, Resolution, ResolveOptions,
                                             candidates_text, modifier, noun_of,
                                             resolve_words, semantic_pick, unsaid_words)
from reasonaudio.querylang.vocabulary import (AUX_INSIDE_LABEL, SOUND_WORDS, LabelMatch, Token,
                                                Vocabulary, stem, tokenize)
from reasonaudio.errors import QueryParseError


def label_item(tokens: list[Token], lo: int, hi: int, labels: Sequence[str], kind: str,
               score: float, detail: str, res: Resolved) -> Item:
    """A label item for tokens [lo, hi) read as ``labels`` (several: a family placeholder)."""
    surface = " ".join(t.text for t in tokens[lo:hi])
    start, end = tokens[lo].start, tokens[hi - 1].end
    if len(labels) == 1:
        name = labels[0]
    else:
        name = FAMILY_PREFIX + surface
        res.families[name] = tuple(labels)
    res.records.append(Resolution(surface, tuple(labels), kind, score, start, end, detail))
    return Item("label", surface, start, end, label=LabelMatch(name, lo, hi, start, end, surface))


# --- resolution of words that are not labels ----------------------------------------------------

class _Unknown:
    """A run of unknown words, tokens ``idx``, with the label right before and after it."""

    def __init__(self, reader: "_Reader", idx: list[int], nxt: Optional[LabelMatch]) -> None:
        self.r = reader
        self.words = [reader.tokens[i].text for i in idx]
        self.idx, self.lo, self.hi = idx, idx[0], idx[-1] + 1
        items = reader.items
        last = items[-1] if items else None
        glued = last is not None and last.kind == "label" and last.label is not None and all(
            t.text in AUX_INSIDE_LABEL for t in reader.tokens[last.label.last:self.lo])
        self.prev = last if glued and last.label.last <= self.lo else None  # type: ignore[union-attr]
        self.nxt = nxt if nxt is not None and nxt.first == self.hi else None

    def resolve(self) -> bool:
        """Append the reading to the items; True when the label ``nxt`` was taken into it."""
        if self.r.res.options.strict:
            self.r.raise_unknown(self.idx)
        self._refuse_unsaid()
        for how in (self._verb_after, self._verb_before, self._subject_before, self._family,
                    self._semantic):
            took = how()
            if took is not None:
                return took
        return False  # pragma: no cover - _semantic raises when nothing reads the words

    def _refuse_unsaid(self) -> None:
        """A word no label and no rule says ("soft piano", "a car passing quickly", "loud
        siren") is refused naming it, whether or not a semantic matcher would find a label."""
        if self.prev is not None or self.nxt is not None:
            return   # beside a label: a semantic pick that drops the words is refused below
        fams = families(self.r.vocab.labels)
        bad = unsaid_words(self.words, fams)
        if not bad:
            return
        words, text = " ".join(bad), self.r.text
        found = noun_of(self.words, fams)
        if found is not None:
            k, labs = found
            shown = ", ".join(repr(x) for x in labs[:4]) + (" ..." if len(labs) > 4 else "")
            what = f"{self.words[k]!r} names {shown}, and no label says {words!r}"
        else:
            what = f"no label says {words!r}"
        raise QueryParseError(f"cannot read {words!r} in {text!r}: {what}, and the logic has no "
                              f"word for how a sound is; drop {words!r} or name a label")

    def _drop_prev(self) -> None:
        self.r.items.pop()
        recs = self.r.res.records
        recs[:] = [x for x in recs if x.start != self.prev.start]  # type: ignore[union-attr]

    def _add(self, lo: int, hi: int, labels: Sequence[str], kind: str, score: float,
             detail: str) -> None:
        self.r.items.append(label_item(self.r.tokens, lo, hi, labels, kind, score, detail,
                                       self.r.res))

    def _verb_after(self) -> Optional[bool]:
        """"a siren wails", "thunder rumbling": a verb of the label's sound after it."""
        p = self.prev
        if p is None or p.label.label.startswith(FAMILY_PREFIX) \
                or not verb_of(p.label.label, self.words):  # type: ignore[union-attr]
            return None
        self._drop_prev()
        lab = p.label.label  # type: ignore[union-attr]
        self._add(p.label.first, self.hi, [lab], "verb-form", 1.0,  # type: ignore[union-attr]
                  f"{' '.join(self.words)!r} is how {lab!r} sounds")
        return False

    def _verb_before(self) -> Optional[bool]:
        """"rumbling thunder", "a wailing siren"."""
        n = self.nxt
        if n is None or not verb_of(n.label, self.words):
            return None
        self._add(self.lo, n.last, [n.label], "verb-form", 1.0,
                  f"{' '.join(self.words)!r} is how {n.label!r} sounds")
        return True

    def _subject_before(self) -> Optional[bool]:
        """"someone coughing": a kind or alias that names the label right after it (a label
        naming no sound-maker, whose verb is a sound of that kind)."""
        n = self.nxt
        if n is None or self.prev is not None or len(self.words) != 1:
            return None
        fams = families(self.r.vocab.labels)
        word = stem(self.words[0])
        if fams.table.aliases.get(word, word) not in fams.table.kinds:
            return None   # "a tiny tiny chime": only a kind stands as the subject
        found = noun_of(self.words, fams)
        if found is None or n.label not in found[1]:
            return None
        self._add(self.lo, n.last, [n.label], "family", 1.0,
                  f"{self.words[0]!r} names {n.label!r}")
        return True

    def _family(self) -> Optional[bool]:
        if self.prev is not None or self.nxt is not None:
            return None
        fams = families(self.r.vocab.labels)
        found = resolve_words(self.words, fams)
        if found is None:
            return None
        labs, kind, detail = found
        self._refuse_elided_subject(fams, labs)
        self._add(self.lo, self.hi, labs, kind, 1.0, detail)
        return False

    def _refuse_elided_subject(self, fams: Families, labs: Sequence[str]) -> None:
        """"dog barking and growling": a lone verb right after "A and" may say what A does
        (dog growling) or name every sound that does it (bear growling); refused unless both
        readings are the same labels."""
        items = self.r.items
        if len(self.words) != 1 or not fams.is_verb(stem(self.words[0])) or len(items) < 2 \
                or items[-1].kind != AND or items[-2].kind != "label":
            return
        prev = items[-2].label.label  # type: ignore[union-attr]
        if prev.startswith(FAMILY_PREFIX) or all(head_noun(x) == head_noun(prev) for x in labs):
            return
        word = self.words[0]
        raise QueryParseError(
            f"ambiguous: does {word!r} in {self.r.text!r} say what {items[-2].text!r} does, or "
            f"name every sound that is {word} ({', '.join(repr(x) for x in labs)})? name the "
            f"sound: '{items[-2].text} and <sound> {word}'")

    def _semantic(self) -> Optional[bool]:
        """The semantic nearest label, over the words and a label glued to them
        ("crowd applause", "loud siren"); raises when it finds none."""
        r = self.r
        a = self.prev.label.first if self.prev is not None else self.lo  # type: ignore[union-attr]
        b = self.nxt.last if self.nxt is not None else self.hi
        phrase = " ".join(t.text for t in r.tokens[a:b] if t.kind != "punct")
        glued = [m.label.label for m in (self.prev,) if m is not None and m.label] \
            + [m.label for m in (self.nxt,) if m is not None]
        pick, scored, why = semantic_pick(phrase, r.vocab.labels, r.res.options,
                                          families(r.vocab.labels), glued)
        if pick is None:
            r.raise_unknown(self.idx, candidates_text(scored, why) if scored else "")
        label, score, detail = pick  # type: ignore[misc]
        if label in glued:   # "a brief siren" -> siren: the words would be dropped
            words = " ".join(self.words)
            how = ("" if any(modifier(w) for w in self.words)
                   else " or say it with order, overlap, a duration or a count")
            raise QueryParseError(
                f"cannot read {words!r} in {r.text!r}: {phrase!r} reads as the label "
                f"{label!r} without {words!r}, and the logic has no word for what it adds; "
                f"drop {words!r}{how}")
        if self.prev is not None:
            self._drop_prev()
        self._add(a, b, [label], "semantic", score, detail)
        return self.nxt is not None


_PHRASE_FIRST = frozenset(p[0] for p in PHRASES)


# --- the reader -------------------------------------------------------------------------------

class _Reader:
    """Walks the tokens once: a label, a number, a phrase of the lexicon or a word."""

    def __init__(self, text: str, tokens: list[Token], matches: list[LabelMatch],
                 vocab: Vocabulary, res: Resolved) -> None:
        self.text, self.tokens, self.matches, self.vocab, self.res = \
            text, tokens, matches, vocab, res
        self.by_first = {m.first: m for m in matches}
        self.items: list[Item] = []
        self.unknown: list[int] = []

    def read(self) -> list[Item]:
        i, n, tokens, by_first = 0, len(self.tokens), self.tokens, self.by_first
        while i < n:
            if i in by_first:
                i = self._read_label(by_first[i])
            elif tokens[i].kind == "num":
                self.flush()
                i = self._append(NUM, i, 1, float(tokens[i].text))
            else:
                j = self._read_phrase(i)
                i = j if j is not None else self._read_word(i)
        self.flush()
        return self.items

    def flush(self, nxt: Optional[LabelMatch] = None) -> bool:
        """Resolve the pending unknown words; True when they took the label ``nxt``."""
        idx = self.unknown
        if not idx:
            return False
        self.unknown = []
        if all(self.tokens[k].kind == "punct" for k in idx):
            return False
        return _Unknown(self, idx, nxt).resolve()

    def _append(self, kind: str, i: int, n: int, value: float = 0.0) -> int:
        if n == 1:
            t = self.tokens[i]
            self.items.append(Item(kind, t.text, t.start, t.end, (t.text,), value))
            return i + 1
        words = tuple(t.text for t in self.tokens[i:i + n])
        self.items.append(Item(kind, " ".join(words), self.tokens[i].start,
                               self.tokens[i + n - 1].end, words, value))
        return i + n

    def _read_label(self, m: LabelMatch) -> int:
        if not self.flush(m):
            self.items.append(Item("label", m.text, m.start, m.end, label=m))
            self.res.records.append(Resolution(m.text, (m.label,), match_kind(m), 1.0, m.start,
                                               m.end))
        return m.last

    def _read_phrase(self, i: int) -> Optional[int]:
        """Phrases of the lexicon (longest first), only over tokens that are not label words."""
        tokens = self.tokens
        if tokens[i].text not in _PHRASE_FIRST:
            return None
        limit = min(len(tokens), i + PHRASE_MAX)
        for j in range(i + 1, limit):
            if j in self.by_first:
                limit = j
                break
        for n in range(limit - i, 1, -1):
            kind = PHRASES.get(tuple(t.text for t in tokens[i:i + n]))
            if kind is not None and not self._determiner(i, n):
                self.flush()
                words = tuple(t.text for t in tokens[i:i + n])
                if kind == CMP:
                    self.refuse_bound(" ".join(words))
                if kind == REFUSED:
                    raise QueryParseError(f"cannot read {' '.join(words)!r} in {self.text!r}: "
                                          + REFUSED_PHRASES[words])
                return self._append(kind, i, n)
        return None

    def _determiner(self, i: int, n: int) -> bool:
        """Whether the last word of an order phrase that points back ("after that") picks out
        the sound right after it instead ("rain after that dog barking": after the dog): so
        when the phrase stands glued between two sounds, with no joiner or comma before it."""
        tokens = self.tokens
        words = tuple(t.text for t in tokens[i:i + n])
        if words not in BACK_REFERENCE_PHRASES or words[-1] not in DETERMINERS \
                or i + n not in self.by_first or i == 0:
            return False
        before = tokens[i - 1]
        return any(m.first < i <= m.last for m in self.matches) \
            or (before.kind == "word" and WORDS.get(before.text) is None)

    def _read_word(self, i: int) -> int:
        num = number_words(self.tokens, i, self.by_first)
        if num is not None:
            self.flush()
            return self._append(NUM, i, num[0], num[1])
        tok = self.tokens[i]
        w = tok.text
        j = self._read_fraction(i) if w in ("half", "a", "an") else None
        if j is not None:
            return j
        if w in UNSUPPORTED_WORDS:
            raise QueryParseError(f"cannot read {w!r} in {self.text!r}: {UNSUPPORTED_WORDS[w]}")
        kind = WORDS.get(w)
        if w == "over":
            kind = CMP if i + 1 < len(self.tokens) and starts_number(self.tokens, i + 1) else OVL
        if kind is None:
            if tok.kind != "punct":
                self.unknown.append(i)
            return i + 1
        if w in AUX_INSIDE_LABEL and self._unknown_word(i + 1) and (
                self.unknown or (self.items and self.items[-1].kind == "label"
                                 and self.items[-1].end <= tok.start)):
            return i + 1   # "someone is speaking", "rain is falling": one phrase
        if self.unknown and w in SOUND_WORDS:
            self.unknown.append(i)   # "white noise": report the whole name, not just "white"
        self.flush()
        if kind == CMP:
            self.refuse_bound(w)
        return self._append(kind, i, 1)

    def _unknown_word(self, i: int) -> bool:
        """Whether token ``i`` is a word no label starts at and the lexicon does not know."""
        return (i < len(self.tokens) and self.tokens[i].kind == "word" and i not in self.by_first
                and self.tokens[i].text not in WORDS and not PHRASES.keys() & {
                    tuple(t.text for t in self.tokens[i:i + 2])})

    def _read_fraction(self, i: int) -> Optional[int]:
        """"half a minute" (0.5), "for a second" (1); a lone "half" is refused."""
        tokens, w = self.tokens, self.tokens[i].text
        def unit_at(k: int) -> bool:
            return k < len(tokens) and tokens[k].text in UNIT_SECONDS

        if w == "half":
            if i + 2 < len(tokens) and tokens[i + 1].text in ("a", "an") and unit_at(i + 2) \
                    and i + 1 not in self.by_first:
                self.flush()
                return self._append(NUM, i, 2, 0.5)
            raise QueryParseError(f"cannot read 'half' in {self.text!r}: write the duration as "
                                  "a number, e.g. 'for 0.5 seconds'")
        if unit_at(i + 1) and tokens[i + 1].text != "s" and i + 1 not in self.by_first:
            if tokens[i + 1].text == "second" and i + 2 in self.by_first \
                    and not (i and WORDS.get(tokens[i - 1].text) == DURCUE):
                raise QueryParseError(
                    f"cannot read '{w} second' in {self.text!r}: before a sound it reads as an "
                    "ordinal (another one), which cannot be asked for; count occurrences "
                    "('A twice') or give a length with 'for' ('A for a second')")
            self.flush()
            return self._append(NUM, i, 1, 1.0)
        return None

    def refuse_bound(self, words: str) -> None:
        raise QueryParseError(f"cannot read {self.text!r}: " + DUR_CMP_MSG.format(w=words))

    def raise_unknown(self, idx: list[int], semantic_hint: str = "") -> None:
        tokens, vocab = self.tokens, self.vocab
        words = " ".join(tokens[i].text for i in idx)
        near = vocab.nearest(words)
        # an unknown word glued to a known label ("loud siren"): suggest from the whole phrase
        context = None
        for m in self.matches:
            if m.last == idx[0] or m.first == idx[-1] + 1:
                context = m
        where = ""
        if context is not None:
            lo, hi = min(idx[0], context.first), max(idx[-1] + 1, context.last)
            phrase = " ".join(t.text for t in tokens[lo:hi])
            near = list(dict.fromkeys(vocab.nearest(phrase) + near))[:3]
            where = f" (in {phrase!r})"
        hint = (f"nearest labels: {', '.join(repr(x) for x in near)}" if near
                else f"no label is close; the vocabulary has {len(vocab.labels)} labels")
        raise QueryParseError(f"unknown sound {words!r}{where} in {self.text!r}: not a label of "
                              f"the vocabulary; {semantic_hint or hint}")


def read_items(text: str, tokens: list[Token], matches: list[LabelMatch], vocab: Vocabulary,
               res: Optional[Resolved] = None) -> list[Item]:
    """Labels, cues and numbers in text order; unknown words are resolved or raise."""
    return _Reader(text, tokens, matches, vocab, res if res is not None else Resolved(STRICT)).read()


def match_kind(m: LabelMatch) -> str:
    """exact when the words are the label as written (case aside), else stem."""
    words = m.text.split()
    while len(words) > 1 and words[-1] in SOUND_WORDS:
        words.pop()
    return "exact" if tuple(words) == _label_tokens(m.label) else "stem"


@lru_cache(maxsize=4096)
def _label_tokens(label: str) -> tuple[str, ...]:
    return tuple(t.text for t in tokenize(label))
