"""`bench build`: atom bank -> clip specs -> queries -> qrels -> benchmark directory.

The directory is written into a temporary sibling and renamed at the end, so an interrupted build
never leaves a directory that looks complete. Everything random is drawn from one
``random.Random`` seeded with a string derived from ``--seed`` (string seeds are hashed with
SHA-512 by CPython, independent of PYTHONHASHSEED), so the same seed gives the same bytes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from reasonaudio.atoms.beds import checked_beds, open_beds
from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.logic import to_json
from reasonaudio.querylang.semantics import holds, occurrences
from reasonaudio.generator.formulations import formulate, formulation_counts, stream_name
from reasonaudio.generator.templates import render_query
from reasonaudio.dataset.benchmark import (ATOMS, BENCHMARK_OUTPUT, CHOICES, CORPUS, FORMULATIONS, MANIFEST, QRELS, QUERIES, TASKS, check_manifest, write_manifest, write_qrels)
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.conditions import Condition, manifest_record, parse_condition_list, with_beds
from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_dir, atomic_file, clear_stale_partials, dumps, read_json, write_jsonl
from reasonaudio.output_dirs import check_output_dir
from reasonaudio.atoms.rules import validate_bank
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.registry import FETCHED_PREFIX, fetched_bank_dir, open_bank
from reasonaudio.atoms.split import PREFIX as SPLIT_PREFIX, parse_spec as parse_split
from reasonaudio.generator.guard import check_size
from reasonaudio.generator.compose import ComposeParams, Composer, check_margins, clip_mode
from reasonaudio.generator.plant import PlantedQuery, QueryPlanter
from reasonaudio.render.clips import RenderParams, write_clip_audio
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.store.lock import writes_benchmark
from reasonaudio.provenance import versions
from reasonaudio.seeds import named_random
from reasonaudio.tasks.registry import select_tasks

OVERLAP_SHARE = 0.4
MAX_TRIES = 200


@dataclass(frozen=True)
class BuildParams:
    atoms: str = "synthetic"
    seed: int = 0
    n_clips: int = 10_000
    n_queries: int = 1_000
    audio: str | None = None
    compose: ComposeParams = ComposeParams()
    tasks: tuple[str, ...] = TASKS
    """the tasks to share the queries over (registry order); opt-in tasks such as count only
    when asked for"""
    conditions: str | None = None
    """``--conditions clean,snr20,...``: acoustic conditions to record in the manifest (None:
    none recorded, and the manifest is byte-identical to a build before conditions existed)"""
    interleaved: float | None = None
    """``--interleaved SHARE``: that share of each task's queries also asked with one sound given
    by example (reasonaudio.generator.interleave; None: none, and the build is what it always was)"""
    beds: str | None = None
    """``--beds``: the bed bank those conditions draw from (None: the registry's, ``generated``)"""

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["compose"] = self.compose.to_json()
        out.pop("tasks")
        if self.tasks != TASKS:  # a default build's manifest is what it always was
            out["tasks"] = list(self.tasks)
        if self.conditions is None:
            del out["conditions"]
        if self.interleaved is None:
            del out["interleaved"]
        if self.beds is None:
            del out["beds"]
        return out


@dataclass
class BuildResult:
    clips: list[Clip]
    queries: list[dict[str, Any]]
    qrels: dict[str, list[str]]
    choices: list[dict[str, str]]
    adjustments: dict[str, int]


def _split_bank_spec(spec: str) -> tuple[str, str, str] | None:
    """``(prefix, path, ?query)`` of a folder or FSD50K spec; None for the synthetic bank."""
    if spec == "synthetic" or spec.startswith("synthetic:") or spec.startswith(FETCHED_PREFIX):
        return None
    prefix, path = ("fsd50k:", spec[len("fsd50k:"):]) if spec.startswith("fsd50k:") else ("", spec)
    path, sep, query = path.partition("?")
    return prefix, path, sep + query


def absolute_bank_spec(spec: str) -> str:
    """Folder and FSD50K specs with an absolute path, so `bench render` finds the bank from anywhere
    (inside a ``split:PART:`` spec too)."""
    if spec.startswith(SPLIT_PREFIX):
        part, inner = parse_split(spec)
        return f"{SPLIT_PREFIX}{part}:{absolute_bank_spec(inner)}"
    parts = _split_bank_spec(spec)
    if parts is None:
        return spec
    prefix, path, query = parts
    return f"{prefix}{Path(path).expanduser().absolute()}{query}"


def holds_build(root: Path | str, params: BuildParams) -> bool:
    """Whether ``root`` already holds the build ``params`` describe (the same parameters and
    seed, the bank as its absolute spec): what the main job and ``bench build --calibration-for``
    keep instead of building again."""
    path = Path(root) / MANIFEST
    if not path.is_file():
        return False
    have = check_manifest(read_json(path), path).get("parameters", {})
    want = replace(params, atoms=absolute_bank_spec(params.atoms)).to_json()
    return {k: have.get(k) for k in want} == want


def bank_folders(spec: str) -> list[Path]:
    """The folder an atom-bank spec reads (none for the synthetic bank): a build must not write there."""
    if spec.startswith(SPLIT_PREFIX):
        return bank_folders(parse_split(spec)[1])
    if spec.startswith(FETCHED_PREFIX):
        return [fetched_bank_dir(spec[len(FETCHED_PREFIX):])]
    parts = _split_bank_spec(spec)
    return [] if parts is None else [Path(parts[1]).expanduser()]


def _per_task(n_queries: int, tasks: tuple[str, ...] = TASKS) -> dict[str, int]:
    base, extra = divmod(n_queries, len(tasks))
    return {t: base + (1 if i < extra else 0) for i, t in enumerate(tasks)}


def _validate(params: BuildParams, bank: AtomBank) -> None:
    _validate_sizes(params)  # again for callers of compose_benchmark alone
    if len(bank.labels) < params.compose.max_events:
        raise DataError(f"atom bank {params.atoms!r} has {len(bank.labels)} classes; "
                        f"at least {params.compose.max_events} are needed")
    if params.audio not in (None, "flac", "wav"):
        raise DataError(f"--audio must be flac or wav, got {params.audio!r}")


def _validate_sizes(params: BuildParams) -> None:
    """The size flags, before the bank is opened (cheap, and refuses what cannot fit)."""
    try:
        if select_tasks(list(params.tasks)) != tuple(params.tasks):
            raise ValueError(f"--tasks must list tasks in registry order, got {params.tasks}")
    except ValueError as exc:
        raise DataError(f"--tasks: {exc}") from None
    if params.n_clips <= 0:
        raise DataError(f"--clips must be positive, got {params.n_clips}")
    if params.n_queries <= 0:
        raise DataError(f"--queries must be positive, got {params.n_queries}")
    if params.n_clips < 2 * params.n_queries:
        raise DataError(f"--clips {params.n_clips} is too few for --queries {params.n_queries}: "
                        "every query plants a positive and a hard-negative clip (need clips >= 2 x queries)")
    check_size(params.n_clips)


def _plant(planter: QueryPlanter, task: str, seen: set[str], counts: dict[str, int]) -> PlantedQuery:
    for _ in range(MAX_TRIES):
        try:
            pq = planter.plant(task)
        except ValueError:
            counts["query redrawn: layout did not fit"] = counts.get("query redrawn: layout did not fit", 0) + 1
            continue
        key = str(to_json(pq.logic))
        if key in seen:
            continue
        seen.add(key)
        pos, neg = occurrences(pq.positive.events), occurrences(pq.negative.events)
        if not holds(pq.logic, pos) or holds(pq.logic, neg):
            raise AssertionError(f"planted pair for {task} does not discriminate: {pq}")
        return pq
    raise DataError(f"could not draw a new {task} query after {MAX_TRIES} tries; "
                    "the atom bank has too few classes for this many queries")


PROGRESS_EVERY = 500
"""composing reports progress every this many clips"""


COMPOSING = "composing clips"


def compose_benchmark(params: BuildParams, bank: AtomBank,
                      hooks: Hooks = SILENT) -> BuildResult:
    """Everything but the files: clips, queries, qrels, choices (pure, seeded)."""
    _validate(params, bank)
    rng = named_random("build", params.seed)
    composer = Composer(bank, params.compose, rng)
    planter = QueryPlanter(composer)

    planted: list[PlantedQuery] = []
    seen: set[str] = set()
    for task, n in _per_task(params.n_queries, params.tasks).items():
        for _ in range(n):
            planted.append(_plant(planter, task, seen, composer.adjustments))
            if len(planted) % (PROGRESS_EVERY // 2) == 0:
                hooks.progress(COMPOSING, 2 * len(planted), params.n_clips)

    planted_clips = [c for pq in planted for c in (pq.positive, pq.negative)]
    n_overlap = round(params.n_clips * OVERLAP_SHARE)
    want = {"overlap": n_overlap, "sequential": params.n_clips - n_overlap}
    for mode in want:
        have = sum(c.mode == mode for c in planted_clips)
        if have > want[mode]:
            raise DataError(f"the {len(planted)} queries plant {have} {mode} clips, more than the "
                            f"{want[mode]} {mode} clips of --clips {params.n_clips}; raise --clips")
        want[mode] -= have
    fill: list[Clip] = []
    for mode in ("sequential", "overlap"):
        for _ in range(want[mode]):
            for _ in range(MAX_TRIES):
                try:
                    fill.append(composer.random_clip(mode))
                    if len(fill) % PROGRESS_EVERY == 0:
                        hooks.progress(COMPOSING, len(planted_clips) + len(fill), params.n_clips)
                    break
                except ValueError:
                    composer.note("fill clip redrawn: layout did not fit")
            else:
                raise DataError(f"could not compose a {mode} clip in {MAX_TRIES} tries")

    # Shuffle, then number: ids carry no hint of which clips were planted for which query.
    tagged = [(c, i) for i, c in enumerate(planted_clips)] + [(c, -1) for c in fill]
    rng.shuffle(tagged)
    width = max(5, len(str(params.n_clips - 1)))
    clips: list[Clip] = []
    planted_id: dict[int, str] = {}
    for n, (clip, planted_index) in enumerate(tagged):
        cid = f"clip-{n:0{width}d}"
        clip = Clip(cid, clip.mode, clip.duration, clip.sample_rate, clip.events)
        if clip_mode(clip) != clip.mode:
            raise AssertionError(f"{cid}: composed as {clip.mode} but times say {clip_mode(clip)}")
        check_margins(clip, params.compose)
        clips.append(clip)
        if planted_index >= 0:
            planted_id[planted_index] = cid

    hooks.progress(COMPOSING, params.n_clips, params.n_clips)
    index = ClipIndex(clips)
    position = {cid: i for i, cid in enumerate(index.clip_ids)}
    qwidth = max(4, len(str(max(params.n_queries - 1, 0))))
    queries, qrels, choices = [], {}, []
    for qn, pq in enumerate(planted):
        qid = f"q-{qn:0{qwidth}d}"
        text, template = render_query(pq.logic, pq.task, rng)
        queries.append({"_id": qid, "text": text, "task": pq.task, "logic": to_json(pq.logic),
                        "shape": pq.shape, "template": template})
        relevant = index.relevant(pq.logic)
        pos_id, neg_id = planted_id[2 * qn], planted_id[2 * qn + 1]
        if not relevant[position[pos_id]] or not index.hard_negatives(pq.logic)[position[neg_id]]:
            raise AssertionError(f"{qid}: planted pair lost after numbering")
        qrels[qid] = index.ids(relevant)
        choices.append({"query_id": qid, "positive": pos_id, "negative": neg_id,
                        "violation": pq.violation})
    return BuildResult(clips, queries, qrels, choices, dict(sorted(composer.adjustments.items())))


def build_benchmark(out: Path | str, params: BuildParams, overwrite: bool = False,
                    hooks: Hooks = SILENT) -> dict[str, Any]:
    """Compose and write a benchmark directory atomically; returns the manifest. Silent:
    ``hooks.progress`` hears about composing and the audio rendering (``--audio``),
    ``hooks.notify`` which work folders of killed builds of ``out`` were removed.

    Refuses a target ``--force`` must not replace and sizes that cannot fit before anything is
    read or written.
    """
    out = Path(out)
    protect = bank_folders(params.atoms)
    check_output_dir(out, BENCHMARK_OUTPUT, overwrite, protect)
    _validate_sizes(params)
    if params.interleaved is not None:
        from reasonaudio.generator.interleave import check_share
        check_share(params.interleaved)
    clear_stale_partials(out, "build", hooks.notify)
    conditions = parse_condition_list(params.conditions) if params.conditions is not None else None
    if conditions is not None:
        params = replace(params, conditions=",".join(c.name for c in conditions))
    if params.beds is not None:
        if conditions is None:
            raise DataError("--beds: names the bed bank of --conditions; give --conditions too")
        conditions = with_beds(conditions, params.beds)
    params = replace(params, atoms=absolute_bank_spec(params.atoms))
    bank = open_bank(params.atoms)
    validate_bank(bank)  # the rules `bench atoms check` applies, before anything is composed
    beds = _checked_beds(conditions, bank, params.atoms, hooks) if conditions else None
    result = compose_benchmark(params, bank, hooks)
    with atomic_dir(out, BENCHMARK_OUTPUT, overwrite, protect) as tmp:
        write_jsonl(tmp / CORPUS, (c.to_json() for c in result.clips))
        write_jsonl(tmp / QUERIES, result.queries)
        (tmp / "qrels").mkdir()
        write_qrels(tmp / QRELS, result.qrels)
        write_jsonl(tmp / CHOICES, result.choices)
        write_jsonl(tmp / ATOMS, (a.to_json() for a in bank.atoms))
        formulations = formulate(result.queries, params.seed)
        write_jsonl(tmp / FORMULATIONS, formulations)
        if params.audio:
            write_clip_audio(tmp / "audio", result.clips, bank, params.audio, RenderParams(), hooks)
        record = {**_manifest(params, bank, result),
                  "formulations": formulations_record(params.seed, formulations)}
        if conditions is not None:
            record["conditions"] = manifest_record(conditions, beds)
        if params.interleaved is not None:
            from reasonaudio.generator.interleave import write_interleaved
            record["interleaved"] = write_interleaved(
                tmp, result.queries, {c["query_id"]: c["positive"] for c in result.choices},
                result.clips, bank, params.interleaved, params.seed, RenderParams())
        manifest = write_manifest(tmp, record)
    return manifest


def formulations_record(seed: int, rows: list[dict[str, str]]) -> dict[str, Any]:
    """The manifest's ``formulations``: the stream the texts were drawn from and rows per name."""
    return {"stream": stream_name(seed), "rows": formulation_counts(rows)}


def _checked_beds(conditions: Sequence[Condition], bank: AtomBank, spec: str, hooks: Hooks) -> dict[str, Any]:
    """The tagger check of every bed bank the conditions use, against this bank's labels (the
    check runs where beds are chosen; the manifest keeps its verdicts)."""
    out: dict[str, Any] = {}
    root = Path(spec) if Path(spec).is_dir() else None
    for spec_name in sorted({c.beds for c in conditions if c.needs_beds}):
        beds = open_beds(spec_name)
        hooks.notify(f"checking the {len(beds.beds)} beds of {beds.spec!r} with the tagger")
        check = checked_beds(beds, bank, root)
        if not check.accepted:
            heard = "; ".join(f"{v.bed_id}: {', '.join(v.heard[:3])}" for v in check.verdicts)
            raise DataError(f"--conditions: every bed of {beds.spec!r} holds a sound of this bank "
                            f"by the tagger check ({heard})")
        out[beds.spec] = check.to_json()
    return out


def _manifest(params: BuildParams, bank: AtomBank, result: BuildResult) -> dict[str, Any]:
    """Everything but the format fields and the files' hashes (:func:`write_manifest` adds them)."""
    modes = {m: sum(c.mode == m for c in result.clips) for m in ("sequential", "overlap")}
    tasks = {t: sum(q["task"] == t for q in result.queries) for t in params.tasks}
    return {
        "seed": params.seed,
        "parameters": params.to_json(),
        "render": asdict(RenderParams()),
        "bank": bank.describe(),
        "versions": versions(),
        "counts": {"clips": len(result.clips), "clips_by_mode": modes,
                   "queries": len(result.queries), "queries_by_task": tasks,
                   "qrels": sum(len(v) for v in result.qrels.values()),
                   "atoms": len(bank.atoms), "classes": len(bank.labels)},
        "adjustments": result.adjustments,
    }


@writes_benchmark
def add_formulations(root: Path | str) -> dict[str, Any]:
    """Write ``formulations.jsonl`` into a benchmark built before formulations existed (the rows
    a build of today writes: they depend on the queries and the seed only) and list it in the
    manifest, which is rewritten last; returns the new manifest. Every other file is untouched."""
    bench = load_benchmark(root)
    rows = formulate([q.to_json() for q in bench.queries], bench.seed)
    with atomic_file(bench.root / FORMULATIONS, "w", encoding="utf-8", newline="\n") as fh:
        for r in rows:
            fh.write(dumps(r) + "\n")
    kept = {k: v for k, v in bench.manifest.items()
            if k not in ("format", "format_version", "files", "formulations")}
    return write_manifest(bench.root, {**kept, "formulations": formulations_record(bench.seed, rows)})
