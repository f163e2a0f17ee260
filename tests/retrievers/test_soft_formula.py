"""The soft logic as a Qdrant score formula (store/formula.py), on every backend.

- differential: for every query of a small build (and random logic trees), the score Qdrant's
  formula gives each clip == the Python soft score (detect/soft.py) within 1e-5, for soft and
  detected ranking, on Edge, local mode and (with REASONAUDIO_TEST_QDRANT_URL) a server;
- the formula retrievers (soft:, detected:), BM25, hybrid and fusion run through evaluation
  in batches, one Qdrant query per search, and `bench search` shows their score breakdown.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from detected_helpers import THRESHOLDS_ON, detected_payloads, dims_of, write_detected
from store_helpers import random_logic

from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.logic import labels
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.detect.events import Detected, detected_clip
from reasonaudio.detect.soft import SoftIndex
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.retrievers.soft_rank import by_id_request, ranked_request
from reasonaudio.store import formula as fm
from reasonaudio.store.base import CollectionMeta, Request
from reasonaudio.store.filters import to_filter

def counts_of(store, name: str) -> dict[str, int]:
    """The per-label evidence counts the collection's record holds (what bounds a search)."""
    return fm.recorded_counts(store.meta(name).extra)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    root = tmp_path_factory.mktemp("formula") / "bench"
    build_benchmark(root, BuildParams(atoms="synthetic", seed=0, n_clips=80, n_queries=25))
    return load_benchmark(root)


def _stores(tmp_path):
    from reasonaudio.store.client import ClientStore
    from reasonaudio.store.edge import EdgeStore

    yield "edge", EdgeStore(tmp_path / "edge")
    yield "local", ClientStore(path=tmp_path / "local")
    url = os.environ.get("REASONAUDIO_TEST_QDRANT_URL")
    if url:
        yield "server", ClientStore(url=url)


def test_formula_equals_python_soft_scores_on_every_backend(build, tmp_path):
    bench = build
    payloads, thresholds = detected_payloads(bench)
    python = SoftIndex.from_payloads(payloads, thresholds, THRESHOLDS_ON)
    judge = ClipIndex([detected_clip_of(p, bench) for p in payloads])
    rng = random.Random(5)
    vocab = sorted({lab for q in bench.queries for lab in labels(q.logic)})
    logics = [q.logic for q in bench.queries] + [random_logic(rng, vocab) for _ in range(25)]
    n = len(bench.clips)
    checked = 0
    for backend, store in _stores(tmp_path):
        try:
            name = write_detected(bench, store, payloads, thresholds)
            requests = []
            for logic in logics:
                requests.append(ranked_request(fm.soft_formula(logic), logic, n, n, dims_of(bench),
                                               counts_of(store, name)))
                requests.append(ranked_request(fm.detected_formula(logic, to_filter(logic)), logic,
                                               n, n, dims_of(bench), counts_of(store, name)))
            answers = store.query_batch(name, requests)
            for i, logic in enumerate(logics):
                soft = dict(zip(python.clip_ids, python.ranking_score(logic)))
                hard = set(judge.ids(judge.relevant(logic)))
                got_soft = {f.clip_id: f.score for f in answers[2 * i]}
                got_detected = {f.clip_id: f.score for f in answers[2 * i + 1]}
                assert set(got_soft) == set(python.clip_ids), (backend, logic)
                for cid, want in soft.items():
                    assert abs(got_soft[cid] - want) <= 1e-5, (backend, logic, cid)
                    assert abs(got_detected[cid] - (want + (cid in hard))) <= 1e-5, (backend, logic, cid)
                # the clips a query does not rescore all score alike (so any k of them do)
                need = fm.required(logic)
                mentioned = set(labels(logic))
                def rescored(pl: dict) -> bool:
                    have = set(pl[fm.EVIDENCE])
                    return need <= have if need else bool(mentioned & have)
                plain = dict(zip(python.clip_ids, fm.evaluate(fm.soft_formula(logic, order=False),
                                                             python.column, python.n)))
                outside = [plain[pl["clip_id"]] for pl in payloads if not rescored(pl)]
                assert len(set(outside)) <= 1, (logic, sorted(set(outside))[:3])
                if need:
                    assert set(outside) <= {0.0}, logic
                # ... and the tie term orders them by clip id, smallest first
                rest = sorted(pl["clip_id"] for pl in payloads if not rescored(pl))
                assert [soft[c] for c in rest] == sorted((soft[c] for c in rest), reverse=True)
                checked += 1
            # the restricted form (multiple choice) gives the same values
            logic = logics[0]
            pair = [bench.clips[0].id, bench.clips[1].id]
            got = {f.clip_id: f.score for f in store.query_batch(name, [by_id_request(
                fm.soft_formula(logic, order=False), pair, dims_of(bench))])[0]}
            want = dict(zip(python.clip_ids, fm.evaluate(fm.soft_formula(logic, order=False),
                                                         python.column, python.n)))
            assert all(abs(got[c] - want[c]) <= 1e-5 for c in pair)
        finally:
            store.close()
    assert checked >= 2 * len(logics)
    # not vacuous: scores spread, some clips admitted by the hard filter
    assert np.std(python.ranking_score(logics[0])) > 0.01


def detected_clip_of(payload, bench):
    found = [Detected(e["label"], round(e["onset"] * 1000), round(e["offset"] * 1000), 1.0)
             for e in payload["events"]]
    return detected_clip(bench.clip_by_id[payload["clip_id"]], found)


def test_the_evidence_filter_admits_the_clips_with_evidence_within_its_bound(build, tmp_path):
    """The integer evidence filter admits exactly the clips whose keyword list holds every label
    the logic requires (any label it mentions when it requires none), on Edge and local mode,
    and never more than ``evidence_bound`` of them: a search asking for that many misses none.
    A label no clip has evidence for (outside the dimensions) admits nothing."""
    from reasonaudio.logic import And, Has

    bench = build
    payloads, thresholds = detected_payloads(bench)
    rng = random.Random(11)
    vocab = sorted({lab for q in bench.queries for lab in labels(q.logic)})
    logics = [q.logic for q in bench.queries] + [random_logic(rng, vocab) for _ in range(40)]
    logics += [Has("no such sound"), And((Has(vocab[0]), Has("no such sound")))]
    n = len(bench.clips)
    for backend, store in list(_stores(tmp_path))[:2]:
        try:
            name = write_detected(bench, store, payloads, thresholds)
            counts = counts_of(store, name)
            assert counts == {lab: sum(lab in pl[fm.EVIDENCE] for pl in payloads)
                              for lab in dims_of(bench)}
            for logic in logics:
                need, mentioned = fm.required(logic), set(labels(logic))
                want = sorted(pl["clip_id"] for pl in payloads
                              if (need <= set(pl[fm.EVIDENCE]) if need
                                  else mentioned & set(pl[fm.EVIDENCE])))
                got = store.matching_ids(name, fm.evidence_filter(logic, dims_of(bench)))
                assert got == want, (backend, logic)
                assert len(got) <= fm.evidence_bound(logic, counts, n) <= n, (backend, logic)
        finally:
            store.close()


def test_python_soft_score_is_the_old_semantics(build):
    """detect/soft.py's score (now an evaluation of the formula) keeps its definition: has = p,
    before = p p sigmoid(gap / 0.5 s), lasts decays by the excess over the judge's tolerance."""
    from reasonaudio.logic import Before, Has, Lasts, Not
    idx = SoftIndex(["a", "b"], {"x": np.array([0.8, 0.0]), "y": np.array([0.5, 0.9])},
                    {"x": np.array([0.0, 0.0]), "y": np.array([3000.0, 0.0])},
                    {"x": np.array([2000.0, 0.0]), "y": np.array([6000.0, 4000.0])})
    assert idx.score(Has("x")).tolist() == [0.8, 0.0]
    assert np.allclose(idx.score(Not(Has("x"))), [0.2, 1.0])
    assert np.allclose(idx.score(Before("x", "y")), [0.8 * 0.5 / (1 + np.exp(-2.0)), 0.0])
    # y lasts 3 s in clip a; N = 5: tolerance 0.75 s, excess 1.25 s
    assert np.allclose(idx.score(Lasts("y", 5.0)), [0.5 * np.exp(-1.25), 0.9 * np.exp(-(1.0 - 0.75))])


def test_evidence_under_the_presence_floor_moves_no_float32_score(build):
    """Presences under formula.PRESENCE_FLOOR are dropped (the detected payload does not store
    them); every ranking value and every multiple-choice value, as the float32 Qdrant returns,
    is the same as with them, over random logic trees and evidence with tiny presences (the
    1e-93 that a high threshold's calibration makes) mixed with ordinary ones."""
    rng = np.random.default_rng(5)
    vocab = sorted(build.labels)[:8]
    n = 400
    ids = [f"clip-{i:04d}" for i in range(n)]
    p, p3, on, off = {}, {}, {}, {}
    for lab in vocab:
        tiny = rng.random(n) < 0.4
        p[lab] = np.where(tiny, 10.0 ** rng.uniform(-200, -20, n), rng.random(n))
        p3[lab] = p[lab] * rng.random(n)
        on[lab] = rng.integers(0, 20000, n).astype(float)
        off[lab] = on[lab] + rng.integers(480, 9000, n)
    floored = SoftIndex(ids, p, on, off, presence_top3=p3)
    assert any((floored.p(lab) == 0).any() for lab in vocab)
    assert all((floored.p(lab)[(p[lab] > 0) & (floored.p(lab) == 0)] < fm.PRESENCE_FLOOR).all()
               for lab in vocab)
    order = floored.column(fm.ORDER)

    def full(key: str) -> np.ndarray:  # the same evidence, nothing dropped
        if key == fm.ORDER:
            return order
        field, _, quoted = key.partition(".")
        lab = quoted[1:-1]
        cols = {fm.PRESENCE: p, fm.PRESENCE_TOP3: p3, fm.ONSET: {k: v / 1000 for k, v in on.items()},
                fm.OFFSET: {k: v / 1000 for k, v in off.items()},
                fm.DURATION: {k: (off[k] - on[k]) / 1000 for k in on}}[field]
        return cols.get(lab, np.zeros(n))

    tree_rng = random.Random(11)
    for _ in range(60):
        logic = random_logic(tree_rng, vocab)
        for order_term in (True, False):
            expr = fm.soft_formula(logic, order_term)
            got = fm.evaluate(expr, floored.column, n).astype(np.float32)
            want = fm.evaluate(expr, full, n).astype(np.float32)
            assert np.array_equal(got, want), fm.text(expr)


def test_every_formula_variable_has_a_default(build):
    rng = random.Random(2)
    vocab = sorted(build.labels)[:12]
    for _ in range(50):
        expr = fm.soft_formula(random_logic(rng, vocab))
        assert set(fm.defaults(expr)) == set(fm.variables(expr))
        assert all(k.split(".", 1)[0] in fm.SOFT_FIELDS or k == fm.ORDER for k in fm.variables(expr))


def test_count_formula_equals_python_soft_scores(build, tmp_path):
    """count(x, n): the heard count (payload ``count``, only where a label repeats) read by the
    formula on Edge and local mode == the numpy evaluation, and the closer count ranks higher."""
    from reasonaudio.logic import And, Count, Has, Not, Or
    from reasonaudio.store.payload import COUNT_FIELD

    bench = build
    payloads, thresholds = detected_payloads(bench, seed=11, counts=True)
    index = SoftIndex.from_payloads(payloads, thresholds, THRESHOLDS_ON)
    rng = random.Random(11)
    vocab = sorted({lab for q in bench.queries for lab in labels(q.logic)})
    assert sum(COUNT_FIELD in pl for pl in payloads) > 10
    heard_counts = {lab: {pl.get(COUNT_FIELD, {}).get(lab, 1) for pl in payloads
                          if lab in pl[fm.EVIDENCE]} for lab in vocab}
    x, y = sorted(vocab, key=lambda lab: (-len(heard_counts[lab]), lab))[:2]
    logics = [Count(x, 1), Count(x, 2), Count(x, 3), Not(Count(y, 2)),
              And((Count(x, 2), Has(y))), Or((Count(x, 3), Count(y, 1)))]
    logics += [And((Count(rng.choice(vocab), rng.randint(1, 4)), random_logic(rng, vocab, 2)))
               for _ in range(10)]
    n = len(bench.clips)
    for backend, store in list(_stores(tmp_path))[:2]:
        try:
            name = write_detected(bench, store, payloads, thresholds)
            counts = counts_of(store, name)
            requests = [ranked_request(fm.soft_formula(lg), lg, n, n, dims_of(bench), counts)
                        for lg in logics]
            requests += [ranked_request(fm.detected_formula(lg, to_filter(lg)), lg, n, n,
                                        dims_of(bench), counts)
                         for lg in logics]
            answers = store.query_batch(name, requests)
            for i, logic in enumerate(logics):
                want = dict(zip(index.clip_ids, index.ranking_score(logic)))
                got = {f.clip_id: f.score for f in answers[i]}
                assert set(got) == set(index.clip_ids), (backend, logic)
                assert all(abs(got[c] - want[c]) <= 1e-5 for c in want), (backend, logic)
                assert all(0.0 <= v <= 1.0 + 1e-6 for v in want.values()), logic
                got_det = {f.clip_id: f.score for f in answers[len(logics) + i]}
                hard = set(store.matching_ids(name, to_filter(logic)))  # counts: not the judge's clip
                assert all(abs(got_det[c] - (want[c] + (c in hard))) <= 1e-5 for c in want), \
                    (backend, logic)
        finally:
            store.close()
    # presence alike, the heard count closer to n scores higher
    heard = index.count(x)
    s2 = index.score(Count(x, 2))
    has_x = index.p(x) > 0
    twice = has_x & (heard == 2)
    four = has_x & (heard == 4)
    assert twice.any() and four.any()
    closeness = s2[has_x] / index.p(x)[has_x]
    assert np.allclose(closeness, np.exp(-np.abs(heard[has_x] - 2)))
    assert (s2[twice] / index.p(x)[twice]).min() > (s2[four] / index.p(x)[four]).max()
    assert np.all(s2[~has_x] == 0.0)
    assert fm.required(Count(x, 2)) == {x}


def test_rankings_repeat_and_equal_ties_rank_by_clip_id(build, tmp_path):
    """Most clips of a query score exactly 0 (no evidence for a label it requires): the
    rest-prefetch takes them in clip-id order and the tie term orders them, so a search answers
    the same ranking on every send and every backend, and it is numpy's ranking (value, then
    clip id). Before the tie term, Qdrant returned such ties in a different order (and a
    different membership at the cut) from one send to the next."""
    from reasonaudio.retrievers.base import rank

    bench = build
    payloads, thresholds = detected_payloads(bench)
    python = SoftIndex.from_payloads(payloads, thresholds, THRESHOLDS_ON)
    judge = ClipIndex([detected_clip_of(p, bench) for p in payloads])
    n, k = len(bench.clips), 10
    logics = [q.logic for q in bench.queries]
    zero_ties = 0
    for backend, store in _stores(tmp_path):
        try:
            name = write_detected(bench, store, payloads, thresholds)
            for logic in logics:
                for expr in (fm.soft_formula(logic), fm.detected_formula(logic, to_filter(logic))):
                    request = ranked_request(expr, logic, k + 16, n, dims_of(bench),
                                             counts_of(store, name))
                    sends = [[h.clip_id for h in rank([(f.clip_id, f.score) for f in found], k)]
                             for found in store.query_batch(name, [request] * 3)]
                    assert sends[0] == sends[1] == sends[2], (backend, logic)
                    admitted = set(judge.ids(judge.relevant(logic)))
                    want = fm.evaluate(expr, python.column, python.n, condition=lambda flt: np.array(
                        [cid in admitted for cid in python.clip_ids], dtype=float))
                    expect = [h.clip_id for h in rank(zip(python.clip_ids, want.astype(np.float32)), k)]
                    assert sends[0] == expect, (backend, logic)
                    plain = fm.evaluate(fm.soft_formula(logic, order=False), python.column, python.n)
                    zero_ties += int(np.sum(plain == 0) > k)
        finally:
            store.close()
    assert zero_ties > 0  # not vacuous: queries whose top k holds clips that tie at 0


def test_times_reach_qdrant_exactly_so_vectors_score_as_the_payload(tmp_path):
    """The vectors hold times as whole milliseconds, which float32 keeps exactly, and the formula
    divides them by 1000 (formula.milliseconds), so it reads the payload's seconds bit for bit:
    with presences float32 holds exactly, Qdrant's score from the vectors is its score from the
    payload, bit for bit, for events anywhere in a clip (seconds rounded to float32 would be off
    by amounts that differ with the position: clips moved by a few seconds, here)."""
    from reasonaudio.logic import And, Before, Lasts, Not, Overlap
    from reasonaudio.store.client import ClientStore
    from reasonaudio.store.edge import EdgeStore

    rng = random.Random(7)
    vocab = ["a dog", "b siren", "c bell"]
    n = 40
    evidence = []
    for i in range(n):
        shift = rng.randrange(0, 20000, 10) / 1000 if i % 2 else 0.0  # odd clips: even's, moved
        base = evidence[i - 1] if i % 2 else {
            lab: (rng.choice([0.75, 0.5, 0.375]), rng.choice([0.25, 0.125]),
                  rng.randrange(0, 8000, 10) / 1000, 0.0) for lab in rng.sample(vocab, rng.randint(1, 3))}
        evidence.append({lab: (p, p3, round(on + shift, 3),
                               round((on + shift) + (1.23 if i % 2 == 0 or not off else off - on), 3))
                         for lab, (p, p3, on, off) in base.items()})
    orders = fm.clip_orders([f"c{i:03d}" for i in range(n)])
    payloads = [{"clip_id": f"c{i:03d}", **fm.soft_payload(ev, orders[f"c{i:03d}"])}
                for i, ev in enumerate(evidence)]
    dims = fm.evidence_dims(vocab)
    columns = {}
    for i, pl in enumerate(payloads):
        for field in fm.SOFT_FIELDS:
            for lab, v in pl[field].items():
                columns.setdefault(fm.var_key(field, lab), np.zeros(n))[i] = v
    columns[fm.ORDER] = np.array([pl[fm.ORDER] for pl in payloads])
    a, b, c = vocab
    logics = [Before(a, b), Overlap(b, c), Lasts(a, 1.0), And((Before(a, b), Not(Overlap(a, c))))]
    meta = CollectionMeta(model="t", revision="0", dimension=1, distance="dot", pooling="none")
    pairs = 0
    for store in (EdgeStore(tmp_path / "edge", write=True), ClientStore(path=tmp_path / "local")):
        try:
            store.create("t", meta, **fm.evidence_layout())
            store.upsert("t", [fm.evidence_point(pl["clip_id"], pl, dims) for pl in payloads])
            for logic in logics:  # without the clip-order term: its value is float32 in a vector
                expr = fm.soft_formula(logic, order=False)
                got, read = ({f.clip_id: f.score for f in hits} for hits in store.query_batch("t", [
                    ranked_request(expr, logic, n, n, dims,
                                   fm.recorded_counts(fm.evidence_record(dims, payloads))),
                    Request(limit=n, formula=expr, prefetch=(Request(limit=n),))]))  # payload
                plain = fm.evaluate(expr, lambda k: columns.get(k, np.zeros(n)), n)
                assert got == read, logic
                assert np.allclose([got[f"c{i:03d}"] for i in range(n)], plain, rtol=1e-6), logic
                pairs += sum(v > 1e-6 for v in plain)
        finally:
            store.close()
    assert pairs > 20
