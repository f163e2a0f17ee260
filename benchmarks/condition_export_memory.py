"""Peak memory of `bench export` under a condition against clean (docs/conditions.md).

    .venv/bin/python benchmarks/condition_export_memory.py [--atoms synthetic] [--clips 50]
        [--condition long] [--audio embed]

Builds a benchmark of ``--clips`` clips (seed ``--seed``) in a temporary folder, then exports it
once clean and once under ``--condition``, each in its own process, and prints each export's wall
time, peak RSS and corpus size, with the ratio against the bound of 1 GiB that the docs state.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from record import vs_target, write_record

BOUND_MIB = 1024
CHILD = """
import resource, sys, time
from reasonaudio.cli import app
t = time.perf_counter()
app(sys.argv[1:], standalone_mode=False)
print(f"RESULT {time.perf_counter() - t:.1f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
"""


def export(data: Path, to: Path, condition: str, audio: str) -> tuple[float, float, float]:
    """(wall s, peak RSS MiB, corpus MiB) of one export in a fresh process."""
    res = subprocess.run([sys.executable, "-c", CHILD, "export", "--data", str(data), "--to", str(to),
                          "--condition", condition, "--audio", audio],
                         capture_output=True, text=True, check=True)
    wall, rss = next(line for line in res.stdout.splitlines() if line.startswith("RESULT")).split()[1:]
    size = sum(p.stat().st_size for p in to.rglob("*") if p.is_file()) / 2**20
    return float(wall), float(rss), size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--atoms", default="synthetic")
    ap.add_argument("--clips", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--condition", default="long")
    ap.add_argument("--audio", default="embed")
    args = ap.parse_args()
    from reasonaudio.generator.build import BuildParams, build_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "bench"
        build_benchmark(data, BuildParams(atoms=args.atoms, seed=args.seed, n_clips=args.clips,
                                          n_queries=max(5, args.clips // 5)))
        print(f"{args.clips} clips, atoms={args.atoms}, seed {args.seed}, --audio {args.audio}")
        figures = []
        for cond in ("clean", args.condition):
            wall, rss, size = export(data, Path(tmp) / f"hf-{cond}", cond, args.audio)
            print(f"{cond}: {wall:.1f} s wall, peak RSS {rss:.0f} MiB ({rss / BOUND_MIB:.2f} of the "
                  f"{BOUND_MIB} MiB bound), export {size:.0f} MiB")
            figures.append(vs_target(f"peak RSS of `bench export --condition {cond} --audio {args.audio}`, "
                                     f"{args.clips} clips ({args.atoms} bank)", rss, "MiB", BOUND_MIB))
    write_record(__file__, figures)


if __name__ == "__main__":
    main()
