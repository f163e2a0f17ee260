"""A written TREC run means our ranking to trec_eval too (issue 14, item 10).

trec_eval, pytrec_eval and ir-measures re-sort a run by score and break ties by doc id
descending, ignoring the rank column. bag-of-sounds ties a lot (it counts mentioned sounds), so
on it ir-measures reproduces the testbed's numbers from the written file only if the scores
encode the testbed's order.
"""

from __future__ import annotations

import ir_measures
import pytest
from ir_measures import RR, R, P, nDCG

from hostile import small_build
from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
from reasonaudio.evaluation.runs import read_trec, trec_lines
from reasonaudio.dataset.view import load_benchmark

pytestmark = pytest.mark.fast

MEASURES = {"acc@1": P @ 1, "ndcg@10": nDCG @ 10, "recall@10": R @ 10, "mrr": RR}


def _ir_measures(path, bench) -> dict[str, dict[str, float]]:
    qrels = [ir_measures.Qrel(q, c, 1) for q, cs in bench.qrels.items() for c in sorted(cs)]
    out: dict[str, dict[str, float]] = {}
    for m in ir_measures.iter_calc(list(MEASURES.values()), qrels, ir_measures.read_trec_run(str(path))):
        out.setdefault(m.query_id, {})[str(m.measure)] = m.value
    return out


def test_ir_measures_reproduces_the_testbed_on_a_tied_run(tmp_path):
    bench = load_benchmark(small_build(tmp_path / "b", clips=200, queries=40, seed=3))
    res = evaluate_retrievers(bench, ["bag-of-sounds"],
                              EvalContext(trec_dir=tmp_path / "runs", save=False)).runs["bag-of-sounds"]
    path = tmp_path / "runs" / "bag-of-sounds.trec"
    run = read_trec(path)
    # the case matters: many tied scores whose trec_eval order (doc id descending) is not ours
    tied = [q for q, hits in run.hits.items()
            if len({round(h.score, 6) for h in hits[:10]}) < min(10, len(hits))]
    assert len(tied) >= len(run.hits) // 2
    ref = _ir_measures(path, bench)
    for qid, values in res.per_query.items():
        for key, measure in MEASURES.items():
            assert values[key] == pytest.approx(ref.get(qid, {}).get(str(measure), 0.0), abs=1e-12), (qid, key)


def test_raw_tied_scores_would_disagree(tmp_path):
    """Why the encoding is needed: the same run with its raw tied scores reads differently."""
    bench = load_benchmark(small_build(tmp_path / "b", clips=200, queries=40, seed=3))
    res = evaluate_retrievers(bench, ["bag-of-sounds"],
                              EvalContext(trec_dir=tmp_path / "runs", save=False)).runs["bag-of-sounds"]
    run = read_trec(tmp_path / "runs" / "bag-of-sounds.trec")
    raw = tmp_path / "raw.trec"
    raw.write_text("".join(f"{q} Q0 {h.clip_id} {r} {round(h.score, 6)!r} t\n"
                           for q in sorted(run.hits) for r, h in enumerate(run.hits[q], 1)))
    ref = _ir_measures(raw, bench)
    assert any(abs(v[k] - ref.get(q, {}).get(str(m), 0.0)) > 1e-9
               for q, v in res.per_query.items() for k, m in MEASURES.items())
    assert list(trec_lines(run))  # the module still writes what it read
