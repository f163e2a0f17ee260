"""The task record and what every task module writes against.

A *shape* is one kind of generated query (``negation``, ``order``, ``overlap``, ``duration``,
``m1`` .. ``m5``); a *task* is a group of shapes a benchmark reports together (``mix`` holds
``m1`` .. ``m5``, every other task one shape of its own name). One :class:`Shape` record holds
everything about a shape:

- its slots (label slots ``A`` .. ``D``, number slots such as ``N``) and its logic from slots;
  recognition (logic -> slots) is derived from that same function by :func:`match`, so the two
  cannot disagree;
- its planter: from a :class:`PlantKit` (the composer's small interface, implemented by
  :class:`reasonaudio.generator.plant.QueryPlanter`) to the core blocks of a minimal pair, a clip that
  satisfies the query and a hard negative that breaks one constraint, with the violation's text;
- for training captions: which slots are true of a clip (:class:`Facts`, implemented by
  :class:`reasonaudio.train.data.ClipFacts`) and which slot changes should make them false;
- its query templates and its training-only paraphrases.

This package sits with the data model (``dataset/benchmark.py`` validates a query's ``task``
against its names), so it imports only the logic tree and the foundation; the composer, the
judge and the renderer reach the records through the two protocols here.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterator, Optional, Protocol, Sequence

from reasonaudio.logic import And, Node, Not, Or, Overlap
from reasonaudio.tasks.formulation_records import CAPTION, FORMULATIONS  # noqa: F401  (re-exported)

Slots = dict[str, Any]
"""slot name -> value: labels for ``A`` .. ``D``, a number for ``N``"""

SYMMETRIC: tuple[type, ...] = (Overlap,)
"""Relations whose two arguments may come in either order when logic is recognised."""


@dataclass(frozen=True)
class Template:
    id: str
    """stable name recorded in ``queries.jsonl`` (``template`` field), e.g. ``order-3``"""
    shape: str
    text: str

    def render(self, slots: dict[str, Any]) -> str:
        return self.text.format(**slots)


# --- what a planter is given and returns ---------------------------------------------------

class PlantKit(Protocol):
    """What a planter may do: every draw comes from ``rng``, in the order the planter asks.

    Items and blocks are the composer's (:class:`reasonaudio.generator.compose.Item`: ``label``,
    ``atom_id``, ``dur_ms``, ``fixed``, ``gain_db``; ``Block``: ``items``); planters may set an
    item's ``dur_ms``, ``atom_id`` and ``gain_db``."""

    rng: random.Random

    def labels(self, k: int) -> list[str]:
        """``k`` distinct labels of the bank."""

    def n(self) -> float:
        """A duration target N (seconds) of the Duration task."""

    def item(self, label: str, dur_ms: Optional[int] = None, fixed: bool = False) -> Any:
        """An item of ``label`` (natural length unless ``dur_ms``)."""

    def inside_ms(self, n: float) -> int:
        """A length inside ``lasts(n)``'s tolerance."""

    def outside_ms(self, n: float, side: Optional[str] = None) -> int:
        """A length clearly outside ``lasts(n)``'s tolerance."""

    def pair(self, a: Any, b: Any) -> Any:
        """A block of two overlapping items."""

    def block(self, item: Any) -> Any:
        """A block of one item."""

    def copy(self, block: Any) -> Any:
        """A deep copy of a block (its items are new objects)."""

    def run(self, label: str, counts: Sequence[int]) -> list[Any]:
        """For each ``k`` of ``counts``, a block of ``k`` occurrences of ``label`` in sequence
        (countable gaps; one atom, length and gain), identical but for how many they hold."""


@dataclass
class Planted:
    """The core of a minimal pair: distractors are added around it by the query planter."""

    logic: Node
    positive: list[Any]
    """blocks of the clip that satisfies ``logic``"""
    negative: list[Any]
    """blocks of the hard negative: every mentioned sound, one constraint broken"""
    violation: str
    """what the hard negative breaks, e.g. ``order reversed``"""


# --- what a training caption is drawn from ---------------------------------------------------

class Facts(Protocol):
    """The relations that hold in one clip (without held-out labels)."""

    present: list[str]
    absent: list[str]
    before: list[tuple[str, str]]
    overlap: list[tuple[str, str]]
    n_of: dict[str, float]
    """label -> a duration target N its event satisfies"""
    count: dict[str, int]
    """label -> how many times it occurs, for labels that occur at least twice"""
    durations: Sequence[float]
    """every duration target N"""


Variants = list[tuple[Slots, str]]


def swap(s: Slots, x: str, y: str, why: str) -> Variants:
    """``s`` with slots ``x`` and ``y`` exchanged."""
    t = dict(s)
    t[x], t[y] = s[y], s[x]
    return [(t, why)]


def replace(s: Slots, slot: str, choices: Sequence[str], why: str) -> Variants:
    """``s`` with ``slot`` set to each label of ``choices`` it does not already mention."""
    used = {v for v in s.values() if isinstance(v, str)}
    return [({**s, slot: lab}, why) for lab in choices if lab not in used]


def other_n(s: Slots, durations: Sequence[float], why: str = "duration out of tolerance") -> Variants:
    """``s`` with ``N`` set to each other duration target."""
    return [({**s, "N": n}, why) for n in durations if n != s["N"]]


# --- the record ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Var:
    """A slot in a logic pattern."""

    name: str


@dataclass(frozen=True)
class Shape:
    name: str
    task: str
    labels: tuple[str, ...]
    """label slots, e.g. ``("A", "B", "C")``; their values are distinct labels"""
    numbers: tuple[str, ...]
    """number slots, e.g. ``("N",)``"""
    logic: Callable[[Slots], Node]
    """slots -> the query's logic (the canonical argument order the builder writes)"""
    plant: Callable[[PlantKit], Planted]
    """draws labels and the minimal pair's core blocks"""
    draw: Callable[[Facts, random.Random], Optional[Slots]]
    """random slots that make a true statement about a clip, or None"""
    corrupt: Callable[[Facts, Slots], Variants]
    """slot changes that should make the statement false for the clip (the judge checks)"""
    texts: tuple[str, ...]
    """query templates (``{A}`` .. ``{D}``, ``{N}``, ``{Nw}``, ``{secs}``)"""
    paraphrases: tuple[str, ...]
    """training-only wordings (``--hold-out-templates``), none equal to a template"""
    summary: str = ""
    """the logic in words, for docs and errors"""
    formulations: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)
    """formulation name (``question``, ``command``, ``keywords``, ``paraphrase``, ``exclusion``)
    -> its templates, placeholders as in ``texts``; the ``caption`` formulation is ``texts``
    itself, and ``exclusion`` is given only to shapes with a negation (docs/benchmark.md)"""

    @property
    def slots(self) -> tuple[str, ...]:
        return self.labels + self.numbers

    @property
    def templates(self) -> tuple[Template, ...]:
        return tuple(Template(f"{self.name}-{i}", self.name, t) for i, t in enumerate(self.texts, 1))

    @property
    def training_templates(self) -> tuple[Template, ...]:
        return tuple(Template(f"train-{self.name}-{i}", self.name, t)
                     for i, t in enumerate(self.paraphrases, 1))

    @cached_property
    def pattern(self) -> Node:
        return self.logic({s: Var(s) for s in self.slots})

    def match(self, logic: Node) -> Optional[Slots]:
        """The slots that make ``logic`` this shape, or None (labels must be distinct)."""
        return match(self.pattern, logic, self.slots, self.labels)


# --- recognition: logic -> slots, from the pattern ---------------------------------------------

def match(pattern: Node, logic: Node, slots: Sequence[str], labels: Sequence[str]) -> Optional[Slots]:
    """The first binding of ``pattern``'s slots that makes it ``logic``, or None.

    And/or arguments may come in any order and :data:`SYMMETRIC` relations' arguments either way:
    the search goes depth first, pattern arguments in order against the logic's in order, a
    symmetric relation as written before swapped. Label slots must take distinct labels.
    """
    for b in _unify(pattern, logic, {}):
        values = [b[s] for s in labels]
        if len(set(values)) == len(values):
            return {s: b[s] for s in slots}
    return None


def _bind(p: Any, value: Any, b: Slots) -> Iterator[Slots]:
    if isinstance(p, Var):
        if p.name not in b:
            yield {**b, p.name: value}
        elif b[p.name] == value:
            yield b
    elif p == value:
        yield b


def _unify(p: Any, node: Any, b: Slots) -> Iterator[Slots]:
    if type(p) is not type(node):
        return
    if isinstance(p, (And, Or)):
        if len(p.args) == len(node.args):
            yield from _unify_args(p.args, node.args, frozenset(), b)
        return
    if isinstance(p, Not):
        yield from _unify(p.arg, node.arg, b)
        return
    names = [f.name for f in dataclasses.fields(p)]
    orders = [names]
    if isinstance(p, SYMMETRIC):
        orders.append([names[1], names[0], *names[2:]])
    for order in orders:
        yield from _unify_fields([getattr(p, n) for n in names], [getattr(node, n) for n in order], b)


def _unify_fields(ps: list[Any], values: list[Any], b: Slots) -> Iterator[Slots]:
    if not ps:
        yield b
        return
    for b1 in _bind(ps[0], values[0], b):
        yield from _unify_fields(ps[1:], values[1:], b1)


def _unify_args(ps: tuple[Any, ...], nodes: tuple[Any, ...], used: frozenset[int],
                b: Slots) -> Iterator[Slots]:
    if not ps:
        yield b
        return
    for i, node in enumerate(nodes):
        if i not in used:
            for b1 in _unify(ps[0], node, b):
                yield from _unify_args(ps[1:], nodes, used | {i}, b1)
