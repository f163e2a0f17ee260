"""Stage 2, numbers, durations and counts: number words; NUM [UNIT] with its cue words -> a
duration; "twice", NUM "times" and NUM right before a sound -> a count.

A number is a duration only with a unit or a duration cue ("for 5", "5 seconds"), and a count
only with "times" or a sound right after it ("3 times", "exactly 3 door knocks"); a bare number
is an error. A number that says *when* ("at 5 seconds", "the first 5 seconds") or *how far
apart* ("5 seconds later", "B 5 seconds after A") is refused: the logic has no time positions.
"""

from __future__ import annotations

import math
from typing import Optional

from reasonaudio.querylang.lexicon import (CNT, COUNT_WORDS, DUR, DURCUE, EACH, FILLER, FIRST,
                                             FWD, LASTING_WORDS, LEFT_DUR_WORDS, NUM, ONES,
                                             POSITION_AFTER, POSITION_BEFORE, REV, TENS,
                                             TIME_POSITION_MSG, TIMES, UNIT, UNIT_SECONDS)
from reasonaudio.querylang.parser.parts import Duration, Item
from reasonaudio.querylang.vocabulary import Token
from reasonaudio.errors import QueryParseError


def starts_number(tokens: list[Token], i: int) -> bool:
    t = tokens[i].text
    return tokens[i].kind == "num" or t in ONES or t in TENS


def number_words(tokens: list[Token], i: int, by_first: dict) -> Optional[tuple[int, float]]:
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


_DUR_SKIP = frozenset({FILLER, DURCUE})


def fold_numbers(text: str, items: list[Item]) -> list[Item]:
    """Fold NUM [UNIT] and its cue words into DUR items, and counts ("twice", NUM "times", NUM
    right before a sound) into CNT items; a bare number is an error."""
    out: list[Item] = []
    i = 0
    while i < len(items):
        if items[i].kind == TIMES or _counts(items, i):
            i = _fold_count(text, items, i, out)
        elif items[i].kind != NUM:
            out.append(items[i])
            i += 1
        else:
            i = _fold_one(text, items, i, out)
    _refuse_dangling(text, out)
    return [it for it in out if it.kind not in (FILLER, DURCUE, UNIT)]


def _counts(items: list[Item], i: int) -> bool:
    """A number that counts: "3 times", "exactly 3 door knocks"."""
    nxt = items[i + 1] if i + 1 < len(items) else None
    return items[i].kind == NUM and nxt is not None and (
        (nxt.kind == TIMES and nxt.text not in COUNT_WORDS) or nxt.kind == "label")


def _fold_count(text: str, items: list[Item], i: int, out: list[Item]) -> int:
    """The count at ``items[i]`` as a CNT item appended to ``out``; the index after it."""
    it = items[i]
    if it.kind == TIMES:   # "twice"; "times" alone has no number
        if it.text not in COUNT_WORDS:
            raise QueryParseError(f"'times' in {text!r} needs a number before it, e.g. "
                                  "'dog barking 3 times'")
        out.append(_count_item(text, it, COUNT_WORDS[it.text], it.end))
        return i + 1
    if items[i + 1].kind == TIMES:   # "3 times"
        out.append(_count_item(text, it, it.value, items[i + 1].end))
        return i + 2
    out.append(_count_item(text, it, it.value, it.end))   # "exactly 3 door knocks"
    return i + 1


def _count_item(text: str, it: Item, value: float, end: int) -> Item:
    """A CNT item (``value`` occurrences) from the number or count word at ``it`` to ``end``."""
    words = text[it.start:end]
    if not float(value).is_integer() or value < 1:
        what = "write 'no X' to exclude a sound" if value == 0 else "a count is a whole number"
        raise QueryParseError(f"cannot count {words!r} in {text!r}: {what}")
    return Item(CNT, words, it.start, end, value=float(value))


def _fold_one(text: str, items: list[Item], i: int, out: list[Item]) -> int:
    """The number at ``items[i]`` as a DUR item appended to ``out``; the index after it."""
    it = items[i]
    j = i + 1
    has_unit = j < len(items) and items[j].kind == UNIT
    unit = UNIT_SECONDS[items[j].text] if has_unit else 1.0
    j += has_unit
    _refuse_position_before(text, out, items[j - 1].end)
    left = _left_cues(out)
    if not has_unit and not left:
        raise QueryParseError(f"a number where a sound belongs: {it.text!r} in {text!r} "
                              "(a duration reads 'for 5 seconds')")
    after, long_cue, each = j, False, False
    while after < len(items) and items[after].kind in (DURCUE, EACH) \
            and items[after].text in ("long", "each"):
        long_cue |= items[after].text == "long"
        each |= items[after].text == "each"
        after += 1
    if not (left or long_cue):
        _refuse_position_after(text, items, after, it.start)
    of_cue = after < len(items) and items[after].kind == FILLER and items[after].text == "of"
    after += of_cue
    seconds = round(it.value * unit, 6)
    if not math.isfinite(seconds) or seconds <= 0:
        raise QueryParseError(f"duration {it.text!r} in {text!r} must be a positive, finite "
                              "number of seconds")
    end = items[after - 1].end
    cue = left or ("long" if long_cue else "of" if of_cue else "")
    out.append(Item(DUR, text[it.start:end], it.start, end,
                    dur=Duration(seconds, text[it.start:end], it.start, end, bool(left) or long_cue,
                                 of_cue and not left, each, cue)))
    return after


def _left_cues(out: list[Item]) -> str:
    """Consume the duration cue words before the number (back to the previous non-filler item):
    'lasting' when one of them is a lasting word, 'for' for "for", else ''."""
    found: set[str] = set()
    k = len(out) - 1
    while k >= 0 and out[k].kind in _DUR_SKIP:
        if out[k].kind == DURCUE:
            if out[k].text in LEFT_DUR_WORDS:
                found.add("lasting" if out[k].text in LASTING_WORDS else "for")
            out[k].kind = FILLER   # consumed by this duration
        k -= 1
    return "lasting" if "lasting" in found else "for" if found else ""


def _refuse_position_before(text: str, out: list[Item], end: int) -> None:
    """"at 5 seconds", "after 5 seconds", "the first/last 5 seconds": a point in time."""
    k = len(out) - 1
    while k >= 0 and out[k].kind == FILLER:
        if out[k].text in POSITION_BEFORE:
            _refuse_position(text, out[k].start, end)
        k -= 1
    if k < 0:
        return
    stop = out[k]
    the_last = (stop.kind == DURCUE and stop.text == "last" and k > 0
                and out[k - 1].kind == FILLER and out[k - 1].text == "the")
    if (stop.kind in (FWD, REV) and stop.text in POSITION_BEFORE) or stop.kind == FIRST \
            or the_last:
        _refuse_position(text, stop.start, end)


def _refuse_position_after(text: str, items: list[Item], after: int, start: int) -> None:
    """"5 seconds later", "B 5 seconds after A", "5 seconds in": a gap or a point in time."""
    if after >= len(items):
        return
    nxt = items[after]
    if (nxt.kind in (FWD, REV) and nxt.words[:1] and nxt.words[0] in POSITION_AFTER) \
            or (nxt.kind == FILLER and nxt.text == "in"):
        _refuse_position(text, start, nxt.end)


def _refuse_position(text: str, start: int, end: int) -> None:
    raise QueryParseError(f"cannot read {text[start:end]!r} in {text!r}: {TIME_POSITION_MSG}")


def _refuse_dangling(text: str, out: list[Item]) -> None:
    """A unit or duration word with no number ("for seconds", "rain lasting") would otherwise
    be dropped silently; "for" is also plain English ("search for rain") before a sound."""
    for k, it in enumerate(out):
        dangling = ((it.kind == UNIT and it.text != "s")
                    or (it.kind == DURCUE and it.text != "for")
                    or (it.kind == DURCUE and (k + 1 == len(out) or out[k + 1].kind != "label")))
        if dangling:   # quote the word that stands between it and its number too
            lo, hi = it.start, it.end
            if it.kind == UNIT and k > 0 and out[k - 1].kind not in ("label", CNT):
                lo = out[k - 1].start
            if it.kind == DURCUE and k + 1 < len(out) and out[k + 1].kind not in ("label", DUR):
                hi = out[k + 1].end
            raise QueryParseError(f"{text[lo:hi]!r} in {text!r} needs a number of seconds, "
                                  "e.g. 'rain for 5 seconds'")
