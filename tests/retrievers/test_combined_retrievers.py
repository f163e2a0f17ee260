"""soft:, detected:, BM25, hybrid and fusion retrievers end to end on a small build (Edge):
evaluation in batches with one Qdrant query per search, the hybrid formula checked against
numpy, the name grammar, and `bench search` / `bench compare` with the score breakdown."""

from __future__ import annotations

import numpy as np
import pytest
from detected_helpers import THRESHOLDS_ON, detected_payloads, write_detected
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.detect.soft import SoftIndex
from reasonaudio.errors import ModelError
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.ingest.vector_files import PrecomputedOptions, VectorFiles, ingest_precomputed
from reasonaudio.models.names import is_embedding, parse_combined, parse_two_stage
from reasonaudio.store.edge import EdgeStore
from reasonaudio.store.payload import point_id

runner = CliRunner()
BM25 = "two-stage:oracle-caption+bm25"
HYBRID = "hybrid:vectors:rnd,soft:yamnet"
NAMES = ["soft:yamnet", "detected:yamnet", BM25, HYBRID, f"rrf:vectors:rnd,{BM25}",
         "dbsf:vectors:rnd,soft:yamnet"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("combined")
    root = tmp / "bench"
    build_benchmark(root, BuildParams(atoms="synthetic", seed=0, n_clips=80, n_queries=25))
    bench = load_benchmark(root)
    rng = np.random.default_rng(0)
    np.save(tmp / "c.npy", rng.normal(size=(len(bench.clips), 6)).astype(np.float32))
    np.save(tmp / "q.npy", rng.normal(size=(len(bench.queries), 6)).astype(np.float32))
    (tmp / "c.txt").write_text("\n".join(c.id for c in bench.clips))
    (tmp / "q.txt").write_text("\n".join(q.id for q in bench.queries))
    payloads, thresholds = detected_payloads(bench)
    with EdgeStore(root / "qdrant" / "edge", write=True) as store:
        write_detected(bench, store, payloads, thresholds)
        ingest_precomputed(bench, store, PrecomputedOptions(
            "rnd", VectorFiles(tmp / "c.npy", tmp / "c.txt"), VectorFiles(tmp / "q.npy", tmp / "q.txt")))
    return bench, payloads, thresholds, tmp


class Counting:
    """Counts the Qdrant queries a retriever sends (requests, and calls of query_batch)."""

    def __init__(self, store):
        self.store, self.requests, self.calls = store, 0, 0

    def __getattr__(self, name):
        return getattr(self.store, name)

    def query_batch(self, name, requests, names=None):
        self.calls += 1
        self.requests += len(requests)
        return self.store.query_batch(name, requests, names)

    def query(self, *a, **k):
        raise AssertionError("a single query where a batch was expected")


def test_every_retriever_evaluates_in_batches_one_query_per_search(data):
    from reasonaudio.evaluation.evaluate import SEARCH_BATCH, run_retriever
    from reasonaudio.retrievers.registry import get_retriever

    bench = data[0]
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        for name in NAMES:
            counting = Counting(store)
            retriever = get_retriever(name, bench, store=counting)
            requests_before = counting.requests
            run = run_retriever(bench, retriever, depth=10)
            assert counting.requests - requests_before == len(bench.queries), name
            assert counting.calls <= 1 + -(-len(bench.queries) // SEARCH_BATCH) + 2, name
            assert len(run.hits) == len(bench.queries), name
            assert all(len(h) == 10 for h in run.hits.values()), name
            for hits in run.hits.values():  # the project's tie rule on what came back
                keys = [(-h.score, h.clip_id) for h in hits]
                assert keys == sorted(keys), name
            retriever.close()


def test_hybrid_is_the_formula_over_the_models_nearest(data):
    from reasonaudio.retrievers.registry import get_retriever

    bench, payloads, thresholds, _ = data
    python = SoftIndex.from_payloads(payloads, thresholds, THRESHOLDS_ON)
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        hybrid = get_retriever(HYBRID, bench, store=store)
        model = get_retriever("vectors:rnd", bench, store=store)
        w, n = hybrid.params.weight, hybrid.params.prefetch
        for q in bench.queries[:10]:
            logic = hybrid.soft.parse(q.text)
            near = {h.clip_id: h.score for h in model.search(q.text, n)}
            soft = dict(zip(python.clip_ids, python.ranking_score(logic)))
            want = sorted(((-(1 - w) * s - w * soft[c], c) for c, s in near.items()))[:5]
            got = hybrid.search(q.text, 5)
            assert [h.clip_id for h in got] == [c for _, c in want] or \
                np.allclose([h.score for h in got], [-s for s, _ in want], atol=1e-5)
            assert np.allclose([h.score for h in got], [-s for s, _ in want], atol=1e-5)
            pair = [got[0].clip_id, got[-1].clip_id]
            assert np.allclose(hybrid.score(q.text, pair), [-want[0][0], -want[-1][0]], atol=1e-5)
        assert 0.0 < hybrid.recall_at_prefetch([q.text for q in bench.queries],
                                               [bench.qrels.get(q.id, set()) for q in bench.queries]) <= 1.0
        hybrid.close()


class Unnamed(Counting):
    """Records the batches sent without point names (their answers are named by payloads)."""

    def __init__(self, store):
        super().__init__(store)
        self.unnamed = 0

    def query_batch(self, name, requests, names=None):
        self.unnamed += names is None
        return super().query_batch(name, requests, names)


def test_searches_choices_and_the_prefetch_ceiling_name_points_without_reading_payloads(data):
    """Edge parses a point's whole payload to read its clip id (a joint collection's payload holds
    every part's evidence): a query that asks for no field names its points from the clips."""
    from reasonaudio.retrievers.registry import get_retriever

    bench = data[0]
    texts = [q.text for q in bench.queries]
    relevant = [set(bench.qrels.get(q.id, ())) for q in bench.queries]
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        for name in NAMES:
            spy = Unnamed(store)
            retriever = get_retriever(name, bench, store=spy)
            retriever.prepare(texts)
            ids = [c.id for c in bench.clips[:4]]
            for text in texts[:5]:
                retriever.search(text, 10)
                retriever.score(text, ids)
            described = retriever.describe()
            assert spy.unnamed == 0, name
            if name == HYBRID:  # the ceiling read by payloads is the same
                by_payloads = Counting(store)
                by_payloads.query_batch = lambda n, requests, names=None: store.query_batch(n, requests)
                retriever.store = by_payloads
                assert described["recall_at_prefetch"] == round(
                    retriever.recall_at_prefetch(texts, relevant), 4) > 0
            retriever.close()


def formulas(request):
    """Every score formula of a request and of its prefetches, nested ones included."""
    out = [request.formula] if request.formula is not None else []
    for p in request.prefetch:
        out += formulas(p)
    return out


def test_every_formula_reads_search_scores_not_payloads(data):
    """Soft, detected, hybrid and fused queries read every variable from a prefetch's score
    (store.formula.read_by_prefetch): Qdrant parses no payload to rank (docs/qdrant.md,
    "Formula speed"); in ranking and in multiple choice."""
    from qdrant_client.http import models

    from reasonaudio.retrievers.registry import get_retriever
    from reasonaudio.store import formula as fm

    bench = data[0]
    ids = models.Filter(must=[models.HasIdCondition(has_id=[point_id(bench.clips[0].id)])])
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        for name in ["soft:yamnet", "detected:yamnet", HYBRID, "rrf:vectors:rnd,soft:yamnet",
                     "dbsf:vectors:rnd,soft:yamnet"]:
            r = get_retriever(name, bench, store=store)
            seen = 0
            for q in bench.queries:
                asked = [r.request(q.text, 10)]
                if hasattr(r, "joint"):
                    asked.append(r.request(q.text, 1, ids))
                for req in asked:
                    for f in formulas(req):
                        seen += 1
                        assert all(v.startswith("$score") for v in fm.variables(f)), (name, q.text)
            assert seen >= len(bench.queries), name
            r.close()


def test_a_hybrid_ranks_its_models_candidates_only(data):
    """The evidence searches of a hybrid bring clips the model did not: they score under the
    threshold (formula.kept_to_first) and never come back; the model's come back with their
    hybrid value."""
    from dataclasses import replace

    from reasonaudio.retrievers.registry import get_retriever

    bench, payloads, thresholds, _ = data
    python = SoftIndex.from_payloads(payloads, thresholds, THRESHOLDS_ON)
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        hybrid = get_retriever(HYBRID, bench, store=store)
        model = get_retriever("vectors:rnd", bench, store=store)
        hybrid.params = replace(hybrid.params, prefetch=6)
        w = hybrid.params.weight
        outside = 0
        for q in bench.queries:
            logic = hybrid.soft.parse(q.text)
            near = {h.clip_id: h.score for h in model.search(q.text, 6)}
            soft = dict(zip(python.clip_ids, python.ranking_score(logic)))
            got = store.query_batch(hybrid.collection, [hybrid.request(q.text, 20, depth=6)])[0]
            assert {h.clip_id for h in got} == set(near), q.text
            for h in got:
                assert abs(h.score - ((1 - w) * near[h.clip_id] + w * soft[h.clip_id])) <= 1e-5
            outside += sum(v > 1e-20 for c, v in soft.items() if c not in near)
        assert outside > 0  # the soft logic did find clips beyond the model's six
        hybrid.close()
        model.close()


def test_fusion_matches_reciprocal_ranks(data):
    from reasonaudio.retrievers.registry import get_retriever

    bench = data[0]
    name = f"rrf:vectors:rnd,{BM25}"
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        fused = get_retriever(name, bench, store=store)
        a, b = (get_retriever(p, bench, store=store) for p in parse_combined(name).parts)
        n, k = fused.params.prefetch, fused.params.rrf_k
        q = bench.queries[0]
        # Qdrant's RRF: sum over the lists of 1 / (k + rank), rank from 0; a clip tied with others
        # in a list may hold any of their ranks, so each fused score has a range
        lo: dict[str, float] = {}
        hi: dict[str, float] = {}
        for part in (a, b):
            hits = part.search(q.text, n)
            scores = [h.score for h in hits]
            for h in hits:
                first = scores.index(h.score)
                last = len(scores) - 1 - scores[::-1].index(h.score)
                lo[h.clip_id] = lo.get(h.clip_id, 0.0) + 1.0 / (k + last)
                hi[h.clip_id] = hi.get(h.clip_id, 0.0) + 1.0 / (k + first)
        got = fused.search(q.text, 5)
        assert len(got) == 5
        for h in got:
            assert lo[h.clip_id] - 1e-6 <= h.score <= hi[h.clip_id] + 1e-6, h
        fused.close()


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """A build whose soft evidence is coarse (two presence levels, two onsets, each mostly the
    first), so most clips tie exactly with others in soft value, as YAMNet's quantised rows make
    them tie, often in groups wider than the tie margin."""
    import random

    from reasonaudio.logic import labels
    from reasonaudio.detect.events import detected_clip
    from reasonaudio.store.payload import clip_payload

    tmp = tmp_path_factory.mktemp("tied")
    root = tmp / "bench"
    build_benchmark(root, BuildParams(atoms="synthetic", seed=2, n_clips=120, n_queries=20))
    bench = load_benchmark(root)
    rng = random.Random(4)
    vocab = sorted({lab for q in bench.queries for lab in labels(q.logic)})
    payloads = []
    for clip in bench.clips:
        pl = clip_payload(detected_clip(clip, []))
        pl["confidence"] = {}
        pl["track"] = {lab: [peak, on, on + 960, peak] for lab in rng.sample(vocab, len(vocab) // 2)
                       for peak, on in [(rng.choice([0.6, 0.6, 0.3]), rng.choice([0, 0, 4800]))]}
        payloads.append(pl)
    index = SoftIndex.from_payloads(payloads, {}, THRESHOLDS_ON)
    for i, pl in enumerate(payloads):
        pl.update(index.payload(i))
    rng_np = np.random.default_rng(1)
    np.save(tmp / "c.npy", rng_np.normal(size=(len(bench.clips), 6)).astype(np.float32))
    np.save(tmp / "q.npy", rng_np.normal(size=(len(bench.queries), 6)).astype(np.float32))
    (tmp / "c.txt").write_text("\n".join(c.id for c in bench.clips))
    (tmp / "q.txt").write_text("\n".join(q.id for q in bench.queries))
    with EdgeStore(root / "qdrant" / "edge", write=True) as store:
        write_detected(bench, store, payloads, {})
        ingest_precomputed(bench, store, PrecomputedOptions(
            "rnd", VectorFiles(tmp / "c.npy", tmp / "c.txt"), VectorFiles(tmp / "q.npy", tmp / "q.txt")))
    return bench


@pytest.mark.parametrize("name", ["soft:yamnet", "detected:yamnet", "hybrid:vectors:rnd,soft:yamnet"])
def test_a_tie_wider_than_the_margin_at_the_cut_is_cut_by_clip_id(tied, name):
    """Qdrant returns a wide group of equal scores in hash order, so when more than the margin's
    16 extra hits tie with the k-th, which of them came back was Qdrant's choice; such a query
    is asked again for more (retrievers/base.py), and the top k is the full ranking's."""
    from reasonaudio.retrievers.base import TIE_MARGIN
    from reasonaudio.retrievers.registry import get_retriever

    bench = tied
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        r = get_retriever(name, bench, store=store)
        texts = [q.text for q in bench.queries]
        full = r.search_batch(texts, len(bench.clips))
        wide = 0
        for k in (2, 5):
            for text, everything, got in zip(texts, full, r.search_batch(texts, k)):
                assert [(h.clip_id, h.score) for h in got] == \
                    [(h.clip_id, h.score) for h in everything[:k]], (name, text, k)
                cut = everything[k - 1].score
                wide += sum(h.score == cut for h in everything) > TIE_MARGIN + 1
        assert name.startswith("hybrid") or wide > 0  # the build has such ties at the cut
        r.close()


@pytest.mark.parametrize("kind", ["rrf", "dbsf"])
def test_fusion_with_the_soft_logic_repeats_send_after_send(tied, kind):
    """Qdrant rescores a formula's points in hash order, so a fusion that read the soft part's
    exactly tied values in Qdrant's order answered differently on every send; the fused soft
    part (formula.fused_soft_formula) has no two equal float32 values: its list is the soft
    ranking with ties by clip id, and the fused answers repeat."""
    from reasonaudio.retrievers.registry import get_retriever

    bench = tied
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        fused = get_retriever(f"{kind}:vectors:rnd,soft:yamnet", bench, store=store)
        soft = fused.soft
        texts = [q.text for q in bench.queries]
        lists = [store.query_batch(fused.collection, [fused.part_request(soft, t, 60) for t in texts])
                 for _ in range(3)]
        tied_values = 0
        for answers in zip(*lists):
            ids = [[f.clip_id for f in a] for a in answers]
            assert ids[0] == ids[1] == ids[2]
            scores = [f.score for f in answers[0]]
            assert len(set(scores)) == len(scores)
        for t in texts:  # the part's order is the soft ranking, equal values by clip id
            plain = soft.search(t, 60)
            values = {h.clip_id: h.score for h in plain}
            asked = [fused.part_request(soft, t, 60)]
            part = [f.clip_id for f in store.query_batch(fused.collection, asked)[0]]
            keys = [(-values[c], c) for c in part if c in values]
            assert keys == sorted(keys)
            heard = [v for v in values.values() if v > 1e-20]  # above the clip-order term
            tied_values += len(heard) - len(set(heard))
        assert tied_values > 30, tied_values  # the build does tie
        runs = [[[(h.clip_id, h.score) for h in hits] for hits in fused.search_batch(texts, 20)]
                for _ in range(3)]
        assert runs[0] == runs[1] == runs[2]
        fused.close()


def test_grammar_one_parser_one_line_errors():
    assert parse_combined(HYBRID).parts == ("vectors:rnd", "soft:yamnet")
    assert parse_combined(f"rrf:{BM25},two-stage:oracle-caption+minilm").kind == "rrf"
    assert parse_two_stage(BM25, lexical=True) == ("oracle-caption", "bm25")
    for bad, why in [("hybrid:soft:yamnet,vectors:x", "vector retriever and soft"),
                     ("rrf:a", "two different"), ("rrf:a,a", "two different"),
                     ("rrf:a,rrf:b,c", "two different"), ("dbsf:rrf:a,b", "itself combined"),
                     ("hybrid:clap,detected:yamnet", "vector retriever and soft")]:
        with pytest.raises(ModelError, match=why):
            parse_combined(bad)
    with pytest.raises(ModelError, match="not a model to ingest"):
        parse_two_stage(BM25)


def test_search_shows_breakdown_and_compare_runs(data):
    bench = data[0]
    text = bench.queries[0].text
    for name, marker in [(HYBRID, "(1 - 0.5) x model + 0.5 x soft"), (HYBRID, "| soft: "),
                         ("soft:yamnet", "soft:"),
                         ("detected:yamnet", "detected:"), (BM25, ""), ("dbsf:vectors:rnd,soft:yamnet", "dbsf of")]:
        res = runner.invoke(app, ["search", text, "--data", str(bench.root), "-r", name, "-k", "3"])
        assert res.exit_code == 0, (name, res.output)
        assert marker in res.output, (name, res.output)
    res = runner.invoke(app, ["eval", "--data", str(bench.root), "-r", HYBRID, "-r", "soft:yamnet"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["compare", HYBRID, "soft:yamnet", "--data", str(bench.root)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["search", text, "--data", str(bench.root), "-r", "rrf:oracle,soft:yamnet"])
    assert res.exit_code == 2 and "cannot be a part of a combined retriever" in res.output


def test_best_embedding_means_a_learned_dense_retriever_on_its_own():
    """The detection decomposition's 'best embedding' (and the docs' tables) must not pick a
    hybrid, a fusion, soft scores or BM25: each holds a part that is not an embedding."""
    for name in ("clap", "trained:hard-negatives", "vectors:rnd", "two-stage:oracle-caption+minilm"):
        assert is_embedding(name), name
    for name in ("oracle", "bag-of-sounds", "random", "detected:yamnet", "soft:yamnet", BM25, HYBRID,
                 f"rrf:{BM25},two-stage:oracle-caption+minilm", "dbsf:clap,soft:yamnet"):
        assert not is_embedding(name), name


def test_dbsf_multiple_choice_is_the_parts_vote_and_a_disagreement_is_a_tie(data):
    """Over the two choices alone DBSF puts each part's two scores symmetric about its centre, so
    the fused choice is the parts' vote: the positive wins when more parts prefer it, and a pair
    the parts disagree on is an exact tie (not two float32 sums a few ulps apart, which a CPU's
    rounding would break)."""
    from reasonaudio.dataset.benchmark import choice_score
    from reasonaudio.retrievers.registry import get_retriever

    bench = data[0]
    name = f"dbsf:vectors:rnd,{BM25}"
    checked = ties = 0
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        fused = get_retriever(name, bench, store=store)
        parts = [get_retriever(p, bench, store=store) for p in parse_combined(name).parts]
        for ch in bench.choices:
            text = bench.query_by_id[ch.query_id].text
            votes = [choice_score(*p.score(text, [ch.positive, ch.negative])) for p in parts]
            if 0.5 in votes:  # a part that cannot tell the pair apart: DBSF's zero-spread case
                continue
            pos, neg = fused.score(text, [ch.positive, ch.negative])
            want = 1.0 if sum(votes) > 1 else 0.0 if sum(votes) < 1 else 0.5
            assert choice_score(pos, neg) == want, (ch, votes, pos, neg)
            checked += 1
            ties += want == 0.5
        fused.close()
    assert checked >= 5 and ties >= 1, (checked, ties)
