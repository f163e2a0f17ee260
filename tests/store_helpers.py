"""Small random benchmarks for the store, oracle and search tests (no builder, no audio).

Writes a complete benchmark directory (corpus, queries with gold logic, qrels from the judge's
semantics, choices, atoms, manifest) so `load_benchmark` reads it like a built one. Durations
deliberately sit on and next to the `lasts` tolerance bounds so off-by-one-ms errors show.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from reasonaudio.logic import And, Before, Has, Lasts, Node, Not, Or, Overlap, to_json
from reasonaudio.querylang.semantics import holds, intervals
from reasonaudio.dataset.benchmark import write_qrels
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.dataset.benchmark import write_manifest

WORDS = ["dog barking", "siren", "rain", "thunder", "door knock", "baby crying", "car horn",
         "bird chirping", "church bell", "glass breaking", "engine idling", "applause",
         "footsteps", "keyboard typing", "water dripping", "wind blowing"]

EDGE_DURS_MS = [1500, 1499, 2500, 2501, 4250, 4249, 5750, 5751, 8500, 8499, 11500, 11501,
                12750, 12749, 17250, 17251, 17000, 16999, 23000, 23001]
DURATIONS_S = (2, 5, 10, 15, 20)


def random_clip(rng: random.Random, idx: int, vocab: list[str]) -> Clip:
    n = rng.randint(2, min(6, len(vocab)))
    labels = rng.sample(vocab, n)
    overlap = rng.random() < 0.4
    events = []
    t = rng.randint(0, 500)
    for label in labels:
        dur = rng.choice(EDGE_DURS_MS) if rng.random() < 0.3 else rng.randint(300, 6000)
        if overlap and events and rng.random() < 0.6:
            prev_on = int(round(events[-1].onset * 1000))
            on = prev_on + rng.choice([0, 250, 499, 500, 501, 1000])
        else:
            on = t + rng.choice([0, 0, 1, 300])
        off = on + dur
        t = max(t, off)
        events.append(Event(label, on / 1000, off / 1000, f"atom-{label}", 0.0))
    duration = max(int(round(e.offset * 1000)) for e in events) / 1000
    mode = "overlap" if overlap else "sequential"
    if mode == "sequential":
        iv = sorted((int(round(e.onset * 1000)), int(round(e.offset * 1000))) for e in events)
        if any(a[1] > b[0] for a, b in zip(iv, iv[1:])):
            mode = "overlap"
    return Clip(f"clip-{idx:05d}", mode, duration, 16000, tuple(events))


def random_leaf(rng: random.Random, vocab: list[str]) -> Node:
    a, b = rng.sample(vocab, 2)
    kind = rng.choice(["has", "before", "overlap", "lasts"])
    if kind == "has":
        return Has(a)
    if kind == "before":
        return Before(a, b)
    if kind == "overlap":
        return Overlap(a, b)
    return Lasts(a, float(rng.choice(DURATIONS_S)))


def random_logic(rng: random.Random, vocab: list[str], depth: int = 3) -> Node:
    if depth <= 0 or rng.random() < 0.3:
        return random_leaf(rng, vocab)
    kind = rng.choice(["and", "or", "not"])
    if kind == "not":
        return Not(random_logic(rng, vocab, depth - 1))
    args = tuple(random_logic(rng, vocab, depth - 1) for _ in range(rng.randint(1, 3)))
    return And(args) if kind == "and" else Or(args)


def task_logic(rng: random.Random, vocab: list[str], task: str) -> Node:
    a, b, c, d = rng.sample(vocab, 4)
    if task == "negation":
        return And((Has(a), Has(b), Not(Has(c))))
    if task == "order":
        return Before(a, b)
    if task == "overlap":
        return Overlap(a, b)
    if task == "duration":
        return Lasts(a, float(rng.choice(DURATIONS_S)))
    return And((Lasts(a, float(rng.choice(DURATIONS_S))), Before(a, b), Before(b, c),
                Before(b, d), Overlap(c, d)))


def write_fake_benchmark(root: Path, n_clips: int = 200, n_queries: int = 60, seed: int = 0,
                         vocab: list[str] | None = None, random_trees: bool = True) -> Path:
    """A benchmark directory whose qrels come from `semantics.holds` (the judge's definition)."""
    rng = random.Random(seed)
    vocab = list(vocab or WORDS)
    root = Path(root)
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    clips = [random_clip(rng, i, vocab) for i in range(n_clips)]
    tasks = ["negation", "order", "overlap", "duration", "mix"]
    queries, qrels = [], {}
    for i in range(n_queries):
        task = tasks[i % 5]
        logic = (random_logic(rng, vocab) if random_trees and i % 2
                 else task_logic(rng, vocab, task))
        qid = f"q-{i:04d}"
        queries.append({"_id": qid, "text": f"query {i}", "task": task, "logic": to_json(logic)})
        rel = [c.id for c in clips if holds(logic, intervals(c.events))]
        if rel:
            qrels[qid] = rel
    with open(root / "corpus.jsonl", "w") as fh:
        for c in clips:
            fh.write(json.dumps(c.to_json()) + "\n")
    with open(root / "queries.jsonl", "w") as fh:
        for q in queries:
            fh.write(json.dumps(q) + "\n")
    write_qrels(root / "qrels" / "test.tsv", qrels)
    (root / "choices.jsonl").write_text("")
    with open(root / "atoms.jsonl", "w") as fh:
        for label in sorted(vocab):
            fh.write(json.dumps({"atom_id": f"atom-{label}", "label": label, "path": f"synthetic:{label}",
                                 "sample_rate": 16000, "duration": 5.0, "source": "test",
                                 "license": "CC0"}) + "\n")
    write_manifest(root, {"seed": seed, "counts": {"clips": n_clips}})
    return root
