"""The result record every benchmark script writes, and the commands docs/performance.md lists.

A script calls :func:`write_record` with its figures after printing them. The record goes to
``benchmarks/results/<key>.json`` when the script ran with the arguments of one entry of
:data:`COMMANDS` (the performance page's command for that figure); with any other arguments
nothing is written, so a run with other sizes never replaces a page figure.
``scripts/performance_page.py`` renders the page from these records (``--run KEY`` reruns one).

A record: ``{"format", "key", "script", "command", "status": "measured", "figures": [...],
"machine": {"cpu", "cores", "memory_gib"}, "versions": {...}, "date"}``; a figure: ``{"name",
"value", "unit", "baseline", "ratio", "target", "met"}`` (``ratio`` = value / the baseline's
value; the baseline is named, and is the target itself where the script has no other).
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FORMAT = "reasonaudio-benchmark-record/1"

COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "build_speed": ("build_speed", ()),
    "condition_export_memory": ("condition_export_memory", ("--atoms", "fetched:packages")),
    "condition_render_speed": ("condition_render_speed", ("--repeats", "9")),
    "detect_overhead": ("detect_overhead", ()),
    "eval_speed": ("eval_speed", ()),
    "free_phrasings": ("free_phrasings", ()),
    "ingest_overhead": ("ingest_overhead", ()),
    "ingest_overhead-yamnet": ("ingest_overhead", ("--model", "yamnet", "--clips", "200",
                                                   "--forward-clips", "0")),
    "install_size": ("install_size", ()),
    "main_job_time": ("main_job_time", ()),
    "main_job_time-paper": ("main_job_time", ("--paper", "--out", "data/paper")),
    "main_detector_cost": ("main_detector_cost", ("--data", "data/demo-full")),
    "model_throughput": ("model_throughput", ("--model", "qwen3-embedding-0.6b")),
    "parse_speed": ("parse_speed", ()),
    "ray_ingest": ("ray_ingest", ()),
    "render_speed": ("render_speed", ()),
    "search_speed": ("search_speed", ()),
    "search_speed-real-payload": ("search_speed", ("--evidence-from", "data/demo-full/bench")),
    "semantic_calibration": ("semantic_calibration", ()),
    "semantic_speed": ("semantic_speed", ()),
    "serve_speed": ("serve_speed", ("--data", "data/demo-full/bench")),
    "store_speed": ("store_speed", ("--local-queries", "100")),
    "suite_speed": ("suite_speed", ()),
    "tagger_speed": ("tagger_speed", ()),
    "train_speed": ("train_speed", ("--data", "data/train-s3", "--fresh-cache")),
    "train_detector_speed": ("train_detector_speed", ("--data", "data/det/train11", "--data",
                                                      "data/det/train12", "--fresh-cache")),
    "verify_speed": ("verify_speed", ()),
}
"""record key -> (script in benchmarks/, its arguments): the one command behind each record"""


def command_of(key: str) -> str:
    script, args = COMMANDS[key]
    return shlex.join(["python", f"benchmarks/{script}.py", *args])


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    baseline: str | None = None
    """what the ratio is against: a named baseline, or the target"""
    ratio: float | None = None
    target: str | None = None
    met: bool | None = None


def vs_target(name: str, value: float, unit: str, target: float, *, at_most: bool = True) -> Figure:
    """A figure read against its target: the ratio is value / target."""
    return Figure(name, value, unit, "the target", value / target if target else None,
                  f"{'<=' if at_most else '>='} {target:g} {unit}".rstrip(),
                  value <= target if at_most else value >= target)


def vs_baseline(name: str, value: float, unit: str, baseline: str, baseline_value: float, *,
                ratio_target: float | None = None, at_most: bool = True) -> Figure:
    """A figure read against a named baseline measured in the same run: the ratio is value /
    the baseline's value, and the target, if any, is on that ratio."""
    ratio = value / baseline_value if baseline_value else None
    if ratio_target is None or ratio is None:
        return Figure(name, value, unit, baseline, ratio)
    return Figure(name, value, unit, baseline, ratio,
                  f"ratio {'<=' if at_most else '>='} {ratio_target:g}",
                  ratio <= ratio_target if at_most else ratio >= ratio_target)


def key_for(script: str, argv: Sequence[str]) -> str | None:
    for key, (name, args) in COMMANDS.items():
        if name == script and tuple(argv) == args:
            return key
    return None


def machine() -> dict[str, object]:
    from reasonaudio.provenance import cpu_model

    cpu = cpu_model()
    memory = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": memory}


def write_record(script_file: str, figures: list[Figure], argv: Sequence[str] | None = None) -> Path | None:
    """Write the record of ``script_file``'s run (``__file__``) when its arguments are a page
    command; say where it went, or why not, on stderr."""
    from reasonaudio.provenance import versions

    script = Path(script_file).stem
    args = list(sys.argv[1:] if argv is None else argv)
    key = key_for(script, args)
    if key is None:
        print(f"record: not written ({shlex.join(['benchmarks/' + script + '.py', *args])} is not a "
              "command of docs/performance.md)", file=sys.stderr)
        return None
    record = {"format": FORMAT, "key": key, "script": script, "command": command_of(key),
              "status": "measured", "figures": [asdict(f) for f in figures], "machine": machine(),
              "versions": versions(), "date": datetime.date.today().isoformat()}
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{key}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(f"record: {path.relative_to(HERE.parent)}", file=sys.stderr)
    return path


CACHE_INPUTS = ("atoms", "beds", "validated-banks", "yamnet")
"""cache folders that hold inputs (fetched banks, the tagger's export), not computed features"""


def fresh_cache(folder: Path) -> None:
    """``--fresh-cache``: point ``REASONAUDIO_CACHE`` at an empty ``folder`` that still reaches the
    fetched banks and the tagger's export (offline they cannot be fetched again), so every feature
    is computed and nothing else is."""
    from reasonaudio.models.cache_dir import cache_root

    real = cache_root()
    folder.mkdir(parents=True)
    for name in CACHE_INPUTS:
        if (real / name).exists():
            (folder / name).symlink_to(real / name)
    os.environ["REASONAUDIO_CACHE"] = str(folder)
