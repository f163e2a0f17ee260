"""Stage 4, structure and logic: mentions and their links -> one logic tree.

Sounds joined by and/while form a *group*; order words separate groups into a chain, and every
sound of a group comes before every sound of the next group ("A, then B and C overlap" =
before(A,B) & before(A,C) & overlap(B,C)). Excluded sounds stand apart. A sound named again
after "and" starts a new clause ("..., with A lasting 5 seconds"). Relations, durations and
counts become before/overlap/lasts/count; a positive sound that none of them mentions becomes
has(x); an excluded one not(has(x)). The result is checked for contradictions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

from reasonaudio.querylang.canonical import canonical, check_consistent
from reasonaudio.querylang.lexicon import AND, END, FWD, NOR, OR, ORDER, OVL, REV
from reasonaudio.logic import (And, Before, Count, Has, Lasts, Node, Not, Or,
                                           Overlap, leaf_labels)
from reasonaudio.querylang.parser.cues import Link
from reasonaudio.querylang.parser.parts import Duration, Item
from reasonaudio.querylang.resolve import FAMILY_PREFIX
from reasonaudio.errors import QueryParseError

_RELATED = frozenset({FWD, REV, OVL, "not_ovl", "not_fwd", "not_rev"})
_NOT_REL = ("not_ovl", "not_fwd", "not_rev")
_UNAMBIGUOUS_EXCLUDED = frozenset({"lasting", "long"})
_OVL_LIKE = frozenset({OVL, "not_ovl", "not_fwd", "not_rev"})
ORDER_PREPOSITIONS = frozenset({
    "before", "after", "following", "preceding", "precedes", "precede", "follows", "follow",
    "until", "till", "prior to", "earlier than", "later than", "followed by", "preceded by"})
"""Order words that relate the sound they follow to the one after them ("A after B"), unlike
the adverbs that continue a list ("then", "next", "and then"): after a first relation and
"and"/"but" ("A after B and before C") they relate the first sound, A, again."""
_PARTICIPLES = frozenset({"followed by", "preceded by", "precedes", "precede", "follows", "follow"})
"""Of those, the ones that continue a comma list ("A, followed by B, followed by C")."""
"""Duration cues that read plainly on an excluded sound: "no rain lasting 5 seconds"."""


@dataclass
class _Group:
    members: list[str] = field(default_factory=list)
    joins: set[str] = field(default_factory=set)
    relations: list[Node] = field(default_factory=list)
    pending_ovl: str = ""
    """the overlap word still to apply to the whole group ("A and B at the same time")"""
    both_from: Optional[str] = None
    """"A overlaps both B and C": A, which the next sound joined by 'and' overlaps too"""
    has_own_duration: dict[str, bool] = field(default_factory=dict)
    has_own_count: dict[str, bool] = field(default_factory=dict)
    prefix_dur: dict[str, Duration] = field(default_factory=dict)
    """member -> its duration written before it ("5 seconds of A")"""
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


class Builder:
    def __init__(self, text: str, mentions: list[Item], links: list[Link]) -> None:
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
        self.prev_negated = False
        self.prev_label: Optional[str] = None
        self.pending_prefix: Optional[str] = None
        self.extra: list[Node] = []
        """relations of a sound placed between two others ("A after B and before C")"""
        self.firsts: list[tuple[Item, str, _Chain, Item]] = []
        """(the sound, its label, its chain, the word that puts it first)"""

    def err(self, msg: str) -> QueryParseError:
        return QueryParseError(f"cannot read {self.text!r}: {msg}")

    def build(self) -> Node:
        for i, m in enumerate(self.mentions):
            self._mention(i, m)
        if self.pending_prefix:
            raise self.err("'after X' / 'before X' must be followed by the sounds it orders")
        self._apply_left_mods(self.links[len(self.mentions)], self.prev_negated)
        self._close()
        self._check_firsts()
        return self._emit()

    def _check_firsts(self) -> None:
        """"first A" / "starts with A" reads only as A before the sounds after it."""
        for m, label, chain, word in self.firsts:
            if any(d != FWD for d in chain.links):   # "first A, and before that B"
                raise self.err(f"{word.text!r} puts {m.text!r} first, but the query orders a "
                               f"sound before it; drop {word.text!r} or write the sounds in "
                               "the order they happen")
            if len(chain.groups) < 2 or label not in chain.groups[0].members:
                raise self.err(f"{word.text!r} puts {m.text!r} first, but no later sound is "
                               f"ordered after it; write '{word.text} {m.text}, then B' or "
                               f"drop {word.text!r}")

    # --- one sound ----------------------------------------------------------------------------

    def _mention(self, i: int, m: Item) -> None:
        link, after = self.links[i], self.links[i + 1]
        label = m.label.label  # type: ignore[union-attr]
        self._apply_left_mods(link, self.prev_negated)
        durs = [(d, False) for d in link.right_dur] + [(d, True) for d in after.left_dur]
        cnts = [(c, False) for c in link.right_count] + [(c, True) for c in after.left_count]
        if self._negated(i, link, self.prev_negated):
            if cnts:
                raise self.err(f"{cnts[0][0].text!r} counts the excluded sound {m.text!r}; a "
                               "count can only be asked of a sound that occurs")
            self._exclude(m, label, link, after, durs)
            self.prev_negated = True
            return
        joined = self._place(i, m, label, self._prefix_kind(link))
        assert self.group is not None and self.chain is not None
        if link.first is not None:
            self.firsts.append((m, label, self.chain, link.first))
        if link.right_ovl:
            self.group.pending_ovl = link.right_ovl
        self.positive.setdefault(label, None)
        if joined:
            durs = self._prefix_scope(m, label, durs)
        self._durations(m, label, durs)
        self._counts(m, label, cnts)
        self.prev_negated = False
        self.prev_label = label

    def _exclude(self, m: Item, label: str, link: Link, after: Link,
                 durs: list[tuple[Duration, bool]]) -> None:
        if link.kind in _RELATED or link.right_ovl:
            raise self.err(f"{link.text!r} relates {m.text!r} to another sound, but "
                           f"{m.text!r} is excluded; order and overlap need sounds that occur")
        if after.kind in _RELATED:
            raise self.err(f"{after.text!r} after the excluded sound {m.text!r}: order "
                           "and overlap need sounds that occur")
        if len(durs) > 1:
            raise self.err(f"two durations for {m.text!r}")
        if not durs:
            self.negated.append(Not(Has(label)))
            return
        d, suffix = durs[0]
        if d.cue not in _UNAMBIGUOUS_EXCLUDED and (suffix or d.cue):
            raise self.err(f"ambiguous: {d.text!r} with the excluded {m.text!r} can mean no "
                           f"{m.text} at all, or no {m.text} of that length; write 'no "
                           f"{m.text}' to exclude it, or 'no {m.text} lasting {d.seconds:g} "
                           f"seconds' to exclude only a {m.text} of that length")
        self.negated.append(Not(Lasts(label, d.seconds)))

    def _prefix_kind(self, link: Link) -> str:
        """The link's kind, with a pending "after A," / "before A," clause applied."""
        kind = link.kind
        if self.pending_prefix and kind == AND and not link.and_word and link.comma:
            kind = self.pending_prefix           # "after A, B": the comma closes "after A"
            self.pending_prefix = None
        elif self.pending_prefix and kind not in ("start", "clause", AND):
            word = "after" if self.pending_prefix == FWD else "before"
            raise self.err(f"'{word} X' must be followed by a comma and the sounds it "
                           f"orders ('{word} A, B')")
        if link.prefix_seq:
            if self.pending_prefix:
                raise self.err("two 'after'/'before' clauses in a row are unclear")
            self.pending_prefix = link.prefix_seq
        return kind

    def _place(self, i: int, m: Item, label: str, kind: str) -> bool:
        """Put the sound into the chain by its link; True when it joined the current group."""
        if kind in ("start", "clause") or self.group is None or self.chain is None:
            self._new_chain(label)
        elif kind == AND and (label in self.chain.labels() or self.prev_negated):
            # a sound named again ("..., with A lasting 5 s"), or the first present sound
            # after an excluded one, starts a new clause
            self._new_chain(label)
        elif kind in (AND, OR, OVL) or kind in _NOT_REL:
            if kind == AND:
                self._and_after_relation(i, m, label)
            self._relate(label, kind)
            if kind == OVL and self.links[i].both:
                self.group.both_from = self.prev_label
            return True
        elif kind == NOR:
            raise self.err(f"'nor' before {m.text!r} needs 'neither' before the first sound")
        elif kind in (FWD, REV) and self._between(i, m, label, kind):
            self._new_chain(label)
        elif kind in (FWD, REV):
            self._check_order_scope(i, self.links[i])
            self._check_direction(i, m, kind)
            self._close()
            self.group = _Group([label])
            self.chain.groups.append(self.group)
            self.chain.links.append(kind)
        else:  # pragma: no cover
            raise AssertionError(kind)
        return False

    def _between(self, i: int, m: Item, label: str, kind: str) -> bool:
        """"A after B and before C", "A before B but after C": a sound placed between two
        others. The second order word relates A (not B) to C; True when it did (the relation
        is kept in ``extra``). With only a comma between ("A after B, before C") the two
        readings differ, so ask."""
        link, prev = self.links[i], self.links[i - 1] if i >= 1 else None
        if prev is None or i < 2 or prev.kind not in (FWD, REV, OVL) \
                or link.linker_word not in ORDER_PREPOSITIONS:
            return False
        subject = self.mentions[i - 2]
        s_label = subject.label.label  # type: ignore[union-attr]
        word = link.linker_word
        if not (link.and_word or link.but):
            if {prev.linker_word, word} & _PARTICIPLES or prev.linker_word not in ORDER_PREPOSITIONS:
                return False
            raise self.err(f"ambiguous: does {word!r} {m.text!r} order {subject.text!r} or "
                           f"{self.mentions[i - 1].text!r}? write '{subject.text} "
                           f"{prev.linker_word} {self.mentions[i - 1].text} and {word} "
                           f"{m.text}' for {subject.text!r}, or '{self.mentions[i - 1].text} "
                           f"{word} {m.text}' as a sentence of its own")
        assert self.chain is not None and self.group is not None
        groups = self.chain.groups
        single = (len(groups) >= 2 and groups[-2].members == [s_label]
                  and len(self.group.members) == 1) if prev.kind != OVL else \
            self.group.members[-2:-1] == [s_label]
        if not single:
            raise self.err(f"cannot tell which sound {word!r} {m.text!r} orders; relate one "
                           f"sound at a time ('A after B and before C')")
        self.extra.append(Before(s_label, label) if kind == FWD else Before(label, s_label))
        self.notes.append(f"{link.text!r} {m.text!r} -> relates {subject.text!r}")
        return True

    def _and_after_relation(self, i: int, m: Item, label: str) -> None:
        """"A overlaps both B and C" relates A to C too; "A during B and C" (no 'both', no
        comma) has two readings, as "A and B after C" has, so it is refused."""
        assert self.group is not None
        g, link = self.group, self.links[i]
        if g.both_from is not None:
            g.relations.append(Overlap(g.both_from, label))
            g.both_from = None
            return
        prev = self.links[i - 1] if i >= 1 else None
        nxt = self.links[i + 1]
        if prev is None or prev.kind not in _OVL_LIKE or not link.and_word or link.comma \
                or link.neg_right or nxt.kind in _RELATED or nxt.left_mods:
            return
        a, b = self.mentions[i - 2].text, self.mentions[i - 1].text
        word = prev.text
        raise self.err(f"ambiguous: does {word!r} relate {a!r} to {m.text!r} too, or only to "
                       f"{b!r}? write '{a} {word} both {b} and {m.text}' for both, or "
                       f"'{m.text}, and {a} {word} {b}' for {b!r} only")

    def _relate(self, label: str, kind: str) -> None:
        """Join the group by and/or, or by a relation to the sound before."""
        assert self.group is not None
        prev = self.prev_label
        self._join(label, AND if kind in _NOT_REL else kind)
        if kind == OVL:
            assert prev is not None
            self.group.relations.append(Overlap(prev, label))
        elif kind in _NOT_REL:
            assert prev is not None
            rel = {"not_ovl": Overlap(prev, label), "not_fwd": Before(prev, label),
                   "not_rev": Before(label, prev)}[kind]
            self.group.relations.append(Not(rel))

    # --- groups ---------------------------------------------------------------------------------

    def _new_chain(self, label: str) -> None:
        self._close()
        self.chain = _Chain()
        self.chains.append(self.chain)
        self.group = _Group([label])
        self.chain.groups.append(self.group)

    def _close(self) -> None:
        g = self.group
        if g is not None and g.pending_ovl:
            word, g.pending_ovl = g.pending_ovl, ""
            self._group_overlap(g, word, negate=False)

    def _group_overlap(self, g: _Group, word: str, negate: bool) -> None:
        if len(g.members) < 2:
            raise self.err(f"{word!r} needs two sounds, but only {g.members[0]!r} comes before it")
        if OR in g.joins:
            raise self.err(f"{word!r} after sounds joined by 'or' is ambiguous")
        for a, b in _pairs(g.members):
            g.relations.append(Not(Overlap(a, b)) if negate else Overlap(a, b))

    def _apply_left_mods(self, link: Link, prev_negated: bool) -> None:
        for kind, item in link.left_mods:
            if kind == END:
                # "A at the beginning and B at the end": B must already be last in a chain
                if prev_negated or self.chain is None or len(self.chain.groups) < 2:
                    raise self.err(f"{item.text!r} needs an earlier sound it comes after: "
                                   f"'A at the beginning and B {item.text}' or 'A, then B'")
                continue
            if prev_negated or self.group is None:
                raise self.err(f"{item.text!r} must follow sounds that are present, not "
                               "excluded ones")
            if kind == ORDER:
                self._list_order(self.group, item)
            else:
                self._group_overlap(self.group, ("not " if kind == "not_ovl" else "") + item.text,
                                    negate=kind == "not_ovl")

    def _list_order(self, g: _Group, item: Item) -> None:
        """"A, B and C, in that order"."""
        if len(g.members) < 2 or g.joins - {AND}:
            raise self.err(f"{item.text!r} needs a list of sounds joined by 'and'")
        for a, b in zip(g.members, g.members[1:]):
            g.relations.append(Before(a, b))

    def _check_order_scope(self, i: int, link: Link) -> None:
        """"A and B then C", "A, and B then C" (no comma before the order word): does the order
        word take the group (both before C) or only B? Two readings select different clips, so
        ask; a comma before the order word ("A and B, then C") means the group."""
        prev = self.links[i - 1] if i >= 1 else None
        g = self.group
        if link.comma or prev is None or g is None or len(g.members) < 2 or g.pending_ovl:
            return
        if prev.kind not in (AND, OVL):
            return
        a, b, c = (self.mentions[i - 2].text, self.mentions[i - 1].text, self.mentions[i].text)
        word = link.text or "then"
        raise self.err(f"ambiguous: does {word!r} {c!r} apply to both {a!r} and {b!r}, or "
                       f"only to {b!r}? write '{a} and {b}, {word} {c}' for both, or "
                       f"'{a}. {b} {word} {c}' for {b!r} only")

    def _check_direction(self, i: int, m: Item, kind: str) -> None:
        """An order word that continues a chain against its direction ("A after B, then C", "A,
        then B, and before that C"): it orders C against B, the sound named last, but B is not
        the chain's end in time, so where C falls against A has two readings. Ask for the
        sounds in one direction."""
        chain = self.chain
        if chain is None or all(d == kind for d in chain.links):
            return
        word = self.links[i].linker_word or "then"
        *others, last = [x.text for x in self.mentions[:i]]
        raise self.err(f"ambiguous: {word!r} orders {m.text!r} against {last!r} only, and "
                       f"{last!r} is not the end of the order so far, so where {m.text!r} falls "
                       f"against {', '.join(repr(x) for x in others)} is unsaid; write the "
                       "sounds in the order they happen ('A, then B, then C')")

    def _join(self, label: str, how: str) -> None:
        assert self.group is not None
        g = self.group
        if how == OR and (g.joins - {OR}) or how != OR and OR in g.joins:
            raise self.err("mixing 'and' and 'or' is ambiguous; split the query or use one of them")
        g.members.append(label)
        g.joins.add(how)
        g.how.setdefault(label, how)

    # --- exclusion scope --------------------------------------------------------------------------

    def _negated(self, i: int, link: Link, prev_negated: bool) -> bool:
        if link.neg_right:
            return True
        if not prev_negated or link.kind not in (OR, NOR, AND):
            return False
        if link.kind in (OR, NOR):
            return True
        if link.but:
            return False
        prev, cur = self.mentions[i - 1].text, self.mentions[i].text
        if link.and_word and not link.comma:
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
        raise self.err(f"ambiguous: is {cur!r} excluded like {prev!r}? write "
                       f"'no {prev} or {cur}' or 'no {prev}, but {cur}'")

    # --- durations --------------------------------------------------------------------------------

    def _prefix_scope(self, m: Item, label: str,
                      durs: list[tuple[Duration, bool]]) -> list[tuple[Duration, bool]]:
        """"5 seconds of A and B": does the duration written before A reach B? Ask, as for
        "A and B for 5 seconds"; with 'each' it does."""
        assert self.group is not None
        g = self.group
        prev = g.members[-2]
        d = g.prefix_dur.get(prev)
        if d is None or durs:
            return durs
        if d.each:
            return [(d, False)]
        other = next(x.text for x in self.mentions  # type: ignore[union-attr]
                     if x.label.label == prev)
        joiner = {OVL: "while", OR: "or"}.get(g.how.get(label, AND), "and")
        raise self.err(f"ambiguous: does {d.text!r} apply to {other!r} only, or also to "
                       f"{m.text!r}? write '{other} for {d.seconds:g} seconds {joiner} "
                       f"{m.text}' for {other!r} only, or '{other} {joiner} {m.text} for "
                       f"{d.seconds:g} seconds each' for both")

    def _one_beside(self, m: Item, label: str, found: list[tuple[Any, bool]], what: str,
                    own: dict[str, bool]) -> Optional[tuple[Any, bool]]:
        """The one duration or count beside a sound, and whether it stands after the sound (two
        are an error); records in ``own`` whether the sound has its own."""
        if len(found) > 1:
            raise self.err(f"two {what} for {m.text!r}: "
                           + " and ".join(repr(x.text) for x, _ in found))
        own.setdefault(label, bool(found))
        if not found:
            return None
        own[label] = True
        return found[0]

    def _other_without(self, own: dict[str, bool]) -> Optional[str]:
        """How the last earlier member of the group without its own duration or count was
        written (None when every one has its own)."""
        assert self.group is not None
        others = [x for x in self.group.members[:-1] if not own.get(x, False)]
        if not others:
            return None
        return next(x.text for x in self.mentions  # type: ignore[union-attr]
                    if x.label.label == others[-1])

    def _closes_group(self, label: str) -> bool:
        """Whether ``label`` is the last of a group of two or more sounds."""
        assert self.group is not None
        return len(self.group.members) > 1 and self.group.members[-1] == label

    def _durations(self, m: Item, label: str, durs: list[tuple[Duration, bool]]) -> None:
        assert self.group is not None
        g = self.group
        got = self._one_beside(m, label, durs, "durations", g.has_own_duration)
        if got is None:
            return
        d, left = got
        if not left:
            g.prefix_dur[label] = d
        targets = [label]
        if left and self._closes_group(label):
            targets = self._suffix_scope(m, label, d)
        for t in targets:
            self.lasts.append(Lasts(t, d.seconds))
            self.notes.append(f"{d.text!r} -> lasts({t}, {d.seconds:g}s)")

    def _suffix_scope(self, m: Item, label: str, d: Duration) -> list[str]:
        """"A and B for 5 seconds": B only, or both? Ask, unless 'each' or A has its own."""
        g = self.group
        assert g is not None
        if d.each:
            return list(g.members)
        other = self._other_without(g.has_own_duration)
        if other is None:
            return [label]
        joiner = {OVL: "while", OR: "or"}.get(g.how.get(label, AND), "and")
        raise self.err(
            f"ambiguous: does {d.text!r} apply to {m.text!r} only, or also to "
            f"{other!r}? name the sound with its duration first ('{m.text} for "
            f"{d.seconds:g} seconds {joiner} {other}') or add 'each'")

    def _counts(self, m: Item, label: str, cnts: list[tuple[Item, bool]]) -> None:
        """count(label, n) from the count beside the sound; a count after a group of sounds
        ("A and B twice") is ambiguous unless the others have their own."""
        assert self.group is not None
        own = self.group.has_own_count
        got = self._one_beside(m, label, cnts, "counts", own)
        if got is None:
            return
        c, left = got
        if label.startswith(FAMILY_PREFIX):   # "two people speaking": one man and one woman?
            raise self.err(f"cannot count {m.text!r}: it names several labels, and a count is "
                           "of one label; name the label or drop the count")
        other = self._other_without(own) if left and self._closes_group(label) else None
        if other is not None:
            raise self.err(f"ambiguous: does {c.text!r} count {m.text!r} only, or also "
                           f"{other!r}? write '{m.text} {c.text} and {other}', or give "
                           "each sound its own count")
        n = int(c.value)
        self.counts.append(Count(label, n))
        self.notes.append(f"{c.text!r} -> count({label}, {n})")

    # --- the logic ----------------------------------------------------------------------------

    def _emit(self) -> Node:
        befores, relations, ors = self._relations()
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

    def _relations(self) -> tuple[list[Node], list[Node], list[Node]]:
        """(befores between neighbouring groups, relations inside groups, or-groups)."""
        befores: list[Node] = list(self.extra)
        relations: list[Node] = []
        ors: list[Node] = []
        for chain in self.chains:
            for g in chain.groups:
                if OR in g.joins:
                    ors.append(self._or_group(chain, g))
                relations += g.relations
            for k, direction in enumerate(chain.links):
                for a in chain.groups[k].members:
                    for b in chain.groups[k + 1].members:
                        befores.append(Before(a, b) if direction == FWD else Before(b, a))
        for rel in befores + relations:
            inner = rel.arg if isinstance(rel, Not) else rel
            if isinstance(inner, (Before, Overlap)) and inner.a == inner.b:
                word = "come before" if isinstance(inner, Before) else "overlap"
                raise self.err(f"{inner.a!r} cannot {word} itself (to ask for a sound more "
                               f"than once, count it: '{inner.a} twice')")
        return befores, relations, ors

    def _or_group(self, chain: _Chain, g: _Group) -> Node:
        if len(chain.groups) > 1 or g.relations or any(
                x in g.members for r in self.lasts + self.counts for x in leaf_labels(r)):
            raise self.err("'or' combined with order, overlap, duration or count is not "
                           "supported; 'or' can only join plain sounds")
        return Or(tuple(Has(x) for x in g.members))


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
