"""Query generator: logic per task plus a planted minimal pair of clips for every query.

For each query the generator composes one clip that satisfies it and one *hard negative* that
contains every sound the query mentions but breaks exactly one constraint (order reversed, overlap
removed, the excluded sound added, the duration moved out of tolerance). That guarantees every
query a relevant clip and a hard negative, and gives ``choices.jsonl`` its pair.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from reasonaudio.constraints.logic import And, Before, Has, Lasts, Node, Not, Overlap
from reasonaudio.dataset.clip import Clip
from reasonaudio.ingest.compose import DURATION_TARGETS, Block, Composer, Item

MIX_SHAPES = ("m1", "m2", "m3", "m4", "m5")
"""m1 lasts(A,N) & before(A,B); m2 before(A,B) & !has(C); m3 overlap(A,B) & lasts(A,N);
m4 before(A,B) & before(A,C) & overlap(B,C); m5 (the paper's) lasts(A,N) & before(A,B) &
before(B,C) & before(B,D) & overlap(C,D)."""


@dataclass
class PlantedQuery:
    task: str
    shape: str
    logic: Node
    positive: Clip
    negative: Clip
    violation: str
    """what the hard negative breaks, e.g. ``order reversed``"""


def _distractors(c: Composer, exclude: set[str], least: int, room: int) -> list[Block]:
    """``least``..``room`` single-event blocks of labels the query does not mention."""
    if room <= 0:
        return []
    n = c.rng.randint(min(max(least, 0), room), room)
    pool = [lab for lab in c.bank.labels if lab not in exclude]
    return [Block([c.item(lab)]) for lab in c.rng.sample(pool, min(n, len(pool)))]


def _interleave(c: Composer, core: list[Block], extra: list[Block]) -> list[Block]:
    """Insert distractor blocks at random positions, keeping the core blocks' order."""
    out = list(core)
    for block in extra:
        out.insert(c.rng.randint(0, len(out)), block)
    return out


def _copy(block: Block) -> Block:
    return Block([Item(it.label, it.atom_id, it.dur_ms, it.fixed, it.gain_db) for it in block.items],
                 block.overlap_ms)


def _mode(blocks: list[Block]) -> str:
    return "overlap" if any(len(b.items) == 2 for b in blocks) else "sequential"


class QueryPlanter:
    """Draws the labels, logic and minimal pair for one query of a task."""

    def __init__(self, composer: Composer) -> None:
        self.c = composer
        self.rng: random.Random = composer.rng
        self.max_events = composer.params.max_events

    def plant(self, task: str) -> PlantedQuery:
        shape = self.rng.choice(MIX_SHAPES) if task == "mix" else task
        builder: Callable[[], PlantedQuery] = getattr(self, f"_{shape}")
        return builder()

    # helpers
    def _labels(self, k: int) -> list[str]:
        return self.rng.sample(self.c.bank.labels, k)

    def _n(self) -> int:
        return self.rng.choice(DURATION_TARGETS)

    def _finish(self, task: str, shape: str, logic: Node, pos: list[Block], neg: list[Block],
                mentioned: set[str], violation: str) -> PlantedQuery:
        sizes = [sum(len(b.items) for b in blocks) for blocks in (pos, neg)]
        least = self.c.params.min_events - min(sizes)
        extra = _distractors(self.c, mentioned, least, self.max_events - max(sizes))
        # The same distractors, at the same places, in both clips: a true minimal pair.
        state = self.rng.getstate()
        pos_blocks = _interleave(self.c, pos, [_copy(b) for b in extra])
        self.rng.setstate(state)
        neg_blocks = _interleave(self.c, neg, [_copy(b) for b in extra])
        positive = self.c.place(pos_blocks, _mode(pos_blocks))
        negative = self.c.place(neg_blocks, _mode(neg_blocks))
        return PlantedQuery(task, shape, logic, positive, negative, violation)

    def _seq_or_pair(self, a: Item, b: Item) -> list[Block]:
        """A and B both present, in either order, sometimes overlapping (for negation)."""
        r = self.rng.random()
        if r < 0.25:
            return [self.c.pair(a, b)]
        return [Block([a]), Block([b])] if r < 0.625 else [Block([b]), Block([a])]

    # tasks
    def _negation(self) -> PlantedQuery:
        a, b, x = self._labels(3)
        logic = And((Has(a), Has(b), Not(Has(x))))
        core = self._seq_or_pair(self.c.item(a), self.c.item(b))
        excluded = Block([self.c.item(x)])
        neg = [_copy(bl) for bl in core]
        neg.insert(self.rng.randint(0, len(neg)), excluded)
        return self._finish("negation", "negation", logic, core, neg, {a, b, x},
                            "excluded sound added")

    def _order(self) -> PlantedQuery:
        a, b = self._labels(2)
        ia, ib = self.c.item(a), self.c.item(b)
        pos = [Block([ia]), Block([ib])]
        neg = [_copy(pos[1]), _copy(pos[0])]
        return self._finish("order", "order", Before(a, b), pos, neg, {a, b}, "order reversed")

    def _overlap(self) -> PlantedQuery:
        a, b = self._labels(2)
        pos = [self.c.pair(self.c.item(a), self.c.item(b))]
        x, y = _copy(pos[0]).items
        neg = [Block([x]), Block([y])] if self.rng.random() < 0.5 else [Block([y]), Block([x])]
        return self._finish("overlap", "overlap", Overlap(a, b), pos, neg, {a, b}, "overlap removed")

    def _duration(self) -> PlantedQuery:
        (a,) = self._labels(1)
        n = self._n()
        pos = [Block([self.c.item(a, self.c.inside_ms(n), fixed=True)])]
        neg = [Block([self.c.item(a, self.c.outside_ms(n), fixed=True)])]
        neg[0].items[0].atom_id = pos[0].items[0].atom_id
        neg[0].items[0].gain_db = pos[0].items[0].gain_db
        return self._finish("duration", "duration", Lasts(a, n), pos, neg, {a},
                            "duration out of tolerance")

    def _m1(self) -> PlantedQuery:
        a, b = self._labels(2)
        n = self._n()
        ia = self.c.item(a, self.c.inside_ms(n), fixed=True)
        ib = self.c.item(b)
        pos = [Block([ia]), Block([ib])]
        if self.rng.random() < 0.5:
            bad = _copy(pos[0])
            bad.items[0].dur_ms = self.c.outside_ms(n)
            neg, why = [bad, _copy(pos[1])], "duration out of tolerance"
        else:
            neg, why = [_copy(pos[1]), _copy(pos[0])], "order reversed"
        logic = And((Lasts(a, n), Before(a, b)))
        return self._finish("mix", "m1", logic, pos, neg, {a, b}, why)

    def _m2(self) -> PlantedQuery:
        a, b, x = self._labels(3)
        pos = [Block([self.c.item(a)]), Block([self.c.item(b)])]
        neg = [_copy(bl) for bl in pos]
        neg.insert(self.rng.randint(0, 2), Block([self.c.item(x)]))
        logic = And((Before(a, b), Not(Has(x))))
        return self._finish("mix", "m2", logic, pos, neg, {a, b, x}, "excluded sound added")

    def _m3(self) -> PlantedQuery:
        a, b = self._labels(2)
        n = self._n()
        ia = self.c.item(a, self.c.inside_ms(n), fixed=True)
        pos = [self.c.pair(ia, self.c.item(b))]
        if self.rng.random() < 0.5:
            x, y = _copy(pos[0]).items
            x.dur_ms = self.c.outside_ms(n)
            neg, why = [self.c.pair(x, y)], "duration out of tolerance"
        else:
            x, y = _copy(pos[0]).items
            neg, why = [Block([x]), Block([y])], "overlap removed"
        logic = And((Overlap(a, b), Lasts(a, n)))
        return self._finish("mix", "m3", logic, pos, neg, {a, b}, why)

    def _m4(self) -> PlantedQuery:
        a, b, x = self._labels(3)
        pos = [Block([self.c.item(a)]), self.c.pair(self.c.item(b), self.c.item(x))]
        if self.rng.random() < 0.5:
            neg, why = [_copy(pos[1]), _copy(pos[0])], "order reversed"
        else:
            ib, ix = _copy(pos[1]).items
            neg, why = [_copy(pos[0]), Block([ib]), Block([ix])], "overlap removed"
        logic = And((Before(a, b), Before(a, x), Overlap(b, x)))
        return self._finish("mix", "m4", logic, pos, neg, {a, b, x}, why)

    def _m5(self) -> PlantedQuery:
        a, b, x, y = self._labels(4)
        n = self._n()
        ia = self.c.item(a, self.c.inside_ms(n), fixed=True)
        pos = [Block([ia]), Block([self.c.item(b)]), self.c.pair(self.c.item(x), self.c.item(y))]
        r = self.rng.random()
        if r < 1 / 3:
            bad = _copy(pos[0])
            bad.items[0].dur_ms = self.c.outside_ms(n, side="short")
            neg, why = [bad, _copy(pos[1]), _copy(pos[2])], "duration out of tolerance"
        elif r < 2 / 3:
            neg, why = [_copy(pos[0]), _copy(pos[2]), _copy(pos[1])], "order reversed"
        else:
            ix, iy = _copy(pos[2]).items
            neg, why = [_copy(pos[0]), _copy(pos[1]), Block([ix]), Block([iy])], "overlap removed"
        logic = And((Lasts(a, n), Before(a, b), Before(b, x), Before(b, y), Overlap(x, y)))
        return self._finish("mix", "m5", logic, pos, neg, {a, b, x, y}, why)
