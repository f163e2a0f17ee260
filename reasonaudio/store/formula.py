"""Query logic -> a Qdrant score formula: the soft semantics, written once (docs/qdrant.md).

:data:`FORMULA` reads a logic tree into a small backend-neutral expression tree (:class:`Expr`)
over the soft-evidence payload fields of a detected collection (:data:`SOFT_FIELDS`). The same
tree is

- sent to Qdrant as a score formula (:func:`to_client` for qdrant-client, local mode and
  servers; ``store.edge.to_edge_expression`` for Qdrant Edge), its variables first turned into
  the scores of sparse searches over the same evidence held as vectors
  (:data:`EVIDENCE_VECTORS`, :func:`read_by_prefetch`), so Qdrant parses no payload, and
- evaluated with numpy over the same fields (:func:`evaluate`): the Python soft score of
  ``detect/soft.py`` is this evaluation, so the two cannot disagree except by float rounding
  (Qdrant returns float32 scores; the differential test holds them within 1e-5).

| logic | formula (``p`` = ``soft_p."x"``, times in seconds) |
|---|---|
| ``has(x)`` | ``p(x)`` |
| ``not A`` | ``1 - A`` |
| ``and(A, B, ...)`` | ``A * B * ...`` |
| ``or(A, B, ...)`` | ``max(A, B, ...)`` |
| ``before(x, y)`` | ``p(x) p(y) sigmoid((on(y) - off(x)) / 0.5)`` |
| ``overlap(x, y)`` | ``p(x) p(y) sigmoid((min(off) - max(on) - 0.5) / 0.5)`` |
| ``lasts(x, N)`` | ``p(x) exp(-max(0, abs(dur(x) - N) - tol(N)) / 1)``, tol as the judge's |
| ``count(x, n)`` | ``p(x) exp(-abs(max(c(x), 1) - n))``, c = the heard occurrences (payload ``count``, held only where a label repeats: missing reads 0, so 1) |

``sigmoid(z) = 1 / (1 + exp(-clip(z, -60, 60)))``. Every variable has a default (0: no
evidence), so a formula never reads a missing field. Adding a logic node is one handler here
(``@FORMULA.register(Count)``), built from the primitives below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np

from reasonaudio.logic import (And, Before, Count, Has, Interpreter, Lasts, Node, Not,
                                           Or, Overlap, labels)
from reasonaudio.querylang.semantics import OVERLAP_MIN_MS, duration_tolerance_ms
from reasonaudio.store.base import PointIn, Request, Sparse, VectorSpec
if TYPE_CHECKING:
    from qdrant_client.http import models as qm

from reasonaudio.store.payload import (COUNT_FIELD, DUR_FIELD, SOFT_FIELDS, SOFT_LABEL_IDS_FIELD,
                                       SOFT_LABELS_FIELD, SOFT_ORDER_FIELD, check_label, count_key)

# --- the payload fields the formulas read ----------------------------------------------------

PRESENCE, PRESENCE_TOP3, ONSET, OFFSET, DURATION = SOFT_FIELDS
"""label -> calibrated presence from the track's peak (its ``on`` threshold maps to 0.5), the same
for the mean of its 3 best frames (breaks ties), and onset, offset and duration in seconds (the
detected event's, else the frames around the peak: events.track_summary); store/payload.py"""
EVIDENCE = SOFT_LABELS_FIELD
"""keyword list: the labels with any soft evidence (a clip lacking a label the logic requires
scores exactly 0, so a query rescores only the others: :func:`required`)"""
EVIDENCE_IDS = SOFT_LABEL_IDS_FIELD
"""integer list: the same labels as their evidence dimensions (:func:`evidence_dims`), with an
integer index: what :func:`evidence_filter` reads (an integer match costs a third of a keyword
match per point checked; docs/qdrant.md, "Formula speed")"""

TIME_SCALE_S = 0.5
DURATION_SCALE_S = 1.0
SIGMOID_CLIP = 60.0
TIE_WEIGHT = 1e-3
"""weight of the top-3 reading added to break the ties YAMNet's quantised peaks make"""
ORDER = SOFT_ORDER_FIELD
"""the clip's place in clip-id order, ``(n - i) / n`` (store/payload.py)"""
ORDER_WEIGHT = 1e-30
"""weight of the clip-order term every ranking formula ends with: clips whose soft value is
exactly equal rank by clip id, smallest first, in Qdrant as in numpy. It matters where values
are exactly equal, which is mostly at 0 (no evidence for a label the logic requires: often
most of a collection), where float32 holds ``1e-30 x (n - i) / n`` exactly enough to order
every clip; a soft value above 1e-23 is never moved by it (float32 keeps 7 digits). Multiple
choice compares soft values without it (a tie stays a tie)."""
SCORE_VAR = "$score"
PRESENCE_FLOOR = 1e-47
"""a calibrated presence below this is no evidence: its label's fields are not stored and read
0 (:func:`no_evidence_below_floor`). Exact for every ranking and every score Qdrant returns: in
every formula a label's fields enter only multiplied by its presence (or its top-3 reading, which
is no larger), so dropping them moves a soft value by at most about 2e-47, below float32's
smallest step (1.4e-45) and under the clip-order term's resolution (1e-30 / n). On the real-sound
demo benchmark a third of the stored labels sit below it (calibration with a high threshold maps
a small peak to 1e-93 and less); without them a soft query rescores and parses less (docs/qdrant.md,
"Formula speed")."""


def var_key(field: str, label: str) -> str:
    """The JSON path of a label's soft field (quoted: labels hold spaces)."""
    return f'{field}."{check_label(label, "soft field")}"'


# --- the expression tree ---------------------------------------------------------------------

class Expr:
    """A node of a score formula (backend-neutral)."""


@dataclass(frozen=True)
class Const(Expr):
    value: float


@dataclass(frozen=True)
class Var(Expr):
    key: str
    """a payload path, ``$score`` (the first prefetch's score) or ``$score[i]`` (the ``i``-th's)"""
    default: float = 0.0
    """what a point without it reads (Qdrant's formula ``defaults``)"""


@dataclass(frozen=True)
class Cond(Expr):
    flt: qm.Filter
    """a qdrant-client ``models.Filter``: 1 where it admits the point, else 0"""


@dataclass(frozen=True)
class Op(Expr):
    name: str
    """sum | mult | max | min | neg | exp | abs | div"""
    args: tuple[Expr, ...]


def add(*xs: Expr) -> Expr:
    return Op("sum", tuple(xs))


def mul(*xs: Expr) -> Expr:
    return Op("mult", tuple(xs))


def neg(x: Expr) -> Expr:
    return Op("neg", (x,))


def sigmoid(z: Expr) -> Expr:
    clipped = Op("max", (Op("min", (z, Const(SIGMOID_CLIP))), Const(-SIGMOID_CLIP)))
    return Op("div", (Const(1.0), add(Const(1.0), Op("exp", (neg(clipped),)))))


def _variables(expr: Expr) -> dict[str, float]:
    out: dict[str, float] = {}

    def walk(e: Expr) -> None:
        if isinstance(e, Var) and e.key != SCORE_VAR:
            if out.setdefault(e.key, e.default) != e.default:
                raise ValueError(f"formula variable {e.key!r} has two defaults")
        elif isinstance(e, Op):
            for a in e.args:
                walk(a)
    walk(expr)
    return out


def variables(expr: Expr) -> list[str]:
    """Every variable the expression reads, in first-use order (``$score`` aside)."""
    return list(_variables(expr))


def defaults(expr: Expr) -> dict[str, float]:
    """Each variable's default (0 unless a :class:`Var` says otherwise): no evidence for a
    label reads as presence 0 at time 0."""
    return _variables(expr)


# --- logic -> expression (the soft semantics) --------------------------------------------------

@dataclass(frozen=True)
class Fields:
    """Which presence field a reading uses (``soft_p``, or ``soft_p3`` for the tie-breaker)."""
    presence: str = PRESENCE

    def p(self, label: str) -> Expr:
        return Var(var_key(self.presence, label))

    @staticmethod
    def t(field: str, label: str) -> Expr:
        return Var(var_key(field, label))


FORMULA = Interpreter("Qdrant score formula (store.formula)")
"""node, Fields -> the node's soft value as an :class:`Expr` in [0, 1]; one handler per type."""


@FORMULA.register(Has)
def _has(node: Has, f: Fields) -> Expr:
    return f.p(node.label)


@FORMULA.register(Before)
def _before(node: Before, f: Fields) -> Expr:
    gap = add(f.t(ONSET, node.b), neg(f.t(OFFSET, node.a)))
    return mul(f.p(node.a), f.p(node.b), sigmoid(mul(gap, Const(1.0 / TIME_SCALE_S))))


@FORMULA.register(Overlap)
def _overlap(node: Overlap, f: Fields) -> Expr:
    shared = add(Op("min", (f.t(OFFSET, node.a), f.t(OFFSET, node.b))),
                 neg(Op("max", (f.t(ONSET, node.a), f.t(ONSET, node.b)))),
                 Const(-OVERLAP_MIN_MS / 1000.0))
    return mul(f.p(node.a), f.p(node.b), sigmoid(mul(shared, Const(1.0 / TIME_SCALE_S))))


@FORMULA.register(Lasts)
def _lasts(node: Lasts, f: Fields) -> Expr:
    off_target = Op("abs", (add(f.t(DURATION, node.label), Const(-float(node.seconds))),))
    excess = add(off_target, Const(-duration_tolerance_ms(node.seconds) / 1000.0))
    decay = Op("exp", (mul(Op("max", (excess, Const(0.0))), Const(-1.0 / DURATION_SCALE_S)),))
    return mul(f.p(node.label), decay)


@FORMULA.register(Count)
def _count(node: Count, f: Fields) -> Expr:
    heard = Op("max", (Var(count_key(node.label)), Const(1.0)))
    closeness = Op("exp", (neg(Op("abs", (add(heard, Const(-float(node.n))),))),))
    return mul(f.p(node.label), closeness)


@FORMULA.register(Not)
def _not(node: Not, f: Fields) -> Expr:
    return add(Const(1.0), neg(FORMULA(node.arg, f)))


@FORMULA.register(And)
def _and(node: And, f: Fields) -> Expr:
    return mul(*(FORMULA(a, f) for a in node.args))


@FORMULA.register(Or)
def _or(node: Or, f: Fields) -> Expr:
    return Op("max", tuple(FORMULA(a, f) for a in node.args))


REQUIRED = Interpreter("labels a soft value needs (store.formula.required)")
"""node -> the labels whose missing evidence makes the node's soft value exactly 0 (and its hard
filter false, since a detected label always has evidence); one handler per node type."""


@REQUIRED.register(Has, Lasts, Count)
def _required_leaf(node: Node) -> frozenset[str]:
    return frozenset(node.leaf_labels())


@REQUIRED.register(Before, Overlap)
def _required_pair(node: Node) -> frozenset[str]:
    return frozenset((node.a, node.b))  # type: ignore[attr-defined]


@REQUIRED.register(Not)
def _required_not(node: Not) -> frozenset[str]:
    return frozenset()


@REQUIRED.register(And)
def _required_and(node: And) -> frozenset[str]:
    return frozenset().union(*(REQUIRED(a) for a in node.args))


@REQUIRED.register(Or)
def _required_or(node: Or) -> frozenset[str]:
    return frozenset.intersection(*(REQUIRED(a) for a in node.args))


def required(logic: Node) -> frozenset[str]:
    """Labels every clip must have evidence for to score above 0 (the soft value is a product
    over them): a query rescores only those clips, all others score exactly 0."""
    return REQUIRED(logic)


def soft_expr(logic: Node, presence: str = PRESENCE) -> Expr:
    """The soft value of ``logic`` read with one presence field."""
    return FORMULA(logic, Fields(presence))


def _factors(expr: Expr) -> list[Expr]:
    """The factors of a product, nested products flattened (a non-product is one factor)."""
    if isinstance(expr, Op) and expr.name == "mult":
        return [f for a in expr.args for f in _factors(a)]
    return [expr]


def _product(factors: Sequence[Expr]) -> Expr:
    return factors[0] if len(factors) == 1 else mul(*factors) if factors else Const(1.0)


def order_term() -> Expr:
    """``1e-30 x soft_order``: the tie term (:data:`ORDER_WEIGHT`)."""
    return mul(Const(ORDER_WEIGHT), Var(ORDER))


def soft_formula(logic: Node, order: bool = True) -> Expr:
    """What ``soft:TAGGER`` ranks by: ``(soft(peak) + 1e-3 soft(top3)) / (1 + 1e-3)``, in [0, 1],
    plus the clip-order tie term (:func:`order_term`; ``order=False``: without it, as multiple
    choice compares).

    Written with the factors the two readings share taken out once (the time terms of every
    conjunct outside a negation: ``shared * (rest(peak) + 1e-3 rest(top3)) / 1.001``), the same
    value up to float rounding: Qdrant reads a payload variable once per occurrence in the
    formula (parsing the point's payload each time), so every occurrence saved is a payload read
    per rescored point (the formula speed: docs/performance.md). The presence sum comes first, so
    a point without evidence stops at 0 (Qdrant's product skips the rest after a 0 factor)."""
    peak, top3 = _factors(soft_expr(logic)), _factors(soft_expr(logic, PRESENCE_TOP3))
    shared: list[Expr] = []
    rest: list[Expr] = []
    for f in peak:
        if f in top3:
            top3.remove(f)
            shared.append(f)
        else:
            rest.append(f)
    both = add(_product(rest), mul(Const(TIE_WEIGHT), _product(top3)))
    value = mul(both, *shared, Const(1.0 / (1.0 + TIE_WEIGHT)))
    return add(value, order_term()) if order else value


def fusion_tie_weight(n_points: int) -> float:
    """``c`` of :func:`fused_soft_formula`: ``2 ** (b + 2 - 23)``, ``b`` the bits of the
    collection size, so that two clips one place apart in clip order differ by at least 4 float32
    steps of their value (``c / n >= 4 x 2 ** -23``): 2 ** -10 at 2,000 clips, 2 ** -7 at 10,000."""
    bits = max(1, math.ceil(math.log2(max(int(n_points), 2))))
    return 2.0 ** (bits + 2 - 23)


def fused_soft_formula(logic: Node, n_points: int) -> Expr:
    """What the soft part of a fusion (``rrf:`` / ``dbsf:``) ranks by: the soft value ``v`` times
    ``1 + c x soft_order`` (:func:`fusion_tie_weight`), plus the clip-order tie term.

    A fusion reads its parts' positions (RRF) or scores (DBSF) as Qdrant returns them, before
    any tie rule of this project: Qdrant rescores a formula's points in hash order, so clips with
    exactly equal soft values (YAMNet's quantised rows make them) came back in another order on
    every send, and the fused ranking with them. With the factor, clips of equal soft value get
    float32 values at least 4 steps apart and rank by clip id, smallest first; the price is that
    two values closer than a factor ``1 + c`` (0.1 % at 2,000 clips) may also rank by clip id, and
    two different values can still meet on one float32 value by coincidence (2 of 50,000 run
    lines of the demo's RRF). Otherwise a fusion's positions, hence its answers and its tuning,
    repeat (docs/qdrant.md, "Repeatable answers")."""
    weight = Const(fusion_tie_weight(n_points))
    value = soft_formula(logic, order=False)
    return add(mul(value, add(Const(1.0), mul(weight, Var(ORDER)))), order_term())


DBSF_SOFT_FLOOR = 1e-9
"""the least :func:`fused_soft_formula` value the soft part of a DBSF fusion lists
(:func:`dbsf_soft_part`)"""


def dbsf_soft_part(request: Request) -> Request:
    """The soft part of a DBSF fusion (a :func:`fused_soft_formula` query) listing only the clips
    whose soft value reaches :data:`DBSF_SOFT_FLOOR`: the clips without evidence for a label the
    logic requires (value 0, plus the tie term) are left out of the list, as every clip the part's
    limit cuts off is.

    DBSF reads a list's scores. Listed, those clips would differ by the tie term alone
    (``1e-30 x soft_order``): a list of nothing else (a query with evidence nowhere, or a choice
    pair without any) has less variance than float32 holds, so Edge and servers (DBSF in
    float32) would score every clip 0.5 and local mode (float64) spread them over [0, 1] by clip
    id; and in any list a listed clip without evidence would gain the normalised value of 0,
    which the clips past the limit lack. Above the floor two listed values differ by at least a
    float32 step of ``1e-9`` (6e-17; tied soft values by the factor ``1 + c x soft_order``,
    more), whose square, 4e-33, float32 holds far above its smallest normal number: the same
    spread on every backend (docs/qdrant.md, "Backends that agree"). RRF reads positions, which
    the tie term makes the same on every backend: its soft part keeps those clips."""
    return replace(request, score_threshold=DBSF_SOFT_FLOOR)


def fused_sparse(vec: Sparse, order: float, n_points: int) -> Sparse:
    """A BM25 part's document vector in a joint collection: every weight times ``1 + c x order``
    (``c``: :func:`fusion_tie_weight`, ``order``: the clip's :data:`ORDER` value), so a search
    scores the clip its BM25 value times that factor. BM25 values tie often (captions with the
    same words and length), and a fusion reads its parts as Qdrant orders them: the order of
    equal scores is each engine's own (Edge's offsets, local mode's sort, a server's shards), so
    without the factor a fused ranking over a BM25 part, and which of the tied clips a part's
    limit ``N`` keeps, would differ between backends. With it equal BM25 values become float32
    values about 4 steps apart, smallest clip id first, as the soft part's are
    (:func:`fused_soft_formula`; the rounding of a sum of several terms may, rarely, bring two
    together again); values closer than a factor ``1 + c`` may also rank by clip id."""
    factor = 1.0 + fusion_tie_weight(n_points) * float(order)
    return Sparse(vec.indices, tuple(float(v) * factor for v in vec.values))


def detected_formula(logic: Node, flt: qm.Filter | None, order: bool = True) -> Expr:
    """What ``detected:TAGGER`` ranks by: 1 where the hard filter admits the clip, plus the soft
    value (so admitted clips come first, each group by soft value, then clip id)."""
    return add(Cond(flt), soft_formula(logic, order))


def hybrid_formula(logic: Node, weight: float, order: bool = True) -> Expr:
    """``(1 - w) $score + w soft``: a model's similarity rescored with the soft logic."""
    return add(mul(Const(1.0 - weight), Var(SCORE_VAR)), mul(Const(weight), soft_formula(logic, order)))


# --- evaluation with numpy (the Python soft score) -------------------------------------------

Columns = Callable[[str], np.ndarray]
"""variable key -> its value per point (zeros where a point has none)"""


def evaluate(expr: Expr, column: Columns, n: int,
             condition: Callable[[Any], np.ndarray] | None = None,
             score: np.ndarray | None = None) -> np.ndarray:
    """The expression for ``n`` points, in float64 (what Qdrant computes before its float32)."""
    if isinstance(expr, Const):
        return np.full(n, float(expr.value))
    if isinstance(expr, Var):
        if expr.key == SCORE_VAR:
            if score is None:
                raise ValueError("the expression reads $score but no scores were given")
            return np.asarray(score, dtype=float)
        return np.asarray(column(expr.key), dtype=float)
    if isinstance(expr, Cond):
        if condition is None:
            raise ValueError("the expression holds a filter condition but no evaluator was given")
        return np.asarray(condition(expr.flt), dtype=float)
    if not isinstance(expr, Op):
        raise TypeError(f"not a formula expression: {expr!r}")
    xs = [evaluate(a, column, n, condition, score) for a in expr.args]
    if expr.name == "sum":
        return np.sum(xs, axis=0)
    if expr.name == "mult":
        return np.prod(xs, axis=0)
    if expr.name == "max":
        return np.max(xs, axis=0)
    if expr.name == "min":
        return np.min(xs, axis=0)
    if expr.name == "neg":
        return -xs[0]
    if expr.name == "exp":
        return np.exp(xs[0])
    if expr.name == "abs":
        return np.abs(xs[0])
    if expr.name == "div":
        return xs[0] / xs[1]
    raise ValueError(f"unknown formula operation {expr.name!r}")


# --- qdrant-client translation ---------------------------------------------------------------

def to_client(expr: Expr) -> qm.Expression:
    """The expression in qdrant-client's models (REST schema: local mode and servers)."""
    from qdrant_client.http import models

    if isinstance(expr, Const):
        return float(expr.value)
    if isinstance(expr, Var):
        return expr.key
    if isinstance(expr, Cond):
        return expr.flt
    if not isinstance(expr, Op):
        raise TypeError(f"not a formula expression: {expr!r}")
    args = [to_client(a) for a in expr.args]
    if expr.name == "sum":
        return models.SumExpression(sum=args)
    if expr.name == "mult":
        return models.MultExpression(mult=args)
    if expr.name == "max":
        return models.MaxExpression(max=args)
    if expr.name == "min":
        return models.MinExpression(min=args)
    if expr.name == "neg":
        return models.NegExpression(neg=args[0])
    if expr.name == "exp":
        return models.ExpExpression(exp=args[0])
    if expr.name == "abs":
        return models.AbsExpression(abs=args[0])
    if expr.name == "div":
        return models.DivExpression(div=models.DivParams(left=args[0], right=args[1],
                                                         by_zero_default=0.0))
    raise ValueError(f"unknown formula operation {expr.name!r}")


def text(expr: Expr) -> str:
    """The formula as one line (``bench search`` and docs show it)."""
    if isinstance(expr, Const):
        return f"{expr.value:g}"
    if isinstance(expr, Var):
        return expr.key
    if isinstance(expr, Cond):
        return "filter(logic)"
    assert isinstance(expr, Op)
    inner = [text(a) for a in expr.args]
    sym = {"sum": " + ", "mult": " * "}.get(expr.name)
    if sym:
        return "(" + sym.join(inner) + ")"
    return f"{expr.name}({', '.join(inner)})"


def no_evidence_below_floor(presence: np.ndarray, *others: np.ndarray) -> tuple[np.ndarray, ...]:
    """Copies of a label's presence and its other evidence columns with every clip whose presence
    is under :data:`PRESENCE_FLOOR` set to 0 (no evidence)."""
    keep = np.asarray(presence) >= PRESENCE_FLOOR
    return tuple(np.where(keep, np.asarray(a, dtype=float), 0.0) for a in (presence, *others))


def clip_orders(clip_ids: Sequence[str]) -> dict[str, float]:
    """Clip id -> its :data:`ORDER` value: ``(n - i) / n`` for the ``i``-th smallest of ``n``."""
    n = len(clip_ids)
    return {cid: (n - i) / n for i, cid in enumerate(sorted(clip_ids))}


def soft_payload(label_fields: Mapping[str, Sequence[float]], order: float) -> dict[str, Any]:
    """The soft-evidence payload of one clip from label -> (p, p3, onset s, offset s): the five
    maps of :data:`SOFT_FIELDS`, :data:`EVIDENCE` (labels sorted; none for no evidence) and the
    clip's :data:`ORDER` value (:func:`clip_orders`)."""
    out: dict[str, Any] = {f: {} for f in SOFT_FIELDS}
    out[ORDER] = float(order)
    for label in sorted(label_fields):
        p, p3, on, off = (float(x) for x in label_fields[label])
        check_label(label, "soft field")
        out[PRESENCE][label] = p
        out[PRESENCE_TOP3][label] = p3
        out[ONSET][label] = on
        out[OFFSET][label] = off
        out[DURATION][label] = off - on
    out[EVIDENCE] = sorted(label_fields)
    return out


# --- the evidence as sparse vectors: what Qdrant reads a formula's variables from -------------

CLIP_VECTOR = "soft_clip"
"""the sparse vector of a clip's :data:`ORDER` value (dimension 0): what the order search of
the clips outside the evidence walks (:func:`order_search`; :data:`ORDER_VECTOR` holds the value
densely, with the constant 1 a condition's prefetch scores)"""
EVIDENCE_VECTORS = (PRESENCE, PRESENCE_TOP3, ONSET, OFFSET, COUNT_FIELD, CLIP_VECTOR)
"""the named sparse vectors (plain dot product, no IDF) of a collection holding soft evidence:
presence, top-3 presence, onset and offset (:data:`TIME_FIELDS` in milliseconds) and the repeat
counts, dimension ``i`` the ``i``-th label of :func:`evidence_dims`; and :data:`CLIP_VECTOR`"""
EVIDENCE_LABELS = "evidence_labels"
"""the collection record's ``extra`` key listing the labels in dimension order"""
TIME_FIELDS = (ONSET, OFFSET)
"""held in the vectors as whole milliseconds (:func:`milliseconds`); a formula reads
``$score / 1000``, and a duration as ``off / 1000 - on / 1000``, as the payload's seconds are
made (``soft_payload``), so no time is rounded to float32"""
VECTOR_FIELDS = (PRESENCE, PRESENCE_TOP3, ONSET, OFFSET)
"""the soft fields with a vector each (a duration is read from the onset and offset)"""
ORDER_QUERY = Sparse((0,), (1.0,))
ORDER_VECTOR = "soft_clip_order"
"""the dense vector ``[ORDER, 1]`` of every point holding evidence, ``soft_clip`` as a dense
vector: what :func:`order_search` and a condition's prefetch (:func:`read_by_prefetch`) search,
exactly (``Request.exact``). Kept to a selective filter, Qdrant scores just the points the
filter's index names, where a sparse search walks every point's posting and checks the filter
on each (docs/qdrant.md, "Formula speed")."""
ORDER_DENSE = (1.0, 0.0)
ONE_DENSE = (0.0, 1.0)
EVIDENCE_DENSE = {ORDER_VECTOR: VectorSpec(2, "dot")}
SEARCH_SEGMENTS = 2
"""segments a detected collection keeps on Edge (``Store.create(segments=)``): Edge searches a
shard's segments in parallel, one thread each, so a soft query runs on two cores (1.3 times as
fast on the real payload; the formula speed: docs/performance.md). Exactly equal scores may then
come back in another order, which the retrievers' tie rule makes no difference to. Joint collections
keep one: sealing a segment indexes its dense vectors (HNSW), and a model's search must stay
exact."""
EVIDENCE_COUNTS = "evidence_counts"
"""the collection record's ``extra`` key: per label in dimension order, how many points hold
evidence for it (what bounds a search's limit: :func:`evidence_bound`)"""


def evidence_dims(labels: Sequence[str]) -> dict[str, int]:
    """Label -> its dimension in the evidence vectors: its place among the sorted labels."""
    return {lab: i for i, lab in enumerate(sorted(set(labels)))}


def evidence_record(dims: Mapping[str, int], payloads: Iterable[Mapping[str, Any]]
                    ) -> dict[str, list]:
    """What a collection holding evidence vectors records of them (its ``extra``): the labels in
    dimension order and how many of ``payloads`` (its points') hold evidence for each;
    :func:`recorded_dims` and :func:`recorded_counts` read them back."""
    order = sorted(dims, key=dims.__getitem__)
    counts = dict.fromkeys(order, 0)
    for pl in payloads:
        for lab in pl.get(EVIDENCE) or ():
            counts[lab] += 1
    return {EVIDENCE_LABELS: order, EVIDENCE_COUNTS: [counts[lab] for lab in order]}


def recorded_dims(extra: Mapping[str, Any] | None) -> dict[str, int]:
    """The evidence dimensions a collection record holds (none: no evidence vectors)."""
    return {lab: i for i, lab in enumerate((extra or {}).get(EVIDENCE_LABELS) or ())}


def recorded_counts(extra: Mapping[str, Any] | None) -> dict[str, int]:
    """Label -> how many points hold evidence for it, as the collection record says."""
    extra = extra or {}
    return dict(zip(extra.get(EVIDENCE_LABELS) or (), extra.get(EVIDENCE_COUNTS) or ()))


def evidence_layout(vectors: Mapping[str, VectorSpec] | None = None) -> dict[str, Any]:
    """``Store.create`` / ``load_collection`` arguments of a collection holding evidence (a
    detected collection, a joint one with a soft part) beside the named dense ``vectors``: the
    float maps, :data:`ORDER_VECTOR` and the sparse :data:`EVIDENCE_VECTORS`."""
    return {"float_maps": (DUR_FIELD, *SOFT_FIELDS), "vectors": {**(vectors or {}), **EVIDENCE_DENSE},
            "plain_sparse": EVIDENCE_VECTORS}


def evidence_point(clip_id: str, payload: Mapping[str, Any], dims: Mapping[str, int],
                   vectors: Mapping[str, Any] | None = None) -> PointIn:
    """The point of a clip holding evidence: ``vectors`` plus the evidence vectors
    (:func:`evidence_vectors`) and :data:`ORDER_VECTOR`; its payload plus
    :data:`EVIDENCE_IDS`."""
    ids = sorted(dims[lab] for lab in payload.get(EVIDENCE) or ())
    return PointIn(clip_id, {**(vectors or {}), **evidence_vectors(payload, dims),
                             ORDER_VECTOR: [float(payload[ORDER]), 1.0]},
                   {**payload, EVIDENCE_IDS: ids})


def evidence_vectors(payload: Mapping[str, Any], dims: Mapping[str, int]) -> dict[str, Sparse]:
    """The sparse vectors of one point from its soft payload (:func:`soft_payload`, and
    ``count``): a label's value in each field's vector, zeros left out (a search scores a point
    it lacks 0, and so does a formula variable's default)."""
    out: dict[str, Sparse] = {}
    for field in (*VECTOR_FIELDS, COUNT_FIELD):
        values = payload.get(field) or {}
        if field in TIME_FIELDS:
            values = {lab: milliseconds(v, field, lab) for lab, v in values.items()}
        items = sorted((dims[lab], float(v)) for lab, v in values.items() if float(v) != 0.0)
        if items:
            out[field] = Sparse(tuple(i for i, _ in items), tuple(v for _, v in items))
    out[CLIP_VECTOR] = Sparse((0,), (float(payload[ORDER]),))
    return out


def milliseconds(seconds: float, field: str, label: str) -> int:
    """A stored time as whole milliseconds, which a float32 vector holds exactly (up to 4.6 h):
    the formula divides it by 1000 and gets the payload's seconds bit for bit."""
    ms = round(float(seconds) * 1000)
    if ms / 1000.0 != float(seconds) or not 0 <= ms < 2 ** 24:
        raise ValueError(f"{field}.{label!r}: {seconds!r} s is not a whole number of milliseconds "
                         "in 0 to 4.6 hours")
    return ms


def order_search(limit: int, flt: qm.Filter | None, walk: bool = False) -> Request:
    """The points ``flt`` admits with the largest :data:`ORDER` first (the smallest clip ids),
    each scored by its :data:`ORDER` value, exactly, so a formula reads the value as that
    prefetch's score. A search of :data:`ORDER_VECTOR` (Qdrant scores the points the filter's
    index names); ``walk``: of ``soft_clip``'s dimension 0 instead (Qdrant walks every point
    and checks the filter on each), cheaper where ``flt`` admits most points and ``limit`` is
    small (the clips outside the evidence: 0.08 ms a query on the real payload, and the query
    0.4 ms slower with that search dense)."""
    if walk:
        return Request(limit=limit, nearest=ORDER_QUERY, using=CLIP_VECTOR, flt=flt)
    return Request(limit=limit, nearest=ORDER_DENSE, using=ORDER_VECTOR, flt=flt, exact=True)


def is_order_search(req: Request) -> bool:
    return ((req.using == ORDER_VECTOR and tuple(req.nearest or ()) == ORDER_DENSE)
            or (req.using == CLIP_VECTOR and req.nearest == ORDER_QUERY))


def evidence_filter(logic: Node, dims: Mapping[str, int]) -> qm.Filter:
    """The clips whose soft value can differ from the rest: with evidence for every label the
    logic requires (:func:`required`), or, when it requires none, for any label it mentions;
    read from :data:`EVIDENCE_IDS`. A label without a dimension has no evidence in any clip: its
    id -1 matches nothing."""
    from qdrant_client.http import models

    def ident(label: str) -> int:
        return dims.get(label, -1)
    need = sorted(required(logic))
    if need:
        return models.Filter(must=[models.FieldCondition(
            key=EVIDENCE_IDS, match=models.MatchValue(value=ident(lab))) for lab in need])
    return models.Filter(must=[models.FieldCondition(
        key=EVIDENCE_IDS, match=models.MatchAny(any=sorted({ident(lab) for lab in labels(logic)})))])


def evidence_bound(logic: Node, counts: Mapping[str, int], n_points: int) -> int:
    """How many points :func:`evidence_filter` can admit at most, from the recorded counts
    (:func:`recorded_counts`): the smallest count of a required label, else the sum over the
    mentioned ones (at most ``n_points``, at least 1). A search kept to the evidence asks for
    this many, not for the whole collection: Qdrant sizes its buffers by the limit (about a
    tenth of a query's time on the real payload)."""
    need = required(logic)
    if need:
        got = min(counts.get(lab, 0) for lab in need)
    else:
        got = sum(counts.get(lab, 0) for lab in set(labels(logic)))
    return max(1, min(int(n_points), got))


def _both(a: qm.Filter | None, b: qm.Filter | None) -> qm.Filter | None:
    from qdrant_client.http import models
    return a if b is None else b if a is None else models.Filter(must=[a, b])


OUTSIDE = -1e30
"""what ``$score[0]`` reads on a point the first prefetch did not bring (:func:`kept_to_first`)"""


def kept_to_first(expr: Expr) -> tuple[Expr, float]:
    """``expr`` (``$score`` read as ``$score[0]``) plus ``min(0, $score[0] + 1e29)``, and the score
    threshold ``-1e29``: on a point the first prefetch brings (its score far above -1e29) the
    added term is exactly 0, so the value is unchanged; a point only the other prefetches bring
    reads ``$score[0] = -1e30`` and falls under the threshold. So a formula over several
    prefetches ranks the first one's points only (a hybrid's model candidates, whatever its
    evidence searches also find)."""
    first = Var("$score[0]", default=OUTSIDE)

    def walk(e: Expr) -> Expr:
        if isinstance(e, Var) and e.key in (SCORE_VAR, first.key):
            return first
        if isinstance(e, Op):
            return Op(e.name, tuple(walk(a) for a in e.args))
        return e
    cut = OUTSIDE / 10
    return add(walk(expr), Op("min", (Const(0.0), add(first, Const(-cut))))), cut


def read_by_prefetch(expr: Expr, prefetch: Sequence[Request], dims: Mapping[str, int],
                     limit: int, restrict: qm.Filter | None, conditions: bool = True
                     ) -> tuple[Expr, tuple[Request, ...]]:
    """``expr`` reading no payload: each evidence variable becomes the score of a prefetch that
    searches its field's sparse vector for its label's dimension (``$score[i]``, default 0), so
    Qdrant evaluates the formula from search scores instead of parsing each point's payload per
    variable read (docs/qdrant.md, "Soft evidence in the detected payload"). Returns the
    expression and the prefetches, ``prefetch`` first (they decide which points are rescored)
    and the new ones after them.

    - ``restrict``: a filter every new prefetch keeps to (``None``: none). A point outside it
      that ``prefetch`` brings reads every variable at its default, so it must admit every
      point whose variables can differ from their defaults and matter.
    - :data:`ORDER` reads the sum of the scores of the :func:`order_search` es among
      ``prefetch`` (each point is in one of them); ``$score`` stays ``prefetch[0]``'s score.
    - A condition (``conditions``) becomes the score of a prefetch scoring 1 where the filter and
      ``restrict`` admit the point (else the default 0): so ``restrict`` must hold every point
      the condition admits among the rescored ones. ``conditions=False`` keeps it a formula
      condition (Qdrant checks it on each rescored point's payload).
    - A label without a dimension has no evidence anywhere: its variables read 0."""
    out = list(prefetch)
    orders = [i for i, p in enumerate(out) if is_order_search(p)]
    made: dict[Hashable, Expr] = {}

    def scored(key: Hashable, req: Request) -> Expr:
        if key not in made:
            out.append(req)
            made[key] = Var(f"$score[{len(out) - 1}]")
        return made[key]

    def walk(e: Expr) -> Expr:
        if isinstance(e, Var):
            if e.key == SCORE_VAR or e.key.startswith(SCORE_VAR + "["):
                return e
            if e.key == ORDER:
                if not orders:
                    raise ValueError("the formula reads the clip order, and no prefetch is an "
                                     "order_search")
                reads = [Var(f"$score[{i}]") for i in orders]
                return add(*reads) if len(reads) > 1 else reads[0]
            field, _, quoted = e.key.partition(".")
            label = quoted[1:-1]
            if field == DURATION:
                return add(walk(Var(var_key(OFFSET, label))), neg(walk(Var(var_key(ONSET, label)))))
            if field not in EVIDENCE_VECTORS or not (quoted.startswith('"') and quoted.endswith('"')):
                raise ValueError(f"formula variable {e.key!r} is not soft evidence")
            dim = dims.get(label)
            if dim is None:
                return Const(0.0)
            got = scored(e.key, Request(limit=limit, nearest=Sparse((dim,), (1.0,)), using=field,
                                        flt=restrict))
            return Op("div", (got, Const(1000.0))) if field in TIME_FIELDS else got
        if isinstance(e, Cond):
            if not conditions:
                return e
            admitted = Request(limit=limit, nearest=ONE_DENSE, using=ORDER_VECTOR,
                               flt=_both(e.flt, restrict), exact=True)
            return scored(("cond", repr(e.flt)), admitted)
        if isinstance(e, Op):
            return Op(e.name, tuple(walk(a) for a in e.args))
        return e

    return walk(expr), tuple(out)
