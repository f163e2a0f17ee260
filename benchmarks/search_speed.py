"""Batched Qdrant search against exact numpy search, and formula queries, on Qdrant Edge.

1. Vectors: 10,000 random unit vectors of 512 dimensions (seed 0) in an Edge collection
   (cosine), 1,000 random unit queries, top 10. Edge answers them with ``Store.query_batch``
   (batches of 64, as ``bench eval`` sends them); numpy answers them exactly (one matrix product
   and ``argpartition``) in a subprocess whose environment lacks ``OPENBLAS_CORETYPE`` and
   ``OPENBLAS_L2_SIZE`` (so OpenBLAS picks its own kernel; the Edge side keeps the environment
   as it is). Prints both times, the ratio Edge / numpy (target: at most 1.5) and Edge's
   recall@10 against the exact answer.
2. Formulas: 10,000 clips with the detected payload's soft evidence (200 labels, 2 to 8 with
   evidence per clip; ``--evidence 30-45`` for the density of the real-sound demo's detected
   payload, about 38 labels per clip; ``--evidence-from`` for that payload itself), written as
   ``bench detect`` writes them (payload and evidence vectors, ``store.formula.evidence_point``),
   1,000 soft-logic formula queries of the five task shapes (top 10, every clip ranked:
   ``retrievers.soft_rank.ranked_request``),
   batched the same way, on the collection opened again for reading as ``bench eval`` opens it,
   the hits named from their point ids as a retriever names them (``Store.query_batch(names=)``).
   Prints the median of ``--repeats`` passes (target: at most 5 s on Edge), the searches per query
   (each formula variable is the score of one: ``store.formula.read_by_prefetch``), and the
   baseline: the same formulas evaluated by numpy over every clip's columns
   (``store.formula.evaluate``, what ``detect/soft.py`` computes), with the ratio Edge / numpy.
   ``--evidence-from DATA`` takes the evidence and the queries from a real build instead: the
   clips of its ``bench detect`` collection (``reasonaudio-detected-yamnet-zero-shot``), drawn
   with replacement to ``--points`` (seed 0, each draw a new clip id), and its queries' logic in
   file order, repeated to ``--queries``: the density, the presence distribution and the label
   co-occurrence YAMNet really produces, asked the benchmark's own questions.

    .venv/bin/python benchmarks/search_speed.py
    .venv/bin/python benchmarks/search_speed.py --points 2000 --queries 200   # smaller
    .venv/bin/python benchmarks/search_speed.py --evidence 30-45 --queries 200  # real density, uniform
    .venv/bin/python benchmarks/search_speed.py --evidence-from data/demo-full/bench  # the real payload
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from reasonaudio.logic import And, Before, Has, Lasts, Not, Overlap
from reasonaudio.retrievers.soft_rank import ranked_request
from reasonaudio.store import formula as fm
from reasonaudio.store.base import CollectionMeta, PointIn, Request
from reasonaudio.store.collections import load_collection
from reasonaudio.store.edge import EdgeStore
from reasonaudio.store.payload import point_names

BATCH = 64
K = 10
VECTOR_TARGET = 1.5
FORMULA_TARGET_S = 5.0

NUMPY_SIDE = r"""
import json, sys, time
import numpy as np
c = np.load(sys.argv[1]); q = np.load(sys.argv[2]); k = int(sys.argv[3])
t = time.perf_counter()
s = q @ c.T
top = np.argpartition(-s, k, axis=1)[:, :k]
order = np.take_along_axis(s, top, axis=1).argsort(axis=1)[:, ::-1]
top = np.take_along_axis(top, order, axis=1)
print(json.dumps({"seconds": time.perf_counter() - t, "top": top.tolist(),
                  "numpy": np.__version__}))
"""


def unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def vector_speed(root: Path, points: int, queries: int, dim: int) -> dict:
    rng = np.random.default_rng(0)
    clips, qs = unit(rng, points, dim), unit(rng, queries, dim)
    np.save(root / "c.npy", clips)
    np.save(root / "q.npy", qs)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    out = subprocess.run([sys.executable, "-c", NUMPY_SIDE, str(root / "c.npy"), str(root / "q.npy"),
                          str(K)], env=env, capture_output=True, text=True, check=True)
    exact = json.loads(out.stdout)
    ids = [f"c{i:05d}" for i in range(points)]
    with EdgeStore(root / "edge", write=True) as store:
        meta = CollectionMeta(model="speed", revision="0", dimension=dim, distance="cosine",
                              pooling="none")
        store.create("speed-vectors", meta)
        for i in range(0, points, 1000):
            store.upsert("speed-vectors", [PointIn(ids[j], clips[j].tolist(), {"clip_id": ids[j]})
                                           for j in range(i, min(points, i + 1000))])
        requests = [Request(limit=K, nearest=v.tolist()) for v in qs]
        names = point_names(ids)
        t = time.perf_counter()
        answers = []
        for i in range(0, queries, BATCH):
            answers += store.query_batch("speed-vectors", requests[i:i + BATCH], names)
        edge_s = time.perf_counter() - t
    hits = sum(len({ids[j] for j in want} & {f.clip_id for f in got})
               for want, got in zip(exact["top"], answers))
    return {"edge_s": edge_s, "numpy_s": exact["seconds"], "ratio": edge_s / exact["seconds"],
            "recall_at_10": hits / (K * queries), "numpy": exact["numpy"]}


def soft_points(points: int, labels: int = 200, evidence: tuple[int, int] = (2, 8)
                ) -> tuple[list[str], list[dict]]:
    """The vocabulary and, per clip, label -> (p, p3, onset s, offset s) for ``evidence`` (lo,
    hi) labels drawn uniformly (seed 0)."""
    rng = random.Random(0)
    vocab = [f"sound {i:03d}" for i in range(labels)]
    clips = []
    for _ in range(points):
        fields = {}
        for label in rng.sample(vocab, rng.randint(*evidence)):
            on = round(rng.uniform(0, 20), 3)
            p = rng.random()
            fields[label] = (p, p * rng.random(), on, round(on + rng.uniform(0.5, 8), 3))
        clips.append(fields)
    return vocab, clips


def real_points(data: Path, points: int, queries: int) -> tuple[list[str], list[dict], list]:
    """The vocabulary, ``points`` clips drawn with replacement (seed 0) from the detected
    collection of the build at ``data`` (label -> (p, p3, onset s, offset s), as stored), and its
    queries' logic repeated to ``queries``."""
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.detect.collection import detected_collection
    from reasonaudio.errors import DataError
    from reasonaudio.store.open import open_store

    try:
        bench = load_benchmark(data)
    except DataError as exc:
        print(f"error: --evidence-from: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    name = detected_collection("yamnet", "zero-shot")
    fields = (fm.PRESENCE, fm.PRESENCE_TOP3, fm.ONSET, fm.OFFSET)
    with open_store(data) as store:
        if not store.exists(name):
            print(f"error: --evidence-from: {data}: no collection {name!r} (run `bench detect` "
                  "first)", file=sys.stderr)
            raise SystemExit(2)
        stored = []
        for found in store.scroll(name, fields=("clip_id", *fields)):
            maps = [found.payload.get(f) or {} for f in fields]
            stored.append({lab: tuple(float(m.get(lab, 0.0)) for m in maps) for lab in maps[0]})
    rng = random.Random(0)
    clips = [stored[rng.randrange(len(stored))] for _ in range(points)]
    vocab = sorted({lab for c in stored for lab in c})
    logics = [q.logic for q in bench.queries]
    return vocab, clips, [logics[i % len(logics)] for i in range(queries)]


def soft_logics(vocab: list[str], queries: int) -> list:
    rng = random.Random(1)
    shapes = [lambda a, b, c: And((Has(a), Has(b), Not(Has(c)))), lambda a, b, c: Before(a, b),
              lambda a, b, c: Overlap(a, b), lambda a, b, c: Lasts(a, 5.0),
              lambda a, b, c: And((Lasts(a, 5.0), Before(a, b), Overlap(b, c)))]
    return [shapes[i % 5](*rng.sample(vocab, 3)) for i in range(queries)]


def numpy_formula(clips: list[dict], logics: list) -> float:
    """The same formulas evaluated by numpy over every clip (columns built once, not timed)."""
    n = len(clips)
    columns: dict[str, np.ndarray] = {}
    for i, fields in enumerate(clips):
        for label, (p, p3, on, off) in fields.items():
            for field, value in zip(fm.SOFT_FIELDS, (p, p3, on, off, off - on)):
                columns.setdefault(fm.var_key(field, label), np.zeros(n))[i] = value
    columns[fm.ORDER] = (n - np.arange(n)) / n  # the clip-order tie term's field
    zero = np.zeros(n)
    exprs = [fm.soft_formula(lg) for lg in logics]
    t = time.perf_counter()
    for expr in exprs:
        score = fm.evaluate(expr, lambda key: columns.get(key, zero), n)
        np.argpartition(-score, K)[:K]
    return time.perf_counter() - t


def formula_speed(root: Path, vocab: list[str], clips: list[dict], logics: list,
                  repeats: int = 3) -> dict:
    points = len(clips)
    with EdgeStore(root / "edge", write=True) as store:
        meta = CollectionMeta(model="speed-soft", revision="0", dimension=1, distance="dot",
                              pooling="none")
        dims = fm.evidence_dims(vocab)
        payloads = [{"clip_id": f"c{j:05d}", **fm.soft_payload(clips[j], (points - j) / points)}
                    for j in range(points)]
        by_id = {pl["clip_id"]: pl for pl in payloads}
        t = time.perf_counter()
        load_collection(store, "speed-soft", meta, list(by_id),  # as bench detect makes them
                        lambda ids: [fm.evidence_point(c, by_id[c], dims) for c in ids],
                        segments=fm.SEARCH_SEGMENTS, batch_size=1000, **fm.evidence_layout())
        create_s = time.perf_counter() - t
    counts = fm.recorded_counts(fm.evidence_record(dims, payloads))
    requests = [ranked_request(fm.soft_formula(lg), lg, K + 16, points, dims, counts)
                for lg in logics]
    with EdgeStore(root / "edge") as store:  # opened again for reading, as `bench eval` opens it
        t = time.perf_counter()  # what a retriever does once: name the points (retrievers/base.py)
        names = point_names(pl["clip_id"] for pl in payloads)
        names_s = time.perf_counter() - t
        passes = []
        for _ in range(repeats):
            t = time.perf_counter()
            for i in range(0, len(requests), BATCH):
                store.query_batch("speed-soft", requests[i:i + BATCH], names)
            passes.append(time.perf_counter() - t)
        t = time.perf_counter()
        for r in requests:
            store.query_batch("speed-soft", [r], names)
        single = time.perf_counter() - t
    seconds = float(np.median(passes))
    return {"edge_s": seconds, "passes": passes, "per_query_ms": 1000 * seconds / len(logics),
            "single_s": single,
            "searches": sum(len(r.prefetch) for r in requests) / len(requests),
            "payload_reads": sum(len(fm.variables(r.formula)) - sum(
                v.startswith("$score") for v in fm.variables(r.formula)) for r in requests),
            "create_s": create_s, "names_s": names_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3,
                    help="passes over the formula queries; the median is the figure (default 3)")
    ap.add_argument("--evidence", default="2-8", metavar="LO-HI",
                    help="labels with soft evidence per clip (default 2-8; the real-sound demo's "
                         "detected payload holds about 38 per clip: try 30-45)")
    ap.add_argument("--evidence-from", type=Path, metavar="DATA",
                    help="draw the clips' evidence and the queries from this build's detected "
                         "collection and queries (a `bench demo` folder's evaluation/)")
    args = ap.parse_args()
    lo, _, hi = args.evidence.partition("-")
    evidence = (int(lo), int(hi or lo))
    if args.evidence_from is not None:
        vocab, clips, logics = real_points(args.evidence_from, args.points, args.queries)
        source = f"evidence and queries from {args.evidence_from}"
    else:
        vocab, clips = soft_points(args.points, evidence=evidence)
        logics = soft_logics(vocab, args.queries)
        source = f"{evidence[0]}-{evidence[1]} labels with evidence per clip"
    with tempfile.TemporaryDirectory() as tmp:
        for sub in ("v", "f"):
            (Path(tmp) / sub).mkdir()
        v = vector_speed(Path(tmp) / "v", args.points, args.queries, args.dim)
        f = formula_speed(Path(tmp) / "f", vocab, clips, logics, args.repeats)
    numpy_s = numpy_formula(clips, logics)
    scale = 1000 / args.queries

    def verdict(seconds: float) -> str:
        return "met" if seconds * scale <= FORMULA_TARGET_S else "NOT met"

    print(f"vectors: {args.queries} top-{K} queries over {args.points} x {args.dim} (cosine, seed 0)")
    print(f"  Qdrant Edge query_batch ({BATCH}/batch): {v['edge_s']:.3f} s, recall@10 "
          f"{v['recall_at_10']:.4f} vs exact")
    print(f"  exact numpy {v['numpy']} (OPENBLAS_CORETYPE/L2_SIZE unset): {v['numpy_s']:.3f} s")
    print(f"  ratio edge / numpy: {v['ratio']:.2f} (target <= {VECTOR_TARGET}: "
          f"{'met' if v['ratio'] <= VECTOR_TARGET else 'NOT met'})")
    density = sum(len(c) for c in clips) / max(len(clips), 1)
    print(f"formulas: {args.queries} soft-logic queries over {args.points} clips, {len(vocab)} labels "
          f"({source}; {density:.1f} per clip), top {K}; "
          f"{f['searches']:.1f} searches per query (mean), {f['payload_reads']} payload reads "
          "(every variable is a search's score: store.formula.read_by_prefetch)")
    print(f"  Qdrant Edge query_batch ({BATCH}/batch): {f['edge_s']:.3f} s ({f['per_query_ms']:.2f} ms "
          f"per query; median of {len(f['passes'])} passes: "
          f"{', '.join(f'{x:.3f}' for x in f['passes'])} s; target <= {FORMULA_TARGET_S:g} s for "
          f"1,000: {verdict(f['edge_s'])})")
    print(f"  the same one query per call: {f['single_s']:.3f} s")
    print(f"  naming the points once (point id -> clip id, as a retriever does before its first "
          f"search; not in the times above): {f['names_s']:.3f} s")
    print(f"  numpy, the same formulas over every clip (store.formula.evaluate): {numpy_s:.3f} s; "
          f"ratio edge / numpy {f['edge_s'] / numpy_s:.2f}")
    print(f"  cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    from record import Figure, vs_baseline, write_record

    formulas = f"{args.queries:,} soft-logic formula queries over {args.points:,} clips ({source})"
    write_record(__file__, [
        vs_baseline(f"{args.queries:,} top-{K} vector queries over {args.points:,} x {args.dim} vectors, Edge",
                    v["edge_s"], "s", "exact numpy", v["numpy_s"], ratio_target=VECTOR_TARGET),
        Figure(f"{formulas}, Edge, median of {len(f['passes'])} passes", f["edge_s"] * scale, "s per 1,000",
               "the target", f["edge_s"] * scale / FORMULA_TARGET_S, f"<= {FORMULA_TARGET_S:g} s",
               f["edge_s"] * scale <= FORMULA_TARGET_S),
        vs_baseline("the same formulas evaluated by numpy over every clip", numpy_s, "s", "Edge", f["edge_s"])])


if __name__ == "__main__":
    main()
