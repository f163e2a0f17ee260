"""Rendering cost of a noisy condition against clean, and the memory of a 300 s long clip.

    .venv/bin/python benchmarks/condition_render_speed.py [--clips 200] [--atoms BANK]
        [--condition snr5] [--repeats 5] [--long]

``--atoms`` defaults to the canonical setup: the real-sound bank the full install fetches
(``bench atoms fetch packages``, 201 classes), where it is installed; elsewhere the synthetic
bank, and the script says that its figure is not the canonical one (the synthetic bank's
clean render is the cheapest, so the bed's fixed cost weighs most there: docs/conditions.md).

Composes a benchmark (metadata only) with the project's builder, renders its clips warm (atoms
and beds prepared once, as in an ingest) under clean and under ``--condition``, best of
``--repeats`` interleaved passes each, and prints the ratio noisy / clean, in wall and in CPU
time, and the median of the passes' paired CPU ratios, against the target of 1.3 (issue 22). An ``snrNN`` render adds its events onto the gained bed
(``ConditionRenderer.render``); it renders with OpenBLAS on one thread, as every ingest does
(``blas_single_thread``: a ``long`` stretch is added by BLAS ``daxpy``, and on a loaded 2-core
machine a multi-threaded ``daxpy`` over one clip spends 25 times the CPU of a single-threaded
one). Beds: every generated bed (the tagger check is not what is timed). ``--long`` also renders
one clip as a 300 s ``long`` recording, then at 16 kHz through YAMNet (what an ingest of it
does), and prints wall time, peak Python-side memory (tracemalloc) and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import logging
import resource
import statistics
import time
import tracemalloc
from dataclasses import replace

from reasonaudio.dataset.conditions import parse_condition
from reasonaudio.atoms.fetch.fetch import published_bank
from reasonaudio.atoms.registry import open_bank
from reasonaudio.atoms.beds import GENERATED_BEDS, PreparedBeds, open_beds
from reasonaudio.generator.build import BuildParams, compose_benchmark
from reasonaudio.render.clips import ConditionRenderer, Renderer
from reasonaudio.runtime import blas_single_thread
from record import Figure, vs_target, write_record

TARGET = 1.3


def best_passes(renders, clips, repeats: int) -> tuple[list[float], list[float], list[float]]:
    """Best wall time and best CPU time (this process) of each renderer over ``repeats``
    interleaved passes, the order reversed every other pass, so load on a shared machine falls
    on both alike; CPU time is the steadier figure there (another job's load barely moves it).
    Also each pass's CPU ratio, second renderer / first: their median pairs the two in time, so
    a drift of the machine's speed moves both sides of each ratio alike."""
    wall = [float("inf")] * len(renders)
    cpu = [float("inf")] * len(renders)
    ratios = []
    for r in range(repeats):
        order = list(range(len(renders)))
        took = [0.0] * len(renders)
        for i in (order if r % 2 == 0 else order[::-1]):
            t0, c0 = time.perf_counter(), time.process_time()
            for clip in clips:
                renders[i](clip)
            took[i] = time.process_time() - c0
            wall[i] = min(wall[i], time.perf_counter() - t0)
            cpu[i] = min(cpu[i], took[i])
        ratios.append(took[1] / took[0])
    return wall, cpu, ratios


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--atoms", default=None,
                    help="an atom bank (default: the installed real-sound bank, else synthetic)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--condition", default="snr5")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--long", action="store_true")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    if args.atoms is None:
        installed = published_bank()
        args.atoms = str(installed) if installed is not None else "synthetic"
        if installed is None:
            print("no real-sound bank installed (`bench atoms fetch packages`): the synthetic "
                  "bank's ratio below is not the canonical figure")
    bank = open_bank(args.atoms)
    clips = compose_benchmark(BuildParams(atoms=args.atoms, seed=args.seed, n_clips=args.clips,
                                          n_queries=max(5, args.clips // 8)), bank).clips
    audio_s = sum(c.duration for c in clips)
    base = Renderer(bank)
    beds = PreparedBeds(open_beds(), base.params.loudness_lufs)
    accepted = [b.bed_id for b in GENERATED_BEDS]
    noisy = ConditionRenderer(base, parse_condition(args.condition), beds, accepted, args.seed)
    with blas_single_thread():  # as every ingest renders (ingest/run.py, frame_rows.py)
        for clip in clips:  # warm: atoms and beds prepared once at the clips' rate
            noisy.render(clip)
        (clean_s, noisy_s), (clean_cpu, noisy_cpu), paired = best_passes(
            [base.render, noisy.render], clips, args.repeats)
    print(f"{len(clips)} clips, {audio_s:.0f} s of audio at {clips[0].sample_rate} Hz, atoms={args.atoms} "
          f"({len(bank.labels)} classes), "
          f"seed {args.seed}, best of {args.repeats}")
    for name, wall_s, cpu_s in (("clean", clean_s, clean_cpu), (args.condition, noisy_s, noisy_cpu)):
        print(f"{name}: {wall_s:6.2f} s wall ({1000 * wall_s / len(clips):.1f} ms per clip), "
              f"{cpu_s:6.2f} s CPU ({1000 * cpu_s / len(clips):.1f} ms per clip)")
    for what, ratio in (("wall", noisy_s / clean_s), ("CPU", noisy_cpu / clean_cpu),
                        (f"CPU, median of {len(paired)} paired passes", statistics.median(paired))):
        print(f"ratio {args.condition} / clean ({what}): {ratio:.2f} (target <= {TARGET}: "
              f"{'met' if ratio <= TARGET else 'NOT met'})")
    bank_name = "synthetic" if args.atoms == "synthetic" else f"{len(bank.labels)}-class folder"
    figures = [vs_target(f"`{args.condition}` render / clean render, CPU, median of {len(paired)} paired passes "
                         f"({len(clips)} clips, {bank_name} bank)", statistics.median(paired), "", TARGET)]
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
        figures.append(Figure("process peak RSS after a 300 s `long` clip rendered and tagged", rss, "MiB"))
    write_record(__file__, figures)


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
