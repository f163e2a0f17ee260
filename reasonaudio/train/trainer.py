"""The training loop: seeded and deterministic on CPU, validated every epoch, early stopping.

Same seed, same thread count, same training build -> bit-identical weights on CPU: the data,
batch order and dropout masks come from seeded generators, ``torch.use_deterministic_algorithms``
is on during training and the intra-op thread count is fixed (recorded in the card). Progress
goes to a callback; nothing here prints.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from reasonaudio.querylang.judge import benchmark_index
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.dataset.conditions import CLEAN, parse_condition
from reasonaudio.errors import DataError, ModelError
from reasonaudio.fileio import clear_stale_partials
from reasonaudio.models.base import torch_device
from reasonaudio.output_dirs import check_output_dir
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.train.card import MODEL_OUTPUT, save_model_dir
from reasonaudio.train.data import DataOptions, Example, TrainingData, make_examples, truth_matrix
from reasonaudio.train.features import TokenEncoder, clip_frames, codes_to_features, frozen_model
from reasonaudio.train.loss import PresenceHead, contrastive_loss, finite_loss, finite_weights, presence_loss
from reasonaudio.train.model import DualEncoder, ModelConfig, pad_batch
from reasonaudio.train.perception_stage import PerceptionOptions, fit_perception, frame_targets

if TYPE_CHECKING:
    import torch

    from reasonaudio.querylang.judge import ClipIndex

PHASES = ("captions", "audio features", "text features", "perception", "train", "validate")


@dataclass(frozen=True)
class TrainOptions:
    data: DataOptions = DataOptions()
    model: ModelConfig = ModelConfig()
    epochs: int = 4
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup_steps: int = 50
    patience: int = 3
    """epochs without a better validation Acc@1 before stopping"""
    hard_negatives: bool = True
    hard_weight: float = 1.0
    perception: PerceptionOptions = PerceptionOptions()
    """the stage before the contrastive one that fits the audio side's frame layer"""
    presence_weight: float = 0.3
    """weight of the presence loss (clip vector x each sound's name) beside the caption loss;
    0 turns it off"""
    seed: int = 0
    threads: int = 2
    device: str = "cpu"
    max_steps: int | None = None
    """stop after this many steps in total (tests)"""
    cache: bool = True

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["data"] = self.data.to_json()
        out["model"] = self.model.to_json()
        out["perception"] = self.perception.to_json()
        return out


@dataclass
class TrainStatus:
    """The training's progress event (``hooks.event``): a phase, how far it is, and the latest
    figures. Richer than ``hooks.progress(label, done, total)``, whose three values cannot carry
    the epoch, loss, accuracy and validation figures the train view prints."""
    phase: str
    done: int
    total: int
    epoch: int = 0
    loss: float | None = None
    acc: float | None = None
    val: dict[str, float] | None = None



@dataclass
class TrainResult:
    out: Path
    epochs_run: int
    best_epoch: int
    steps: int
    history: list[dict[str, Any]]
    step_losses: list[float]
    timings: dict[str, float]
    data_stats: dict[str, Any]
    weights_sha256: str = ""
    card: dict[str, Any] = field(default_factory=dict)
    perception: dict[str, Any] = field(default_factory=dict)
    """figures of the perception stage (frames, loss per epoch, validation frame F1)"""


@contextlib.contextmanager
def deterministic_torch(threads: int, device: str = "cpu") -> Iterator[None]:
    """Deterministic kernels and a fixed thread count while training; restored afterwards.
    On a GPU some kernels have no deterministic version: warn there instead of failing."""
    import torch

    before = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
    torch.use_deterministic_algorithms(True, warn_only=not device.startswith("cpu"))
    torch.set_num_threads(max(1, threads))
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0])
        torch.set_num_threads(before[1])


class Features:
    """Frame codes per clip and token states per text, looked up by id / text."""

    def __init__(self, codes: dict[str, np.ndarray], tokens: dict[str, np.ndarray],
                 scale: float, zero_point: float) -> None:
        self.codes, self.tokens = codes, tokens
        self.scale, self.zero_point = scale, zero_point

    def audio(self, clip_ids: Sequence[str], device: str) -> tuple[Any, Any]:
        x, m = pad_batch([self.frames(c) for c in clip_ids], 10_000)
        return x.to(device), m.to(device)

    def text(self, texts: Sequence[str], device: str) -> tuple[Any, Any]:
        x, m = pad_batch([self.tokens[t].astype(np.float32) for t in texts], 10_000)
        return x.to(device), m.to(device)

    def frames(self, clip_id: str) -> np.ndarray:
        return codes_to_features(self.codes[clip_id], self.scale, self.zero_point)


class Presence:
    """What the presence loss needs: the sounds taught by name (the training build's sounds but
    the held-out ones), which of them each clip has, and the training-only logit head."""

    def __init__(self, sounds: Sequence[str], clips: dict[str, Any], weight: float) -> None:
        import torch

        self.sounds = list(sounds)
        self.index = {s: i for i, s in enumerate(self.sounds)}
        self.clips = clips
        self.weight = weight
        self.head = PresenceHead()
        self._torch = torch

    def targets(self, clip_ids: Sequence[str]) -> torch.Tensor:
        out = np.zeros((len(clip_ids), len(self.sounds)), np.float32)
        for i, cid in enumerate(clip_ids):
            for e in self.clips[cid].events:
                k = self.index.get(e.label)
                if k is not None:
                    out[i, k] = 1.0
        return self._torch.from_numpy(out)


class ExampleTable:
    """Examples with judge truth against every clip, for masking and validation."""

    def __init__(self, examples: list[Example], index: ClipIndex) -> None:
        self.examples = examples
        self.col = {cid: i for i, cid in enumerate(index.clip_ids)}
        self.truth = truth_matrix([ex.logic for ex in examples], index)
        negs = [ex.neg_logic for ex in examples if ex.neg_logic is not None]
        self.neg_row = {}
        k = 0
        for i, ex in enumerate(examples):
            if ex.neg_logic is not None:
                self.neg_row[i] = k
                k += 1
        self.neg_truth = truth_matrix(negs, index) if negs else np.zeros((0, index.n), bool)

    def true_for(self, rows: Sequence[int], clip_ids: Sequence[str]) -> np.ndarray:
        cols = [self.col[c] for c in clip_ids]
        return self.truth[np.ix_(list(rows), cols)]

    def neg_true_for(self, rows: Sequence[int], clip_ids: Sequence[str]) -> np.ndarray:
        cols = [self.col[c] for c in clip_ids]
        return self.neg_truth[np.ix_([self.neg_row[r] for r in rows], cols)]


def _lr_at(step: int, total: int, options: TrainOptions) -> float:
    if step < options.warmup_steps:
        return options.lr * (step + 1) / options.warmup_steps
    progress = (step - options.warmup_steps) / max(1, total - options.warmup_steps)
    return options.lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def train_step(model: DualEncoder, feats: Features, table: ExampleTable, rows: list[int],
               options: TrainOptions, presence: Presence | None = None) -> torch.Tensor:
    """The loss of one batch of example rows (in-batch InfoNCE plus hard negatives, plus the
    weighted presence loss over every clip of the batch when ``presence`` is given)."""
    import torch

    dev = options.device
    exs = [table.examples[r] for r in rows]
    clip_ids = [ex.clip for ex in exs]
    texts = [ex.text for ex in exs]
    valid_t2a = torch.from_numpy(~table.true_for(rows, clip_ids))
    valid_a2t = torch.from_numpy(~table.true_for(rows, clip_ids).T)
    hard_clips: list[str] = []
    hard_rows: list[int] = []
    if options.hard_negatives:
        hard_clips = list(dict.fromkeys(ex.neg_clip for ex in exs if ex.neg_clip is not None))
        hard_rows = [r for r in rows if r in table.neg_row]
    audio_ids = clip_ids + hard_clips
    all_texts = texts + [table.examples[r].neg_text for r in hard_rows]  # type: ignore[misc]
    a = model.audio(*feats.audio(audio_ids, dev))
    t = model.text(*feats.text(all_texts, dev))
    b = len(rows)
    hard_audio = a[b:] if hard_clips else None
    hard_text = t[b:] if hard_rows else None
    hv_t2a = torch.from_numpy(~table.true_for(rows, hard_clips)) if hard_clips else None
    hv_a2t = torch.from_numpy(~table.neg_true_for(hard_rows, clip_ids).T) if hard_rows else None
    result = contrastive_loss(t[:b], a[:b], model.scale(), valid_t2a.to(dev), valid_a2t.to(dev),
                              hard_audio, hard_text,
                              hv_t2a.to(dev) if hv_t2a is not None else None,
                              hv_a2t.to(dev) if hv_a2t is not None else None,
                              options.hard_weight)
    if presence is not None and presence.weight > 0:
        sounds = model.text(*feats.text(presence.sounds, dev))
        extra = presence_loss(a, sounds, presence.targets(audio_ids).to(dev), presence.head)
        result.loss = result.loss + presence.weight * extra
        result.presence = float(extra.detach())
    return result


def validate(model: DualEncoder, feats: Features, table: ExampleTable, device: str,
             batch: int = 256) -> dict[str, float]:
    """Validation figures on held-out clips of the training build.

    ``acc@1``: the top clip (among validation clips, ties by id) satisfies the caption;
    ``mc_clip``: positive clip above its hard-negative clip; ``mc_text``: the clip prefers its
    caption to the hard-negative caption."""
    import torch

    exs = table.examples
    if not exs:
        return {"acc@1": 0.0, "mc_clip": 0.0, "mc_text": 0.0}
    clip_ids = sorted({ex.clip for ex in exs} | {ex.neg_clip for ex in exs if ex.neg_clip})
    texts = list(dict.fromkeys([ex.text for ex in exs] + [ex.neg_text for ex in exs if ex.neg_text]))
    model.eval()
    with torch.no_grad():
        a = torch.cat([model.audio(*feats.audio(clip_ids[i:i + batch], device))
                       for i in range(0, len(clip_ids), batch)]).cpu().numpy()
        t = torch.cat([model.text(*feats.text(texts[i:i + batch], device))
                       for i in range(0, len(texts), batch)]).cpu().numpy()
    model.train()
    a_of = {c: a[i] for i, c in enumerate(clip_ids)}
    t_of = {x: t[i] for i, x in enumerate(texts)}
    in_examples = {ex.clip for ex in exs}
    pool = [c for c in clip_ids if c in in_examples]
    pool_vecs = np.stack([a_of[c] for c in pool])
    hits, mc_clip, mc_text = [], [], []
    for row, ex in enumerate(exs):
        scores = pool_vecs @ t_of[ex.text]
        best = int(np.argmax(scores))  # first max = lowest id (pool is sorted)
        hits.append(bool(table.true_for([row], [pool[best]])[0, 0]))
        if ex.neg_clip is not None:
            pos, neg = float(a_of[ex.clip] @ t_of[ex.text]), float(a_of[ex.neg_clip] @ t_of[ex.text])
            mc_clip.append(1.0 if pos > neg else 0.5 if pos == neg else 0.0)
        if ex.neg_text is not None:
            pos, neg = float(a_of[ex.clip] @ t_of[ex.text]), float(a_of[ex.clip] @ t_of[ex.neg_text])
            mc_text.append(1.0 if pos > neg else 0.5 if pos == neg else 0.0)
    mean = lambda xs: float(np.mean(xs)) if xs else 0.0  # noqa: E731
    return {"acc@1": mean(hits), "mc_clip": mean(mc_clip), "mc_text": mean(mc_text)}


def load_features(bench: BenchmarkView, data: TrainingData, options: TrainOptions,
                  hooks: Hooks) -> Features:
    needed = sorted({ex.clip for ex in data.train + data.val}
                    | {ex.neg_clip for ex in data.train + data.val if ex.neg_clip})
    clips = [bench.clip_by_id[c] for c in needed]
    tell = lambda phase: (lambda d, t: hooks.event(TrainStatus(phase, d, t)))  # noqa: E731
    codes = clip_frames(bench, clips, tell("audio features"), cache=options.cache)
    encoder = TokenEncoder(cache=options.cache)
    try:
        tokens = encoder.encode(data.texts() + list(taught_sounds(data)), tell("text features"))
    finally:
        encoder.close()
    tagger = frozen_model("yamnet").tagger
    return Features(codes, tokens, float(tagger.output_scale), float(tagger.output_zero))


def taught_sounds(data: TrainingData) -> tuple[str, ...]:
    """The sounds the presence loss and the perception stage teach: all but the held-out ones."""
    held = set(data.held_out_labels)
    return tuple(s for s in data.labels if s not in held)


def perception_pairs(bench: BenchmarkView, feats: Features, examples: Sequence[Example], sounds: Sequence[str],
                     options: PerceptionOptions) -> list[tuple[np.ndarray, np.ndarray]]:
    """(frame features, frame targets) of every clip ``examples`` use, in clip-id order."""
    index = {s: i for i, s in enumerate(sounds)}
    ids = sorted({ex.clip for ex in examples} | {ex.neg_clip for ex in examples if ex.neg_clip})
    out = []
    for cid in ids:
        x = feats.frames(cid)
        out.append((x, frame_targets(bench.clip_by_id[cid], len(x), index, options.min_overlap_s)))
    return out


def perception_stage(model: DualEncoder, bench: BenchmarkView, feats: Features, data: TrainingData,
                     sounds: Sequence[str], options: TrainOptions,
                     hooks: Hooks) -> dict[str, Any]:
    """Fit (and by default freeze) the audio side's frame layer; its figures for the card."""
    if options.model.audio_hidden <= 0 or options.perception.epochs <= 0:
        return {"epochs": 0}
    hooks.event(TrainStatus("perception", 0, 1))
    stats = fit_perception(
        model.audio, perception_pairs(bench, feats, data.train, sounds, options.perception),
        perception_pairs(bench, feats, data.val, sounds, options.perception), len(sounds),
        options.perception, options.seed, options.device)
    hooks.event(TrainStatus("perception", 1, 1))
    return stats


def train_model(train_dir: Path | str, out: Path | str, options: TrainOptions = TrainOptions(),
                hooks: Hooks = SILENT, overwrite: bool = False, condition: str = CLEAN) -> TrainResult:
    """Train on the training build at ``train_dir``; write the model directory ``out``. Progress
    goes to ``hooks.event`` as :class:`TrainStatus` events; ``hooks.notify`` hears which work
    folders of killed trainings of ``out`` were removed.

    ``condition`` (``bench train --condition``): the training build's clips are heard under that
    acoustic condition (the same :class:`~reasonaudio.render.clips.ConditionRenderer` an ingest
    uses); the model's config and card record it and its name says it
    (:func:`~reasonaudio.dataset.conditions.trained_model_name`). ``long`` is refused: the
    perception targets and the frame window read the events' clip-relative times."""
    import torch

    out = Path(out)
    check_output_dir(out, MODEL_OUTPUT, overwrite, [train_dir])
    if options.epochs < 1 or options.batch_size < 2:
        raise DataError(f"--epochs must be >= 1 and the batch size >= 2 "
                        f"(got {options.epochs}, {options.batch_size})")
    check_model_options(options)
    cond = parse_condition(condition)
    if cond.record.places_events:
        raise DataError(f"--condition {cond.name}: training reads each event's clip-relative time "
                        "(the perception stage's frame targets, the first frames of each clip), "
                        "which this condition's recording moves; train under clean or an snrNN "
                        "condition")
    clear_stale_partials(out, "training", hooks.notify)
    options = replace(options, device=torch_device(options.device))
    bench = load_benchmark(train_dir)
    if not cond.is_clean:
        bench = bench.with_condition(cond.name)
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    data = make_examples(bench, options.data,
                         lambda d, t: hooks.event(TrainStatus("captions", d, t)))
    if not data.train or not data.val:
        raise DataError(f"{train_dir}: too small a training build ({len(data.train)} training and "
                        f"{len(data.val)} validation examples)")
    times["captions_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    feats = load_features(bench, data, options, hooks)
    times["features_s"] = time.perf_counter() - t1
    index = benchmark_index(bench)
    train_table = ExampleTable(data.train, index)
    val_table = ExampleTable(data.val, index)

    t2 = time.perf_counter()
    sounds = taught_sounds(data)
    # the architecture: the recipe's, with the tagger sized to this build's taught sounds (the
    # card keeps the recipe as asked, config.json the architecture built)
    architecture = (replace(options.model, n_sounds=len(sounds)) if options.model.event_slots
                    else options.model)
    with deterministic_torch(options.threads, options.device):
        torch.manual_seed(options.seed)
        model = DualEncoder(architecture).to(options.device)
        perception = perception_stage(model, bench, feats, data, sounds, options, hooks)
        times["perception_s"] = time.perf_counter() - t2
        t2 = time.perf_counter()
        presence = (Presence(sounds, bench.clip_by_id, options.presence_weight)
                    if options.presence_weight > 0 else None)
        if presence is not None:
            presence.head.to(options.device)
        loop = contrastive_stage(model, feats, train_table, val_table, presence, options, hooks)
    times["train_s"] = time.perf_counter() - t2
    times["total_s"] = time.perf_counter() - t0
    result = TrainResult(out, len(loop.history), loop.best_epoch, loop.step, loop.history, loop.step_losses,
                         times, data.stats, perception=perception)
    save_model_dir(out, model, options, bench, data, result, feats, overwrite=overwrite,
                   condition=training_condition(bench))
    return result


@dataclass
class LoopState:
    """Where the contrastive stage stands: steps taken of ``total`` (``per_epoch`` a pass), each
    step's loss, each epoch's figures, and the best validation Acc@1 with its epoch and weights."""
    per_epoch: int
    total: int
    step: int = 0
    step_losses: list[float] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    best: tuple[float, int, dict[str, Any]] | None = None

    @property
    def best_epoch(self) -> int:
        assert self.best is not None
        return self.best[1]


def step_plan(n: int, options: TrainOptions) -> LoopState:
    """Batches per epoch over ``n`` training examples and the steps in all (``max_steps`` caps)."""
    per_epoch = n // options.batch_size or 1
    total = per_epoch * options.epochs
    if options.max_steps is not None:
        total = min(total, options.max_steps)
    return LoopState(per_epoch, total)


def make_optimizer(model: DualEncoder, presence: Presence | None, options: TrainOptions
                   ) -> torch.optim.Optimizer:
    """AdamW over every trainable parameter (the presence head's too); no weight decay on vectors."""
    import torch

    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if presence is not None:
        trainable += list(presence.head.named_parameters())
    decay = [p for n, p in trainable if p.ndim >= 2]
    keep = [p for n, p in trainable if p.ndim < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": options.weight_decay},
                              {"params": keep, "weight_decay": 0.0}], lr=options.lr)


def contrastive_stage(model: DualEncoder, feats: Features, train_table: ExampleTable, val_table: ExampleTable,
                      presence: Presence | None, options: TrainOptions, hooks: Hooks) -> LoopState:
    """Epochs of shuffled batches, validated after each, stopped after ``patience`` epochs
    without a better Acc@1 or at the step limit; the model ends with the best epoch's weights."""
    import torch

    opt = make_optimizer(model, presence, options)
    order_gen = torch.Generator().manual_seed(options.seed)
    n = len(train_table.examples)
    loop = step_plan(n, options)
    stale = 0
    for epoch in range(1, options.epochs + 1):
        perm = torch.randperm(n, generator=order_gen).tolist()
        losses, accs = train_epoch(model, feats, train_table, opt, presence, perm, epoch, loop, options,
                                   hooks)
        if not losses:
            break
        val = validate_epoch(model, feats, val_table, epoch, losses, accs, loop, options, hooks)
        if loop.best is None or val["acc@1"] > loop.best[0]:
            loop.best = (val["acc@1"], epoch, {k: v.detach().clone() for k, v in model.state_dict().items()})
            stale = 0
        else:
            stale += 1
            if stale >= options.patience:
                break
        if loop.step >= loop.total:
            break
    assert loop.best is not None
    model.load_state_dict(loop.best[2])
    finite_weights(model.state_dict(), f"the contrastive stage's best epoch ({loop.best_epoch})", options.lr)
    return loop


def train_epoch(model: DualEncoder, feats: Features, table: ExampleTable, opt: torch.optim.Optimizer,
                presence: Presence | None, perm: list[int], epoch: int, loop: LoopState,
                options: TrainOptions, hooks: Hooks) -> tuple[list[float], list[float]]:
    """One pass over the batches of ``perm`` (until the step limit): each batch's loss and
    text-to-audio accuracy."""
    import torch

    losses, accs = [], []
    for k in range(loop.per_epoch):
        if loop.step >= loop.total:
            break
        rows = perm[k * options.batch_size:(k + 1) * options.batch_size]
        for group in opt.param_groups:
            group["lr"] = _lr_at(loop.step, loop.total, options)
        result = train_step(model, feats, table, rows, options, presence)
        value = finite_loss(result.loss, f"the contrastive stage, epoch {epoch}, step {loop.step + 1}",
                            options.lr)
        opt.zero_grad(set_to_none=True)
        result.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loop.step += 1
        losses.append(value)
        accs.append(result.t2a_acc)
        loop.step_losses.append(value)
        hooks.event(TrainStatus("train", loop.step, loop.total, epoch, value, result.t2a_acc))
    return losses, accs


def validate_epoch(model: DualEncoder, feats: Features, val_table: ExampleTable, epoch: int,
                   losses: list[float], accs: list[float], loop: LoopState, options: TrainOptions,
                   hooks: Hooks) -> dict[str, float]:
    """The epoch's validation figures, its row in the history (with its training figures)."""
    hooks.event(TrainStatus("validate", 0, 1, epoch))
    val = validate(model, feats, val_table, options.device)
    row = {"epoch": epoch, "steps": loop.step, "train_loss": float(np.mean(losses)),
           "train_acc": float(np.mean(accs)), **{f"val_{k}": v for k, v in val.items()}}
    loop.history.append(row)
    hooks.event(TrainStatus("validate", 1, 1, epoch, row["train_loss"], row["train_acc"], val))
    return val


def training_condition(bench: BenchmarkView) -> dict[str, Any] | None:
    """What the model directory records of the condition the training build was heard under
    (None under clean: a clean model's files are as before): the condition's record, its bed bank
    and accepted beds, and the build seed the beds were drawn with."""
    cond = bench.condition
    if cond.is_clean:
        return None
    from reasonaudio.render.clips import bench_renderer

    renderer = bench_renderer(bench)
    return dict(getattr(renderer, "condition_identity", {"condition": cond.to_json()}))


def check_model_options(options: TrainOptions) -> None:
    if options.hard_weight <= 0:
        raise ModelError(f"hard-negative weight must be > 0, got {options.hard_weight}")
    if options.presence_weight < 0:
        raise ModelError(f"presence weight must be >= 0, got {options.presence_weight}")
    if options.perception.epochs < 0:
        raise ModelError(f"perception epochs must be >= 0, got {options.perception.epochs}")
