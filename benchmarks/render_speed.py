"""Rendering speed: audio seconds rendered per wall-clock second (real-time factor).

    .venv/bin/python benchmarks/render_speed.py [--clips 200] [--atoms synthetic] [--format flac]

Builds a small benchmark (metadata only) with the project's builder, then renders its clips three
ways and prints each real-time factor against the baseline of 1.0 (real time):
- cold: a fresh renderer, so every atom is generated/decoded, resampled and loudness-measured once;
- warm: the same renderer again, atoms cached: the cost of looping, fading and mixing alone;
- files: `write_clip_audio` writing 16-bit FLAC/WAV per clip (what `bench build --audio` does).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from reasonaudio.dataset.view import load_benchmark
from reasonaudio.atoms.registry import open_bank
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.render.clips import Renderer, RenderParams, write_clip_audio
from record import Figure, write_record


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--atoms", default="synthetic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--format", default="flac", choices=("flac", "wav"))
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # peak adjustments are counted below instead
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bench"
        build_benchmark(root, BuildParams(atoms=args.atoms, seed=args.seed, n_clips=args.clips,
                                          n_queries=25))
        bench = load_benchmark(root)
        clips = bench.clips
        audio_s = sum(c.duration for c in clips)
        params = RenderParams.from_json(bench.manifest.get("render"))
        bank = open_bank(args.atoms)
        renderer = Renderer(bank, params)
        print(f"{len(clips)} clips, {audio_s:.0f} s of audio at {clips[0].sample_rate} Hz, "
              f"atoms={args.atoms} ({len(bank.atoms)} atoms)")
        figures = []
        for name in ("cold", "warm"):
            t0 = time.perf_counter()
            for clip in clips:
                renderer.render(clip)
            wall = time.perf_counter() - t0
            print(f"render {name}: {wall:6.2f} s wall, real-time factor {audio_s / wall:8.1f} "
                  f"(x{audio_s / wall:.0f} faster than real time)")
            figures.append(Figure(f"rendering {len(clips)} clips ({args.atoms} bank), {name}", audio_s / wall,
                                  "x real time"))
        summary = write_clip_audio(Path(tmp) / "audio", clips, open_bank(args.atoms), args.format,
                                   params)
        wall = summary["wall_seconds"]
        print(f"files ({args.format}, fresh bank): {wall:6.2f} s wall, real-time factor "
              f"{audio_s / wall:8.1f}")
        print(f"automatic adjustments: {summary['adjustments'] or 'none'}")
        figures.append(Figure(f"writing them as {args.format.upper()} files (fresh bank)", audio_s / wall,
                              "x real time"))
    write_record(__file__, figures)


if __name__ == "__main__":
    main()
