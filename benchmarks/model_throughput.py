"""Per-clip cost of a text embedder, audio-LLM captioner or omni embedder, and what batching buys.

    .venv/bin/python benchmarks/model_throughput.py --model qwen3-embedding-0.6b     # tiny twin
    .venv/bin/python benchmarks/model_throughput.py --model qwen2-audio-7b-instruct --clips 16
    .venv/bin/python benchmarks/model_throughput.py --model e5-omni-3b
    .venv/bin/python benchmarks/model_throughput.py --model qwen3-embedding-8b \\
        --model-path DIR --device cuda --dtype bf16 --clips 1000

The model runs on the clips of a small synthetic build (rendered once, before timing) exactly as
``bench ingest`` runs it: units, fixed-shape batches, pooling (text models embed the clips' oracle
captions; captioners generate captions; omni models embed the audio). Printed: clips/s at the
model's batch size, clips/s with batches of one, and their ratio (what fixed-shape batching buys;
the rows are bit-identical either way). Without ``--model-path`` it loads a tiny random-weight
twin (no weights can be downloaded here): those figures measure the testbed's own overhead
around a negligible model, not the real model's speed. With real weights on a GPU they estimate
the wall time of a 10,000-clip ingest (printed too).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
logging.getLogger("reasonaudio.render").setLevel(logging.ERROR)  # per-atom level notes


def twin(name: str, root: Path) -> Path:
    from reasonaudio.models import tiny_qwen
    from reasonaudio.models.registry import get_record

    kind = get_record(name).kind
    if kind == "text":
        return tiny_qwen.build_tiny_qwen3_embedding(root / "twin")
    if kind == "captioner":
        return tiny_qwen.build_tiny_qwen2_audio(root / "twin")
    if kind == "omni":
        return tiny_qwen.build_tiny_omni_thinker(root / "twin")
    raise SystemExit(f"no tiny twin for {name!r} ({kind}); pass --model-path")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="qwen3-embedding-0.6b")
    ap.add_argument("--model-path", default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--clips", type=int, default=32)
    args = ap.parse_args()

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.render.clips import bench_renderer
    from reasonaudio.models.batching import run_all
    from reasonaudio.models.captioners import oracle_caption
    from reasonaudio.models.registry import get_record, load_model

    record = get_record(args.model)
    with tempfile.TemporaryDirectory(prefix="model-throughput-") as tmp:
        root = Path(tmp)
        path = args.model_path or str(twin(args.model, root))
        build_benchmark(root / "bench", BuildParams(atoms="synthetic", seed=0,
                                                   n_clips=max(args.clips, 24), n_queries=10))
        bench = load_benchmark(root / "bench")
        clips = bench.clips[: args.clips]
        model = load_model(args.model, model_path=path, device=args.device,
                           batch_size=args.batch_size, dtype=args.dtype)
        if record.kind == "text":
            items = [model.text_units(oracle_caption(c)) for c in clips]
        else:
            renderer = bench_renderer(bench)
            waves = [renderer.render(replace(c, sample_rate=model.sample_rate)) for c in clips]
            items = [model.audio_units(w) for w in waves]

        def rate(batch: int) -> float:
            run_all(model.run_units, batch, model.pad_unit, items[:2], model.unit_key)  # warm-up
            t0 = time.perf_counter()
            rows = run_all(model.run_units, batch, model.pad_unit, items, model.unit_key)
            if record.kind == "captioner":
                [model.caption(r) for r in rows]
            else:
                [model.pool(r) for r in rows]
            return len(items) / (time.perf_counter() - t0)

        batched = rate(model.unit_batch)
        single = rate(1)
    what = "tiny random-weight twin" if args.model_path is None else path
    print(f"{args.model} ({what}) on {args.device}, dtype {model.identity().get('dtype', 'fp32')}, "
          f"{len(items)} clips")
    print(f"batch {model.unit_batch}: {batched:.2f} clips/s ({1000 / batched:.1f} ms/clip)")
    print(f"batch 1: {single:.2f} clips/s")
    print(f"ratio batched/single: {batched / single:.2f}")
    print(f"10,000 clips at the batched rate: {10_000 / batched / 60:.1f} min (model only)")
    from record import vs_baseline, write_record

    write_record(__file__, [vs_baseline(f"{args.model} ({what}) on {args.device}, batch {model.unit_batch}",
                                        batched, "clips/s", "batches of one", single)])


if __name__ == "__main__":
    main()
