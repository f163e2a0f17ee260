"""Query generator: logic per task plus a planted minimal pair of clips for every query.

For each query the generator composes one clip that satisfies it and one *hard negative* that
contains every sound the query mentions but breaks exactly one constraint (order reversed, overlap
removed, the excluded sound added, the duration moved out of tolerance). That guarantees every
query a relevant clip and a hard negative, and gives ``choices.jsonl`` its pair.

What each shape plants is its task record's ``plant`` (:mod:`reasonaudio.tasks`); this module
draws the shape, gives the record the composer through :class:`QueryPlanter` (the
:class:`reasonaudio.tasks.base.PlantKit` interface) and adds the distractors around its core.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from reasonaudio.logic import Node, labels
from reasonaudio.dataset.clip import Clip
from reasonaudio.generator.compose import DURATION_TARGETS, Block, Composer, Item
from reasonaudio.tasks.registry import shapes_of


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
                 block.overlap_ms, block.run_gaps_ms)


def _mode(blocks: list[Block]) -> str:
    return "overlap" if any(b.is_pair for b in blocks) else "sequential"


class QueryPlanter:
    """Draws the shape, labels, logic and minimal pair for one query of a task."""

    def __init__(self, composer: Composer) -> None:
        self.c = composer
        self.rng: random.Random = composer.rng
        self.max_events = composer.params.max_events

    def plant(self, task: str) -> PlantedQuery:
        """One query of ``task``: a task of several shapes draws one uniformly (one draw)."""
        options = shapes_of(task)
        shape = options[0] if len(options) == 1 else self.rng.choice(options)
        core = shape.plant(self)
        return self._finish(task, shape.name, core.logic, core.positive, core.negative,
                            core.violation)

    # the PlantKit interface the task records plant with
    def labels(self, k: int) -> list[str]:
        return self.rng.sample(self.c.bank.labels, k)

    def n(self) -> int:
        return self.rng.choice(DURATION_TARGETS)

    def item(self, label: str, dur_ms: int | None = None, fixed: bool = False) -> Item:
        return self.c.item(label, dur_ms, fixed)

    def inside_ms(self, n: float) -> int:
        return self.c.inside_ms(n)

    def outside_ms(self, n: float, side: str | None = None) -> int:
        return self.c.outside_ms(n, side)

    def pair(self, a: Item, b: Item) -> Block:
        return self.c.pair(a, b)

    def block(self, item: Item) -> Block:
        return Block([item])

    def copy(self, block: Block) -> Block:
        return _copy(block)

    def run(self, label: str, counts: list[int]) -> list[Block]:
        return self.c.run(label, counts)

    def _finish(self, task: str, shape: str, logic: Node, pos: list[Block], neg: list[Block],
                violation: str) -> PlantedQuery:
        sizes = [sum(len(b.items) for b in blocks) for blocks in (pos, neg)]
        least = self.c.params.min_events - min(sizes)
        extra = _distractors(self.c, set(labels(logic)), least, self.max_events - max(sizes))
        # The same distractors, at the same places, in both clips: a true minimal pair.
        state = self.rng.getstate()
        pos_blocks = _interleave(self.c, pos, [_copy(b) for b in extra])
        self.rng.setstate(state)
        neg_blocks = _interleave(self.c, neg, [_copy(b) for b in extra])
        positive = self.c.place(pos_blocks, _mode(pos_blocks))
        negative = self.c.place(neg_blocks, _mode(neg_blocks))
        return PlantedQuery(task, shape, logic, positive, negative, violation)
