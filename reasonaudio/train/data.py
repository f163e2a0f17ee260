"""Training examples from a training build: captions, planted hard-negative clips and captions.

Sources, all from a benchmark directory built with ``bench build`` under another seed than the
benchmark under test (:func:`check_separate` refuses the same seed or shared clips):

- **planted pairs**: every query of the training build comes with the minimal pair the builder
  planted (:mod:`reasonaudio.generator.plant`: a clip that satisfies it and one that breaks one
  constraint: order reversed, overlap removed, excluded sound added, duration out of
  tolerance). The query's logic is rendered with several templates; each caption gets the
  positive clip and the planted hard-negative clip.
- **clip captions**: every clip gets captions drawn from its true events, in every task's shapes
  (negation names a sound the clip lacks), rendered with the query templates. Each caption
  gets a *hard-negative caption*: the same template with one slot changed so the statement is
  false for the clip (order swapped, negation flipped, duration out of tolerance, an overlap
  partner that does not overlap), and, when the training corpus has one, a hard-negative clip
  (the judge's definition: every mentioned sound, constraint broken).

Truth is never assumed: every caption is checked true for its clip and every hard negative
false with the judge (:mod:`reasonaudio.querylang.semantics`), and the loss masks in-batch
"negatives" that the judge says satisfy a caption.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from reasonaudio.querylang.judge import ClipIndex, benchmark_index
from reasonaudio.logic import Before, Lasts, Node, Overlap, labels
from reasonaudio.querylang.semantics import holds, occurrences
from reasonaudio.generator.templates import (
    TASK_SHAPES,
    Template,
    format_slots,
    match_shape,
    templates_for_shape,
)
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.separation import check_separate as separate_builds
from reasonaudio.errors import DataError
from reasonaudio.fileio import read_jsonl
from reasonaudio.progress import Counter
from reasonaudio.seeds import named_random
from reasonaudio.generator.compose import DURATION_TARGETS
from reasonaudio.tasks.base import FORMULATIONS
from reasonaudio.tasks.formulation_records import formulations, is_default
from reasonaudio.tasks.registry import shape as shape_record
from reasonaudio.tasks.registry import tasks_present
from reasonaudio.train.paraphrases import PARAPHRASES


@dataclass(frozen=True)
class DataOptions:
    captions_per_clip: int = 6
    """captions drawn from each clip's true events (tasks chosen uniformly)"""
    templates_per_query: int = 2
    """renderings of each planted query of the training build"""
    hold_out_labels: int = 0
    """sounds never mentioned by any training caption (drawn with the seed)"""
    hold_out_templates: bool = False
    """render training captions only with training paraphrases, never the benchmark's templates"""
    hold_out_formulations: tuple[str, ...] | None = None
    """None: captions in the caption formulation only (as before formulations); a tuple: also
    render with every other formulation's templates except these (``--hold-out-formulations``),
    so a model can be scored on ways of asking it never saw"""
    val_fraction: float = 0.1
    """share of clips (planted pairs kept together) held out for validation"""
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.hold_out_formulations is not None:  # as the card's JSON reads back
            out["hold_out_formulations"] = list(self.hold_out_formulations)
        return out


@dataclass(frozen=True)
class Example:
    text: str
    logic: Node
    clip: str
    """the clip the caption is true for"""
    task: str
    shape: str
    template: str
    source: str
    """``planted`` (a training-build query) or ``caption`` (drawn from the clip's events)"""
    neg_clip: str | None = None
    """a clip with every mentioned sound for which the caption is false"""
    neg_text: str | None = None
    """a caption false for ``clip`` (one slot changed)"""
    neg_logic: Node | None = None
    violation: str = ""


@dataclass
class TrainingData:
    train: list[Example]
    val: list[Example]
    clips: dict[str, Clip]
    labels: tuple[str, ...]
    held_out_labels: tuple[str, ...]
    template_set: str
    stats: dict[str, Any] = field(default_factory=dict)

    def texts(self) -> list[str]:
        out: list[str] = []
        for ex in self.train + self.val:
            out.append(ex.text)
            if ex.neg_text is not None:
                out.append(ex.neg_text)
        return list(dict.fromkeys(out))


def logic_for(shape: str, s: dict[str, Any]) -> Node:
    """The logic of ``shape`` with slots ``s`` (the task record's ``logic``)."""
    return shape_record(shape).logic(s)


def template_pool(shape: str, hold_out_templates: bool,
                  hold_out_formulations: tuple[str, ...] | None = None) -> list[Template]:
    """The templates training captions of ``shape`` are rendered with: the caption templates
    (or the training paraphrases), plus, when ``hold_out_formulations`` is a tuple, the templates
    of every other formulation but those."""
    pool = list(PARAPHRASES[shape]) if hold_out_templates else templates_for_shape(shape)
    if hold_out_formulations is None:
        return pool
    record = shape_record(shape)
    for form in formulations():
        if form.default or form.name in hold_out_formulations:
            continue
        pool += [Template(f"{shape}-{form.name}-{i}", shape, text)
                 for i, text in enumerate(form.templates_for(record), 1)]
    return pool


def check_hold_out_formulations(names: Sequence[str]) -> tuple[str, ...]:
    """``--hold-out-formulations``' names, checked (``caption`` cannot be held out: it is the
    formulation the benchmark's own queries and the training build's are written in)."""
    for n in names:
        if n not in FORMULATIONS:
            raise DataError(f"--hold-out-formulations: unknown formulation {n!r}; expected some "
                            f"of {', '.join(f for f in FORMULATIONS if not is_default(f))}")
        if is_default(n):
            raise DataError("--hold-out-formulations: caption cannot be held out (training "
                            "captions are rendered in it)")
    return tuple(dict.fromkeys(names))


def render(template: Template, slots: dict[str, Any]) -> str:
    return template.render(format_slots(slots))


# --- what is true of one clip -----------------------------------------------------------------

class ClipFacts:
    """The relations that hold in one clip, for drawing true captions and false variants
    (the :class:`reasonaudio.tasks.base.Facts` the task records read)."""

    durations = DURATION_TARGETS

    def __init__(self, clip: Clip, vocabulary: Sequence[str], banned: frozenset[str]) -> None:
        self.clip = clip
        self.iv = occurrences(clip.events)
        self.present = [lab for lab in self.iv if lab not in banned]
        self.present_all = list(self.iv)
        self.count = {lab: len(occ) for lab, occ in self.iv.items()
                      if len(occ) > 1 and lab not in banned}
        self.absent = [lab for lab in vocabulary if lab not in self.iv and lab not in banned]
        p = self.present
        self.before = [(a, b) for a in p for b in p if a != b and holds(Before(a, b), self.iv)]
        self.overlap = [(a, b) for a in p for b in p if a != b and holds(Overlap(a, b), self.iv)]
        self.n_of: dict[str, float] = {}
        for lab in p:
            on, off = self.iv[lab][0]
            dur = (off - on) / 1000.0
            fits = [n for n in DURATION_TARGETS if holds(Lasts(lab, n), self.iv)]
            n = fits[0] if fits else max(1, int(round(dur)))
            if holds(Lasts(lab, n), self.iv):
                self.n_of[lab] = n

    def slots(self, shape: str, rng: random.Random) -> dict[str, Any] | None:
        """Random slots for ``shape`` that make a true statement about the clip, or None."""
        return shape_record(shape).draw(self, rng)

    def false_variants(self, shape: str, s: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
        """Slot changes that should make the statement false for this clip (checked later)."""
        return shape_record(shape).corrupt(self, s)


def _false_caption(facts: ClipFacts, shape: str, slots: dict[str, Any], template: Template,
                   rng: random.Random) -> tuple[str, Node, str] | None:
    variants = facts.false_variants(shape, slots)
    rng.shuffle(variants)
    for t, why in variants:
        try:
            logic = logic_for(shape, t)
            match_shape(logic)
        except ValueError:
            continue
        if not holds(logic, facts.iv):
            return render(template, t), logic, why
    return None


# --- assembling the data --------------------------------------------------------------------

def held_out_label_set(vocabulary: Sequence[str], n: int, seed: int) -> tuple[str, ...]:
    if n < 0 or n >= len(vocabulary):
        raise DataError(f"--hold-out-labels must be between 0 and {len(vocabulary) - 1}, got {n}")
    rng = named_random("train-holdout", seed)
    return tuple(sorted(rng.sample(sorted(vocabulary), n)))


def _groups(bench: BenchmarkView) -> list[list[str]]:
    """Planted pairs stay together; every other clip is its own group."""
    paired: dict[str, int] = {}
    groups: list[list[str]] = []
    for ch in bench.choices:
        groups.append([ch.positive, ch.negative])
        paired[ch.positive] = paired[ch.negative] = len(groups) - 1
    groups += [[c.id] for c in bench.clips if c.id not in paired]
    return groups


def _split(bench: BenchmarkView, fraction: float, seed: int) -> set[str]:
    if not 0.0 < fraction < 0.5:
        raise DataError(f"validation fraction must be in (0, 0.5), got {fraction}")
    groups = sorted(_groups(bench))
    rng = named_random("train-split", seed)
    rng.shuffle(groups)
    n_clips = sum(len(g) for g in groups)
    val: set[str] = set()
    for g in groups:
        if len(val) >= fraction * n_clips:
            break
        val.update(g)
    return val


@dataclass
class _Draw:
    """What drawing one build's examples shares: the seeded generator every draw consumes in
    turn, the validation clips, the judge's index, and the examples kept so far."""
    bench: BenchmarkView
    options: DataOptions
    banned: frozenset[str]
    rng: random.Random
    val_ids: set[str]
    index: ClipIndex
    examples: list[Example] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)

    def add(self, ex: Example) -> None:
        """Keep ``ex``, unless it mentions a held-out sound (counted); a hard-negative caption
        that mentions one is taken off it."""
        if set(labels(ex.logic)) & self.banned:
            self.dropped["dropped: mentions a held-out sound"] = self.dropped.get(
                "dropped: mentions a held-out sound", 0) + 1
            return
        if ex.neg_logic is not None and set(labels(ex.neg_logic)) & self.banned:
            ex = Example(**{**ex.__dict__, "neg_text": None, "neg_logic": None})
        self.examples.append(ex)

    def templates(self, shape: str) -> list[Template]:
        return template_pool(shape, self.options.hold_out_templates, self.options.hold_out_formulations)


def make_examples(bench: BenchmarkView, options: DataOptions = DataOptions(),
                  progress: Counter | None = None) -> TrainingData:
    """Every training example of a training build (deterministic in ``options.seed``)."""
    if options.captions_per_clip < 0 or options.templates_per_query < 0:
        raise DataError("captions per clip and templates per query must be >= 0")
    vocabulary = bench.labels
    held = held_out_label_set(vocabulary, options.hold_out_labels, options.seed)
    draw = _Draw(bench, options, frozenset(held), named_random("train-data", options.seed),
                 _split(bench, options.val_fraction, options.seed), benchmark_index(bench))
    _planted_examples(draw, planted_violations(bench))
    tasks = tasks_present([q.task for q in bench.queries])  # a Count build's captions count too
    for n, clip in enumerate(bench.clips):
        _clip_captions(draw, clip, tasks)
        if progress is not None and (n % 200 == 0 or n == len(bench.clips) - 1):
            progress(n + 1, len(bench.clips))
    train = [ex for ex in draw.examples if ex.clip not in draw.val_ids]
    val = [ex for ex in draw.examples if ex.clip in draw.val_ids]
    return TrainingData(train, val, dict(bench.clip_by_id), vocabulary, held,
                        "training paraphrases" if options.hold_out_templates else "benchmark templates",
                        _stats(draw, train, val, tasks))


def _planted_examples(draw: _Draw, violations: dict[str, str]) -> None:
    """The planted pairs of the training build's queries: each query rendered with
    ``templates_per_query`` templates, its positive clip and its planted hard-negative clip."""
    bench, rng = draw.bench, draw.rng
    for ch in bench.choices:
        q = bench.query_by_id[ch.query_id]
        shape, slots = match_shape(q.logic)
        pool = draw.templates(shape)
        chosen = rng.sample(pool, min(draw.options.templates_per_query, len(pool)))
        facts = ClipFacts(bench.clip_by_id[ch.positive], bench.labels, draw.banned)
        for template in chosen:
            text = render(template, slots)
            neg = _false_caption(facts, shape, slots, template, rng)
            draw.add(Example(text, q.logic, ch.positive, q.task, shape, template.id, "planted",
                             neg_clip=ch.negative, neg_text=neg[0] if neg else None,
                             neg_logic=neg[1] if neg else None,
                             violation=violations.get(ch.query_id, "")))


def _clip_captions(draw: _Draw, clip: Clip, tasks: Sequence[str]) -> None:
    """Up to ``captions_per_clip`` captions drawn from the clip's true events (a bounded number
    of tries), each with a hard-negative caption and a hard-negative clip on its side of the split."""
    rng, wanted = draw.rng, draw.options.captions_per_clip
    facts = ClipFacts(clip, draw.bench.labels, draw.banned)
    made = 0
    tries = 0
    while made < wanted and tries < 4 * wanted + 8:
        tries += 1
        task = rng.choice(tasks)
        shape = rng.choice(TASK_SHAPES[task])
        slots = facts.slots(shape, rng)
        if slots is None:
            continue
        logic = logic_for(shape, slots)
        if not holds(logic, facts.iv):  # pragma: no cover - slots are drawn from true relations
            raise AssertionError(f"{clip.id}: drew a false caption {logic}")
        template = rng.choice(draw.templates(shape))
        text = render(template, slots)
        neg = _false_caption(facts, shape, slots, template, rng)
        hard = draw.index.hard_negatives(logic)
        side = clip.id in draw.val_ids
        hard_ids = [cid for cid in draw.index.ids(hard) if (cid in draw.val_ids) == side]
        neg_clip = rng.choice(hard_ids) if hard_ids else None
        draw.add(Example(text, logic, clip.id, task, shape, template.id, "caption",
                         neg_clip=neg_clip, neg_text=neg[0] if neg else None,
                         neg_logic=neg[1] if neg else None, violation=neg[2] if neg else ""))
        made += 1


def _stats(draw: _Draw, train: list[Example], val: list[Example], tasks: Sequence[str]) -> dict[str, Any]:
    """The training data's figures for the card: examples and clips per side, per source, per task."""
    examples = draw.examples
    return {
        "examples": {"train": len(train), "val": len(val)},
        "clips": {"train": len({c.id for c in draw.bench.clips} - draw.val_ids), "val": len(draw.val_ids)},
        "by_source": {s: sum(ex.source == s for ex in examples) for s in ("planted", "caption")},
        "by_task": {t: sum(ex.task == t for ex in examples) for t in tasks},
        "with_hard_negative_clip": sum(ex.neg_clip is not None for ex in examples),
        "with_hard_negative_caption": sum(ex.neg_text is not None for ex in examples),
        "dropped": draw.dropped,
    }


def planted_violations(bench: BenchmarkView) -> dict[str, str]:
    """query id -> what its planted hard negative breaks (``choices.jsonl``'s ``violation``)."""
    return {str(o["query_id"]): str(o.get("violation", ""))
            for o in read_jsonl(bench.root / "choices.jsonl")}


def truth_matrix(logics: Sequence[Node], index: ClipIndex) -> np.ndarray:
    """(len(logics), clips) bool: whether each statement holds for each clip (the judge)."""
    out = np.zeros((len(logics), index.n), dtype=bool)
    memo: dict[int, np.ndarray] = {}
    for i, logic in enumerate(logics):
        key = id(logic)
        if key not in memo:
            memo[key] = index.relevant(logic)
        out[i] = memo[key]
    return out


# --- leakage checks -------------------------------------------------------------------------

def check_separate(train: BenchmarkView, test: BenchmarkView) -> dict[str, Any]:
    """The training build must not be the benchmark under test: other seed, no shared clip."""
    separate_builds(train, test, "training build")
    return {"train_seed": train.seed, "test_seed": test.seed, "shared_clips": 0}


def query_text_overlap(data: TrainingData, test: BenchmarkView) -> list[str]:
    """Benchmark query texts that occur verbatim among the training captions."""
    texts = set(data.texts())
    return sorted(q.text for q in test.queries if q.text in texts)
