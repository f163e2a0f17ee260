"""How often the parser reads free phrasings of the generator's shapes right, over the real-sound
bank's 201 labels (issue 21's acceptance: >= 95% right, never wrong; a refusal is allowed).

    .venv/bin/python benchmarks/free_phrasings.py [--draws 3000] [--seed 1]

The phrasings (tests/formulation_phrasings.py: request wrappers around query bodies) are
written apart from every template and training paraphrase. Prints right / refused / wrong and the
right-rate against the 95% target; every wrong reading is printed in full.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from reasonaudio.logic import describe

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from formulation_phrasings import BODIES, WRAPPERS, real_labels, tally  # noqa: E402
from record import Figure, vs_target, write_record  # noqa: E402

TARGET = 0.95


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    vocab = real_labels()
    rng = random.Random(args.seed)
    right, refused, wrong_reads = tally(rng, vocab, args.draws)
    for text, got in wrong_reads:
        print(f"WRONG {text!r} -> {describe(got)}")
    wrong = len(wrong_reads)
    rate = right / args.draws
    print(f"{len(vocab)} labels, {len(WRAPPERS)} wrappers x {sum(map(len, BODIES.values()))} bodies, "
          f"{args.draws} draws (seed {args.seed}): right {right}, refused {refused}, wrong {wrong}; "
          f"right {rate:.1%} = {rate / TARGET:.3f} x the {TARGET:.0%} target")
    write_record(__file__, [
        vs_target(f"free phrasings read right ({args.draws:,} draws, seed {args.seed}, {len(vocab)} labels)",
                  100 * rate, "%", 100 * TARGET, at_most=False),
        vs_target("free phrasings read wrong", wrong, "queries", 0)])


if __name__ == "__main__":
    main()
