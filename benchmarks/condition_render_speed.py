"""Rendering cost of a noisy condition against clean, and the memory of a 300 s long clip.

    .venv/bin/python benchmarks/condition_render_speed.py [--clips 200] [--atoms synthetic]
        [--condition snr5] [--repeats 3] [--long]

Composes a benchmark (metadata only) with the project's builder, renders its clips warm (atoms
and beds prepared once, as in an ingest) under clean and under ``--condition``, best of
``--repeats`` interleaved passes each, and prints the ratio noisy / clean against the target of 1.3 (issue
22). Beds: every generated bed (the tagger check is not what is timed). ``--long`` also renders
one clip as a 300 s ``long`` recording, then at 16 kHz through YAMNet (what an ingest of it
does), and prints wall time, peak Python-side memory (tracemalloc) and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import logging
import resource
import time
import tracemalloc
from dataclasses import replace

from reasonaudio.dataset.conditions import parse_condition
from reasonaudio.ingest.atoms.registry import open_bank
from reasonaudio.ingest.beds import GENERATED_BEDS, PreparedBeds, open_beds
from reasonaudio.ingest.build import BuildParams, compose_benchmark
from reasonaudio.ingest.render import ConditionRenderer, Renderer

TARGET = 1.3


def best_passes(renders, clips, repeats: int) -> list[float]:
    """Best wall time of each renderer over ``repeats`` interleaved passes (so load on a shared
    machine falls on both alike)."""
    best = [float("inf")] * len(renders)
    for _ in range(repeats):
        for i, render in enumerate(renders):
            t0 = time.perf_counter()
            for clip in clips:
                render(clip)
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--atoms", default="synthetic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--condition", default="snr5")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--long", action="store_true")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    bank = open_bank(args.atoms)
    clips = compose_benchmark(BuildParams(atoms=args.atoms, seed=args.seed, n_clips=args.clips,
                                          n_queries=max(5, args.clips // 8)), bank).clips
    audio_s = sum(c.duration for c in clips)
    base = Renderer(bank)
    beds = PreparedBeds(open_beds(), base.params.loudness_lufs)
    accepted = [b.bed_id for b in GENERATED_BEDS]
    noisy = ConditionRenderer(base, parse_condition(args.condition), beds, accepted, args.seed)
    for clip in clips:  # warm: atoms and beds prepared once at the clips' rate
        noisy.render(clip)
    clean_s, noisy_s = best_passes([base.render, noisy.render], clips, args.repeats)
    print(f"{len(clips)} clips, {audio_s:.0f} s of audio at {clips[0].sample_rate} Hz, atoms={args.atoms}, "
          f"seed {args.seed}, best of {args.repeats}")
    print(f"clean: {clean_s:6.2f} s wall ({1000 * clean_s / len(clips):.1f} ms per clip)")
    print(f"{args.condition}: {noisy_s:6.2f} s wall ({1000 * noisy_s / len(clips):.1f} ms per clip)")
    ratio = noisy_s / clean_s
    print(f"ratio {args.condition} / clean: {ratio:.2f} (target <= {TARGET}: "
          f"{'met' if ratio <= TARGET else 'NOT met'})")
    if args.long:
        long_ = ConditionRenderer(base, replace(parse_condition("long"), long_min_s=300.0,
                                                long_max_s=300.0), beds, accepted, args.seed)
        audio, wall, peak, rss = measured(lambda: long_.render(clips[0]))
        print(f"long 300 s clip: {len(audio) / clips[0].sample_rate:.0f} s rendered in {wall:.2f} s; "
              f"peak traced memory {peak:.0f} MiB; process peak RSS {rss:.0f} MiB")
        # what a YAMNet ingest does with it: render at 16 kHz, tag every frame
        from reasonaudio.models.yamnet import SAMPLE_RATE, YamnetTagger

        tagger = YamnetTagger()
        wave = long_.render(replace(clips[0], sample_rate=SAMPLE_RATE))
        frames, wall, peak, rss = measured(lambda: tagger.frame_scores(wave, SAMPLE_RATE))
        print(f"long 300 s clip through YAMNet at {SAMPLE_RATE} Hz: {len(frames)} frames in {wall:.1f} s; "
              f"peak traced memory {peak:.0f} MiB; process peak RSS {rss:.0f} MiB")


def measured(fn):
    """(result, wall s, peak traced MiB, process peak RSS MiB) of ``fn()``."""
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, wall, peak / 2**20, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

if __name__ == "__main__":
    main()
