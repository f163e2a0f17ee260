"""Query text -> logic over a bank's vocabulary: the front half of the oracle.

How a query is read (docs/query-language.md has the user's version):

1. **Sounds.** :mod:`reasonaudio.constraints.vocabulary` finds the labels (greedy longest match,
   tolerant of case, plurals, -ing/-s forms and a trailing "sound"). Every other word must be a
   word of the query language below or be resolved by :mod:`reasonaudio.constraints.resolve`
   (verb form, family of labels, injected semantic matcher), each resolution recorded for
   display; an unknown word is reported as an unknown sound with the nearest labels, and a
   character no token reads is refused, so nothing the user wrote is silently dropped.
2. **Cues.** The words between two sounds are read as one connective: ``and``/``with``/a comma
   (both present), ``or``, ``then``/``followed by``/``before`` (order), ``after``/``follows``
   (reversed order), ``while``/``overlapping``/``during`` (overlap), ``no``/``without``/
   ``excluding``/``not`` (the next sound is excluded), plus a duration "for N seconds" attached
   to the sound before it ("N seconds of X" to the sound after it). An overlap word that is
   followed by another connective ("A and B overlap, then C") or ends the text ("A and B at the
   same time") applies to the group of sounds before it.
3. **Structure.** Sounds joined by and/while form a *group*; order words separate groups into a
   chain, and every sound of a group comes before every sound of the next group
   ("A, then B and C overlap" = before(A,B) & before(A,C) & overlap(B,C)). Excluded sounds stand
   apart. A sound named again after "and" starts a new clause ("..., with A lasting 5 seconds").
4. **Logic.** Relations and durations become before/overlap/lasts; a positive sound that no
   relation or duration mentions becomes has(x); an excluded one not(has(x)). The result is
   checked for contradictions (a cycle of "before", overlap of ordered sounds, required and
   excluded, durations that cannot both hold).

Ambiguous wordings ("no A and B", "A and B for 5 seconds") are errors that say how to rephrase.
"""

from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

from reasonaudio.constraints.canonical import canonical, check_consistent, same_logic
from reasonaudio.constraints.lexicon import (AND, BEGIN, CMP, CNT, COMMA, COUNT_WORDS, DUR,
                                             DUR_CMP_MSG, DURCUE, EACH, FILLER, FIRST, FWD,
                                             LEFT_DUR_WORDS, NEG, NOR, NUM, ONES, OR, ORDER, OVL,
                                             PHRASE_MAX, PHRASES, PREFIX_SEQ_WORDS, REV, STOP,
                                             TENS, TIMES, END, UNIT, UNIT_SECONDS,
                                             UNSUPPORTED_WORDS, WORDS)
from reasonaudio.constraints.logic import (And, Before, Count, Has, Lasts, Node, Not, Or, Overlap,
                                           leaf_labels, to_json)
from reasonaudio.constraints.resolve import (FAMILY_PREFIX, STRICT, Resolution,
                                             ResolveOptions, candidates_text, expand_families,
                                             families, resolve_words, semantic_pick, verb_of)
from reasonaudio.constraints.vocabulary import (SOUND_WORDS, LabelMatch, Token, Vocabulary, tokenize, unread_characters, vocabulary)
from reasonaudio.errors import QueryParseError

__all__ = ["ParseResult", "parse", "parse_detailed", "canonical", "same_logic",
           "check_consistent", "Resolution", "ResolveOptions", "STRICT"]


# --- results ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Duration:
    seconds: float
    text: str
    start: int
    end: int
    for_cue: bool
    of_cue: bool
    each: bool = False


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


# --- stage 1: items --------------------------------------------------------------------------

@dataclass
class _Item:
    kind: str
    text: str
    start: int
    end: int
    words: tuple[str, ...] = ()
    value: float = 0.0
    label: Optional[LabelMatch] = None
    dur: Optional[Duration] = None


@dataclass
class _Resolved:
    """What resolution added to a parse: one record per phrase, and family placeholders."""
    options: ResolveOptions
    records: list[Resolution] = field(default_factory=list)
    families: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _label_item(tokens: list[Token], lo: int, hi: int, labels: Sequence[str], kind: str,
                score: float, detail: str, res: _Resolved) -> _Item:
    """A label item for tokens [lo, hi) read as ``labels`` (several: a family placeholder)."""
    surface = " ".join(t.text for t in tokens[lo:hi])
    start, end = tokens[lo].start, tokens[hi - 1].end
    if len(labels) == 1:
        name = labels[0]
    else:
        name = FAMILY_PREFIX + surface
        res.families[name] = tuple(labels)
    res.records.append(Resolution(surface, tuple(labels), kind, score, start, end, detail))
    m = LabelMatch(name, lo, hi, start, end, surface)
    return _Item("label", surface, start, end, label=m)


def _resolve_unknown(text: str, tokens: list[Token], idx: list[int], items: list[_Item],
                     nxt: Optional[LabelMatch], matches: list[LabelMatch], vocab: Vocabulary,
                     res: _Resolved) -> bool:
    """Read unknown words by resolution, appending to ``items``; True when the label match
    ``nxt`` right after them was taken into the reading. Raises when nothing reads them."""
    opts = res.options
    if opts.strict:
        _raise_unknown(text, tokens, idx, matches, vocab)
    words = [tokens[i].text for i in idx]
    lo, hi = idx[0], idx[-1] + 1
    prev = items[-1] if items and items[-1].kind == "label" and items[-1].label is not None \
        and items[-1].label.last == lo else None
    nxt = nxt if nxt is not None and nxt.first == hi else None
    # "a siren wails", "thunder rumbling": a verb of the label's sound after it
    if prev is not None and not prev.label.label.startswith(FAMILY_PREFIX) \
            and verb_of(prev.label.label, words):
        items.pop()
        res.records[:] = [r for r in res.records if r.start != prev.start]
        items.append(_label_item(tokens, prev.label.first, hi, [prev.label.label], "verb-form",
                                 1.0, f"{' '.join(words)!r} is how {prev.label.label!r} sounds",
                                 res))
        return False
    # "rumbling thunder", "a wailing siren"
    if nxt is not None and verb_of(nxt.label, words):
        items.append(_label_item(tokens, lo, nxt.last, [nxt.label], "verb-form", 1.0,
                                 f"{' '.join(words)!r} is how {nxt.label!r} sounds", res))
        return True
    fams = families(vocab.labels)
    if prev is None and nxt is None:
        found = resolve_words(words, fams)
        if found is not None:
            labs, kind, detail = found
            items.append(_label_item(tokens, lo, hi, labs, kind, 1.0, detail, res))
            return False
    # semantic nearest label, over the unknown words and a label glued to them
    # ("crowd applause", "loud siren")
    a = prev.label.first if prev is not None else lo
    b = nxt.last if nxt is not None else hi
    phrase = " ".join(t.text for t in tokens[a:b] if t.kind != "punct")
    pick, scored, why = semantic_pick(phrase, vocab.labels, opts, fams)
    if pick is not None:
        label, score, detail = pick
        if prev is not None:
            items.pop()
            res.records[:] = [r for r in res.records if r.start != prev.start]
        items.append(_label_item(tokens, a, b, [label], "semantic", score, detail, res))
        return nxt is not None
    _raise_unknown(text, tokens, idx, matches, vocab,
                   candidates_text(scored, why) if scored else "")
    return False  # pragma: no cover - _raise_unknown raises


def _items(text: str, tokens: list[Token], matches: list[LabelMatch],
           vocab: Vocabulary, res: Optional[_Resolved] = None) -> list[_Item]:
    """Labels, cues and numbers in text order; unknown words are resolved or raise."""
    res = res if res is not None else _Resolved(STRICT)
    by_first = {m.first: m for m in matches}
    items: list[_Item] = []
    i = 0
    unknown: list[int] = []

    def flush_unknown(nxt: Optional[LabelMatch] = None) -> bool:
        if not unknown:
            return False
        if all(tokens[k].kind == "punct" for k in unknown):
            unknown.clear()
            return False
        took = _resolve_unknown(text, tokens, unknown, items, nxt, matches, vocab, res)
        unknown.clear()
        return took

    while i < len(tokens):
        if i in by_first:
            m = by_first[i]
            if flush_unknown(m):
                i = m.last
                continue
            items.append(_Item("label", m.text, m.start, m.end, label=m))
            res.records.append(Resolution(m.text, (m.label,), _match_kind(m), 1.0, m.start, m.end))
            i = m.last
            continue
        tok = tokens[i]
        if tok.kind == "num":
            flush_unknown()
            items.append(_Item(NUM, tok.text, tok.start, tok.end, (tok.text,), float(tok.text)))
            i += 1
            continue
        # phrases (longest first), only over tokens that are not label words
        limit = min(len(tokens), i + PHRASE_MAX)
        for j in range(i, limit):
            if j in by_first and j > i:
                limit = j
                break
        found = None
        for n in range(limit - i, 1, -1):
            key = tuple(t.text for t in tokens[i:i + n])
            if key in PHRASES:
                found = (n, PHRASES[key])
                break
        if found:
            flush_unknown()
            n, kind = found
            if kind == CMP:
                raise QueryParseError(f"cannot read {text!r}: "
                                      + DUR_CMP_MSG.format(w=" ".join(t.text for t in tokens[i:i + n])))
            items.append(_Item(kind, " ".join(t.text for t in tokens[i:i + n]), tok.start,
                               tokens[i + n - 1].end, tuple(t.text for t in tokens[i:i + n])))
            i += n
            continue
        num = _number_words(tokens, i, by_first)
        if num is not None:
            flush_unknown()
            n, value = num
            items.append(_Item(NUM, " ".join(t.text for t in tokens[i:i + n]), tok.start,
                               tokens[i + n - 1].end, tuple(t.text for t in tokens[i:i + n]), value))
            i += n
            continue
        w = tok.text
        if w == "half":
            if i + 2 < len(tokens) and tokens[i + 1].text in ("a", "an") \
                    and tokens[i + 2].text in UNIT_SECONDS and i + 1 not in by_first:
                flush_unknown()
                items.append(_Item(NUM, "half a", tok.start, tokens[i + 1].end, ("half", "a"), 0.5))
                i += 2
                continue
            raise QueryParseError(f"cannot read 'half' in {text!r}: write the duration as a "
                                  "number, e.g. 'for 0.5 seconds'")
        if w in ("a", "an") and i + 1 < len(tokens) and tokens[i + 1].text in UNIT_SECONDS \
                and tokens[i + 1].text != "s" and i + 1 not in by_first:
            flush_unknown()
            items.append(_Item(NUM, w, tok.start, tok.end, (w,), 1.0))  # "for a second"
            i += 1
            continue
        if w in UNSUPPORTED_WORDS:
            raise QueryParseError(f"cannot read {w!r} in {text!r}: {UNSUPPORTED_WORDS[w]}")
        kind = WORDS.get(w)
        if w == "over":
            kind = CMP if i + 1 < len(tokens) and _starts_number(tokens, i + 1) else OVL
        if kind is None:
            if tok.kind == "punct":
                i += 1
                continue
            unknown.append(i)
            i += 1
            continue
        if unknown and w in SOUND_WORDS:
            unknown.append(i)   # "white noise": report the whole name, not just "white"
        flush_unknown()
        if kind == CMP:
            raise QueryParseError(f"cannot read {text!r}: " + DUR_CMP_MSG.format(w=w))
        items.append(_Item(kind, w, tok.start, tok.end, (w,), float(COUNT_WORDS.get(w, 0))))
        i += 1
    flush_unknown()
    return items


def _starts_number(tokens: list[Token], i: int) -> bool:
    t = tokens[i].text
    return tokens[i].kind == "num" or t in ONES or t in TENS


def _number_words(tokens: list[Token], i: int, by_first: dict) -> Optional[tuple[int, float]]:
    """``ten`` -> 10, ``twenty five``/``twenty-five`` -> 25; None when not a number word."""
    t = tokens[i].text
    if t in TENS:
        if i + 1 < len(tokens) and i + 1 not in by_first and tokens[i + 1].text in ONES \
                and 0 < ONES[tokens[i + 1].text] < 10:
            return 2, float(TENS[t] + ONES[tokens[i + 1].text])
        return 1, float(TENS[t])
    if t in ONES:
        return 1, float(ONES[t])
    return None


def _match_kind(m: LabelMatch) -> str:
    """exact when the words are the label as written (case aside), else stem."""
    words = m.text.split()
    while len(words) > 1 and words[-1] in SOUND_WORDS:
        words.pop()
    return "exact" if tuple(words) == _label_tokens(m.label) else "stem"


@lru_cache(maxsize=4096)
def _label_tokens(label: str) -> tuple[str, ...]:
    return tuple(t.text for t in tokenize(label))


def _raise_unknown(text: str, tokens: list[Token], idx: list[int], matches: list[LabelMatch],
                   vocab: Vocabulary, semantic_hint: str = "") -> None:
    words = " ".join(tokens[i].text for i in idx)
    if all(tokens[i].kind == "punct" for i in idx):
        idx.clear()
        return
    near = vocab.nearest(words)
    # An unknown word glued to a known label ("loud siren"): suggest from the whole phrase.
    context = None
    for m in matches:
        if m.last == idx[0] or m.first == idx[-1] + 1:
            context = m
    if context is not None:
        lo, hi = min(idx[0], context.first), max(idx[-1] + 1, context.last)
        phrase = " ".join(t.text for t in tokens[lo:hi])
        near = list(dict.fromkeys(vocab.nearest(phrase) + near))[:3]
        where = f" (in {phrase!r})"
    else:
        where = ""
    hint = (f"nearest labels: {', '.join(repr(x) for x in near)}" if near
            else f"no label is close; the vocabulary has {len(vocab.labels)} labels")
    if semantic_hint:
        hint = semantic_hint
    raise QueryParseError(f"unknown sound {words!r}{where} in {text!r}: not a label of the "
                          f"vocabulary; {hint}")


# --- stage 2: durations ----------------------------------------------------------------------

_DUR_SKIP = frozenset({FILLER, DURCUE})


def _count_item(text: str, it: _Item, value: float, end: int) -> _Item:
    """A CNT item (``n`` occurrences) from a number or count word ending at ``end``."""
    words = text[it.start:end]
    if not float(value).is_integer() or value < 1:
        what = "write 'no X' to exclude a sound" if value == 0 else "a count is a whole number"
        raise QueryParseError(f"cannot count {words!r} in {text!r}: {what}")
    return _Item(CNT, words, it.start, end, value=float(value))


def _durations(text: str, items: list[_Item]) -> list[_Item]:
    """Fold NUM [UNIT] and its cue words into DUR items, and counts ("twice", NUM "times",
    NUM right before a sound) into CNT items; a bare number is an error."""
    out: list[_Item] = []
    i = 0
    while i < len(items):
        it = items[i]
        if it.kind == TIMES:
            if not it.value:
                raise QueryParseError(f"'times' in {text!r} needs a number before it, e.g. "
                                      "'dog barking 3 times'")
            out.append(_count_item(text, it, it.value, it.end))   # "twice"
            i += 1
            continue
        if it.kind != NUM:
            out.append(it)
            i += 1
            continue
        j = i + 1
        if j < len(items) and items[j].kind == TIMES and not items[j].value:
            out.append(_count_item(text, it, it.value, items[j].end))   # "3 times"
            i = j + 1
            continue
        if j < len(items) and items[j].kind == "label":
            out.append(_count_item(text, it, it.value, it.end))   # "exactly 3 door knock"
            i = j
            continue
        unit = 1.0
        has_unit = j < len(items) and items[j].kind == UNIT
        if has_unit:
            unit = UNIT_SECONDS[items[j].text]
            j += 1
        # cue words before the number, back to the previous non-filler item
        for_cue = False
        k = len(out) - 1
        while k >= 0 and out[k].kind in _DUR_SKIP:
            if out[k].kind == DURCUE:
                for_cue |= out[k].text in LEFT_DUR_WORDS
                out[k].kind = FILLER   # consumed by this duration
            k -= 1
        if not has_unit and not for_cue:
            raise QueryParseError(f"a number where a sound belongs: {it.text!r} in {text!r} "
                                  "(a duration reads 'for 5 seconds')")
        after = j
        long_cue = each = False
        while after < len(items) and items[after].kind in (DURCUE, EACH) \
                and items[after].text in ("long", "each"):
            long_cue |= items[after].text == "long"
            each |= items[after].text == "each"
            after += 1
        of_cue = after < len(items) and items[after].kind == FILLER and items[after].text == "of"
        if of_cue:
            after += 1
        seconds = round(it.value * unit, 6)
        if not math.isfinite(seconds) or seconds <= 0:
            raise QueryParseError(f"duration {it.text!r} in {text!r} must be a positive, finite "
                                  "number of seconds")
        end = items[after - 1].end
        out.append(_Item(DUR, text[it.start:end], it.start, end,
                         dur=Duration(seconds, text[it.start:end], it.start, end,
                                      for_cue or long_cue, of_cue and not for_cue, each)))
        i = after
    # a unit or duration word with no number ("for seconds", "rain lasting") would otherwise
    # be dropped silently; "for" is also plain English ("search for rain") before a sound
    for k, it in enumerate(out):
        dangling = ((it.kind == UNIT and it.text != "s")
                    or (it.kind == DURCUE and it.text != "for")
                    or (it.kind == DURCUE and (k + 1 == len(out) or out[k + 1].kind != "label")))
        if dangling:
            raise QueryParseError(f"{it.text!r} in {text!r} needs a number of seconds, e.g. "
                                  "'rain for 5 seconds'")
    return [it for it in out if it.kind not in (FILLER, DURCUE, UNIT)]


# --- stage 3: connectives between sounds ------------------------------------------------------

_LINKERS = frozenset({FWD, REV, AND, OR, NOR, NEG, STOP})


@dataclass
class _Link:
    """How a sound connects to the one before it (or to the text start / end)."""
    kind: str
    """start | end | and | or | nor | ovl | fwd | rev | not_ovl | not_fwd | not_rev | clause"""
    text: str
    neg_right: bool = False
    left_mods: list[tuple[str, _Item]] = field(default_factory=list)
    right_ovl: bool = False
    left_dur: list[Duration] = field(default_factory=list)
    right_dur: list[Duration] = field(default_factory=list)
    left_count: list[_Item] = field(default_factory=list)
    right_count: list[_Item] = field(default_factory=list)
    comma: bool = False
    and_word: bool = False
    but: bool = False
    prefix_seq: Optional[str] = None


def _span_text(text: str, span: list[_Item], left: Optional[_Item], right: Optional[_Item]) -> str:
    lo = left.end if left else 0
    hi = right.start if right else len(text)
    return text[lo:hi].strip()


def _classify(text: str, span: list[_Item], left: Optional[_Item], right: Optional[_Item]) -> _Link:
    at_start, at_end = left is None, right is None
    where = _span_text(text, span, left, right)
    link = _Link("start" if at_start else "end" if at_end else "", where)
    link.comma = any(it.kind in (COMMA, STOP) for it in span)
    link.and_word = any(it.kind == AND and it.text != "but" for it in span)
    link.but = any(it.kind == AND and it.text == "but" for it in span) or any(
        it.kind == NEG and it.words[:1] == ("but",) for it in span)

    def err(msg: str) -> QueryParseError:
        between = (f"between {left.text!r} and {right.text!r}" if left and right
                   else f"before {right.text!r}" if right else f"after {left.text!r}")
        return QueryParseError(f"cannot read {where!r} {between} in {text!r}: {msg}")

    # drop joiners that only glue cues together: "overlapping with", "and then", "but no"
    cues: list[_Item] = []
    comma_since = False
    for it in span:
        if it.kind in (COMMA, DUR, CNT):
            comma_since |= it.kind == COMMA
            continue
        glued = not comma_since
        comma_since = False
        if (it.kind == AND and glued and cues and cues[-1].kind == OVL
                and it.text in ("with", "as")):
            continue
        if it.kind == AND and cues and cues[-1].kind == AND:
            continue
        if it.kind in (FWD, REV, OVL, NEG, NOR, OR, STOP) and cues and cues[-1].kind == AND:
            cues.pop()
        if it.kind == NEG and glued and cues and cues[-1].kind in (OVL, FWD, REV):
            raise QueryParseError(
                f"cannot read '{cues[-1].text} {it.text}' in {text!r}: order and overlap need "
                f"sounds that occur; to exclude a sound write 'A but no X'")
        cues.append(it)
    linker: Optional[_Item] = None
    linker_kind = ""
    firsts: list[tuple[bool, _Item]] = []   # (after linker?, item)
    k = 0
    while k < len(cues):
        c = cues[k]
        rest = cues[k + 1:]
        later = any(x.kind in _LINKERS for x in rest)
        if linker is None:
            if c.kind == OVL:
                if at_end or later:
                    link.left_mods.append((OVL, c))
                elif at_start:
                    link.right_ovl = True
                else:
                    linker, linker_kind = c, OVL
            elif c.kind == NEG and rest and rest[0].kind in (OVL, FWD, REV):
                nxt = rest[0]
                later2 = any(x.kind in _LINKERS for x in cues[k + 2:])
                if nxt.kind == OVL and (at_end or later2):
                    link.left_mods.append(("not_ovl", c))
                elif at_start or at_end:
                    raise err(f"'{c.text} {nxt.text}' needs a sound on each side")
                else:
                    linker, linker_kind = c, "not_" + nxt.kind
                k += 2
                continue
            elif c.kind == NEG:
                if at_end:
                    raise err(f"{c.text!r} must come before the sound it excludes ('but no X')")
                link.neg_right = True
                linker, linker_kind = c, ("start" if at_start else AND)
            elif c.kind in (FWD, REV):
                if at_start:
                    if c.text in PREFIX_SEQ_WORDS:
                        link.prefix_seq = FWD if c.kind == REV else REV
                    else:
                        raise err(f"nothing comes before {c.text!r}")
                elif at_end:
                    raise err(f"nothing follows {c.text!r}")
                else:
                    linker, linker_kind = c, c.kind
            elif c.kind in (AND, OR, NOR):
                if at_start:
                    if c.kind == NOR:
                        raise err("'nor' needs 'neither' before it")
                elif at_end:
                    raise err(f"{c.text!r} at the end needs a sound after it")
                else:
                    linker, linker_kind = c, c.kind
            elif c.kind == STOP:
                if not (at_start or at_end):
                    linker, linker_kind = c, "clause"
            elif c.kind == ORDER:
                if at_start:
                    raise err(f"{c.text!r} must follow the sounds it orders")
                link.left_mods.append((ORDER, c))
            elif c.kind == EACH:
                link.left_mods.append((EACH, c))
            elif c.kind == FIRST:
                firsts.append((False, c))
            elif c.kind == BEGIN:
                if at_end:
                    raise err(f"{c.text!r} needs a later sound: 'A {c.text}, then B'")
                if at_start:
                    firsts.append((False, c))
                else:   # "A at the beginning and B (at the end)": A comes first
                    linker, linker_kind = c, FWD
            elif c.kind == END:
                if not at_end:
                    raise err(f"{c.text!r} can only close the query ('A at the beginning and "
                              f"B {c.text}')")
                link.left_mods.append((END, c))
            else:  # pragma: no cover - every kind is handled above
                raise err(f"unexpected {c.text!r}")
        else:
            if c.kind == NEG and linker.kind == NEG:
                raise err(f"double negation '{linker.text} {c.text}': write the sound plainly "
                          "to require it, or one 'no' to exclude it")
            if c.kind == NEG and linker_kind == OR:
                raise err("'or' with an excluded sound ('A or no B') is not supported; "
                          "'or' can only join plain sounds")
            if c.kind == NEG:
                link.neg_right = True
            elif c.kind == OVL:
                link.right_ovl = True
            elif c.kind == FIRST:
                firsts.append((True, c))
            elif c.kind in (FWD, REV) and linker_kind == "clause" and not link.prefix_seq:
                if c.text in PREFIX_SEQ_WORDS:   # "A. After B, C": a new clause, ordered
                    link.prefix_seq = FWD if c.kind == REV else REV
                else:                            # "A. Then B": the chain goes on
                    linker, linker_kind = c, c.kind
            elif c.kind == AND and linker_kind in (FWD, REV, OVL, "clause"):
                pass  # "then, and B"
            elif c.kind == linker_kind and c.kind in (FWD, REV):
                pass  # "and then transitions to B": one order, said twice
            elif c.kind == END and at_end:
                link.left_mods.append((END, c))
            elif c.kind == STOP:
                pass
            else:
                raise err(f"{linker.text!r} and {c.text!r} contradict each other or are unclear")
        k += 1
    if linker is None and not (at_start or at_end):
        if link.comma:
            linker_kind = AND   # "A, B and C"
        else:
            raise err(f"no connecting word between {left.text!r} and {right.text!r}; "
                      "join them with 'and', 'then', 'while' or 'but no'")
    if not link.kind:
        link.kind = linker_kind
    if at_start and link.neg_right:
        link.kind = "start"
    # first ... then: only at the start, after a full stop, or before a forward order word
    for after_linker, c in firsts:
        ok = (at_start or (after_linker and linker_kind == "clause")
              or (not after_linker and linker_kind == FWD))
        if not ok:
            raise err(f"cannot tell what {c.text!r} refers to; write 'first A, then B'")
    # durations: left of the connective belong to the sound before, right of it to the next
    pivot = None
    if linker is not None:
        pivot = linker.start
    elif not (at_start or at_end):
        pivot = next(it.start for it in span if it.kind in (COMMA, STOP))
    for it in span:
        if it.kind not in (DUR, CNT):
            continue
        if at_start:
            side = "right"
        elif at_end:
            side = "left"
        else:
            side = "left" if it.start < pivot else "right"
        if it.kind == CNT:   # counts, like durations, belong to the sound on their side
            (link.left_count if side == "left" else link.right_count).append(it)
            continue
        d = it.dur
        assert d is not None
        if side == "left" and d.of_cue:
            raise err(f"{d.text!r} has no sound after it")
        if side == "left":
            link.left_dur.append(d)
        else:
            link.right_dur.append(d)
    return link


# --- stage 4: structure ----------------------------------------------------------------------

@dataclass
class _Group:
    members: list[str] = field(default_factory=list)
    joins: set[str] = field(default_factory=set)
    relations: list[Node] = field(default_factory=list)
    pending_ovl: bool = False
    has_own_duration: dict[str, bool] = field(default_factory=dict)
    has_own_count: dict[str, bool] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    """member -> how it joined the group (and / or / ovl)"""


@dataclass
class _Chain:
    groups: list[_Group] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def labels(self) -> set[str]:
        return {m for g in self.groups for m in g.members}


def _pairs(members: Sequence[str]) -> Iterable[tuple[str, str]]:
    for i, a in enumerate(members):
        for b in members[i + 1:]:
            yield a, b


class _Builder:
    def __init__(self, text: str, mentions: list[_Item], links: list[_Link]) -> None:
        self.text = text
        self.mentions = mentions
        self.links = links
        self.chains: list[_Chain] = []
        self.chain: Optional[_Chain] = None
        self.group: Optional[_Group] = None
        self.positive: dict[str, None] = {}
        self.lasts: list[Node] = []
        self.counts: list[Node] = []
        self.negated: list[Node] = []
        self.notes: list[str] = []

    def err(self, msg: str) -> QueryParseError:
        return QueryParseError(f"cannot read {self.text!r}: {msg}")

    # group helpers
    def _new_chain(self, label: str) -> None:
        self._close()
        self.chain = _Chain()
        self.chains.append(self.chain)
        self.group = _Group([label])
        self.chain.groups.append(self.group)

    def _close(self) -> None:
        g = self.group
        if g is not None and g.pending_ovl:
            g.pending_ovl = False
            self._group_overlap(g, "at the same time", negate=False)

    def _group_overlap(self, g: _Group, word: str, negate: bool) -> None:
        if len(g.members) < 2:
            raise self.err(f"{word!r} needs two sounds, but only {g.members[0]!r} comes before it")
        if OR in g.joins:
            raise self.err(f"{word!r} after sounds joined by 'or' is ambiguous")
        for a, b in _pairs(g.members):
            g.relations.append(Not(Overlap(a, b)) if negate else Overlap(a, b))

    def _apply_left_mods(self, link: _Link, prev_negated: bool) -> None:
        for kind, item in link.left_mods:
            if kind == EACH:
                continue
            if kind == END:
                # "A at the beginning and B at the end": B must already be last in a chain
                if prev_negated or self.chain is None or len(self.chain.groups) < 2:
                    raise self.err(f"{item.text!r} needs an earlier sound it comes after: "
                                   f"'A at the beginning and B {item.text}' or 'A, then B'")
                continue
            if prev_negated or self.group is None:
                raise self.err(f"{item.text!r} must follow sounds that are present, not excluded ones")
            if kind == OVL:
                self._group_overlap(self.group, item.text, negate=False)
            elif kind == "not_ovl":
                self._group_overlap(self.group, "not " + item.text, negate=True)
            elif kind == ORDER:
                g = self.group
                if len(g.members) < 2 or g.joins - {AND}:
                    raise self.err(f"{item.text!r} needs a list of sounds joined by 'and'")
                for a, b in zip(g.members, g.members[1:]):
                    g.relations.append(Before(a, b))

    def build(self) -> Node:
        n = len(self.mentions)
        prev_negated = False
        prev_label: Optional[str] = None
        pending_prefix: Optional[str] = None
        for i, m in enumerate(self.mentions):
            link = self.links[i]
            after = self.links[i + 1]
            label = m.label.label  # type: ignore[union-attr]
            self._apply_left_mods(link, prev_negated)
            durs = [(d, False) for d in link.right_dur] + [(d, True) for d in after.left_dur]
            cnts = [(c, False) for c in link.right_count] + [(c, True) for c in after.left_count]
            negated = self._negated(i, link, prev_negated)
            if negated and cnts:
                raise self.err(f"{cnts[0][0].text!r} counts the excluded sound {m.text!r}; a "
                               "count can only be asked of a sound that occurs")
            if negated:
                if link.kind in (FWD, REV, OVL, "not_ovl", "not_fwd", "not_rev") or link.right_ovl:
                    raise self.err(f"{link.text!r} relates {m.text!r} to another sound, but "
                                   f"{m.text!r} is excluded; order and overlap need sounds that occur")
                if after.kind in (FWD, REV, OVL, "not_ovl", "not_fwd", "not_rev"):
                    raise self.err(f"{after.text!r} after the excluded sound {m.text!r}: order "
                                   "and overlap need sounds that occur")
                if len(durs) > 1:
                    raise self.err(f"two durations for {m.text!r}")
                if durs:
                    self.negated.append(Not(Lasts(label, durs[0][0].seconds)))
                else:
                    self.negated.append(Not(Has(label)))
                prev_negated = True
                continue
            kind = link.kind
            if pending_prefix and kind == AND and not link.and_word and link.comma:
                kind = pending_prefix           # "after A, B": the comma closes "after A"
                pending_prefix = None
            elif pending_prefix and kind not in ("start", "clause", AND):
                word = "after" if pending_prefix == FWD else "before"
                raise self.err(f"'{word} X' must be followed by a comma and the sounds it "
                               f"orders ('{word} A, B')")
            if link.prefix_seq:
                if pending_prefix:
                    raise self.err("two 'after'/'before' clauses in a row are unclear")
                pending_prefix = link.prefix_seq
            if kind in ("start", "clause") or self.group is None or self.chain is None:
                self._new_chain(label)
            elif kind == AND and (label in self.chain.labels() or prev_negated):
                # a sound named again ("..., with A lasting 5 s"), or the first present sound
                # after an excluded one, starts a new clause
                self._new_chain(label)
            elif kind in (AND, OR):
                self._join(label, kind)
            elif kind == NOR:
                raise self.err(f"'nor' before {m.text!r} needs 'neither' before the first sound")
            elif kind == OVL:
                assert prev_label is not None
                self._join(label, OVL)
                self.group.relations.append(Overlap(prev_label, label))
            elif kind in ("not_ovl", "not_fwd", "not_rev"):
                assert prev_label is not None
                self._join(label, AND)
                rel = {"not_ovl": Overlap(prev_label, label), "not_fwd": Before(prev_label, label),
                       "not_rev": Before(label, prev_label)}[kind]
                self.group.relations.append(Not(rel))
            elif kind in (FWD, REV):
                self._check_order_scope(i, link)
                self._close()
                self.group = _Group([label])
                self.chain.groups.append(self.group)
                self.chain.links.append(kind)
            else:  # pragma: no cover
                raise AssertionError(kind)
            if link.right_ovl:
                self.group.pending_ovl = True
            self.positive.setdefault(label, None)
            self._durations(m, label, durs, after)
            self._counts(m, label, cnts)
            prev_negated = False
            prev_label = label
        if pending_prefix:
            raise self.err("'after X' / 'before X' must be followed by the sounds it orders")
        self._apply_left_mods(self.links[n], prev_negated)
        self._close()
        return self._emit()

    def _check_order_scope(self, i: int, link: _Link) -> None:
        """"A and B then C" (no comma): does the order word take the group (both before C)
        or only B? Two readings select different clips, so ask; a comma before the order word
        ("A and B, then C") means the group."""
        prev = self.links[i - 1] if i >= 1 else None
        g = self.group
        if link.comma or prev is None or g is None or len(g.members) < 2 or g.pending_ovl:
            return
        if prev.kind not in (AND, OVL) or prev.comma:
            return
        a, b, c = (self.mentions[i - 2].text, self.mentions[i - 1].text, self.mentions[i].text)
        word = link.text or "then"
        raise self.err(f"ambiguous: does {word!r} {c!r} apply to both {a!r} and {b!r}, or "
                       f"only to {b!r}? write '{a} and {b}, {word} {c}' for both, or "
                       f"'{a}. {b} {word} {c}' for {b!r} only")

    def _join(self, label: str, how: str) -> None:
        assert self.group is not None
        g = self.group
        if how == OR and (g.joins - {OR}) or how != OR and OR in g.joins:
            raise self.err("mixing 'and' and 'or' is ambiguous; split the query or use one of them")
        g.members.append(label)
        g.joins.add(how)
        g.how.setdefault(label, how)

    def _negated(self, i: int, link: _Link, prev_negated: bool) -> bool:
        if link.neg_right:
            return True
        if not prev_negated:
            return False
        if link.kind in (OR, NOR):
            return True
        if link.kind == AND:
            if link.but:
                return False
            if link.and_word and not link.comma:
                prev = self.mentions[i - 1].text
                cur = self.mentions[i].text
                raise self.err(f"ambiguous: does the exclusion of {prev!r} also apply to {cur!r}? "
                               f"write 'no {prev} and no {cur}' or 'no {prev}, but {cur}'")
            if link.and_word:
                return False  # "no C, and D": the comma ends the exclusion
            # "no C, D or E": a comma list that ends with or/nor stays excluded
            for later in self.links[i + 1:]:
                if later.kind in (OR, NOR) or later.neg_right:
                    return True
                if not (later.kind == AND and not later.and_word and not later.but):
                    break
            prev = self.mentions[i - 1].text
            cur = self.mentions[i].text
            raise self.err(f"ambiguous: is {cur!r} excluded like {prev!r}? write "
                           f"'no {prev} or {cur}' or 'no {prev}, but {cur}'")
        return False

    def _one_beside(self, m: _Item, label: str, found: list[tuple[Any, bool]], what: str,
                    own: dict[str, bool]) -> Optional[tuple[Any, bool]]:
        """The one duration or count beside a sound, and whether it stands left of it (two are
        an error); records in ``own`` whether the sound has its own."""
        if len(found) > 1:
            raise self.err(f"two {what} for {m.text!r}: "
                           + " and ".join(repr(x.text) for x, _ in found))
        own.setdefault(label, bool(found))
        if not found:
            return None
        own[label] = True
        return found[0]

    def _other_without(self, label: str, own: dict[str, bool]) -> Optional[str]:
        """When ``label`` closes a group of sounds: how the last earlier member without its own
        duration or count was written (None when every one has its own)."""
        assert self.group is not None
        g = self.group
        if len(g.members) < 2 or g.members[-1] != label:
            return None
        others = [x for x in g.members[:-1] if not own.get(x, False)]
        if not others:
            return None
        return next(x.text for x in self.mentions  # type: ignore[union-attr]
                    if x.label.label == others[-1])

    def _durations(self, m: _Item, label: str, durs: list[tuple[Duration, bool]],
                   after: _Link) -> None:
        assert self.group is not None
        g = self.group
        got = self._one_beside(m, label, durs, "durations", g.has_own_duration)
        if got is None:
            return
        d, left = got
        targets = [label]
        if left and d.each and len(g.members) > 1 and g.members[-1] == label:
            targets = list(g.members)
        elif left and (other := self._other_without(label, g.has_own_duration)) is not None:
            joiner = {OVL: "while", OR: "or"}.get(g.how.get(label, AND), "and")
            raise self.err(
                f"ambiguous: does {d.text!r} apply to {m.text!r} only, or also to "
                f"{other!r}? name the sound with its duration first ('{m.text} for "
                f"{d.seconds:g} seconds {joiner} {other}') or add 'each'")
        for t in targets:
            self.lasts.append(Lasts(t, d.seconds))
            self.notes.append(f"{d.text!r} -> lasts({t}, {d.seconds:g}s)")

    def _counts(self, m: _Item, label: str, cnts: list[tuple[_Item, bool]]) -> None:
        """count(label, n) from the count beside the sound; a count after a group of sounds
        ("A and B twice") is ambiguous unless the others have their own."""
        assert self.group is not None
        got = self._one_beside(m, label, cnts, "counts", self.group.has_own_count)
        if got is None:
            return
        c, left = got
        if left and (other := self._other_without(label, self.group.has_own_count)) is not None:
            raise self.err(f"ambiguous: does {c.text!r} count {m.text!r} only, or also "
                           f"{other!r}? write '{m.text} {c.text} and {other}', or give "
                           "each sound its own count")
        n = int(c.value)
        self.counts.append(Count(label, n))
        self.notes.append(f"{c.text!r} -> count({label}, {n})")

    def _emit(self) -> Node:
        befores: list[Node] = []
        relations: list[Node] = []
        ors: list[Node] = []
        for chain in self.chains:
            for g in chain.groups:
                if OR in g.joins:
                    if len(chain.groups) > 1 or g.relations or any(
                            isinstance(x, Lasts) and x.label in g.members for x in self.lasts):
                        raise self.err("'or' combined with order, overlap or duration is not "
                                       "supported; 'or' can only join plain sounds")
                    ors.append(Or(tuple(Has(x) for x in g.members)))
                relations += g.relations
            for k, direction in enumerate(chain.links):
                g1, g2 = chain.groups[k], chain.groups[k + 1]
                for a in g1.members:
                    for b in g2.members:
                        befores.append(Before(a, b) if direction == FWD else Before(b, a))
        for rel in befores + relations:
            inner = rel.arg if isinstance(rel, Not) else rel
            if isinstance(inner, (Before, Overlap)) and inner.a == inner.b:
                word = "come before" if isinstance(inner, Before) else "overlap"
                raise self.err(f"{inner.a!r} cannot {word} itself (to ask for a sound more "
                               f"than once, count it: '{inner.a} twice')")
        positive_rel = [r for r in befores + relations + self.lasts + self.counts
                        if not isinstance(r, Not)]
        covered = {x for r in positive_rel for x in leaf_labels(r)}
        in_or = {x for o in ors for x in _leaf_labels_all(o)}
        has = [Has(x) for x in self.positive if x not in covered and x not in in_or]
        args = _dedupe(has + self.lasts + self.counts + befores
                       + [r for r in relations if not isinstance(r, Not)]
                       + ors + [r for r in relations if isinstance(r, Not)] + self.negated)
        logic: Node = args[0] if len(args) == 1 else And(tuple(args))
        check_consistent(logic, self.text)
        return logic


def _leaf_labels_all(node: Node) -> tuple[str, ...]:
    if isinstance(node, (Or, And)):
        return tuple(x for a in node.args for x in _leaf_labels_all(a))
    if isinstance(node, Not):
        return _leaf_labels_all(node.arg)
    return leaf_labels(node)


def _dedupe(nodes: list[Node]) -> list[Node]:
    seen: set[Node] = set()
    out = []
    for n in nodes:
        key = canonical(n)
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


# --- entry points ----------------------------------------------------------------------------

def parse_detailed(text: str, labels: Sequence[str] | Vocabulary,
                   options: Optional[ResolveOptions] = None) -> ParseResult:
    """Parse ``text`` and say how: the logic, which phrase resolved to which label(s), notes.

    ``options`` (default: resolution without a semantic matcher) says how far to go with a
    phrase that is not a label; ``ResolveOptions(strict=True)`` reads labels only."""
    options = options if options is not None else ResolveOptions()
    if not isinstance(text, str) or not text.strip():
        raise QueryParseError("the query text is empty; name at least one sound, e.g. "
                              "'dog barking but no siren'")
    _refuse_unread(text)
    vocab = vocabulary(labels)
    tokens = tokenize(text)
    matches = vocab.find(tokens)
    res = _Resolved(options)
    items = _durations(text, _items(text, tokens, matches, vocab, res))
    mentions = [it for it in items if it.kind == "label"]
    if not mentions:
        raise QueryParseError(f"no sound of the vocabulary is named in {text!r}; name at least "
                              f"one label, e.g. {vocab.labels[0]!r}")
    spans: list[list[_Item]] = [[] for _ in range(len(mentions) + 1)]
    k = 0
    for it in items:
        if it.kind == "label":
            k += 1
        else:
            spans[k].append(it)
    links = [_classify(text, spans[i], mentions[i - 1] if i > 0 else None,
                       mentions[i] if i < len(mentions) else None)
             for i in range(len(mentions) + 1)]
    builder = _Builder(text, mentions, links)
    try:
        logic = expand_families(builder.build(), res.families)
    except QueryParseError as exc:   # a family placeholder reads as the words written
        shown = repr(FAMILY_PREFIX)[1:-1]
        raise QueryParseError(str(exc).replace(FAMILY_PREFIX, "").replace(shown, "")) from None
    used = [it.label for it in items if it.kind == "label" and it.label is not None
            and not it.label.label.startswith(FAMILY_PREFIX)]   # families: see resolutions
    records = tuple(sorted(res.records, key=lambda r: r.start))
    notes = [f"{r.text!r} -> {' | '.join(r.labels)}"
             + ("" if r.kind in ("exact", "stem") else f" ({r.kind})") for r in records] + list(builder.notes)
    for fam, members in res.families.items():
        notes = [n.replace(fam, " | ".join(members)) for n in notes]
    return ParseResult(logic, tuple(used), tuple(notes), records)


def _refuse_unread(text: str) -> None:
    """Nothing the user wrote is dropped silently: an emoji, a control character or an
    undecodable byte (a surrogate escape from the command line) is an error naming it."""
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
                          "is words, numbers and the punctuation , ; . : ! ? ( ) [ ] / & +")


def parse(text: str, vocabulary: Sequence[str] | Vocabulary,
          options: Optional[ResolveOptions] = None) -> Node:
    """Query text -> logic over ``vocabulary`` (a bank's labels); QueryParseError with one line
    saying what is wrong (empty text, unknown sound with the nearest labels, a number where a
    sound belongs, an ambiguous wording, a contradiction)."""
    return parse_detailed(text, vocabulary, options).logic
