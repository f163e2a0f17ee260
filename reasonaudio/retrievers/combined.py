"""Combined retrievers, each one Qdrant query per search over one joint collection.

- ``hybrid:VECTOR,soft:TAGGER``: prefetch the model's nearest ``N`` clips and rescore them with
  ``(1 - w) $score + w soft`` (``store.formula.hybrid_formula``): learned similarity and the
  soft logic in one formula. Recall at ``N`` caps it (a clip outside the model's top ``N`` is
  never seen).
- ``rrf:A,B`` / ``dbsf:A,B``: Qdrant's reciprocal-rank fusion (``k = 60``) or distribution-based
  score fusion of two prefetches, each part's own query (nearest neighbours, BM25, or the soft
  formula) limited to ``N``; the fusion is the query's root, never a prefetch (a sharded server
  fuses a prefetch per shard), and DBSF's soft part lists only clips with soft evidence
  (``store.formula.dbsf_soft_part``).

Every part must live in the query's collection, so the parts are joined into one
**joint collection** ``reasonaudio-joint-<digest of the parts>`` (docs/qdrant.md, "One
collection for several retrievers"): one point per clip with a named dense vector per model part
(copied from that model's collection), the sparse ``bm25`` vector of a BM25 part (its weights
times the clip-order factor, so a fusion reads no BM25 ties: ``store.formula.fused_sparse``),
and as payload the detected payload with its soft evidence when a part is ``soft:``, else the
ground-truth payload. It records each part's collection revision and is rebuilt when one
changes; on Edge it is made on first use (seconds: no model runs), elsewhere by
``bench ingest --model NAME``.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from qdrant_client.http import models

from reasonaudio.logic import Node
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import ModelError, QueryParseError, StoreError
from reasonaudio.models.names import Combined, parse_combined
from reasonaudio.querylang.resolve import ResolveOptions
from reasonaudio.progress import Notify
from reasonaudio.retrievers.base import QueryRetriever, Retriever, RetrieverOptions
from reasonaudio.retrievers.bm25 import SPARSE, Bm25Retriever, sparse
from reasonaudio.retrievers.soft_rank import SoftRetriever, ranked_request, restricted_request
from reasonaudio.retrievers.vector import VectorRetriever
from reasonaudio.store import formula as fm
from reasonaudio.store.base import (
    STATE_COMPLETE, CollectionMeta, PointIn, Request, Store, VectorSpec, collection_name,
)
from reasonaudio.store.collections import corpus_fingerprint, fetch_vectors, load_collection
from reasonaudio.store.payload import clip_payload, point_id

if TYPE_CHECKING:
    from qdrant_client.models import Filter



@dataclass(frozen=True)
class CombineParams:
    """What a combined retriever runs with (recorded in its results)."""

    prefetch: int = 200
    """N: each part's candidates (the hybrid's model prefetch; each fused list)"""
    weight: float = 0.5
    """hybrid: w in (1 - w) $score + w soft"""
    rrf_k: int = 60
    source: str = "default"
    """where the values come from: ``default``, or ``calibration:<manifest sha256 prefix>`` of
    the calibration build that chose them (``bench tune``: reasonaudio/experiments/combine_tuning.py)"""
    tuning: dict[str, Any] | None = None
    """the calibration build, objective, grid with each point's figures and the chosen point"""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"prefetch": self.prefetch, "weight": self.weight,
                               "rrf_k": self.rrf_k, "source": self.source}
        if self.tuning is not None:
            out["tuning"] = self.tuning
        return out


PartBuilder = Callable[[str], Retriever]


def _vector_name(part: str) -> str:
    return "v-" + hashlib.sha256(part.encode()).hexdigest()[:10]


def _kind(r: Retriever) -> str:
    if isinstance(r, SoftRetriever):
        return "soft"
    if isinstance(r, Bm25Retriever):
        return "sparse"
    if isinstance(r, VectorRetriever):
        if r.meta.distance not in ("cosine", "dot"):
            raise ModelError(f"{r.name}: {r.meta.distance} vectors cannot be combined here "
                             "(a score formula needs higher = nearer)")
        return "dense"
    raise ModelError(f"{r.name} cannot be a part of a combined retriever (its ranking is not one "
                     "Qdrant query): use model, two-stage, bm25 or soft: retrievers")


def _revision(r: Retriever) -> str:
    """A part's collection revision; a soft part's with its payload format (a detected
    collection rewritten in a newer format keeps its revision, but its payload changed)."""
    meta = getattr(r, "meta")
    fmt = (meta.extra or {}).get("format") if isinstance(r, SoftRetriever) else None
    return f"{meta.revision}+{fmt}" if fmt else str(meta.revision)


JOINT_LAYOUT = 2
"""the version of what a joint collection holds, in its revision (a joint collection of an
older layout is stale, and made again): 2, a BM25 part's weights carry the clip-order factor
(``store.formula.fused_sparse``)"""


class JointCollection:
    """The collection holding every part of a combined retriever (module docstring)."""

    def __init__(self, bench: BenchmarkView, store: Store, parts: Sequence[Retriever]) -> None:
        self.bench, self.store, self.parts = bench, store, list(parts)
        self.kinds = {r.name: _kind(r) for r in self.parts}
        names = sorted(r.name for r in self.parts)
        self.name = collection_name("joint-" + hashlib.sha256(
            json.dumps(names).encode()).hexdigest()[:12])
        self.sources = {r.name: _revision(r) for r in self.parts}
        self.revision = hashlib.sha256(json.dumps({"sources": self.sources, "layout": JOINT_LAYOUT},
                                                  sort_keys=True).encode()).hexdigest()[:16]

    def vector(self, part: str) -> str:
        return SPARSE if self.kinds[part] == "sparse" else _vector_name(part)

    def ready(self) -> bool:
        if not self.store.exists(self.name):
            return False
        meta = self.store.meta(self.name)
        return (meta.state == STATE_COMPLETE and meta.revision == self.revision
                and meta.corpus_sha256 == corpus_fingerprint(self.bench))

    def ensure(self, auto: bool | None, command: str, notify: Notify | None = None) -> None:
        if self.ready():
            return
        if not (self.store.backend == "edge" if auto is None else auto):
            raise StoreError(f"joint collection {self.name!r} for {', '.join(self.sources)} is "
                             f"missing or stale ({self.store.backend}); make it with `{command}`")
        if notify:
            notify(f"joining {', '.join(self.sources)} into {self.name!r} (one collection, so "
                   "one Qdrant query searches them together)")
        self.build()

    def build(self) -> None:
        ids = [c.id for c in self.bench.clips]
        by_id = self.bench.clip_by_id
        dense = {r.name: fetch_vectors(self.store, r.collection, ids)  # type: ignore[attr-defined]
                 for r in self.parts if self.kinds[r.name] == "dense"}
        for part, got in dense.items():
            if len(got) != len(ids):
                raise StoreError(f"{part}: its collection lacks {len(ids) - len(got)} clips")
        sparse_vecs: dict[str, Any] = {}
        captions: dict[str, str] = {}
        payloads: dict[str, dict[str, Any]] = {}
        for r in self.parts:
            if self.kinds[r.name] == "sparse":
                assert isinstance(r, Bm25Retriever)
                captions = r.captions(ids)
                orders = fm.clip_orders(ids)
                sparse_vecs = {c: fm.fused_sparse(sparse(r.model.embed_document(captions[c])),
                                                  orders[c], len(ids)) for c in ids}
            elif self.kinds[r.name] == "soft":
                assert isinstance(r, SoftRetriever)
                payloads = {f.clip_id: dict(f.payload or {})
                            for f in self.store.scroll(r.collection, None, fields=True)}
        specs = {self.vector(r.name): VectorSpec(r.meta.dimension, r.meta.distance)  # type: ignore[attr-defined]
                 for r in self.parts if self.kinds[r.name] == "dense"}
        dims = fm.evidence_dims(self.bench.labels)

        def make(chunk: Sequence[str]) -> list[PointIn]:
            out = []
            for cid in chunk:
                vec: dict[str, Any] = {self.vector(p): [float(x) for x in d[cid]]
                                       for p, d in dense.items()}
                if sparse_vecs:
                    vec[SPARSE] = sparse_vecs[cid]
                payload = payloads.get(cid) or clip_payload(by_id[cid])
                if captions:
                    payload = {**payload, "caption": captions[cid]}
                out.append(fm.evidence_point(cid, payload, dims, vec) if payloads
                           else PointIn(cid, vec, payload))
            return out

        meta = CollectionMeta(model="joint:" + ",".join(sorted(self.sources)), revision=self.revision,
                              dimension=1, distance="dot", pooling="none",
                              corpus_sha256=corpus_fingerprint(self.bench),
                              extra={"kind": "joint", "parts": self.sources,
                                     "vectors": {p: self.vector(p) for p in self.sources},
                                     **(fm.evidence_record(dims, payloads.values())
                                        if payloads else {})})
        layout = (fm.evidence_layout(specs) if payloads
                  else {"float_maps": ("dur", *fm.SOFT_FIELDS), "vectors": specs})
        load_collection(self.store, self.name, meta, ids, make, force=True,
                        index_labels=self.bench.labels, sparse=(SPARSE,) if sparse_vecs else (),
                        batch_size=512, **layout)


DBSF_CHOICE_DECIMALS = 4
"""DBSF over the choices alone: each part's range is spread over its two points, so each part
puts them at two values symmetric about its centre, and a pair the parts disagree on is a tie.
Qdrant computes those values in float32, so a tie comes back as two sums a few ulps apart, which
would break it by the CPU's rounding; the scores are compared at 4 decimals, far below the gap
between any two outcomes (a sixth or more) and far above float32 noise."""


class CombinedRetriever(QueryRetriever):
    """``hybrid:`` / ``rrf:`` / ``dbsf:`` (module docstring); one Qdrant query per search."""

    def __init__(self, combined: Combined, bench: BenchmarkView, store: Store,
                 parts: Sequence[Retriever], params: CombineParams, options: RetrieverOptions) -> None:
        self.name = combined.name
        self.combined = combined
        self.bench, self.store = bench, store
        self.parts = list(parts)
        self.params = params
        self.joint = JointCollection(bench, store, parts)
        self.joint.ensure(options.auto_ingest, f"bench ingest --data {bench.root} --model {self.name}",
                          options.hooks.notify)
        self.collection = self.joint.name
        self.n_points = store.count(self.collection)
        extra = store.meta(self.collection).extra
        self.dims, self.counts = fm.recorded_dims(extra), fm.recorded_counts(extra)
        self.soft = next((p for p in parts if isinstance(p, SoftRetriever)), None)
        self._last_text: str | None = None
        self.part_text: dict[str, Callable[[str], str]] = {}
        """part name -> how that part reads the query text (as it is unless set: an interleaved
        query's examples, each part by its own reading, ``retrievers/example_readers.py``)"""

    def text_for(self, part: Retriever, text: str) -> str:
        how = self.part_text.get(part.name)
        return how(text) if how is not None else text

    # --- the query of one part and of the whole -------------------------------------------
    def _logic(self, text: str) -> Node | None:
        return self.soft.parse(self.text_for(self.soft, text)) if self.soft is not None else None

    def reuse_parse(self, text: str, logic: Any, resolve: ResolveOptions | None) -> None:
        for part in self.parts:  # each keeps it only where it reads the text alike
            part.reuse_parse(text, logic, resolve)

    def part_request(self, part: Retriever, text: str, limit: int, flt: Filter | None = None) -> Request:
        kind = self.joint.kinds[part.name]
        text = self.text_for(part, text)
        if kind == "dense":
            assert isinstance(part, VectorRetriever)
            return Request(limit=limit, nearest=part.query_vector(text).tolist(),
                           using=self.joint.vector(part.name), flt=flt)
        if kind == "sparse":
            assert isinstance(part, Bm25Retriever)
            return Request(limit=limit, nearest=part.query_sparse(text), using=SPARSE, flt=flt)
        assert isinstance(part, SoftRetriever)
        logic = part.parse(text)
        if flt is not None:  # multiple choice: the choices in the fused soft order
            req = restricted_request(fm.fused_soft_formula(logic, self.n_points), flt, limit, self.dims)
        else:
            req = ranked_request(fm.fused_soft_formula(logic, self.n_points), logic, limit,
                                 self.n_points, self.dims, self.counts)
        return fm.dbsf_soft_part(req) if self.combined.kind == "dbsf" else req

    def request(self, text: str, limit: int, flt: Filter | None = None, depth: int | None = None) -> Request:
        """One Qdrant query: each part's own query limited to ``N = max(prefetch, depth)``
        (``depth`` defaults to ``limit``; multiple choice, ``flt``: the choices themselves)."""
        self._last_text = text
        p = self.params
        n = limit if flt is not None else max(p.prefetch, limit if depth is None else depth)
        if self.combined.kind == "hybrid":
            logic = self._logic(text)
            assert logic is not None
            model = self.part_request(self.parts[0], text, n, flt)
            formula, cut = fm.kept_to_first(fm.hybrid_formula(logic, p.weight, order=flt is None))
            keep = fm.evidence_filter(logic, self.dims) if flt is None else flt
            bound = fm.evidence_bound(logic, self.counts, self.n_points) if flt is None else n
            base = (model, fm.order_search(bound, keep)) if flt is None else (model,)
            formula, prefetch = fm.read_by_prefetch(formula, base, self.dims, bound, keep)
            return Request(limit=limit, formula=formula, prefetch=prefetch, score_threshold=cut)
        return Request(limit=limit, fusion=self.combined.kind, rrf_k=p.rrf_k,
                       prefetch=tuple(self.part_request(r, text, n, flt) for r in self.parts))

    def wider_request(self, text: str, limit: int, first: int) -> Request:
        return self.request(text, limit, depth=first)  # the parts as deep as the first ask

    # --- Retriever -------------------------------------------------------------------------
    def prepare(self, texts: Sequence[str]) -> None:
        for part in self.parts:
            part.prepare(texts)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        if not clip_ids:
            return []
        ids = models.Filter(must=[models.HasIdCondition(has_id=[point_id(c) for c in clip_ids])])
        found = self.answers([self.request(text, len(clip_ids), ids)])[0]
        got = {f.clip_id: f.score for f in found}
        scores = [got.get(c, float("-inf")) for c in clip_ids]
        if self.combined.kind == "dbsf":
            scores = [round(s, DBSF_CHOICE_DECIMALS) if math.isfinite(s) else s for s in scores]
        return scores

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        """The score breakdown: each part's own score of the clip (and the soft constraints)."""
        text = self._last_text
        if text is None or not clip_ids:
            return {}
        per_part = {p.name: dict(zip(clip_ids, p.score(self.text_for(p, text), list(clip_ids))))
                    for p in self.parts}
        soft = self.soft.breakdown(clip_ids, self._logic(text)) if self.soft is not None else {}
        how = (f"(1 - {self.params.weight:g}) x model + {self.params.weight:g} x soft"
               if self.combined.kind == "hybrid" else f"{self.combined.kind} of")
        out = {}
        for cid in clip_ids:
            parts = "; ".join(f"{p} {per_part[p][cid]:.3f}" for p in per_part)
            out[cid] = f"{how}: {parts}" + (f" | {soft[cid]}" if cid in soft else "")
        return out

    def recall_at_prefetch(self, texts: Sequence[str], relevant: Sequence[set[str]]) -> float:
        """Hybrid: the mean share of each query's relevant clips among the model's nearest N
        (the hybrid's ceiling: it rescores only those)."""
        asked = []
        for t, rel in zip(texts, relevant):
            try:  # an interleaved text its part cannot read counts as nothing recalled
                asked.append((self.part_request(self.parts[0], t, self.params.prefetch), rel))
            except QueryParseError:
                asked.append((None, rel))
        answers = iter(self.answers([r for r, _ in asked if r is not None]))
        got = [{f.clip_id for f in next(answers)} if r is not None else set() for r, _ in asked]
        shares = [len(rel & found) / len(rel) for found, (_, rel) in zip(got, asked) if rel]
        return sum(shares) / len(shares) if shares else 0.0

    def describe(self) -> dict[str, Any]:
        formula = None
        if self.combined.kind == "hybrid":
            for q in self.bench.queries:  # the first query its soft part reads
                try:
                    formula = fm.text(fm.hybrid_formula(self._logic(q.text), self.params.weight))
                    break
                except QueryParseError:
                    continue
        recall = None
        if self.combined.kind == "hybrid" and self.bench.queries:
            recall = round(self.recall_at_prefetch(
                [q.text for q in self.bench.queries],
                [set(self.bench.qrels.get(q.id, ())) for q in self.bench.queries]), 4)
        return {"name": self.name, "kind": self.combined.kind, "collection": self.collection,
                "recall_at_prefetch": recall,
                "parts": {p.name: p.describe() for p in self.parts}, "params": self.params.to_json(),
                "joint": {"revision": self.joint.revision, "sources": self.joint.sources},
                "example_formula": formula, "store": self.store.describe()}

    def close(self) -> None:
        for part in self.parts:
            part.close()


def build_combined(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions,
                   build_part: PartBuilder, params: CombineParams | None = None) -> CombinedRetriever:
    combined = parse_combined(name)
    parts: list[Retriever] = []
    try:
        for part in combined.parts:
            parts.append(build_part(part))
        for r in parts:
            _kind(r)  # refuse parts that cannot be combined before anything is written
        return CombinedRetriever(combined, bench, store, parts, params or combine_params(bench, name),
                                 options)
    except BaseException:
        for r in parts:
            r.close()
        raise


PARAMS_FILE = "combine-params.json"
"""``DATA/results/combine-params.json``: name -> the parameters ``bench tune`` chose"""


def combine_params(bench: BenchmarkView, name: str) -> CombineParams:
    """The parameters chosen for ``name`` on the calibration build (``bench tune`` output saved
    beside the benchmark), or the defaults (``source: default``)."""
    path = bench.root / "results" / PARAMS_FILE
    if not path.is_file():
        return CombineParams()
    try:
        chosen = json.loads(path.read_text(encoding="utf-8")).get(name)
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        raise StoreError(f"{path}: unreadable ({exc}); rerun `bench tune` or delete it") from None
    if chosen is None:
        return CombineParams()
    try:
        return CombineParams(prefetch=int(chosen["prefetch"]), weight=float(chosen["weight"]),
                             rrf_k=int(chosen["rrf_k"]), source=str(chosen["source"]),
                             tuning=chosen.get("tuning"))
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{path}: {name}: malformed parameters ({exc}); rerun `bench tune`") from None
