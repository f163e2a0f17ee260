"""Embedded Qdrant backends on the default benchmark: upsert and oracle-query time.

For each backend (Qdrant Edge, qdrant-client local mode) in a fresh temporary folder:
- the time to load the payload collection (10,000 clips by default: payload build + upsert);
- the time for the oracle to answer every query (1,000 by default): parse the text, translate
  the logic to a filter, fetch every matching clip id, rank; and the filter-only part;
- whether the answers equal qrels (they must).
Prints the totals per backend and the ratio local / edge. Target: 1,000 oracle queries over
10,000 clips in at most 10 s on the embedded default (edge).

    .venv/bin/python benchmarks/store_speed.py                 # builds the default benchmark once
    .venv/bin/python benchmarks/store_speed.py --data DIR      # an existing benchmark
    .venv/bin/python benchmarks/store_speed.py --local-queries 100   # extrapolate local mode
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from reasonaudio.dataset.view import load_benchmark
from reasonaudio.retrievers.oracle import OracleRetriever
from reasonaudio.store.base import Store
from reasonaudio.store.collections import PAYLOAD_COLLECTION, ingest_payload
from reasonaudio.store.filters import to_filter

TARGET_S = 10.0


def default_bench(cache: Path, clips: int, queries: int, seed: int) -> Path:
    from reasonaudio.generator.build import BuildParams, build_benchmark

    out = cache / f"default-{clips}c-{queries}q-seed{seed}"
    if not (out / "manifest.json").is_file():
        build_benchmark(out, BuildParams(atoms="synthetic", seed=seed, n_clips=clips,
                                         n_queries=queries), overwrite=True)
    return out


def open_backend(name: str, folder: Path) -> Store:
    if name == "edge":
        from reasonaudio.store.edge import EdgeStore
        return EdgeStore(folder)
    from reasonaudio.store.client import ClientStore
    return ClientStore(path=folder)


def measure(name: str, bench, n_queries: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix=f"store-speed-{name}-"))
    try:
        store = open_backend(name, folder)
        t0 = time.perf_counter()
        ingest_payload(bench, store)
        upsert_s = time.perf_counter() - t0
        queries = bench.queries[:n_queries]
        oracle = OracleRetriever(bench, store)
        t0 = time.perf_counter()
        answers = {q.id: oracle.search(q.text, len(bench.clips)) for q in queries}
        oracle_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in queries:
            store.matching_ids(PAYLOAD_COLLECTION, to_filter(q.logic))
        filter_s = time.perf_counter() - t0
        wrong = sum({h.clip_id for h in answers[q.id]} != bench.qrels.get(q.id, set())
                    for q in queries)
        store.close()
        return {"backend": name, "points": len(bench.clips), "upsert_s": upsert_s,
                "queries": len(queries), "oracle_s": oracle_s, "filter_s": filter_s,
                "wrong": wrong}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="benchmark directory (default: build one)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "reasonaudio-speed",
                    help="where the default benchmark is built once and reused")
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backends", default="edge,local")
    ap.add_argument("--local-queries", type=int, default=None,
                    help="run only N queries on local mode and extrapolate to all (it is slow)")
    args = ap.parse_args()
    console = Console()
    root = args.data or default_bench(args.cache, args.clips, args.queries, args.seed)
    bench = load_benchmark(root)
    bench.clips, bench.queries, bench.qrels, bench.labels  # noqa: B018 (load before timing)
    n_all = len(bench.queries)
    console.print(f"benchmark {root}: {len(bench.clips)} clips, {n_all} queries")
    rows = []
    for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
        n = min(n_all, args.local_queries) if (name == "local" and args.local_queries) else n_all
        r = measure(name, bench, n)
        scale = n_all / r["queries"]
        r["oracle_total_s"] = r["oracle_s"] * scale
        r["filter_total_s"] = r["filter_s"] * scale
        r["extrapolated"] = scale != 1
        rows.append(r)
        console.print(f"{name}: upsert {r['points']} points {r['upsert_s']:.2f} s; "
                      f"{n_all} oracle queries {r['oracle_total_s']:.2f} s"
                      f"{' (extrapolated from ' + str(n) + ')' if r['extrapolated'] else ''}; "
                      f"wrong vs qrels {r['wrong']}/{r['queries']}")
    table = Table(title=f"Embedded Qdrant backends, {len(bench.clips)} clips, {n_all} oracle queries")
    for col in ("backend", "upsert (s)", "oracle total (s)", "ms / query", "filter only (s)",
                "wrong vs qrels"):
        table.add_column(col, justify="right" if col != "backend" else "left")
    for r in rows:
        mark = "*" if r["extrapolated"] else ""
        table.add_row(r["backend"], f"{r['upsert_s']:.2f}", f"{r['oracle_total_s']:.2f}{mark}",
                      f"{1000 * r['oracle_s'] / r['queries']:.2f}",
                      f"{r['filter_total_s']:.2f}{mark}", f"{r['wrong']}/{r['queries']}")
    console.print(table)
    by = {r["backend"]: r for r in rows}
    if "edge" in by and "local" in by:
        e, lo = by["edge"], by["local"]
        console.print(f"ratio local/edge: upsert {lo['upsert_s'] / e['upsert_s']:.1f}x, "
                      f"oracle queries {lo['oracle_total_s'] / e['oracle_total_s']:.1f}x "
                      f"(edge/local {e['oracle_total_s'] / lo['oracle_total_s']:.3f})")
    if "edge" in by:
        e = by["edge"]
        ok = e["oracle_total_s"] <= TARGET_S and e["wrong"] == 0
        console.print(f"target: {n_all} oracle queries on edge <= {TARGET_S:.0f} s: "
                      f"{e['oracle_total_s']:.2f} s, {'PASS' if ok else 'FAIL'}")
    if any(r["extrapolated"] for r in rows):
        console.print("* extrapolated linearly from the queries run")
    from record import Figure, vs_baseline, vs_target, write_record

    what = f"{n_all:,} oracle queries over {len(bench.clips):,} clips"
    figures = []
    if "edge" in by:
        figures += [vs_target(f"{what}, Edge", by["edge"]["oracle_total_s"], "s", TARGET_S),
                    Figure(f"upsert {by['edge']['points']:,} payload points, Edge", by["edge"]["upsert_s"], "s")]
    if "local" in by:
        extra = " (extrapolated)" if by["local"]["extrapolated"] else ""
        e = by.get("edge")
        figures += [vs_baseline(f"{what}, local mode{extra}", by["local"]["oracle_total_s"], "s", "Edge",
                                e["oracle_total_s"]) if e else
                    Figure(f"{what}, local mode{extra}", by["local"]["oracle_total_s"], "s"),
                    vs_baseline(f"upsert {by['local']['points']:,} payload points, local mode", by["local"]["upsert_s"],
                                "s", "Edge", e["upsert_s"]) if e else
                    Figure(f"upsert {by['local']['points']:,} payload points, local mode", by["local"]["upsert_s"], "s")]
    figures += [vs_target(f"oracle answers differing from qrels ({r['backend']})", r["wrong"], "queries", 0)
                for r in rows]
    write_record(__file__, figures)


if __name__ == "__main__":
    main()
