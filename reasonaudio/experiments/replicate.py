"""``bench replicate``: a set of retrievers on K builds of other seeds, and the docs' claims on each.

Each seed's build is made as the main job makes its own (:func:`reasonaudio.mainjob.prepare_benchmark`:
same bank rule, reused when the folder holds the same build), its payload and the learned models
the retrievers need are ingested, the retrievers are evaluated as ``bench eval`` evaluates them
(:func:`reasonaudio.experiments.plan.run_plan`), and a ``detected:`` retriever is detected and
evaluated as ``bench detect`` does, calibrated on the build's own calibration builds
(:func:`reasonaudio.generator.calibration.make_calibration_builds`: seed + 1 and seed + 2).

Seeds: every build seed, its calibration seeds and the trained detector's training seeds are
disjoint from each other and from the reference build's (the build the docs' other figures are
measured on, and its calibration seeds); all are recorded. Figures: per task and overall, each
retriever's mean Acc@1 and MC over the seeds with a Student-t interval over seeds
(:func:`reasonaudio.evaluation.intervals.seed_interval`); each claim of
:mod:`reasonaudio.experiments.claims` whose retrievers were evaluated, with its effect and
Holm-corrected p per seed (:func:`reasonaudio.evaluation.compare.compare`) and on how many seeds
it holds. Silent from Python; progress per seed through the hooks. Same seeds, same document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.dataset.benchmark import ALL_TASKS, content_digest
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.demo_sizes import DemoSize, custom_size
from reasonaudio.errors import DataError
from reasonaudio.evaluation.compare import Comparison, compare
from reasonaudio.evaluation.evaluate import EvalContext
from reasonaudio.evaluation.intervals import CONFIDENCE, seed_interval
from reasonaudio.evaluation.metrics import OVERALL
from reasonaudio.evaluation.results import Results, RetrieverResult
from reasonaudio.evaluation.significance import ALPHA, CORRECTION, N_PERMUTATIONS
from reasonaudio.experiments.claims import ABOVE, CLAIM_METRICS, CLAIMS, Claim, check_claims, claims_for
from reasonaudio.models.names import is_combined, offline_learned, parse_combined, ran_yamnet
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.retrievers.base import QueryVectors, RetrieverOptions
from reasonaudio.retrievers.registry import spec_for
from reasonaudio.store.base import Store
from reasonaudio.store.collections import ingest_payload
from reasonaudio.store.open import open_store

FORMAT = "reasonaudio-replicate/1"
DEFAULT_REPLICATES = 3
MIN_REPLICATES = 2
SEED_STRIDE = 100
"""default seeds: the reference seed + 100, + 200, ... (each leaves room for its calibration seeds)"""
CALIBRATION_OFFSETS = (1, 2)
"""a build of seed s calibrates on seed s + 1, which calibrates on s + 2 (``generator/calibration.py``)"""
DETECTED = "detected:"
DEFAULT_RETRIEVERS = ("oracle", "bag-of-sounds", "two-stage:oracle-caption+bm25")


@dataclass(frozen=True)
class ReplicateParams:
    """What ``bench replicate`` runs."""

    out: Path
    """each seed's builds go to ``OUT/seed-S/`` (``bench``, ``calibration``)"""
    retrievers: tuple[str, ...] = DEFAULT_RETRIEVERS
    seeds: tuple[int, ...] = ()
    """the builds' seeds; empty: ``replicates`` seeds from the reference seed (:func:`default_seeds`)"""
    replicates: int = DEFAULT_REPLICATES
    reference_seed: int = 0
    clips: int = 600
    queries: int = 200
    atoms: str = "auto"
    backend: str | None = None
    detector_model: Path | None = None
    """``detected:*-trained``: the ``bench train-detector`` model (its training seeds are recorded)"""
    claims: tuple[Claim, ...] = CLAIMS


@dataclass
class SeedRun:
    """One seed's build and its retrievers' results."""

    seed: int
    calibration: tuple[int, ...]
    digest: str
    results: Results


@dataclass
class Replication:
    params: ReplicateParams
    training_seeds: tuple[int, ...]
    runs: list[SeedRun] = field(default_factory=list)


def calibration_seeds(seed: int) -> tuple[int, ...]:
    return tuple(seed + k for k in CALIBRATION_OFFSETS)


def default_seeds(reference: int, k: int = DEFAULT_REPLICATES, taken: Sequence[int] = ()) -> tuple[int, ...]:
    """``k`` seeds ``reference + 100 i`` (i = 1, 2, ...), skipping any whose seeds are ``taken``."""
    out: list[int] = []
    i = 1
    while len(out) < k:
        s = reference + SEED_STRIDE * i
        if not {s, *calibration_seeds(s)} & set(taken):
            out.append(s)
        i += 1
    return tuple(out)


def check_seeds(reference: int, seeds: Sequence[int], training: Sequence[int] = ()) -> None:
    """At least two seeds; every build seed, calibration seed and training seed disjoint from each
    other's and from the reference build's; one line naming the seed otherwise."""
    if len(seeds) < MIN_REPLICATES:
        raise DataError(f"--data-seeds: name at least {MIN_REPLICATES} seeds to replicate on "
                        f"(K >= {MIN_REPLICATES}), got {len(seeds)}")
    owner: dict[int, str] = {}
    roles = [(reference, f"the reference build's (seed {reference})")]
    roles += [(s, f"build seed {s}'s") for s in seeds]
    for seed, whose in roles:
        for s, role in [(seed, "seed"), *((c, "calibration seed") for c in calibration_seeds(seed))]:
            if s in owner:
                raise DataError(f"--data-seeds: seed {s} is both {owner[s]} and {whose} {role}; "
                                "every build and calibration seed must be its own")
            owner[s] = f"{whose} {role}"
    for s in training:
        if s in owner:
            raise DataError(f"--data-seeds: seed {s} is {owner[s]} and a training seed of the "
                            "trained detector; pick seeds it was not trained on")


def check_params(params: ReplicateParams) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(seeds, training seeds) once every input is known good: retriever names, seeds, the
    detector model a trained ``detected:`` retriever needs. Nothing is built before."""
    if not params.retrievers:
        raise DataError("--retriever: name at least one retriever to replicate")
    for name in params.retrievers:
        spec_for(name)  # unknown: one line with the known names
    if len(set(params.retrievers)) != len(params.retrievers):
        raise DataError("--retriever: a retriever is named twice")
    check_claims(params.claims)
    training: tuple[int, ...] = ()
    if any(_mode(n) == "trained" for n in params.retrievers):
        if params.detector_model is None:
            raise DataError("--detector-model: a trained detected: retriever needs the "
                            "`bench train-detector` model it detects with")
        from reasonaudio.detect.trained import load_detector

        training = tuple(sorted(b.seed for b in load_detector(params.detector_model).builds))
    if not params.seeds and params.replicates < MIN_REPLICATES:
        raise DataError(f"--replicates: at least {MIN_REPLICATES} builds are needed to replicate, "
                        f"got {params.replicates}")
    seeds = tuple(params.seeds) or default_seeds(params.reference_seed, params.replicates, training)
    check_seeds(params.reference_seed, seeds, training)
    return seeds, training


def _mode(name: str) -> str | None:
    from reasonaudio.detect.collection import parse_detected

    return parse_detected(name)[1] if name.startswith(DETECTED) else None


def ingests_needed(retrievers: Sequence[str]) -> list[str]:
    """The learned models to ingest first: each asked that the demo ingests (and each part of a
    combined one), and a model that runs YAMNet when a ``detected:`` retriever is asked."""
    learned = offline_learned()
    names = [p for n in retrievers for p in (parse_combined(n).parts if is_combined(n) else (n,))]
    out = list(dict.fromkeys(n for n in names if n in learned))
    if any(n.startswith(DETECTED) for n in retrievers) and not any(ran_yamnet(n) for n in out):
        out += [next(n for n in learned if ran_yamnet(n))]
    return out


def run_seed(params: ReplicateParams, seed: int, hooks: Hooks = SILENT) -> SeedRun:
    """One seed: build (or reuse), ingest, evaluate, detect; the results in the retrievers' order."""
    from reasonaudio.experiments.plan import make_plan, run_plan
    from reasonaudio.ingest.run import ingest_model
    from reasonaudio.mainjob import MainJobParams, prepare_benchmark

    size = custom_size(params.clips, params.queries, Path(params.out) / f"seed-{seed}")
    bench = prepare_benchmark(MainJobParams(out=size.out, size=size, atoms=params.atoms, seed=seed,
                                            backend=params.backend), hooks)
    asked = [n for n in params.retrievers if not n.startswith(DETECTED)]
    with open_store(bench.root, params.backend, write=True) as store:
        ingest_payload(bench, store)
        for name in ingests_needed(params.retrievers):
            ingest_model(bench, store, name, hooks=hooks)
        context = EvalContext(store=store, hooks=hooks, options=RetrieverOptions(query_vectors=QueryVectors()))
        results = run_plan(bench, make_plan(bench, asked), context).results
        calibration = _detect(params, bench, store, size, results, hooks)
    results.runs = {n: results.runs[n] for n in params.retrievers}
    return SeedRun(seed, calibration, content_digest(bench.manifest)[:12], results)


def _detect(params: ReplicateParams, bench: BenchmarkView, store: Store, size: DemoSize, results: Results,
            hooks: Hooks) -> tuple[int, ...]:
    """Each ``detected:`` retriever, detected on ``bench`` and calibrated on its calibration
    builds (made here); their seeds, or none when no detected retriever is asked."""
    from reasonaudio.detect.collection import DetectOptions, parse_detected
    from reasonaudio.experiments.detection import detect_and_evaluate
    from reasonaudio.generator.calibration import make_calibration_builds

    detected = [n for n in params.retrievers if n.startswith(DETECTED)]
    if not detected:
        return ()
    made = make_calibration_builds(bench, size.out / "calibration", size.calibration_clips,
                                   size.calibration_queries, nested=(size.nested_clips, size.nested_queries),
                                   hooks=hooks)
    seeds = tuple(m.build.seed for m in made)
    if seeds != calibration_seeds(bench.seed):  # the rule check_seeds reserved them by
        raise DataError(f"{size.out}: calibration builds of seeds {seeds}, not {calibration_seeds(bench.seed)}")
    for name in detected:
        tagger, mode = parse_detected(name)
        options = DetectOptions(tagger=tagger, mode=mode, calibration=made[0].build.root,
                                model_path=params.detector_model if mode == "trained" else None)
        results.runs[name] = detect_and_evaluate(bench, store, options, hooks=hooks).result
    return seeds


def run_replicate(params: ReplicateParams, hooks: Hooks = SILENT) -> Replication:
    """Every seed in turn (inputs checked first); the per-seed results, for :func:`replication_document`."""
    seeds, training = check_params(params)
    rep = Replication(params, training)
    for i, seed in enumerate(seeds):
        hooks.progress("replicate: seeds", i, len(seeds))
        hooks.notify(f"seed {seed} ({i + 1} of {len(seeds)}): build, ingest, evaluate")
        rep.runs.append(run_seed(params, seed, hooks))
    hooks.progress("replicate: seeds", len(seeds), len(seeds))
    return rep


# --- figures: pure functions of the per-seed results ----------------------------------------


def groups_of(runs: Sequence[Results]) -> list[str]:
    """The tasks every seed's build asked (in the benchmark's order), then ``overall``."""
    asked = [set.intersection(*(set(r.per_task) for r in res.runs.values())) for res in runs]
    common = set.intersection(*asked) if asked else set()
    return [t for t in ALL_TASKS if t in common] + [OVERALL]


def _value(result: RetrieverResult, group: str, metric: str) -> float:
    figures = result.overall if group == OVERALL else result.per_task.get(group, {})
    return float(figures.get(metric, 0.0))


def _spread(values: list[float]) -> dict[str, Any]:
    lo, hi = seed_interval(values)
    return {"mean": sum(values) / len(values), "interval": [lo, hi], "per_seed": values}


def table(runs: Sequence[Results], retrievers: Sequence[str]) -> dict[str, Any]:
    """``{retriever: {group: {metric: {mean, interval, per_seed}}}}`` over the seeds."""
    groups = groups_of(runs)
    return {n: {g: {m: _spread([_value(res.runs[n], g, m) for res in runs]) for m in CLAIM_METRICS}
                for g in groups} for n in retrievers}


def claim_rows(runs: Sequence[Results], claims: Sequence[Claim]) -> list[dict[str, Any]]:
    """Each claim on each seed: effect ``A - B``, p, Holm-corrected p, whether it holds; and
    ``holds`` (k) of ``seeds`` (K) with the mean effect."""
    memo: dict[tuple[int, str, str], Comparison] = {}
    rows = []
    for c in claims:
        per_seed = []
        for i, res in enumerate(runs):
            key = (i, c.a, c.b)
            if key not in memo:
                memo[key] = compare(res.runs[c.a], res.runs[c.b], metrics=CLAIM_METRICS)
            per_seed.append(_claim_on(memo[key], c))
        tested = [s for s in per_seed if s["effect"] is not None]
        rows.append({**c.to_json(), "key": c.key, "per_seed": per_seed,
                     "holds": sum(1 for s in per_seed if s["holds"]), "seeds": len(per_seed),
                     "mean_effect": (sum(s["effect"] for s in tested) / len(tested)) if tested else None})
    return rows


def _claim_on(comparison: Comparison, claim: Claim) -> dict[str, Any]:
    cell = (claim.task, claim.metric)
    if cell not in comparison.tests:  # the build asked no query of that task
        return {"effect": None, "p": None, "p_holm": None, "n": 0, "holds": False}
    test, p_holm = comparison.tests[cell], comparison.p_holm[cell]
    signed = test.diff > 0 if claim.direction == ABOVE else test.diff < 0
    return {"effect": test.diff, "p": test.p_value, "p_holm": p_holm, "n": test.n,
            "holds": bool(signed and p_holm < ALPHA)}


def replication_document(rep: Replication) -> dict[str, Any]:
    """The ``--json`` document: seeds (every one recorded), size, bank, retrievers, the table over
    seeds and the claims. No timing or time of day: same seeds, same bytes."""
    p = rep.params
    results = [r.results for r in rep.runs]
    return {
        "format": FORMAT,
        "reference": {"seed": p.reference_seed, "calibration_seeds": list(calibration_seeds(p.reference_seed))},
        "seeds": [{"build": r.seed, "calibration": list(r.calibration), "training": list(rep.training_seeds),
                   "benchmark_digest": r.digest} for r in rep.runs],
        "size": {"clips": p.clips, "queries": p.queries},
        "atoms": p.atoms,
        **({"detector_model": str(p.detector_model)} if p.detector_model is not None else {}),
        "retrievers": list(p.retrievers),
        "interval": {"confidence": CONFIDENCE, "method": "Student t over the seeds' means (K - 1 "
                     "degrees of freedom); per seed, the mean over that build's queries"},
        "test": {"name": "paired randomization (sign flip), two-sided", "n_permutations": N_PERMUTATIONS,
                 "correction": f"{CORRECTION}: per pair and metric over the tasks; overall on its own",
                 "alpha": ALPHA, "holds": "the effect has the claimed sign and its Holm-corrected p < alpha"},
        "groups": groups_of(results),
        "table": table(results, p.retrievers),
        "claims": claim_rows(results, claims_for(p.retrievers, p.claims)),
    }
