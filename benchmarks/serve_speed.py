"""Time `bench serve`: start-up, a query page warm, and the first bytes of a clip's audio warm.

    .venv/bin/python benchmarks/serve_speed.py --data DIR [--pages 20]

Starts ``bench serve --data DIR --port 0`` as a child process (as a user would) and prints:
- start-up: seconds from launching the command to the first answered overview page
  (target 3 s);
- a query page's first view: each of ``--pages`` query pages asked once (rendered; the saved
  runs are read in the background from start-up on, so the first pages may wait for them);
- a query page warm: the same pages asked again (a rendered page is kept); median and worst
  (target 300 ms);
- the first bytes of a clip's audio warm: each planted positive of those queries is fetched once
  (rendered and cached), then again, timed to the first byte of the body; median and worst
  (target 200 ms).
Each figure is printed with its ratio to the target (below 1 meets it). The server is always
stopped. Run it on the benchmark of ``bench demo --full`` (data/demo-full/bench) for the docs' figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import time
from pathlib import Path
from urllib.parse import urlsplit

from reasonaudio.explorer.server import child_server
from record import Figure, vs_target, write_record

TARGETS = {"start-up": 3.0, "query page first view": None, "query page warm": 0.300, "audio first bytes warm": 0.200}


def _get(host: str, port: int, path: str, first_byte_only: bool = False) -> tuple[int, float]:
    t = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=120)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        if first_byte_only:
            r.read(1)
        else:
            r.read()
        return r.status, time.perf_counter() - t
    finally:
        conn.close()


def _line(name: str, values: list[float]) -> Figure:
    med, worst = statistics.median(values), max(values)
    target = TARGETS[name]
    if target is None:  # no target: rendered for the first time (runs still being read at first)
        print(f"{name:24s} median {med * 1e3:8.1f} ms, worst {worst * 1e3:8.1f} ms (no target)")
        return Figure(f"`bench serve`: {name}, median", med * 1e3, "ms")
    unit, scale = ("s", 1.0) if target >= 1 else ("ms", 1e3)
    print(f"{name:24s} median {med * scale:8.1f} {unit}, worst {worst * scale:8.1f} {unit} "
          f"(target {target * scale:g} {unit}: worst/target {worst / target:.2f})")
    return vs_target(f"`bench serve`: {name}, worst", worst * scale, unit, target * scale)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pages", type=int, default=20)
    args = ap.parse_args()
    queries = [json.loads(line) for line in (args.data / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    choices = {c["query_id"]: c for c in map(json.loads, (args.data / "choices.jsonl").read_text(
        encoding="utf-8").splitlines())}
    step = max(1, len(queries) // args.pages)
    qids = [q["_id"] for q in queries[::step]][: args.pages]
    clips = [choices[q]["positive"] for q in qids if q in choices]

    t0 = time.perf_counter()
    with child_server(args.data) as base:
        url = urlsplit(base)
        host, port = url.hostname or "127.0.0.1", int(url.port or 80)
        status, _ = _get(host, port, "/")
        startup = time.perf_counter() - t0
        assert status == 200, status
        print(f"{args.data}: {len(queries)} queries; {len(qids)} query pages, {len(clips)} clips timed")
        figures = [_line("start-up", [startup])]
        first = [_get(host, port, f"/query/{q}") for q in qids]
        assert all(status == 200 for status, _ in first)
        figures.append(_line("query page first view", [t for _, t in first]))
        figures.append(_line("query page warm", [_get(host, port, f"/query/{q}")[1] for q in qids]))
        for c in clips:
            assert _get(host, port, f"/audio/{c}.wav")[0] == 200
        figures.append(_line("audio first bytes warm", [_get(host, port, f"/audio/{c}.wav",
                                                              first_byte_only=True)[1] for c in clips]))
    write_record(__file__, figures)

if __name__ == "__main__":
    main()
