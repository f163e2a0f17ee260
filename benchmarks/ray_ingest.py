"""Ray engine overhead: clips/s of `bench ingest --engine ray` against the local engine, same
model, same clips, cold caches, a fresh Edge collection each (issue 25).

    .venv/bin/python benchmarks/ray_ingest.py                                   # MiniLM captions, 2,000 clips
    .venv/bin/python benchmarks/ray_ingest.py --model yamnet --clips 300
    .venv/bin/python benchmarks/ray_ingest.py --clips 10000 --workers 2 --cpus-per-worker 0.5
    .venv/bin/python benchmarks/ray_ingest.py --model clap --device cuda --gpus-per-worker 1   # a GPU

Both sides run :func:`reasonaudio.ingest.embed.run.ingest_model` on a synthetic build (seed 0,
``--clips`` clips, built once under the cache folder) with its own empty cache folder; the Ray
side starts a local Ray for the run (``--ray-cpus`` logical CPUs, a 500 MB object store) and its
wall time includes starting Ray and the actors. Printed: clips/s of each, the ratio Ray/local
against the target (>= 0.85: Ray's overhead within 15%), clips/s per worker, and the seconds
each engine took before its first clip came back (model loading; for Ray also starting Ray and
the actors) and the rates after it. ``--model clap`` without ``--model-path`` uses the
full-size random-weight CLAP of benchmarks/ingest_overhead.py (a real-size model: 153 M
parameters); ``--device cuda`` runs both sides on the GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parent))
TARGET = 0.85


def build(n_clips: int) -> Path:
    from reasonaudio.ingest.build import BuildParams, build_benchmark
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
    from reasonaudio.dataset.benchmark import load_benchmark
    from reasonaudio.ingest.embed.run import IngestOptions, ingest_model
    from reasonaudio.progress import Hooks
    from reasonaudio.store.open import open_store

    data = copy_bench(src, work / label)
    bench = load_benchmark(data)
    first: list[float] = []
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
    start = first[0] if first else 0.0
    return {"wall_s": round(wall, 2), "clips_per_s": round(len(bench.clips) / wall, 3),
            "first_clip_s": round(start, 2),
            "after_first_clip_per_s": round(len(bench.clips) / max(wall - start, 1e-9), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="two-stage:oracle-caption+minilm")
    ap.add_argument("--model-path", default=None)
    ap.add_argument("--clips", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--cpus-per-worker", type=float, default=1.0)
    ap.add_argument("--gpus-per-worker", type=float, default=0.0)
    ap.add_argument("--ray-cpus", type=int, default=2)
    ap.add_argument("--batch-clips", type=int, default=64)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--skip-local", action="store_true", help="only the Ray engine")
    ap.add_argument("--skip-ray", action="store_true", help="only the local engine")
    args = ap.parse_args()

    import ray

    from reasonaudio.ingest.embed.ray_engine import RayEngine, RayOptions
    from reasonaudio.provenance import versions

    if args.model == "clap" and args.model_path is None:
        from ingest_overhead import full_random_clap_dir

        args.model_path = str(full_random_clap_dir())
    src = build(args.clips)
    options = RayOptions(workers=args.workers, cpus_per_worker=args.cpus_per_worker,
                         gpus_per_worker=args.gpus_per_worker, local_cpus=args.ray_cpus,
                         batch_clips=args.batch_clips)
    work = Path(tempfile.mkdtemp(prefix="ray-ingest-bench-"))
    try:
        local = None if args.skip_local else run(src, work, "local", args)
        on_ray = None if args.skip_ray else run(src, work, "ray", args, engine=RayEngine(options))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {"benchmark": {"bank": "synthetic", "classes": 223, "seed": 0, "clips": args.clips},
           "model": args.model, "device": args.device, "cores": len(os.sched_getaffinity(0)),
           "ray": options.to_json() | {"local_cpus": args.ray_cpus, "version": ray.__version__},
           "versions": versions(),
           "local": local, "ray_engine": on_ray}
    print(json.dumps(out, indent=1, default=str))
    if on_ray is None:
        assert local is not None, "--skip-local and --skip-ray leave nothing to measure"
        print(f"{args.model} on {args.clips} clips: local {local['clips_per_s']:.2f} clips/s, "
              f"{local['after_first_clip_per_s']:.2f} after the first clip")
        return
    per_worker = on_ray["clips_per_s"] / args.workers
    if local:
        ratio = on_ray["clips_per_s"] / local["clips_per_s"]
        print(f"{args.model} on {args.clips} clips ({args.device}): local {local['clips_per_s']:.2f} clips/s, "
              f"ray {on_ray['clips_per_s']:.2f} clips/s ({args.workers} worker(s), "
              f"{per_worker:.2f} clips/s per worker; first clip after {on_ray['first_clip_s']} s, local "
              f"{local['first_clip_s']} s; after the first clip local {local['after_first_clip_per_s']:.2f}, "
              f"ray {on_ray['after_first_clip_per_s']:.2f} clips/s); "
              f"ray/local {ratio:.3f} (target >= {TARGET}: {'met' if ratio >= TARGET else 'NOT met'})")
    else:
        print(f"{args.model} on {args.clips} clips: ray {on_ray['clips_per_s']:.2f} clips/s, "
              f"{per_worker:.2f} per worker")


if __name__ == "__main__":
    main()
