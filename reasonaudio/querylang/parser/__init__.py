"""Query text -> logic over a bank's vocabulary: the front half of the oracle.

How a query is read (docs/query-language.md has the user's version), one module per stage:

0. **Wrappers** (:mod:`.wrappers`). The words that make a question, a command or a polite
   request ("could you please list every clip where ...", "..., thanks?") are dropped before
   the first sound and after the last, never elsewhere and never inside a label.
1. **Items** (:mod:`.items`). :mod:`reasonaudio.querylang.vocabulary` finds the labels (greedy
   longest match, tolerant of case, plurals, -ing/-s forms and a trailing "sound"). Every other
   word must be a word of the query language or be resolved by
   :mod:`reasonaudio.querylang.resolve` (verb form, family of labels, injected semantic
   matcher), each resolution recorded for display; an unknown word is reported as an unknown
   sound with the nearest labels, and a character no token reads is refused, so nothing the
   user wrote is silently dropped.
2. **Numbers, durations and counts** (:mod:`.numbers`). A number with a unit or a cue ("for 5",
   "5 seconds", "N seconds of X") becomes a duration; "twice", "N times" and a number right
   before a sound ("exactly 3 door knocks") become a count; a bare number, a bound ("more than")
   and a time position or gap ("at 5 seconds", "5 seconds later") are refused.
3. **Cues** (:mod:`.cues`). The words between two sounds are read as one connective, and each
   duration and count is given to the sound before or after it.
4. **Builder** (:mod:`.builder`). Groups, chains, exclusions, durations and counts become
   before/overlap/lasts/count/has/not, checked for contradictions.

Ambiguous wordings ("no A and B", "A and B for 5 seconds", "5 seconds of A and B", "no A for
5 seconds", "A and B twice") are errors that say how to rephrase.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from reasonaudio.querylang.examples import Substitution, substitution
from reasonaudio.querylang.canonical import canonical, check_consistent, same_logic
from reasonaudio.logic import Node, to_json
from reasonaudio.querylang.parser.builder import Builder
from reasonaudio.querylang.parser.cues import Link, classify
from reasonaudio.querylang.parser.items import read_items
from reasonaudio.querylang.parser.numbers import fold_numbers
from reasonaudio.querylang.parser.parts import Item, Resolved
from reasonaudio.querylang.parser.qualifiers import check_qualifiers
from reasonaudio.querylang.parser.shared_verbs import share_verbs
from reasonaudio.querylang.parser.wrappers import drop_wrappers
from reasonaudio.querylang.resolve import (FAMILY_PREFIX, STRICT, Resolution, ResolveOptions,
                                             expand_families)
from reasonaudio.querylang.vocabulary import (LabelMatch, Vocabulary, loose_marks, tokenize,
                                                unread_characters, vocabulary)
from reasonaudio.errors import QueryParseError

__all__ = ["ParseResult", "parse", "parse_detailed", "canonical", "same_logic",
           "check_consistent", "Resolution", "ResolveOptions", "STRICT"]


@dataclass(frozen=True)
class ParseResult:
    """The logic plus what the parser read, for display (``bench parse``, ``bench search``)."""
    logic: Node
    matches: tuple[LabelMatch, ...]
    """which words of the query named which single label, in text order (a family reading is
    in ``resolutions`` only)"""
    notes: tuple[str, ...] = ()
    """one line per reading worth showing, e.g. ``'dogs barking' -> dog barking``"""
    resolutions: tuple[Resolution, ...] = ()
    """every sound phrase -> label(s), with kind (exact, stem, verb-form, family, semantic)"""

    def to_json(self) -> dict[str, Any]:
        return {"logic": to_json(self.logic),
                "resolved": [r.to_json() for r in self.resolutions],
                "matches": [{"text": m.text, "label": m.label, "start": m.start, "end": m.end}
                            for m in self.matches]}


def parse_detailed(text: str, labels: Sequence[str] | Vocabulary,
                   options: Optional[ResolveOptions] = None) -> ParseResult:
    """Parse ``text`` and say how: the logic, which phrase resolved to which label(s), notes.

    ``options`` (default: resolution without a semantic matcher) says how far to go with a
    phrase that is not a label; ``ResolveOptions(strict=True)`` reads labels only."""
    options = options if options is not None else ResolveOptions()
    if not isinstance(text, str) or not text.strip():
        raise QueryParseError("the query text is empty; name at least one sound, e.g. "
                              "'dog barking but no siren'")
    sub = substitution(text, options.examples)
    try:
        return _from_examples(_parse(sub.text, labels, options, sub.notes), sub)
    except QueryParseError as exc:   # errors quote what the user wrote, not the substitution
        raise QueryParseError(sub.restore(str(exc))) from None


def _parse(text: str, labels: Sequence[str] | Vocabulary, options: ResolveOptions,
           example_notes: list[str]) -> ParseResult:
    _refuse_unread(text)
    vocab = vocabulary(labels)
    tokens = tokenize(text)
    tokens = drop_wrappers(tokens, vocab.find(tokens))
    res = Resolved(options)
    items = read_items(text, tokens, vocab.find(tokens), vocab, res)
    share_verbs(text, items, vocab.labels, res)
    check_qualifiers(text, items)
    items = fold_numbers(text, items)
    mentions = [it for it in items if it.kind == "label"]
    if not mentions:
        raise QueryParseError(f"no sound of the vocabulary is named in {text!r}; name at least "
                              f"one label, e.g. {vocab.labels[0]!r}")
    builder = Builder(text, mentions, _links(text, items, mentions))
    try:
        logic = expand_families(builder.build(), res.families)
        if res.families:   # "a horse but no horses": a contradiction through a family
            check_consistent(logic, text)
    except QueryParseError as exc:   # a family placeholder reads as the words written
        shown = repr(FAMILY_PREFIX)[1:-1]
        raise QueryParseError(str(exc).replace(FAMILY_PREFIX, "").replace(shown, "")) from None
    return _result(logic, items, res, example_notes + builder.notes)


def _from_examples(result: ParseResult, sub: Substitution) -> ParseResult:
    """Positions in the user's text; a label an example gave is resolution kind ``example``,
    with the resolver's score (the tagger's, or 1.0 for a true label) and its placeholder."""
    if not sub.slots:
        return result
    records = []
    for r in result.resolutions:
        slot = sub.slot_at(r.start, r.end)
        if slot is None:
            records.append(replace(r, start=sub.position(r.start), end=sub.position(r.end)))
            continue
        ex = slot.label
        records.append(Resolution(
            sub.original[slot.written_start:slot.written_end], r.labels, "example",
            1.0 if ex.score is None else ex.score, slot.written_start, slot.written_end,
            f"example {slot.name}: {'the tagger heard it' if ex.how == 'tagger' else 'its true label'}"
            f" ({ex.how})"))
    matches = tuple(replace(m, start=sub.position(m.start), end=sub.position(m.end))
                    for m in result.matches)
    return replace(result, matches=matches, resolutions=tuple(records))


def _links(text: str, items: list[Item], mentions: list[Item]) -> list[Link]:
    """The connective before each sound, and the one after the last."""
    spans: list[list[Item]] = [[] for _ in range(len(mentions) + 1)]
    k = 0
    for it in items:
        if it.kind == "label":
            k += 1
        else:
            spans[k].append(it)
    links: list[Link] = []
    for i in range(len(mentions) + 1):
        opened = links[-1].prefix_word if links else ""
        links.append(classify(text, spans[i], mentions[i - 1] if i > 0 else None,
                              mentions[i] if i < len(mentions) else None, opened))
    return links


def _result(logic: Node, items: list[Item], res: Resolved, built: list[str]) -> ParseResult:
    used = [it.label for it in items if it.kind == "label" and it.label is not None
            and not it.label.label.startswith(FAMILY_PREFIX)]   # families: see resolutions
    records = tuple(sorted(res.records, key=lambda r: r.start))
    notes = [f"{r.text!r} -> {' | '.join(r.labels)}"
             + ("" if r.kind in ("exact", "stem") else f" ({r.kind})") for r in records] + built
    for fam, members in res.families.items():
        notes = [n.replace(fam, " | ".join(members)) for n in notes]
    return ParseResult(logic, tuple(used), tuple(notes), records)


def _refuse_unread(text: str) -> None:
    """Nothing the user wrote is dropped silently: an emoji, a control character, an
    undecodable byte (a surrogate escape from the command line) or a "!" standing apart is an
    error naming it."""
    loose = loose_marks(text)
    if loose:
        raise QueryParseError(f"cannot read the '!' at position {loose[0]} in {text!r}: glued "
                              "to a word ('!rain') it excludes that sound, glued to the word "
                              "before it ends a sentence; standing apart it is neither")
    bad = unread_characters(text)
    if not bad:
        return
    pos, ch = bad[0]
    if "\udc80" <= ch <= "\udcff":
        what = f"an undecodable byte 0x{ord(ch) - 0xdc00:02x} (the text is not valid UTF-8)"
    else:
        what = f"the character U+{ord(ch):04X} {ch!r}"
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    raise QueryParseError(f"cannot read {what} at position {pos}{more} in {text!r}: a query "
                          "is words, numbers and the punctuation , ; . : ! ? ( ) [ ] / & + ->")


def parse(text: str, vocabulary: Sequence[str] | Vocabulary,
          options: Optional[ResolveOptions] = None) -> Node:
    """Query text -> logic over ``vocabulary`` (a bank's labels); QueryParseError with one line
    saying what is wrong (empty text, unknown sound with the nearest labels, a number where a
    sound belongs, an ambiguous wording, a contradiction)."""
    return parse_detailed(text, vocabulary, options).logic
