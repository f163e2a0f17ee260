"""Query logic -> Qdrant payload filter (docs/qdrant.md), exact to the judge's semantics.

| logic | filter |
|---|---|
| ``and(A, B, ...)`` | ``Filter(must=[A, B, ...])`` |
| ``or(A, B, ...)`` | ``Filter(should=[A, B, ...])`` (at least one) |
| ``not(A)`` | ``Filter(must_not=[A])`` |
| ``has(x)`` | ``labels`` matches ``x`` |
| ``before(x, y)`` | ``before`` matches ``"x>y"`` |
| ``overlap(x, y)`` | ``overlaps`` matches the sorted pair ``"x|y"`` |
| ``lasts(x, N)`` | ``labels`` matches ``x`` and ``Range`` on ``dur."x"`` (:func:`lasts_range`), and no element of ``dur."x"`` below or above it |
| ``count(x, n)`` | ``count."x"`` matches ``n`` (n >= 2); for n = 1: ``labels`` matches ``x`` and no ``count."x"`` >= 2 |

Every compound node becomes a nested ``Filter`` used as a condition, so an ``or`` inside an
``and`` keeps its own ``should`` (Qdrant reads ``must`` and ``should`` at one level as
"all musts and at least one should", which is right only for that one shape).

Negation is exact because each payload list encodes its relation exactly, including "both
sounds present": ``must_not`` of a match is true when the clip lacks the pair, which is when the
relation is false. A ``Range`` on a missing ``dur`` key is false, so ``lasts`` implies ``has``
and ``not lasts`` holds for a clip without the sound, as in ``semantics.holds``. A repeated
label's ``dur`` is a list and a ``Range`` on a list matches when any element is inside, so
``lasts`` (every occurrence) also excludes a list with an element outside; with one occurrence
those two conditions can never match a clip the range admits. ``count`` is stored only for
labels that repeat, so a missing ``count."x"`` with ``x`` present means once.
"""

from __future__ import annotations

from qdrant_client.http import models

from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap)
from reasonaudio.querylang.semantics import lasts_us
from reasonaudio.store.payload import before_key, check_label, count_key, dur_key, overlap_key


def lasts_bounds_ms(seconds: float) -> tuple[int, int]:
    """Integer-ms durations ``[lo, hi]`` for which ``semantics.lasts_ms`` is true.

    The judge's own target and tolerance (``semantics.lasts_us``, integer microseconds),
    solved for an integer ``dur_ms``: ``lo = ceil((t - tol) / 1000)``,
    ``hi = floor((t + tol) / 1000)``. For the task values N in {2, 5, 10, 15, 20} these are
    exactly ``semantics.duration_bounds(N)`` in ms (all multiples of 0.25 s).
    """
    target_us, tol_us = lasts_us(seconds)
    lo = -((tol_us - target_us) // 1000)  # ceil((target - tol) / 1000)
    hi = (target_us + tol_us) // 1000
    return lo, hi


def lasts_range(seconds: float) -> models.Range:
    """``Range`` on ``dur."x"`` (seconds) that admits exactly the durations the judge admits.

    Stored durations are integer ms / 1000. The bounds sit half a millisecond outside the
    integer-ms interval of :func:`lasts_bounds_ms`, so a duration of ``k`` ms passes iff
    ``lo <= k <= hi``: the half-ms margin is many orders of magnitude above float64 rounding of
    ``k / 1000`` and of the bound, so no float comparison can decide differently from the judge,
    whether or not ``N`` and its tolerance are multiples of 0.25 s (which are exact anyway).
    """
    lo, hi = lasts_bounds_ms(seconds)
    return models.Range(gte=(lo - 0.5) / 1000.0, lte=(hi + 0.5) / 1000.0)


def _match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


Condition = models.FieldCondition | models.Filter

CONDITION = Interpreter("Qdrant filter (filters.condition)")
"""node -> Qdrant condition; one handler per node type."""


def condition(node: Node) -> Condition:
    """One node as a Qdrant condition (compound nodes as nested filters)."""
    return CONDITION(node)


@CONDITION.register(Has)
def _has(node: Has) -> Condition:
    return _match("labels", check_label(node.label, "query"))


@CONDITION.register(Before)
def _before(node: Before) -> Condition:
    return _match("before", before_key(check_label(node.a, "query"), check_label(node.b, "query")))


@CONDITION.register(Overlap)
def _overlap(node: Overlap) -> Condition:
    return _match("overlaps", overlap_key(check_label(node.a, "query"), check_label(node.b, "query")))


@CONDITION.register(Lasts)
def _lasts(node: Lasts) -> Condition:
    # The has() is implied by the range (a missing key fails it); stated, it lets the query
    # planner start from the keyword index instead of scanning every payload for the
    # range (Qdrant Edge, no float index: 1,000 oracle queries 1 s instead of 30-40 s).
    key, inside = dur_key(node.label), lasts_range(node.seconds)
    return models.Filter(must=[_match("labels", check_label(node.label, "query")),
                               models.FieldCondition(key=key, range=inside)],
                         must_not=[models.FieldCondition(key=key, range=models.Range(lt=inside.gte)),
                                   models.FieldCondition(key=key, range=models.Range(gt=inside.lte))])


@CONDITION.register(Count)
def _count(node: Count) -> Condition:
    key = count_key(node.label)
    if node.n >= 2:
        return models.FieldCondition(key=key, match=models.MatchValue(value=node.n))
    return models.Filter(must=[_match("labels", check_label(node.label, "query"))],
                         must_not=[models.FieldCondition(key=key, range=models.Range(gte=2))])


@CONDITION.register(Not)
def _not(node: Not) -> Condition:
    return models.Filter(must_not=[condition(node.arg)])


@CONDITION.register(And)
def _and(node: And) -> Condition:
    return models.Filter(must=[condition(a) for a in node.args])


@CONDITION.register(Or)
def _or(node: Or) -> Condition:
    return models.Filter(should=[condition(a) for a in node.args])


def to_filter(node: Node) -> models.Filter:
    """The filter admitting exactly the clips where ``node`` holds."""
    cond = condition(node)
    return cond if isinstance(cond, models.Filter) else models.Filter(must=[cond])
