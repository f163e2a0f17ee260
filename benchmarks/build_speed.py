"""Time the default build and show that the benchmark needs reasoning, not matching.

    .venv/bin/python benchmarks/build_speed.py [--clips 10000] [--queries 1000] [--seed 0]

Prints the wall time of `bench build` (metadata, queries, qrels, choices; no audio) against the
60 s target, then the Acc@1 per task of a bag-of-sounds matcher with perfect hearing and no
reasoning: it scores a clip by how many of the query's mentioned sounds it contains (negations and
relations ignored), ties broken by clip id ascending, the project's rule.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.logic import labels
from reasonaudio.dataset.benchmark import TASKS
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.generator.build import BuildParams, build_benchmark
from record import Figure, vs_target, write_record

TARGET_SECONDS = 60.0


def bag_of_sounds_acc1(root: Path) -> dict[str, float]:
    bench = load_benchmark(root)
    index = ClipIndex(bench.clips)
    order = np.argsort(np.array(index.clip_ids), kind="stable")  # clip id ascending
    hits: dict[str, list[float]] = {t: [] for t in TASKS}
    for q in bench.queries:
        score = sum(index.has(lab).astype(np.int64) for lab in labels(q.logic))
        # highest score first; among equal scores the smallest clip id
        best = order[np.argmax(score[order])]
        hits[q.task].append(float(index.clip_ids[best] in bench.qrels.get(q.id, ())))
    out = {t: float(np.mean(v)) for t, v in hits.items() if v}
    out["overall"] = float(np.mean([x for v in hits.values() for x in v]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--atoms", default="synthetic")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench"
        t0 = time.perf_counter()
        build_benchmark(out, BuildParams(atoms=args.atoms, seed=args.seed, n_clips=args.clips,
                                         n_queries=args.queries))
        seconds = time.perf_counter() - t0
        print(f"build: {args.clips} clips, {args.queries} queries, atoms={args.atoms}, seed={args.seed}: "
              f"{seconds:.1f} s (target <= {TARGET_SECONDS:.0f} s, {seconds / TARGET_SECONDS:.2f} of budget)")
        acc = bag_of_sounds_acc1(out)
        print("bag-of-sounds Acc@1 (perfect hearing, no reasoning): " +
              ", ".join(f"{t} {v:.3f}" for t, v in acc.items()))
    what = f"{args.clips:,} clips, {args.queries:,} queries, {args.atoms} bank, seed {args.seed}"
    write_record(__file__, [vs_target(f"`bench build`, {what}, no audio", seconds, "s", TARGET_SECONDS),
                            Figure("bag-of-sounds Acc@1 on that build (perfect hearing, no logic)",
                                   acc["overall"], "")])


if __name__ == "__main__":
    main()
