"""Ray engine overhead: clips/s of `bench ingest --engine ray` against the local engine, same
model, same clips, cold caches, a fresh Edge collection each (issue 25). The default is the
paper's corpus, 10,000 clips: Ray's fixed start-up (starting Ray, the actor, its model load:
about 14 s here) is a third of a 2,000-clip job on two cores, and docs/scale.md gives both.

    .venv/bin/python benchmarks/ray_ingest.py                    # MiniLM captions, 10,000 clips
    .venv/bin/python benchmarks/ray_ingest.py --clips 2000       # a small job: start-up weighs most
    .venv/bin/python benchmarks/ray_ingest.py --cpus-per-worker 1 --cpus-per-worker 2   # layouts compared
    .venv/bin/python benchmarks/ray_ingest.py --model yamnet --clips 300
    .venv/bin/python benchmarks/ray_ingest.py --clips 10000 --pairs 1 --skip-local
    .venv/bin/python benchmarks/ray_ingest.py --model clap --device cuda --gpus-per-worker 1   # a GPU

Both engines run :func:`reasonaudio.ingest.run.ingest_model` on a synthetic build (seed 0,
``--clips`` clips, built once under the cache folder) with their own empty cache folder, in
``--pairs`` alternated rounds (local, Ray, local, Ray, ...: the machine is shared, so both see
the same load), and the script reports medians. Every run is a fresh Python process (this script
again, with a hidden ``--one``), so each engine pays its imports and its model load, as a
``bench ingest`` does (``--same-process``: all runs in this process, as before issue 25's
like-for-like fix, where the local engine's second run found its model already loaded). The Ray
side starts a local Ray for each run (the engine's default size unless ``--ray-cpus``; a 500 MB
object store) and its wall time includes starting Ray and the actors; without
``--cpus-per-worker`` it uses the layout a plain ``--engine ray`` gets
(:meth:`RayOptions.resolved`), and each ``--cpus-per-worker`` given adds a layout to the same
rounds; without ``--batch-clips`` the engine's own batch size (:meth:`RayOptions.batch_for`:
1,024 clips for a caption model, 16 for an audio model). Printed: every run (wall time, clips/s,
first clip, the rate after it, the 1-minute load average before and after), the layouts, and per
engine the medians: clips/s, the ratio Ray/local against the target (>= 0.85: Ray's overhead
within 15%), clips/s per worker, where Ray's start-up went (starting Ray, the actor's process,
its model load), the actors' torch threads, and where the job's seconds went after it
(``RayEngine.timings``: Ray batches, the actors' seconds in the model and in cache commits, the
driver's seconds waiting for clips and turning them into points). ``--model clap`` without
``--model-path`` uses the full-size random-weight CLAP of
benchmarks/ingest_overhead.py (a real-size model: 153 M parameters); ``--device cuda`` runs both
sides on the GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parent))
TARGET = 0.85


def build(n_clips: int) -> Path:
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.models.cache_dir import cache_root

    out = cache_root() / "bench-builds" / f"synthetic-seed0-{n_clips}"
    if not (out / "manifest.json").is_file():
        build_benchmark(out, BuildParams(atoms="synthetic", seed=0, n_clips=n_clips,
                                         n_queries=min(1000, max(50, n_clips // 10))))
    return out


def copy_bench(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    for item in src.iterdir():
        if item.name in ("qdrant", "results"):
            continue
        (shutil.copytree if item.is_dir() else shutil.copy2)(item, dst / item.name)
    return dst


def run(src: Path, work: Path, label: str, args: argparse.Namespace, engine=None) -> dict:
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.progress import Hooks
    from reasonaudio.store.open import open_store

    data = copy_bench(src, work / label)
    bench = load_benchmark(data)
    first: list[float] = []
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()

    def progress(_label: str, done: int, _total: int) -> None:
        if done and not first:
            first.append(time.perf_counter() - t0)

    with open_store(data, write=True) as store:
        summary = ingest_model(bench, store, args.model,
                               IngestOptions(model_path=args.model_path, device=args.device,
                                             cache_dir=work / f"cache-{label}", engine=engine),
                               hooks=Hooks(on_progress=progress))
    wall = time.perf_counter() - t0
    assert summary.upserted == len(bench.clips), summary
    shutil.rmtree(work / label, ignore_errors=True)
    shutil.rmtree(work / f"cache-{label}", ignore_errors=True)
    start = first[0] if first else 0.0
    out = {"wall_s": round(wall, 2), "clips_per_s": round(len(bench.clips) / wall, 3),
           "first_clip_s": round(start, 2),
           "after_first_clip_per_s": round(len(bench.clips) / max(wall - start, 1e-9), 3),
           "load_avg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
    if engine is not None:
        out["startup"] = engine.startup
        out["timings"] = {k: round(v, 3) for k, v in engine.timings.items()}
    return out


def run_fresh(work: Path, side: str) -> dict:
    """One run in a fresh Python process (this script with ``--one SIDE``): each engine pays
    its imports and model load, as a ``bench ingest`` does."""
    proc = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--one", side, "--work", str(work)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the {side} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="two-stage:oracle-caption+minilm")
    ap.add_argument("--model-path", default=None)
    ap.add_argument("--clips", type=int, default=10_000,
                    help="clips in the synthetic build (default: the paper's corpus size, 10,000)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--cpus-per-worker", type=float, action="append", default=None,
                    help="logical CPUs per actor; repeat to compare layouts in the same rounds "
                    "(default: the engine's own choice)")
    ap.add_argument("--gpus-per-worker", type=float, default=0.0)
    ap.add_argument("--ray-cpus", type=int, default=None,
                    help="the local Ray's logical CPUs (default: the engine's own choice)")
    ap.add_argument("--batch-clips", type=int, default=None,
                    help="clips per Ray batch (default: the engine's own choice, RayOptions.batch_for)")
    ap.add_argument("--pairs", type=int, default=2,
                    help="rounds of local, Ray, local, Ray...: medians are reported (the machine is shared)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--skip-local", action="store_true", help="only the Ray engine")
    ap.add_argument("--skip-ray", action="store_true", help="only the local engine")
    ap.add_argument("--same-process", action="store_true",
                    help="every run in this process (the model a local run loaded stays loaded)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # a fresh process's one run
    ap.add_argument("--work", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    import ray

    from reasonaudio.ingest.ray_engine import RayEngine, RayOptions
    from reasonaudio.provenance import versions

    if args.model == "clap" and args.model_path is None:
        from ingest_overhead import full_random_clap_dir

        args.model_path = str(full_random_clap_dir())
    src = build(args.clips)
    layouts: dict[str, RayOptions] = {}
    for cpus in args.cpus_per_worker or [None]:
        options = RayOptions(workers=args.workers, cpus_per_worker=cpus,
                             gpus_per_worker=args.gpus_per_worker, local_cpus=args.ray_cpus,
                             batch_clips=args.batch_clips).resolved()
        layouts[f"ray-{options.cpus_per_worker:g}cpu"] = options
    sides = ([] if args.skip_local else ["local"]) + ([] if args.skip_ray else list(layouts))
    assert sides, "--skip-local and --skip-ray leave nothing to measure"
    if args.one is not None:  # a child of the rounds below: one run, its JSON on the last line
        engine = None if args.one == "local" else RayEngine(layouts[args.one])
        print(json.dumps(run(src, Path(args.work), args.one, args, engine)))
        return
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    work = Path(tempfile.mkdtemp(prefix="ray-ingest-bench-"))
    try:
        for _ in range(args.pairs):  # alternated: A B A B, so both see the same load
            for side in sides:
                if args.same_process:
                    engine = None if side == "local" else RayEngine(layouts[side])
                    runs[side].append(run(src, work, side, args, engine))
                else:
                    runs[side].append(run_fresh(work, side))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = {side: {"clips_per_s": median([r["clips_per_s"] for r in rs]),
                      "first_clip_s": median([r["first_clip_s"] for r in rs]),
                      "after_first_clip_per_s": median([r["after_first_clip_per_s"] for r in rs])}
               for side, rs in runs.items()}
    for side in layouts:
        if side not in runs:
            continue
        rs = runs[side]
        summary[side]["ray_start_s"] = median([r["startup"].get("ray_start_s", 0) for r in rs])
        for key in ("spawn_s", "load_s"):
            summary[side][f"actor_{key}"] = median([max([a[key] for a in r["startup"]["actors"]] or [0])
                                                    for r in rs])
        summary[side]["actor_threads"] = sorted({str(a.get("torch_threads", a.get("omp_num_threads")))
                                                 for r in rs for a in r["startup"]["actors"]})
        for key in rs[0]["timings"]:
            summary[side][key] = median([r["timings"][key] for r in rs])
    out = {"benchmark": {"bank": "synthetic", "classes": 223, "seed": 0, "clips": args.clips},
           "model": args.model, "device": args.device, "cores": len(os.sched_getaffinity(0)),
           "ray": {"version": ray.__version__,
                   "layouts": {side: o.to_json() | {"local_cpus": o.local_cpus or "auto",
                                                    "needs_cpus": o.needed_cpus()}
                               for side, o in layouts.items()}},
           "pairs": args.pairs, "fresh_process_per_run": not args.same_process,
           "versions": versions(), "runs": runs, "medians": summary}
    print(json.dumps(out, indent=1, default=str))
    loads = [x for rs in runs.values() for r in rs for x in r["load_avg_1m"]]
    print(f"{args.model} on {args.clips} clips ({args.device}), medians of {args.pairs} alternated "
          f"round(s), {'one process' if args.same_process else 'a fresh process per run'}, "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {out['cores']} cores:")
    local = summary.get("local")
    if local:
        print(f"  local: {local['clips_per_s']:.2f} clips/s (first clip after {local['first_clip_s']} s, "
              f"then {local['after_first_clip_per_s']:.2f} clips/s)")
    for side in layouts:
        if side not in summary:
            continue
        r, o = summary[side], layouts[side]
        line = (f"  {side} ({o.workers} worker(s) x {o.cpus_per_worker:g} CPU, actor threads "
                f"{','.join(r['actor_threads'])}): {r['clips_per_s']:.2f} clips/s, "
                f"{r['clips_per_s'] / o.workers:.2f} per worker (first clip after {r['first_clip_s']} s: "
                f"Ray start {r['ray_start_s']} s, actor process {r['actor_spawn_s']} s, "
                f"model load {r['actor_load_s']} s; then "
                f"{r['after_first_clip_per_s']:.2f} clips/s; {r['batches']:g} batches "
                f"(--batch-clips {o.batch_clips or 'auto'}), actors {r['actor_compute_s']} s model + "
                f"{r['actor_commit_s']} s cache commits, driver {r['driver_wait_s']} s waiting + "
                f"{r['driver_rows_s']} s per-clip work)")
        if local:
            ratio = r["clips_per_s"] / local["clips_per_s"]
            after = r["after_first_clip_per_s"] / local["after_first_clip_per_s"]
            line += (f"; ray/local {ratio:.3f} (target >= {TARGET}: {'met' if ratio >= TARGET else 'NOT met'}), "
                     f"after the first clip {after:.3f}")
        print(line)
    from record import Figure, vs_baseline, write_record

    figures = [(vs_baseline(f"`bench ingest --engine ray` ({side}), {args.model}, {args.clips:,} synthetic clips",
                            summary[side]["clips_per_s"], "clips/s", "the local engine", local["clips_per_s"],
                            ratio_target=TARGET, at_most=False) if local else
                Figure(f"`bench ingest --engine ray` ({side}), {args.model}, {args.clips:,} synthetic clips",
                       summary[side]["clips_per_s"], "clips/s"))
               for side in layouts if side in summary]
    write_record(__file__, figures)


if __name__ == "__main__":
    main()
