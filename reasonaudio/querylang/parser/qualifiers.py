"""Stage 1b, qualifiers: words that only mean something next to the word they qualify.

"about", "almost", "exactly" qualify a number ("about 5 seconds", "exactly 3 door knocks");
"continuously" a duration ("continuously for 10 seconds"); "both" two sounds joined by "and"
("both A and B", "A overlaps both B and C"); "either" two sounds joined by "or". Anywhere else
such a word would change the meaning without being read ("almost no dog", "siren
continuously"), so it is refused, naming it: every word either carries into the logic or is
named in the refusal.
"""

from __future__ import annotations

from reasonaudio.querylang.lexicon import (AND, BOTH, COMMA, CONTINUITY, FILLER, HEDGES, NUM, OR,
                                             TIMES)
from reasonaudio.querylang.parser.parts import Item
from reasonaudio.errors import QueryParseError

_NUMBERISH = frozenset({NUM, TIMES})


def check_qualifiers(text: str, items: list[Item]) -> None:
    """Refuse a hedge away from a number, a continuity word away from a duration, and
    'both'/'either' not followed by two sounds joined by and/or."""
    labels = [k for k, it in enumerate(items) if it.kind == "label"]
    for k, it in enumerate(items):
        if it.kind == FILLER and it.text in HEDGES and _next(items, k) not in _NUMBERISH:
            _refuse(text, it, f"{it.text!r} qualifies a number ('{it.text} 5 seconds'); "
                              "elsewhere the logic cannot say it")
        elif it.kind == FILLER and it.text in CONTINUITY and not _near_duration(items, labels, k):
            _refuse(text, it, f"{it.text!r} needs a length ('{it.text} for 10 seconds'); "
                              "without one the logic cannot say it")
        elif (it.kind == BOTH or (it.kind == FILLER and it.text == "either")) \
                and not _pair_follows(items, k, AND if it.kind == BOTH else OR):
            joiner = "and" if it.kind == BOTH else "or"
            _refuse(text, it, f"{it.text!r} needs two sounds after it: "
                              f"'{it.text} A {joiner} B'")


def _next(items: list[Item], k: int) -> str:
    """The kind of the first item after ``k`` that is not a filler or a bracket/comma."""
    for it in items[k + 1:]:
        if it.kind not in (FILLER, COMMA):
            return it.kind
    return ""


def _near_duration(items: list[Item], labels: list[int], k: int) -> bool:
    """A number in the word's own stretch between two sounds, or in the stretch on the far
    side of the sound it stands next to ("continuous rain for 5 s")."""
    before = [x for x in labels if x < k]
    after = [x for x in labels if x > k]
    lo = before[-1] if before else -1
    hi = after[0] if after else len(items)
    stretches = [(lo, hi)]
    if after:
        stretches.append((hi, after[1] if len(after) > 1 else len(items)))
    if before:
        stretches.append((before[-2] if len(before) > 1 else -1, lo))
    return any(items[j].kind == NUM for a, b in stretches for j in range(a + 1, b))


def _pair_follows(items: list[Item], k: int, joiner: str) -> bool:
    """A sound right after ``k`` (fillers aside), then ``joiner``."""
    j = k + 1
    while j < len(items) and items[j].kind == FILLER:
        j += 1
    if j >= len(items) or items[j].kind != "label":
        return False
    return _next(items, j) == joiner


def _refuse(text: str, it: Item, why: str) -> None:
    raise QueryParseError(f"cannot read {it.text!r} in {text!r}: {why}")
