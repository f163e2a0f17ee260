"""Clip composer: seeded clip specs (metadata only), Scaper-style.

A clip is laid out as a sequence of *blocks* placed one after another with gaps; a block is one
event, an overlapping pair, or (Count queries only) a *run*: occurrences of one sound in sequence
with gaps of their own, at least ``REPEAT_GAP_MS`` + the margin, so they stay countable. Sequential clips have single-event blocks only; overlap clips have at
least one pair block. Every decision is drawn from the ``random.Random`` passed in, so a seed fixes
the corpus.

Bounds (documented in the README):
- a clip lasts at most ``max_clip_seconds`` (30 s by default) and holds 2 to 8 events;
- an event lasts its atom's natural length (capped at ``max_natural_seconds``) or a target length
  reached by looping/trimming the atom;
- decision margins: no event duration lies within ``margin_ms`` of a duration-tolerance bound of
  the Duration task's N values, and no two events share between ``500 - margin`` and
  ``500 + margin`` ms, so relevance never hangs on a millisecond and an independent judge written
  with floats agrees. Natural durations that fall inside a margin are trimmed just below it.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from reasonaudio.querylang.semantics import OVERLAP_MIN_MS, duration_bounds
from reasonaudio.dataset.clip import REPEAT_GAP_MS, Clip, Event
from reasonaudio.errors import DataError
from reasonaudio.atoms.bank import AtomBank

DURATION_TARGETS = (2, 5, 10, 15, 20)
"""The N values of the Duration task (seconds)."""


@dataclass(frozen=True)
class ComposeParams:
    sample_rate: int = 48_000
    max_clip_seconds: float = 30.0
    min_events: int = 2
    max_events: int = 8
    max_natural_seconds: float = 8.0
    max_gap_seconds: float = 1.0
    gain_db_min: float = -6.0
    gain_db_max: float = 0.0
    target_duration_prob: float = 0.25
    """share of fill events looped/trimmed to a Duration-task-like length instead of natural"""
    pair_prob: float = 0.35
    """in overlap clips, chance that a further block is an overlapping pair"""
    min_overlap_ms: int = OVERLAP_MIN_MS + 100
    margin_ms: int = 100
    min_event_ms: int = 300

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _bounds_ms() -> list[int]:
    out = []
    for n in DURATION_TARGETS:
        lo, hi = duration_bounds(n)
        out += [round(lo * 1000), round(hi * 1000)]
    return sorted(out)


TOLERANCE_BOUNDS_MS = _bounds_ms()


def near_bound(dur_ms: int, margin_ms: int) -> int | None:
    """The tolerance bound ``dur_ms`` is within ``margin_ms`` of, if any."""
    for b in TOLERANCE_BOUNDS_MS:
        if abs(dur_ms - b) < margin_ms:
            return b
    return None


def clear_of_bounds(dur_ms: int, margin_ms: int) -> int:
    """Shorten a duration until it is at least ``margin_ms`` below any bound it was near."""
    while (b := near_bound(dur_ms, margin_ms)) is not None:
        dur_ms = b - margin_ms
    return dur_ms


@dataclass
class Item:
    """One event to place: label, atom, duration (ms); ``fixed`` durations are never shrunk."""

    label: str
    atom_id: str
    dur_ms: int
    fixed: bool = False
    gain_db: float = 0.0


@dataclass
class Block:
    items: list[Item]
    overlap_ms: int = 0
    """for a pair: how long the two share; the second starts ``overlap_ms`` before the first ends"""
    run_gaps_ms: tuple[int, ...] | None = None
    """for a run (items of one sound in sequence): the gap after each item but the last"""

    @property
    def is_pair(self) -> bool:
        return len(self.items) == 2 and self.run_gaps_ms is None

    @property
    def length_ms(self) -> int:
        if self.run_gaps_ms is not None:
            return sum(it.dur_ms for it in self.items) + sum(self.run_gaps_ms)
        if len(self.items) == 1:
            return self.items[0].dur_ms
        a, b = self.items
        return a.dur_ms + b.dur_ms - self.overlap_ms


RUN_GAP_MIN_MS = REPEAT_GAP_MS + 100
"""The shortest gap inside a run: the countability gap plus the decision margin."""
RUN_GAP_MAX_MS = RUN_GAP_MIN_MS + 900
RUN_ITEM_MAX_MS = 3000
"""Occurrences in a run are at most this long (natural lengths are cut), so five fit a clip."""


@dataclass
class Composer:
    """Draws items and lays out blocks for one bank; all randomness comes from ``rng``."""

    bank: AtomBank
    params: ComposeParams
    rng: random.Random
    adjustments: dict[str, int] = field(default_factory=dict)

    def note(self, what: str) -> None:
        self.adjustments[what] = self.adjustments.get(what, 0) + 1

    # --- items -------------------------------------------------------------------------------

    def item(self, label: str, dur_ms: int | None = None, fixed: bool = False) -> Item:
        atom = self.rng.choice(self.bank.by_label[label])
        gain = round(self.rng.uniform(self.params.gain_db_min, self.params.gain_db_max), 2)
        if dur_ms is None:
            natural = int(round(min(atom.duration, self.params.max_natural_seconds) * 1000))
            natural = max(natural, self.params.min_event_ms)
            dur_ms = clear_of_bounds(natural, self.params.margin_ms)
            if dur_ms != natural:
                self.note("natural duration trimmed off a tolerance bound")
        return Item(label, atom.atom_id, dur_ms, fixed, gain)

    def fill_duration_ms(self) -> int | None:
        """A Duration-task-like length for a fill event, or None for the natural length."""
        if self.rng.random() >= self.params.target_duration_prob:
            return None
        n = self.rng.choice(DURATION_TARGETS[:3])  # long fill events would crowd the clip
        inside = self.rng.random() < 0.5
        return self.inside_ms(n) if inside else self.outside_ms(n)

    def inside_ms(self, n: float) -> int:
        """A length inside ``lasts(n)``'s tolerance, clear of every bound."""
        lo, hi = duration_bounds(n)
        m = self.params.margin_ms
        while True:
            d = clear_of_bounds(self.rng.randint(round(lo * 1000) + m, round(hi * 1000) - m), m)
            if round(lo * 1000) + m <= d:
                return d

    def outside_ms(self, n: float, side: str | None = None) -> int:
        """A length clearly outside ``lasts(n)``'s tolerance (shorter side for long N)."""
        lo, hi = duration_bounds(n)
        m = self.params.margin_ms
        if side is None:
            side = "short" if n >= 15 or self.rng.random() < 0.5 else "long"
        while True:
            if side == "short":
                d = self.rng.randint(max(self.params.min_event_ms, round(lo * 500)),
                                     round(lo * 1000) - m)
            else:
                d = self.rng.randint(round(hi * 1000) + m, round(hi * 1000) + m + round(n * 200))
            d = clear_of_bounds(d, m)
            if d <= round(lo * 1000) - m or d >= round(hi * 1000) + m:
                return d

    # --- layout ------------------------------------------------------------------------------

    def pair(self, a: Item, b: Item) -> Block:
        """Two items overlapping by at least ``min_overlap_ms`` (both lengthened if too short)."""
        need = self.params.min_overlap_ms
        for it in (a, b):
            if it.dur_ms < need + 100:
                if it.fixed:
                    raise ValueError("fixed-length item too short to overlap")
                it.dur_ms = clear_of_bounds(need + 100 + self.rng.randint(0, 900), self.params.margin_ms)
                self.note("event lengthened to allow an overlap")
        shared = self.rng.randint(need, min(a.dur_ms, b.dur_ms))
        return Block([a, b], shared)

    def run(self, label: str, counts: Sequence[int]) -> list[Block]:
        """For each ``k`` of ``counts``, a block of ``k`` occurrences of ``label``: one atom,
        length and gain (one draw), the same gaps, so the blocks differ only in how many
        occurrences they hold; a block of one is a plain block."""
        it = self.item(label)
        cap = self.rng.randint(RUN_GAP_MIN_MS + 200, RUN_ITEM_MAX_MS)
        if it.dur_ms > cap:
            it.dur_ms = clear_of_bounds(cap, self.params.margin_ms)
        gaps = tuple(self.rng.randint(RUN_GAP_MIN_MS, RUN_GAP_MAX_MS) for _ in range(max(counts) - 1))
        out = []
        for k in counts:
            items = [Item(it.label, it.atom_id, it.dur_ms, it.fixed, it.gain_db) for _ in range(k)]
            out.append(Block(items) if k == 1 else Block(items, run_gaps_ms=gaps[:k - 1]))
        return out

    def place(self, blocks: Sequence[Block], mode: str, clip_id: str = "") -> Clip:
        """Lay blocks out in order with gaps; shrink free items if the clip would be too long."""
        p = self.params
        budget = int(p.max_clip_seconds * 1000) - 200
        gaps = [self.rng.choice((0, self.rng.randint(0, int(p.max_gap_seconds * 1000))))
                for _ in blocks]
        total = sum(b.length_ms for b in blocks) + sum(gaps)
        if total > budget:
            self._shrink(blocks, total - budget)
            gaps = [0] * len(blocks)
            self.note("clip shortened to fit the clip length bound")
        events: list[Event] = []
        t = gaps[0]
        for block, gap in zip(blocks, [0] + gaps[1:]):
            t += gap
            first = block.items[0]
            events.append(self._event(first, t, t + first.dur_ms))
            if block.run_gaps_ms is not None:
                start = t + first.dur_ms
                for item, run_gap in zip(block.items[1:], block.run_gaps_ms):
                    start += run_gap
                    events.append(self._event(item, start, start + item.dur_ms))
                    start += item.dur_ms
            elif len(block.items) == 2:
                second = block.items[1]
                start = t + first.dur_ms - block.overlap_ms
                events.append(self._event(second, start, start + second.dur_ms))
            t += block.length_ms
        tail = self.rng.randint(200, 1000)
        duration_ms = min(t + tail, int(p.max_clip_seconds * 1000))
        if t > duration_ms:
            raise ValueError("layout longer than the clip bound")
        events.sort(key=lambda e: (e.onset, e.label))
        return Clip(clip_id, mode, duration_ms / 1000, p.sample_rate, tuple(events))

    def _shrink(self, blocks: Sequence[Block], excess_ms: int) -> None:
        free = [it for b in blocks for it in b.items if not it.fixed]
        floor = self.params.min_overlap_ms + 200
        for it in sorted(free, key=lambda it: -it.dur_ms):
            if excess_ms <= 0:
                break
            cut = min(excess_ms, max(0, it.dur_ms - floor))
            it.dur_ms = clear_of_bounds(it.dur_ms - cut, self.params.margin_ms)
            excess_ms -= cut
        for b in blocks:
            if b.is_pair:
                b.overlap_ms = min(b.overlap_ms, b.items[0].dur_ms, b.items[1].dur_ms)
        if excess_ms > 0:
            raise ValueError("cannot fit the clip length bound")

    def _event(self, it: Item, on_ms: int, off_ms: int) -> Event:
        return Event(it.label, on_ms / 1000, off_ms / 1000, it.atom_id, it.gain_db)

    # --- random fill clips ---------------------------------------------------------------------

    def random_clip(self, mode: str) -> Clip:
        p = self.params
        n_labels = len(self.bank.labels)
        k = self.rng.randint(p.min_events, min(p.max_events, n_labels))
        labels = self.rng.sample(self.bank.labels, k)
        items = [self.item(lab, self.fill_duration_ms()) for lab in labels]
        blocks: list[Block] = []
        i = 0
        want_pair = mode == "overlap"
        while i < len(items):
            if want_pair and i + 1 < len(items) and (not any(len(b.items) == 2 for b in blocks)
                                                     or self.rng.random() < p.pair_prob):
                blocks.append(self.pair(items[i], items[i + 1]))
                i += 2
            else:
                blocks.append(Block([items[i]]))
                i += 1
        if want_pair and not any(len(b.items) == 2 for b in blocks):
            raise ValueError("overlap clip without an overlapping pair")
        return self.place(blocks, mode)


def check_margins(clip: Clip, params: ComposeParams) -> None:
    """Raise if a duration or pairwise overlap sits within the decision margin (a composer bug)."""
    m = params.margin_ms
    evs = [(round(e.onset * 1000), round(e.offset * 1000), e.label) for e in clip.events]
    for on, off, label in evs:
        if near_bound(off - on, m) is not None:
            raise DataError(f"{clip.id}: duration of {label!r} ({off - on} ms) within margin of a bound")
    for i, (on1, off1, l1) in enumerate(evs):
        for on2, off2, l2 in evs[i + 1:]:
            shared = min(off1, off2) - max(on1, on2)
            if shared > 0 and abs(shared - OVERLAP_MIN_MS) < m:
                raise DataError(f"{clip.id}: {l1!r} and {l2!r} share {shared} ms, near the 500 ms threshold")


def clip_mode(clip: Clip) -> str | None:
    """``sequential``/``overlap`` as the times say, or None when events touch without overlapping."""
    evs = [(round(e.onset * 1000), round(e.offset * 1000)) for e in clip.events]
    any_overlap = False
    for i, (on1, off1) in enumerate(evs):
        for on2, off2 in evs[i + 1:]:
            shared = min(off1, off2) - max(on1, on2)
            if shared >= OVERLAP_MIN_MS:
                any_overlap = True
            elif shared > 0:
                return None
    return "overlap" if any_overlap else "sequential"
