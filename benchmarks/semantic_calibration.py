"""Calibrate the parser's semantic fallback (threshold and margin) on one bank, check on another.

    .venv/bin/python benchmarks/semantic_calibration.py [--seed 0] [--per-label 2]

Phrases are generated from a bank's labels, each with the reading it should get:
- a label with a modifier glued on ("distant pure wailing siren" -> that label);
- a label with one typo (two inner letters swapped) -> that label;
- a blend of two labels' words ("harsh drum hits") -> refuse (no label means it);
- a label of the *other* bank that this bank lacks ("dog barking" on the synthetic bank)
  -> refuse.
Only phrases that reach the semantic step count (exact, stem, verb-form and family readings
come first). Calibration picks, on the synthetic bank, the (threshold, margin) with no wrong
acceptance and the most right ones (ties: the larger margin, then threshold). The check applies
them to the real-sound bank's labels (reasonaudio/data/atom_recipes.jsonl) with the roles of
the banks swapped, plus a hand-written list of everyday paraphrases of real-sound labels.
Prints right / wrong / refused for each set. The matcher is MiniLM (reasonaudio.models.label_matcher).
"""

from __future__ import annotations

import argparse
import json
import random
from importlib import resources
from typing import Optional, Sequence

from reasonaudio.querylang.parser import ResolveOptions, parse_detailed
from reasonaudio.querylang.resolve import SEMANTIC_MARGIN, SEMANTIC_THRESHOLD
from reasonaudio.querylang.vocabulary import stem
from reasonaudio.errors import QueryParseError
from reasonaudio.models.label_matcher import LabelMatcher
from record import Figure, vs_target, write_record

MODIFIERS = ["loud", "distant", "faint", "soft", "nearby", "muffled", "quiet", "echoing",
             "recorded", "brief"]

# everyday paraphrases of real-sound labels (check only; never used to calibrate)
PARAPHRASES: list[tuple[str, Optional[str]]] = [
    ("puppy barking", "dog barking"), ("police siren", "siren"), ("kitten meowing", "cat meowing"),
    ("glass shattering", "glass breaking"), ("a helicopter flying overhead", "helicopter"),
    ("crowd applause", "applause"), ("loud siren", "siren"), ("ticking of a clock", "clock ticking"),
    ("someone typing on a keyboard", "computer keyboard typing"), ("infant crying", "baby crying"),
    ("a violin solo", "violin"), ("sea waves", "ocean waves"), ("a toilet being flushed", "toilet flushing"),
    ("a cat purring", None), ("dog growls", None), ("car honking", "car horn"), ("white noise", None),
    ("electric drill", None), ("birds singing", None), ("a gunshot", None), ("people talking", None),
    ("traffic noise", None), ("a baby laughing", None), ("wind howling", "wind blowing"),
    ("heavy breathing", "breathing"), ("a man coughing", "coughing"), ("cows mooing", "cow mooing"),
    ("a creaky door", "door creaking"), ("an old typewriter", "typewriter"), ("a jet engine", None),
]


def synthetic_labels() -> list[str]:
    from reasonaudio.atoms.synthetic import RECIPES

    return [r.label for r in RECIPES]


def real_labels() -> list[str]:
    text = resources.files("reasonaudio.data").joinpath("atom_recipes.jsonl").read_text("utf-8")
    recs = [json.loads(line) for line in text.splitlines() if line.strip()]
    return sorted({r["label"] for r in recs if r.get("record") == "atom"})


def typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def phrases(labels: Sequence[str], other: Sequence[str], per_label: int, seed: int
            ) -> list[tuple[str, Optional[str], str]]:
    """(phrase, intended label or None, generator) for one bank."""
    rng = random.Random(seed)
    out: list[tuple[str, Optional[str], str]] = []
    have = set(labels)
    for label in labels:
        for _ in range(per_label):
            out.append((f"{rng.choice(MODIFIERS)} {label}", label, "modifier"))
        words = label.split()
        long = [k for k, w in enumerate(words) if len(w) >= 5]
        if long:
            k = rng.choice(long)
            out.append((" ".join(words[:k] + [typo(words[k], rng)] + words[k + 1:]), label, "typo"))
        x, y = rng.sample(list(labels), 2)
        blend = " ".join(x.split()[:1] + y.split()[1:]) if len(y.split()) > 1 else f"{x.split()[0]} {y}"
        if blend not in have:
            out.append((blend, None, "blend"))
    # the other bank's labels that share no word with this bank's: sounds it lacks
    own = {stem(w) for lab in labels for w in lab.split()}
    out += [(lab, None, "other bank") for lab in other
            if lab not in have and not {stem(w) for w in lab.split()} & own]
    return out


class Recording:
    """Wraps the matcher: remembers the scores the parser asked for, per phrase."""

    def __init__(self, inner: LabelMatcher) -> None:
        self.inner = inner
        self.calls: list[list[tuple[str, float]]] = []

    def __call__(self, phrase: str, labels: Sequence[str]) -> list[tuple[str, float]]:
        got = self.inner(phrase, labels)
        self.calls.append(got)
        return got


def observe(items, labels, matcher: LabelMatcher):
    """Per phrase that reaches the semantic step: (intended, pick or None, best, runner-up)."""
    obs = []
    for text, want, gen in items:
        rec = Recording(matcher)
        opts = ResolveOptions(semantic=rec, threshold=-2.0, margin=-2.0)
        try:
            r = parse_detailed(text, labels, opts)
            pick = next((x.labels[0] for x in r.resolutions if x.kind == "semantic"), None)
        except QueryParseError:
            pick = None
        if not rec.calls:
            continue   # read before the semantic step (exact, stem, verb-form, family)
        scores = rec.calls[-1]
        best = scores[0][1]
        second = scores[1][1] if len(scores) > 1 else -1.0
        obs.append((want, pick, best, second, gen))
    return obs


def outcome(obs, t: float, m: float) -> tuple[int, int, int]:
    right = wrong = refused = 0
    for want, pick, best, second, _ in obs:
        accepted = pick is not None and best >= t and best - second >= m
        if not accepted:
            refused += 1
        elif pick == want:
            right += 1
        else:
            wrong += 1
    return right, wrong, refused


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-label", type=int, default=1)
    args = ap.parse_args()
    matcher = LabelMatcher()
    syn, real = synthetic_labels(), real_labels()
    cal = observe(phrases(syn, real, args.per_label, args.seed), syn, matcher)
    grid = [(t / 100, m / 100) for t in range(30, 96) for m in range(0, 31)]
    best = max(grid, key=lambda tm: (outcome(cal, *tm)[1] == 0, outcome(cal, *tm)[0], tm[1], tm[0]))
    t, m = best
    print(f"matcher              {matcher.identity()}")
    print(f"calibration (synthetic bank, {len(syn)} labels, seed {args.seed}): "
          f"{len(cal)} phrases reach the semantic step")
    r, w, f = outcome(cal, t, m)
    print(f"chosen               threshold {t:.2f}, margin {m:.2f}  "
          f"(in the code: {SEMANTIC_THRESHOLD:.2f}, {SEMANTIC_MARGIN:.2f})")
    print(f"  calibration        right {r}, wrong {w}, refused {f}")
    figures = [Figure(f"calibration phrases right (synthetic bank, {len(syn)} labels; {len(cal)} reach the "
                      "semantic step)", r, "phrases"), vs_target("calibration phrases read wrong", w, "phrases", 0)]
    chk = observe(phrases(real, syn, args.per_label, args.seed + 1), real, matcher)
    para = observe([(p, want, "paraphrase") for p, want in PARAPHRASES], real, matcher)
    for name, obs in (("check: real-sound generated", chk), ("check: paraphrases", para)):
        for tm, tag in (((t, m), "chosen"), ((SEMANTIC_THRESHOLD, SEMANTIC_MARGIN), "in code")):
            r, w, f = outcome(obs, *tm)
            print(f"  {name:28s} [{tag:7s}] {len(obs)} phrases: right {r}, wrong {w}, refused {f}")
            if tag == "in code":
                figures += [Figure(f"{name}: right of {len(obs)} (threshold {tm[0]:.2f}, margin {tm[1]:.2f})",
                                   r, "phrases"), vs_target(f"{name}: read wrong", w, "phrases", 0)]
    by_gen: dict[str, list] = {}
    for o in chk:
        by_gen.setdefault(o[4], []).append(o)
    for gen, obs in sorted(by_gen.items()):
        r, w, f = outcome(obs, SEMANTIC_THRESHOLD, SEMANTIC_MARGIN)
        print(f"    real-sound {gen:12s} right {r}, wrong {w}, refused {f}")
    write_record(__file__, figures)


if __name__ == "__main__":
    main()
