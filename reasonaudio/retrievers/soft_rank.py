"""Retrievers that rank every clip by a Qdrant score formula over the detected evidence.

``soft:TAGGER`` ranks by the soft logic (``store.formula.soft_formula``); ``detected:TAGGER``
(:mod:`reasonaudio.retrievers.detected`) by the hard filter plus the soft logic
(``detected_formula``). Each search is one Qdrant query, and a run's queries go in batches
(``Store.query_batch``): a formula query rescoring what two order searches bring,

- every clip with soft evidence for the labels the query requires (``soft_label_ids``),
- and ``k + margin`` of the others, smallest clip ids first: they lack a required label (or
  any mentioned one), so every one of them scores the formula at its defaults, the same value;
  any of them stands for all,

so the formula is evaluated where it can differ. Its variables are the scores of sparse
searches over the evidence vectors (``store.formula.read_by_prefetch``): Qdrant parses no
payload. Every formula ends with the clip-order tie term (``store.formula.order_term``), which
separates the values at 0. Values exactly equal above 0 (YAMNet's quantised rows make them)
come back from Qdrant in no fixed order; the project's tie rule (``retrievers/base.py``) orders
the returned points by clip id (asking again for more when a tie group is wider than its
margin), so a soft or detected ranking is the same from every send, every backend and numpy. A
fusion reads its soft part inside Qdrant, so that part ranks by
``store.formula.fused_soft_formula``, which has no equal float32 values (docs/qdrant.md,
"Repeatable answers"). Nothing is re-ranked in Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
from qdrant_client.http import models

from reasonaudio.models.names import SOFT
from reasonaudio.logic import Node, conjuncts, describe
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.detect.collection import FORMAT, DetectOptions, _check, detect_command, detected_collection
from reasonaudio.detect.soft import SEMANTICS
from reasonaudio.errors import StoreError
from reasonaudio.retrievers.base import QueryRetriever, RetrieverOptions
from reasonaudio.retrievers.oracle import PayloadRetriever
from reasonaudio.store import formula as fm
from reasonaudio.store.base import Fields, Request, Store
from reasonaudio.store.collections import require_ready
from reasonaudio.store.payload import COUNT_FIELD, point_id

if TYPE_CHECKING:
    from qdrant_client.models import Filter



def ranked_request(expr: fm.Expr, logic: Node, limit: int, n_points: int,
                   dims: Mapping[str, int], counts: Mapping[str, int], fields: Fields = False) -> Request:
    """One formula query over the whole collection: the clips ``formula.evidence_filter`` admits,
    plus the ``limit`` smallest clip ids of the rest (all of which score the same but for the tie
    term: 0, or the formula's value at its defaults when the logic requires no label). Both are
    order searches (their scores are the clip-order values), and every evidence variable is read
    from a search kept to the evidence clips (``formula.read_by_prefetch``): outside them a
    variable is at its default or multiplied by a required label's presence 0. Those searches
    ask for as many points as the evidence can hold (``formula.evidence_bound``, from the
    recorded ``counts``). A hard filter is a prefetch kept to them too when the logic requires a
    label (it admits no clip lacking one); else it stays a condition the formula checks."""
    evidence = fm.evidence_filter(logic, dims)
    bound = fm.evidence_bound(logic, counts, n_points)
    base = (fm.order_search(bound, evidence),
            fm.order_search(limit, models.Filter(must_not=[evidence]), walk=True))
    formula, prefetch = fm.read_by_prefetch(expr, base, dims, bound, evidence,
                                            conditions=bool(fm.required(logic)))
    return Request(limit=limit, formula=formula, fields=fields, prefetch=prefetch)


def restricted_request(expr: fm.Expr, flt: Filter | None, limit: int, dims: Mapping[str, int]) -> Request:
    """The formula over the (at most ``limit``) points ``flt`` admits, every search kept to them
    (multiple choice: the choices)."""
    formula, prefetch = fm.read_by_prefetch(expr, (fm.order_search(limit, flt),), dims, limit, flt)
    return Request(limit=limit, formula=formula, prefetch=prefetch)


def by_id_request(expr: fm.Expr, clip_ids: Sequence[str], dims: Mapping[str, int]) -> Request:
    """The formula for these clips only (multiple choice)."""
    ids = models.Filter(must=[models.HasIdCondition(has_id=[point_id(c) for c in clip_ids])])
    return restricted_request(expr, ids, len(clip_ids), dims)


class FormulaRetriever(QueryRetriever, PayloadRetriever):
    """Ranks a detected collection by ``expression(logic)`` in one Qdrant query per search."""

    kind = "soft"

    def __init__(self, name: str, bench: BenchmarkView, store: Store, collection: str,
                 command: str) -> None:
        super().__init__(bench, store, collection)
        self.name = name
        self.meta = require_ready(store, collection, bench, command)
        if (self.meta.extra or {}).get("format") != FORMAT:
            raise StoreError(f"collection {collection!r} was written by an older `bench detect` "
                             f"without the soft evidence fields; rerun `{command}`")
        self.n_points = store.count(collection)
        self.dims = fm.recorded_dims(self.meta.extra)
        self.counts = fm.recorded_counts(self.meta.extra)
        self._last: Node | None = None

    def expression(self, logic: Node, order: bool = True) -> fm.Expr:
        """The ranking formula; ``order=False``: without the clip-order tie term (multiple
        choice: two equal soft values are a tie, not a win for the smaller clip id)."""
        return fm.soft_formula(logic, order)

    def request(self, text: str, limit: int) -> Request:
        logic = self.parse(text)
        self._last = logic
        return ranked_request(self.expression(logic), logic, limit, self.n_points, self.dims,
                              self.counts)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        if not clip_ids:
            return []
        logic = self.parse(text)
        found = self.answers([by_id_request(self.expression(logic, order=False), clip_ids, self.dims)])[0]
        got = {f.clip_id: f.score for f in found}
        return [got.get(c, float("-inf")) for c in clip_ids]

    def breakdown(self, clip_ids: Sequence[str], logic: Node | None = None) -> dict[str, str]:
        """Per hit: the soft value of each top-level constraint of ``logic`` (default: the last
        query), evaluated from the clip's stored evidence (what the formula multiplied)."""
        logic = logic or self._last
        if logic is None or not clip_ids:
            return {}
        found = self.store.retrieve(self.collection, list(clip_ids), fields=SOFT_PAYLOAD_FIELDS)
        payloads = {f.clip_id: f.payload or {} for f in found}
        return {cid: soft_line(payloads.get(cid, {}), logic) for cid in clip_ids}

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        return self.breakdown(clip_ids)

    def describe(self) -> dict[str, Any]:
        extra = self.meta.extra or {}
        return {**super().describe(), "revision": self.meta.revision, "mode": extra.get("mode"),
                "optimistic": bool(extra.get("optimistic")), "kind": self.kind,
                "ranking": "one Qdrant formula query per search (store/formula.py)",
                "soft": SEMANTICS}


SOFT_PAYLOAD_FIELDS = ("clip_id", *fm.SOFT_FIELDS, COUNT_FIELD)
"""the payload fields :func:`soft_line` reads"""


def soft_line(payload: dict[str, Any], logic: Node) -> str:
    """``soft: C1 0.912; C2 0.055``: the soft value of each top-level constraint of ``logic``
    evaluated from one clip's stored evidence (what the formula multiplied)."""
    def column(key: str) -> np.ndarray:
        field, _, quoted = key.partition(".")
        return np.array([float((payload.get(field) or {}).get(quoted[1:-1], 0.0))])
    return "soft: " + "; ".join(f"{describe(c)} {fm.evaluate(fm.soft_expr(c), column, 1)[0]:.3f}"
                                for c in conjuncts(logic))


class SoftRetriever(FormulaRetriever):
    """``soft:TAGGER``: every clip ranked by the soft logic alone (no hard filter)."""


def parse_soft(name: str) -> tuple[str, str]:
    """``soft:yamnet[-enrolled|-trained]`` -> (tagger, mode), as ``detected:``."""
    from reasonaudio.detect.collection import parse_detected
    return parse_detected(name)


def build_soft(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> SoftRetriever:
    tagger, mode = parse_soft(name)
    _check(DetectOptions(tagger=tagger, mode=mode))
    command = detect_command(bench.root, tagger, mode)
    return SoftRetriever(name, bench, store, detected_collection(tagger, mode), command)
