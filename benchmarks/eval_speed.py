"""Time the scoring side of `bench eval` at the default size, against ir-measures.

    .venv/bin/python benchmarks/eval_speed.py [--clips 10000] [--queries 1000] [--depth 100]

Builds a benchmark (metadata only) into a temporary directory, makes a seeded random run of
``depth`` clips per query, and prints: the time to compute hard negatives, to score the run
(all six rank metrics per query, per task and overall), the same four shared metrics through
ir-measures (pytrec_eval) as the baseline, and one paired randomization test (10,000
permutations) over all queries. Retrieval time itself belongs to each retriever.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from reasonaudio.evaluation.evaluate import evaluate_run
from reasonaudio.evaluation.runs import Run
from reasonaudio.evaluation.significance import paired_randomization_test
from reasonaudio.querylang.judge import hard_negatives
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.retrievers.base import Hit
from record import Figure, vs_baseline, write_record


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bench"
        build_benchmark(root, BuildParams(atoms="synthetic", seed=0, n_clips=args.clips,
                                          n_queries=args.queries))
        bench = load_benchmark(root)
        ids = np.array([c.id for c in bench.clips])
        rng = np.random.default_rng(0)
        run = Run("random")
        for q in bench.queries:
            pick = ids[rng.choice(len(ids), args.depth, replace=False)]
            run.hits[q.id] = [Hit(str(c), float(args.depth - i)) for i, c in enumerate(pick)]
        # Put one relevant clip somewhere in each ranking so the metrics have work to do.
        for q in bench.queries:
            rel = sorted(bench.qrels[q.id])[0]
            pos = int(rng.integers(0, args.depth))
            hits = [h for h in run.hits[q.id] if h.clip_id != rel][: args.depth - 1]
            hits.insert(pos, Hit(rel, 0.0))
            run.hits[q.id] = [Hit(h.clip_id, float(args.depth - i)) for i, h in enumerate(hits)]

        t0 = time.perf_counter()
        hard_negatives(bench)
        t1 = time.perf_counter()
        result = evaluate_run(bench, run)
        t2 = time.perf_counter()

        import ir_measures
        from ir_measures import RR, P, R, nDCG

        qrels = [ir_measures.Qrel(q, c, 1) for q, cs in bench.qrels.items() for c in cs]
        ref_run = [ir_measures.ScoredDoc(q, h.clip_id, h.score) for q, hs in run.hits.items() for h in hs]
        t3 = time.perf_counter()
        ref = ir_measures.calc_aggregate([nDCG @ 10, R @ 10, RR, P @ 1], qrels, ref_run)
        t4 = time.perf_counter()
        qids = sorted(result.task_of)
        a = result.values("ndcg@10", qids)
        b = list(np.roll(a, 1))
        t5 = time.perf_counter()
        paired_randomization_test(a, b)
        t6 = time.perf_counter()

    n = len(bench.queries)
    print(f"{args.clips} clips, {n} queries, depth {args.depth}")
    print(f"hard negatives (judge):            {t1 - t0:7.3f} s")
    print(f"score run, 6 rank metrics (ours):  {t2 - t1:7.3f} s  ({1e3 * (t2 - t1) / n:.3f} ms/query)")
    print(f"ir-measures, 4 shared metrics:     {t4 - t3:7.3f} s  (ratio ours/ir-measures "
          f"{(t2 - t1) / (t4 - t3):.2f})")
    print(f"paired randomization, 10k perms:   {t6 - t5:7.3f} s")
    print(f"check: nDCG@10 ours {result.overall['ndcg@10']:.6f}, "
          f"ir-measures {ref[nDCG @ 10]:.6f}")
    write_record(__file__, [
        vs_baseline(f"scoring a depth-{args.depth} run, {n:,} queries, 6 rank metrics", t2 - t1, "s",
                    "ir-measures, 4 shared metrics", t4 - t3),
        Figure(f"hard negatives of {n:,} queries over {args.clips:,} clips (judge)", t1 - t0, "s"),
        Figure("paired randomization test, 10,000 permutations", t6 - t5, "s")])


if __name__ == "__main__":
    main()
