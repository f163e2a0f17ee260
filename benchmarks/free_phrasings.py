"""How often the parser reads free phrasings of the generator's shapes right, over the real-sound
bank's 201 labels (issue 21's acceptance: >= 95% right, never wrong; a refusal is allowed).

    .venv/bin/python benchmarks/free_phrasings.py [--draws 3000] [--seed 1]

The phrasings (tests/formulation_phrasings.py: request wrappers around query bodies) are
written apart from every template and training paraphrase. Prints right / refused / wrong and the
right-rate against the 95% target; every wrong reading is printed in full.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from reasonaudio.constraints.canonical import same_logic
from reasonaudio.constraints.logic import describe
from reasonaudio.constraints.parser import parse
from reasonaudio.constraints.templates import format_slots
from reasonaudio.errors import QueryParseError
from reasonaudio.tasks.registry import shape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from formulation_phrasings import BODIES, WRAPPERS  # noqa: E402

TARGET = 0.95


def real_labels() -> list[str]:
    rows = [json.loads(line) for line in
            (ROOT / "reasonaudio" / "data" / "atom_recipes.jsonl").read_text(encoding="utf-8").splitlines()
            if line]
    return sorted({r["label"] for r in rows if r.get("record") == "atom"})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    vocab = real_labels()
    rng = random.Random(args.seed)
    right = refused = wrong = 0
    for _ in range(args.draws):
        name = rng.choice(sorted(BODIES))
        s = shape(name)
        slots = dict(zip(s.labels, rng.sample(vocab, len(s.labels))))
        if s.numbers:
            slots["N"] = float(rng.choice([1, 2, 5, 10, 15, 20]))
        text = rng.choice(WRAPPERS).format(q=rng.choice(BODIES[name]).format(**format_slots(slots)))
        try:
            got = parse(text, vocab)
        except QueryParseError:
            refused += 1
            continue
        if same_logic(got, s.logic(slots)):
            right += 1
        else:
            wrong += 1
            print(f"WRONG {text!r} -> {describe(got)}")
    rate = right / args.draws
    print(f"{len(vocab)} labels, {len(WRAPPERS)} wrappers x {sum(map(len, BODIES.values()))} bodies, "
          f"{args.draws} draws (seed {args.seed}): right {right}, refused {refused}, wrong {wrong}; "
          f"right {rate:.1%} = {rate / TARGET:.3f} x the {TARGET:.0%} target")


if __name__ == "__main__":
    main()
