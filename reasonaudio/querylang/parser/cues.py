"""Stage 3, cues: the words between two sounds read as one connective (a :class:`Link`).

``and``/``with``/a comma (both present), ``or``, ``then``/``followed by``/``before`` (order),
``after``/``follows`` (reversed order), ``while``/``overlapping``/``during`` (overlap),
``no``/``without``/``excluding``/``not`` (the next sound is excluded), plus durations and counts:
"for N seconds" and "twice" belong to the sound before the connective, "N seconds of X" and
"two X" to the sound after it. An
overlap word followed by another connective ("A and B overlap, then C") or ending the text ("A
and B at the same time") applies to the group of sounds before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from reasonaudio.querylang.lexicon import (AND, BACK_REFERENCE_PHRASES, BACK_REFERENCE_WORDS,
                                             BEGIN, BOTH, CNT, COMMA, DUR, EACH, END, FIRST, FWD,
                                             NEG, NOR, OR, ORDER, OVL, PREFIX_SEQ_WORDS, REV, STOP)
from reasonaudio.querylang.parser.parts import Duration, Item
from reasonaudio.errors import QueryParseError

_LINKERS = frozenset({FWD, REV, AND, OR, NOR, NEG, STOP})
_RELATIONS = frozenset({FWD, REV, OVL})


@dataclass
class Link:
    """How a sound connects to the one before it (or to the text start / end)."""
    kind: str
    """start | end | and | or | nor | ovl | fwd | rev | not_ovl | not_fwd | not_rev | clause"""
    text: str
    neg_right: bool = False
    left_mods: list[tuple[str, Item]] = field(default_factory=list)
    right_ovl: str = ""
    """the overlap word that applies to the group this sound joins ("while A, B")"""
    left_dur: list[Duration] = field(default_factory=list)
    right_dur: list[Duration] = field(default_factory=list)
    left_count: list[Item] = field(default_factory=list)
    right_count: list[Item] = field(default_factory=list)
    comma: bool = False
    and_word: bool = False
    but: bool = False
    prefix_seq: Optional[str] = None
    prefix_word: str = ""
    """the word of ``prefix_seq`` as written ("after" in "after A, B")"""
    both: bool = False
    """'both' stands before the sound: "A overlaps both B and C" relates A to C too"""
    first: Optional[Item] = None
    """"first A" / "starts with A": the word that puts the next sound first"""
    linker_word: str = ""
    """the connective's words as written ("before", "followed by", "then")"""


def classify(text: str, span: list[Item], left: Optional[Item], right: Optional[Item],
             opened: str = "") -> Link:
    """The connective of the items ``span`` between the sounds ``left`` and ``right`` (None at
    the text start / end); ``opened``: the order word that opened the clause ``left`` is in
    ("after" in "after A, B"), for the error when no comma closes it."""
    return _Classifier(text, span, left, right, opened).run()


def _points_back(c: Item) -> bool:
    """Whether an order word points back at the sound before it ("before that", "earlier")."""
    return tuple(c.words) in BACK_REFERENCE_PHRASES or c.text in BACK_REFERENCE_WORDS


def _prefix_direction(c: Item) -> str:
    """"after A, B" orders A first (fwd); "before A, B" orders B first (rev)."""
    return FWD if c.kind == REV else REV


class _Classifier:
    def __init__(self, text: str, span: list[Item], left: Optional[Item],
                 right: Optional[Item], opened: str = "") -> None:
        self.text, self.span, self.left, self.right = text, span, left, right
        self.opened = opened
        self.at_start, self.at_end = left is None, right is None
        lo = left.end if left else 0
        hi = right.start if right else len(text)
        self.where = text[lo:hi].strip()
        link = Link("start" if self.at_start else "end" if self.at_end else "", self.where)
        link.comma = any(it.kind in (COMMA, STOP) for it in span)
        link.and_word = any(it.kind == AND and it.text != "but" for it in span)
        link.but = any(it.kind == AND and it.text == "but" for it in span) or any(
            it.kind == NEG and it.words[:1] == ("but",) for it in span)
        link.both = any(it.kind == BOTH for it in span)
        self.link = link
        self.linker: Optional[Item] = None
        self.linker_kind = ""
        self.firsts: list[tuple[bool, Item]] = []   # (after linker?, item)

    def err(self, msg: str) -> QueryParseError:
        left, right = self.left, self.right
        between = (f"between {left.text!r} and {right.text!r}" if left and right
                   else f"before {right.text!r}" if right else f"after {left.text!r}")
        what = repr(self.where) if self.where else "the gap"
        return QueryParseError(f"cannot read {what} {between} in {self.text!r}: {msg}")

    def run(self) -> Link:
        cues = self._cues()
        k = 0
        while k < len(cues):
            c, rest = cues[k], cues[k + 1:]
            if self.linker is None:
                k += _FIRST_CUE.get(c.kind, _Classifier._unexpected)(self, c, rest)
            else:
                self._more_cue(c)
                k += 1
        self._finish()
        self._place_beside()
        return self.link

    def _set(self, c: Item, kind: str) -> None:
        self.linker, self.linker_kind = c, kind
        self.link.linker_word = c.text

    # --- the cue words, without the joiners that only glue cues together -----------------------

    def _cues(self) -> list[Item]:
        """Drop joiners that only glue cues: "overlapping with", "and then", "but no"."""
        cues: list[Item] = []
        comma_since = False
        for it in self.span:
            if it.kind in (COMMA, DUR, CNT, BOTH):
                comma_since |= it.kind == COMMA
                continue
            glued, comma_since = not comma_since, False
            last = cues[-1] if cues else None
            if last is not None and last.kind == AND and it.kind == AND:
                continue
            if it.kind == AND and glued and last is not None and last.kind == OVL \
                    and it.text in ("with", "as"):
                continue
            if it.kind in (FWD, REV, OVL, NEG, NOR, OR, STOP) and last is not None \
                    and last.kind == AND:
                cues.pop()
                if last.text == "together with" and it.kind == NEG:
                    # "A and B together with no C": 'together' is the overlap of A and B
                    cues.append(Item(OVL, "together", last.start, last.start + 8))
                    glued = False
            if it.kind == NEG and glued and cues and cues[-1].kind in _RELATIONS:
                raise QueryParseError(
                    f"cannot read '{cues[-1].text} {it.text}' in {self.text!r}: order and "
                    f"overlap need sounds that occur; to exclude a sound write 'A but no X'")
            cues.append(it)
        return cues

    # --- the first cue word that says how the sounds connect ---------------------------------

    def _first_ovl(self, c: Item, rest: list[Item]) -> int:
        if self.at_end or any(x.kind in _LINKERS for x in rest):
            self.link.left_mods.append((OVL, c))
        elif self.at_start:
            self.link.right_ovl = c.text
        else:
            self._set(c, OVL)
        return 1

    def _first_neg(self, c: Item, rest: list[Item]) -> int:
        if rest and rest[0].kind in _RELATIONS:   # "not at the same time", "not before"
            nxt = rest[0]
            if nxt.kind == OVL and (self.at_end or any(x.kind in _LINKERS for x in rest[1:])):
                self.link.left_mods.append(("not_ovl", c))
            elif self.at_start or self.at_end:
                raise self.err(f"'{c.text} {nxt.text}' needs a sound on each side")
            else:
                self._set(c, "not_" + nxt.kind)
            return 2
        if self.at_end:
            raise self.err(f"{c.text!r} must come before the sound it excludes ('but no X')")
        self.link.neg_right = True
        self._set(c, "start" if self.at_start else AND)
        return 1

    def _first_order(self, c: Item, rest: list[Item]) -> int:
        if self.at_start and _points_back(c):
            raise self.err(f"{c.text!r} points back at an earlier sound, but none comes before "
                           f"it; name that sound first ('A, and {c.text} B')")
        if self.at_start:
            if c.text not in PREFIX_SEQ_WORDS:
                raise self.err(f"nothing comes before {c.text!r}")
            self.link.prefix_seq, self.link.prefix_word = _prefix_direction(c), c.text
        elif self.at_end:
            raise self.err(f"nothing follows {c.text!r}; it stands before the sound it orders "
                           f"('A, {c.text} B')")
        else:
            self._set(c, c.kind)
        return 1

    def _first_joiner(self, c: Item, rest: list[Item]) -> int:
        if self.at_start:
            if c.kind == NOR:
                raise self.err("'nor' needs 'neither' before it")
            if c.kind == OR:
                raise self.err(f"{c.text!r} needs a sound before it ('A or B')")
        elif self.at_end:
            raise self.err(f"{c.text!r} at the end needs a sound after it")
        else:
            self._set(c, c.kind)
        return 1

    def _first_stop(self, c: Item, rest: list[Item]) -> int:
        if not (self.at_start or self.at_end):
            self._set(c, "clause")
        return 1

    def _first_list_order(self, c: Item, rest: list[Item]) -> int:
        if self.at_start:
            raise self.err(f"{c.text!r} must follow the sounds it orders")
        self.link.left_mods.append((ORDER, c))
        return 1

    def _first_each(self, c: Item, rest: list[Item]) -> int:
        raise self.err(f"{c.text!r} needs a duration or count to share out ('A and B for 5 "
                       f"seconds {c.text}')")

    def _first_first(self, c: Item, rest: list[Item]) -> int:
        self.firsts.append((False, c))
        return 1

    def _first_begin(self, c: Item, rest: list[Item]) -> int:
        if self.at_end:
            raise self.err(f"{c.text!r} needs a later sound: 'A {c.text}, then B'")
        if self.at_start:
            self.firsts.append((False, c))
        else:   # "A at the beginning and B (at the end)": A comes first
            self._set(c, FWD)
        return 1

    def _first_end(self, c: Item, rest: list[Item]) -> int:
        if not self.at_end:
            raise self.err(f"{c.text!r} can only close the query ('A at the beginning and "
                           f"B {c.text}')")
        self.link.left_mods.append((END, c))
        return 1

    def _unexpected(self, c: Item, rest: list[Item]) -> int:  # pragma: no cover
        raise self.err(f"unexpected {c.text!r}")

    # --- a cue word after the connective -------------------------------------------------------

    def _more_cue(self, c: Item) -> None:
        linker, kind, link = self.linker, self.linker_kind, self.link
        assert linker is not None
        if c.kind == NEG:
            if linker.kind == NEG:
                raise self.err(f"double negation '{linker.text} {c.text}': write the sound "
                               "plainly to require it, or one 'no' to exclude it")
            if kind == OR:
                raise self.err("'or' with an excluded sound ('A or no B') is not supported; "
                               "'or' can only join plain sounds")
            link.neg_right = True
        elif c.kind == OVL:
            link.right_ovl = c.text
        elif c.kind == FIRST:
            self.firsts.append((True, c))
        elif c.kind in (FWD, REV) and kind == "clause" and not link.prefix_seq:
            if c.text in PREFIX_SEQ_WORDS:   # "A. After B, C": a new clause, ordered
                link.prefix_seq, link.prefix_word = _prefix_direction(c), c.text
            else:                            # "A. Then B": the chain goes on
                self._set(c, c.kind)
        elif c.kind == END and self.at_end:
            link.left_mods.append((END, c))
        elif not self._repeats(c, kind):
            raise self.err(f"{linker.text!r} and {c.text!r} contradict each other or are unclear")

    @staticmethod
    def _repeats(c: Item, kind: str) -> bool:
        """Cue words that add nothing after the connective: "then, and B", "and then
        transitions to B" (one order, said twice), a full stop."""
        return ((c.kind == AND and kind in (FWD, REV, OVL, "clause"))
                or (c.kind == kind and c.kind in (FWD, REV))
                or c.kind == STOP)

    # --- what the link is, and which durations and counts go left and right -------------------

    def _finish(self) -> None:
        link = self.link
        if self.linker is None and not (self.at_start or self.at_end):
            if not link.comma and self.opened:
                left, right = self.left.text, self.right.text  # type: ignore[union-attr]
                raise self.err(f"'{self.opened} {left}' needs a comma before the sounds it "
                               f"orders: '{self.opened} {left}, {right}'")
            if not link.comma:
                raise self.err(f"no connecting word between {self.left.text!r} and "  # type: ignore[union-attr]
                               f"{self.right.text!r}; join them with 'and', 'then', "  # type: ignore[union-attr]
                               "'while' or 'but no'")
            self.linker_kind = AND   # "A, B and C"
        if not link.kind:
            link.kind = self.linker_kind
        if self.at_start and link.neg_right:
            link.kind = "start"
        # first ... then: only at the start, after a full stop, or before a forward order word
        for after_linker, c in self.firsts:
            ok = (self.at_start or (after_linker and self.linker_kind == "clause")
                  or (not after_linker and self.linker_kind == FWD))
            if not ok:
                raise self.err(f"cannot tell what {c.text!r} refers to; write 'first A, then B'")
            if self.at_start or after_linker:
                self.link.first = c
            elif c.words[-1:] == ("with",):
                raise self.err(f"{c.text!r} needs the sound it starts with right after it")

    def _place_beside(self) -> None:
        """Durations and counts left of the connective belong to the sound before, right of it
        to the next."""
        link = self.link
        pivot = None
        if self.linker is not None:
            pivot = self.linker.start
        elif not (self.at_start or self.at_end):
            pivot = next(it.start for it in self.span if it.kind in (COMMA, STOP))
        for it in self.span:
            if it.kind not in (DUR, CNT):
                continue
            left = self.at_end or (not self.at_start and it.start < pivot)  # type: ignore[operator]
            if it.kind == CNT:
                (link.left_count if left else link.right_count).append(it)
                continue
            d = it.dur
            assert d is not None
            if left and d.of_cue:
                raise self.err(f"{d.text!r} has no sound after it")
            (link.left_dur if left else link.right_dur).append(d)


_FIRST_CUE: dict[str, Callable[[_Classifier, Item, list[Item]], int]] = {
    OVL: _Classifier._first_ovl, NEG: _Classifier._first_neg, FWD: _Classifier._first_order,
    REV: _Classifier._first_order, AND: _Classifier._first_joiner, OR: _Classifier._first_joiner,
    NOR: _Classifier._first_joiner, STOP: _Classifier._first_stop,
    ORDER: _Classifier._first_list_order, EACH: _Classifier._first_each,
    FIRST: _Classifier._first_first, BEGIN: _Classifier._first_begin, END: _Classifier._first_end}
"""The first cue word of a connective, by kind -> how it is read (how many cue words it took)."""
