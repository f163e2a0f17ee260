"""Time the query parser on generated queries and check it reads every one back.

    .venv/bin/python benchmarks/parse_speed.py [--queries 1000] [--seed 0] [--data DIR]

Without --data it renders --queries queries (the generator's shapes, evenly over the five tasks,
every template reachable) over the synthetic bank's labels; with --data it parses the queries of a
built benchmark. Prints the read-back rate (target 100%), the time per query, and the share of the
oracle's 10 s budget for 1,000 queries (issue 3) that parsing 1,000 queries uses.
"""

from __future__ import annotations

import argparse
import random
import time

from reasonaudio.logic import And, Before, Has, Lasts, Not, Overlap
from reasonaudio.querylang.parser import parse, same_logic
from reasonaudio.generator.templates import TASK_SHAPES, render_query
from reasonaudio.querylang.vocabulary import vocabulary
from record import Figure, vs_target, write_record

ORACLE_BUDGET_S = 10.0  # issue 3: 1,000 oracle queries in at most 10 s on the embedded default


def generated(n: int, seed: int) -> tuple[list[str], list[tuple[str, object]]]:
    from reasonaudio.atoms.synthetic import RECIPES

    labels = [r.label for r in RECIPES]
    rng = random.Random(seed)
    out = []
    tasks = sorted(TASK_SHAPES)
    for i in range(n):
        task = tasks[i % len(tasks)]
        shape = rng.choice(TASK_SHAPES[task])
        a, b, c, d = rng.sample(labels, 4)
        k = rng.choice([2, 5, 10, 15, 20])
        logic = {"negation": And((Has(a), Has(b), Not(Has(c)))), "order": Before(a, b),
                 "overlap": Overlap(a, b), "duration": Lasts(a, k),
                 "m1": And((Lasts(a, k), Before(a, b))), "m2": And((Before(a, b), Not(Has(c)))),
                 "m3": And((Overlap(a, b), Lasts(a, k))),
                 "m4": And((Before(a, b), Before(a, c), Overlap(b, c))),
                 "m5": And((Lasts(a, k), Before(a, b), Before(b, c), Before(b, d), Overlap(c, d))),
                 }[shape]
        text, _ = render_query(logic, task, rng)
        out.append((text, logic))
    return labels, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=None, help="a built benchmark directory instead")
    args = ap.parse_args()
    if args.data:
        from reasonaudio.dataset.view import load_benchmark

        bench = load_benchmark(args.data)
        labels = list(bench.labels)
        pairs = [(q.text, q.logic) for q in bench.queries]
    else:
        labels, pairs = generated(args.queries, args.seed)
    t0 = time.perf_counter()
    vocab = vocabulary(labels)
    t_vocab = time.perf_counter() - t0
    t0 = time.perf_counter()
    ok = sum(same_logic(parse(text, vocab), logic) for text, logic in pairs)
    elapsed = time.perf_counter() - t0
    per_q = elapsed / max(len(pairs), 1)
    print(f"queries              {len(pairs)} over {len(labels)} labels")
    print(f"read back exactly    {ok}/{len(pairs)} ({100.0 * ok / max(len(pairs), 1):.1f}%, target 100%)")
    print(f"vocabulary index     {t_vocab * 1000:.1f} ms (once per vocabulary)")
    print(f"parse time           {elapsed:.3f} s total, {per_q * 1000:.3f} ms per query")
    print(f"1,000 queries        {per_q * 1000:.2f} s = {100 * per_q * 1000 / ORACLE_BUDGET_S:.1f}% "
          f"of the oracle's {ORACLE_BUDGET_S:g} s budget")
    n = len(pairs)
    write_record(__file__, [
        vs_target(f"queries read back exactly ({n:,} over {len(labels)} labels)", 100.0 * ok / max(n, 1), "%",
                  100.0, at_most=False),
        Figure("parse time per query", per_q * 1000, "ms", f"the oracle's {ORACLE_BUDGET_S:g} s budget for 1,000 "
               "queries", per_q * 1000 / ORACLE_BUDGET_S)])


if __name__ == "__main__":
    main()
