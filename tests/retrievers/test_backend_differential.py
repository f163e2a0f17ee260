"""Backends that agree (issue 56): every Qdrant query each retriever family sends gives the same
ranked clips on Qdrant Edge and on qdrant-client's local mode (and on a server, sharded, with
REASONAUDIO_TEST_QDRANT_URL), over one small build with the same vectors and evidence.

Qdrant's trackers list where the engines differ (docs/qdrant.md, "Backends that agree"); this
test is what says our queries keep out of those differences. The families come from the
retriever registry: a family without a stand-in here fails :func:`test_every_family_is_run`.
Answers are compared as ordered groups of equal score (within a float32 tolerance): which of a
group of tied clips a cut keeps is the only freedom a backend has.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from qdrant_client.http import models
from test_combined_retrievers import data  # noqa: F401 (the build every backend loads: a fixture)
from detected_helpers import THRESHOLDS_ON, write_detected

from reasonaudio.detect.soft import SoftIndex
from reasonaudio.ingest.vector_files import PrecomputedOptions, VectorFiles, ingest_precomputed
from reasonaudio.retrievers import registry
from reasonaudio.retrievers.base import QueryRetriever, RetrieverOptions
from reasonaudio.retrievers.combined import CombinedRetriever
from reasonaudio.retrievers.vector import VectorRetriever
from reasonaudio.store import formula as fm
from reasonaudio.store.base import Request, Sparse
from reasonaudio.store.client import ClientStore, to_client_request
from reasonaudio.store.edge import EdgeStore
from reasonaudio.store.payload import point_id

SERVER_URL = os.environ.get("REASONAUDIO_TEST_QDRANT_URL")
SERVER_SHARDS = 3
"""shards of every collection the server case makes: a fusion computed below the root would be
fused per shard there (qdrant/qdrant#10640)"""
OTHERS = ["local", pytest.param("server", marks=pytest.mark.skipif(
    not SERVER_URL, reason="no Qdrant server here: set REASONAUDIO_TEST_QDRANT_URL to compare a "
                           "(scratch, sharded) server with Edge too (docker/docker-compose.yml)"))]

DENSE = "vectors:rnd"
BM25 = "two-stage:oracle-caption+bm25"
SOFT = "soft:yamnet"
PARTS = (DENSE, BM25, SOFT)
STAND_INS: dict[str, list[str]] = {
    "oracle": ["oracle"],
    registry.ORACLE_PERCEIVED: [registry.ORACLE_PERCEIVED],
    "bag-of-sounds": ["bag-of-sounds"],
    "random": ["random"],
    **{a.retriever: [a.retriever] for a in registry.ABLATIONS},
    registry.TWO_STAGE: [BM25, DENSE],
    registry.PRECOMPUTED: [DENSE],
    "detected:": ["detected:yamnet"],
    "soft:": [SOFT],
    "hybrid:": [f"hybrid:{DENSE},{SOFT}", f"hybrid:{BM25},{SOFT}"],
    **{kind: [f"{kind}{a},{b}" for i, a in enumerate(PARTS) for b in PARTS[i + 1:]]
       for kind in ("rrf:", "dbsf:")},
}
"""registry name -> the names this test runs for it (offline, on the small build)"""
SMALL_PREFETCH = 9
"""a combined retriever also runs with N this small: each part's list is cut inside Qdrant"""


def stand_ins(spec: registry.RetrieverSpec) -> list[str] | None:
    """What runs for a registry entry: its own name where it builds offline; for a model (every
    entry built by ``build_vector``: a text tower, then ``VectorRetriever.request``) the
    precomputed-vector retriever, which sends the same request; None: nothing covers it."""
    if spec.build is registry.build_vector:
        return [DENSE]
    return STAND_INS.get(spec.name)


def ran_names() -> list[str]:
    return list(dict.fromkeys(n for s in registry.BUILT_IN for n in stand_ins(s) or ()))


class Sharded:
    """A server store whose collections are made with several shards."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def create(self, name: str, meta: Any, **kwargs: Any) -> None:
        self.store.create(name, meta, **{**kwargs, "shard_number": SERVER_SHARDS})


def _open(kind: str, root) -> Any:
    if kind == "edge":
        return EdgeStore(root / "qdrant" / "edge", write=True)
    if kind == "local":
        return ClientStore(path=root / "qdrant" / "local", write=True)
    return Sharded(ClientStore(url=SERVER_URL, api_key=os.environ.get("QDRANT_API_KEY")))


@pytest.fixture(scope="module")
def world(data):
    """The build (test_qdrant_combined's: random evidence and vectors on Edge), and per backend a
    store holding the same detected evidence and vectors."""
    bench, payloads, thresholds, tmp = data
    stores = {"edge": _open("edge", bench.root)}
    for kind in ["local"] + (["server"] if SERVER_URL else []):
        stores[kind] = store = _open(kind, bench.root)
        write_detected(bench, store, payloads, thresholds)
        ingest_precomputed(bench, store, PrecomputedOptions(
            "rnd", VectorFiles(tmp / "c.npy", tmp / "c.txt"), VectorFiles(tmp / "q.npy", tmp / "q.txt"),
            force=True))
    yield bench, stores, SoftIndex.from_payloads(payloads, thresholds, THRESHOLDS_ON)
    for store in stores.values():
        store.close()


def answers(bench, store, name: str) -> dict[str, Any]:
    """Everything ``name`` answers on ``store``: every query at full depth and at 5, and the
    multiple-choice scores of two clips per query; a combined retriever at 5 again with a small
    N (multiple choice reads no N)."""
    r = registry.get_retriever(name, bench, RetrieverOptions(auto_ingest=True), store=store)
    n = len(bench.clips)
    try:
        out = {**_searched(bench, r, (n, 5), ""), **_chosen(bench, r)}
        if isinstance(r, CombinedRetriever):
            r.params = replace(r.params, prefetch=SMALL_PREFETCH)
            out.update(_searched(bench, r, (5,), f" N={SMALL_PREFETCH}"))
        return out
    finally:
        r.close()


def _searched(bench, r, depths: tuple[int, ...], tag: str) -> dict[str, Any]:
    """query and depth -> ("all" | "cut", the ranked hits)"""
    texts = [q.text for q in bench.queries]
    out: dict[str, Any] = {}
    for k in depths:
        got = r.search_batch(texts, k) if isinstance(r, QueryRetriever) else [r.search(t, k) for t in texts]
        for text, hits in zip(texts, got):
            out[f"{text!r} top {k}{tag}"] = ("cut" if k < len(bench.clips) else "all",
                                             [(h.clip_id, h.score) for h in hits])
    return out


def _chosen(bench, r) -> dict[str, Any]:
    n = len(bench.clips)
    out: dict[str, Any] = {}
    for i, q in enumerate(bench.queries):
        pair = [bench.clips[i % n].id, bench.clips[(7 * i + 3) % n].id]
        out[f"{q.text!r} choices {pair}"] = ("all", list(zip(pair, r.score(q.text, pair))))
    return out


def tie_groups(hits: list[tuple[str, float]], bounds: list[float]) -> list[set[str]]:
    """The clips of ``hits`` in groups of scores between consecutive ``bounds``, best first."""
    groups: dict[int, set[str]] = {}
    for cid, score in hits:
        groups.setdefault(sum(score < b for b in bounds), set()).add(cid)
    return [groups[i] for i in sorted(groups)]


def score_bounds(*lists: list[tuple[str, float]]) -> list[float]:
    """Cuts between the scores of both answers wherever two scores in a row differ by more than
    the float32 tolerance: a score and its other backend's value always share a group."""
    scores = sorted({s for hits in lists for _, s in hits if np.isfinite(s)}, reverse=True)
    return [(a + b) / 2 for a, b in zip(scores, scores[1:]) if a - b > _tolerance(a)]


def _tolerance(score: float) -> float:
    return 1e-5 * max(1.0, abs(score))


def disagreement(kind: str, a: list[tuple[str, float]], b: list[tuple[str, float]]) -> str | None:
    """Why two answers differ beyond ties, or None. ``kind`` ``cut``: the answers were cut at a
    depth, so the last group may hold different members of a tie."""
    if [c for c, s in a if not np.isfinite(s)] != [c for c, s in b if not np.isfinite(s)]:
        return f"different unscored clips: {a} / {b}"
    if len(a) != len(b):
        return f"{len(a)} hits / {len(b)} hits"
    ga, gb = (tie_groups(hits, score_bounds(a, b)) for hits in (a, b))
    last = len(ga) - 1 if kind == "cut" else len(ga)
    if len(ga) != len(gb) or ga[:last] != gb[:last]:
        first = next((i for i, (x, y) in enumerate(zip(ga, gb)) if x != y), min(len(ga), len(gb)))
        return f"tie group {first} differs: {sorted(ga[first] if first < len(ga) else ())} / " \
               f"{sorted(gb[first] if first < len(gb) else ())}"
    got = dict(a)
    far = [(c, got[c], s) for c, s in b if c in got and np.isfinite(s)
           and abs(got[c] - s) > _tolerance(s)]
    return f"scores differ: {far[:3]}" if far else None


def test_every_family_is_run():
    """Each registry entry runs itself or a stand-in sending its query; a new family must name
    one in STAND_INS (or be a model, run as precomputed vectors through the same request)."""
    missing = [s.name for s in registry.BUILT_IN if not stand_ins(s)]
    assert not missing, f"no differential stand-in for {missing}: add them to STAND_INS"
    from reasonaudio.retrievers.stored_vectors import PrecomputedRetriever

    assert issubclass(PrecomputedRetriever, VectorRetriever)
    assert PrecomputedRetriever.request is VectorRetriever.request


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("name", ran_names())
def test_backends_rank_alike(world, name, other):
    bench, stores, _ = world
    want, got = answers(bench, stores["edge"], name), answers(bench, stores[other], name)
    assert want.keys() == got.keys()
    wrong = {key: why for key, (kind, hits) in want.items()
             if (why := disagreement(kind, hits, got[key][1]))}
    assert not wrong, f"{name}: {len(wrong)} of {len(want)} answers differ on {other}, e.g. " \
                      f"{next(iter(wrong.items()))}"
    ranked = [hits for kind, hits in want.values() if kind == "all" and len(hits) > 1]
    assert ranked  # not vacuous: answers with something to order


def _combined(world, name: str, kind: str = "edge") -> CombinedRetriever:
    bench, stores, _ = world
    r = registry.get_retriever(name, bench, RetrieverOptions(auto_ingest=True), store=stores[kind])
    assert isinstance(r, CombinedRetriever)
    return r


@pytest.mark.parametrize("kind", ["edge", "local"])
def test_a_fusions_bm25_part_ranks_equal_bm25_values_by_clip_id(world, kind):
    """The joint collection's BM25 weights carry the clip-order factor (formula.fused_sparse):
    the part lists no two equal scores, each is the BM25 value times ``1 + c x soft_order``, and
    clips of equal BM25 value come smallest clip id first, on every backend."""
    bench, stores, _ = world
    fused = _combined(world, f"rrf:{DENSE},{BM25}", kind)
    bm25 = next(p for p in fused.parts if p.name == BM25)
    n, c = len(bench.clips), fm.fusion_tie_weight(len(bench.clips))
    orders = fm.clip_orders([cl.id for cl in bench.clips])
    tied = 0
    for q in bench.queries:
        part = stores[kind].query_batch(fused.collection, [fused.part_request(bm25, q.text, n)])[0]
        plain = dict(zip((f.clip_id for f in part), bm25.score(q.text, [f.clip_id for f in part])))
        assert len({f.score for f in part}) == len(part), q.text
        for f in part:
            assert f.score == pytest.approx(plain[f.clip_id] * (1 + c * orders[f.clip_id]), rel=1e-6)
        keys = [(-plain[f.clip_id], f.clip_id) for f in part]
        assert keys == sorted(keys), q.text
        tied += len(plain) - len(set(plain.values()))
    assert tied > 20  # not vacuous: BM25 values of this build do tie
    fused.close()


@pytest.mark.parametrize("kind", ["edge", "local"])
def test_a_dbsf_soft_part_lists_only_clips_with_evidence(world, kind):
    """The soft part of a DBSF fusion lists the clips whose soft value reaches
    formula.DBSF_SOFT_FLOOR and no other (formula.dbsf_soft_part): a query with evidence nowhere
    lists nothing, where DBSF read a list of tie terms alone as 0.5 each on Edge and by clip id
    on local mode. RRF's soft part lists every clip its limit reaches."""
    bench, stores, python = world
    fused = _combined(world, f"dbsf:{DENSE},{SOFT}", kind)
    n, empty = len(bench.clips), 0
    for q in bench.queries:
        logic = fused.soft.parse(q.text)
        part = stores[kind].query_batch(fused.collection, [fused.part_request(fused.soft, q.text, n)])[0]
        value = dict(zip(python.clip_ids, fm.evaluate(fm.soft_formula(logic, order=False),
                                                      python.column, python.n)))
        evidence = {cid for cid, v in value.items() if v >= fm.DBSF_SOFT_FLOOR}
        assert {f.clip_id for f in part} == evidence, q.text
        assert all(f.score >= fm.DBSF_SOFT_FLOOR for f in part)
        empty += not part
    assert 0 < empty < len(bench.queries)  # queries with and without evidence
    fused.close()
    rrf = _combined(world, f"rrf:{DENSE},{SOFT}", kind)
    asked = [rrf.part_request(rrf.soft, q.text, n) for q in bench.queries]
    assert all(len(part) == n for part in stores[kind].query_batch(rrf.collection, asked))
    rrf.close()


def _fusions_below_the_root(prefetch) -> int:
    out = 0
    for p in prefetch or ():
        fused = isinstance(p.query, (models.FusionQuery, models.RrfQuery))
        out += fused + _fusions_below_the_root(p.prefetch)
    return out


def test_a_fusion_is_only_ever_the_root_of_a_query(world):
    """A sharded server fuses a prefetch's lists on each shard apart (qdrant/qdrant#10640), so
    no request may hold a fusion below its root (store.base.Request refuses one), and what the
    server backend sends for every combined family (store.client.to_client_request), in ranking
    and in multiple choice, holds none."""
    bench = world[0]
    with pytest.raises(ValueError, match="10640"):
        Request(limit=5, prefetch=(Request(limit=5, fusion="rrf", prefetch=(Request(limit=5),)),))
    ids = models.Filter(must=[models.HasIdCondition(has_id=[point_id(bench.clips[0].id)])])
    names = [n for family in ("hybrid:", "rrf:", "dbsf:") for n in STAND_INS[family]]
    for name in names:
        r = _combined(world, name)
        for q in bench.queries:
            for req in (r.request(q.text, 10), r.request(q.text, 1, ids)):
                sent = to_client_request(req)
                assert _fusions_below_the_root(sent.prefetch) == 0, name
                assert isinstance(sent.query, (models.FusionQuery, models.RrfQuery)) == \
                    (not name.startswith("hybrid:")), name
        r.close()


@pytest.mark.parametrize("values", [(0.0,), (1.0, 0.0), (-0.5, 1.0), (float("nan"),)])
def test_a_sparse_vector_holds_no_value_that_is_not_positive(values):
    """With every stored and query value above 0, no sparse search scores a point it lists 0,
    which local mode would list and Edge's and a server's indexes drop (qdrant-client#1454)."""
    with pytest.raises(ValueError, match="not above 0"):
        Sparse(tuple(range(len(values))), values)
    assert Sparse((3, 7), (0.25, 2.0)).values == (0.25, 2.0)
