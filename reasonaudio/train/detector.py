"""``bench train-detector``: a frame detector trained on the strong labels of training builds.

Every build comes with exact strong labels (label, onset, offset per event). The detector
(:mod:`reasonaudio.detect.detector_model`) reads frozen inputs the testbed computes anyway
(YAMNet's frame rows and YAMNet's own log-mel codes at 80 ms,
:mod:`reasonaudio.detect.detector_features`) and predicts every label's activity every 80 ms;
a frame's target for a label is 1 when an event of the label covers at least half of it.

Seeded and bit-identical on CPU: the validation split is a hash of (seed, build seed, clip id),
the batches come from a seeded generator, torch runs with deterministic algorithms and a fixed
thread count (``train.trainer.deterministic_torch``), and the weights are written as
safetensors (same seed, same bytes). The model directory (``detect.trained``) records each
training build's folder, seed and clip keys, so ``bench detect --mode trained`` refuses a
benchmark (or calibration build) that shares a seed or a clip with one of them, by ``bench
train``'s rule (:func:`reasonaudio.dataset.separation.check_separate`).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.dataset.clip import Clip
from reasonaudio.dataset.separation import clip_key
from reasonaudio.detect.clip_frames import load_tagger
from reasonaudio.detect.detector_features import ClipInputs, detector_inputs
from reasonaudio.detect.labelmap import build_label_map
from reasonaudio.detect.detector_model import (DetectorConfig, frame_targets, mel_input, mel_statistics,
                                               patch_index, phases, pooled_statistics, torch_module,
                                               yamnet_input)
from reasonaudio.detect.trained import (BUILDS, CARD, CONFIG, FORMAT, FORMAT_VERSION, MODEL_OUTPUT, README,
                                       WEIGHTS)
from reasonaudio.errors import DataError, echo
from reasonaudio.models import yamnet
from reasonaudio.models.yamnet import N_CLASSES
from reasonaudio.fileio import atomic_dir, clear_stale_partials, sha256_file, write_json
from reasonaudio.output_dirs import check_output_dir
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.provenance import float_kernels, float_kernels_text, versions
from reasonaudio.train.trainer import deterministic_torch

if TYPE_CHECKING:
    import torch

FEATURES_LABEL = "train-detector: inputs"
EPOCHS_LABEL = "train-detector: epochs"


AUGMENTATIONS = ("gain_db", "band_shift", "mel_dropout", "yamnet_dropout", "prior_top_k", "pooled_dim")
"""the recipe's fields added after the enrolled figure's model (0: off, and then absent from the
card, so that model's recipe reads as it always did)"""


@dataclass(frozen=True)
class DetectorRecipe:
    """The default recipe is the one the docs' figures and the speed benchmark use."""

    epochs: int = 16
    batch_clips: int = 16
    lr: float = 3e-3
    weight_decay: float = 1e-4
    warmup_steps: int = 50
    hidden: int = 128
    yamnet_dim: int = 128
    dilations: tuple[int, ...] = (1, 2, 4, 8)
    val_share: float = 0.05
    """share of the training clips held out for the validation figures"""
    overlap_weight: float = 5.0
    """loss weight of a label's active frames where another label is active too (a sound heard
    under another: rare in the data, and what an overlap query asks for)"""
    gain_db: float = 0.0
    """augmentation: each training clip's mel track shifted by a gain drawn uniformly in
    [-gain_db, gain_db] dB per step (the log-mel codes move by :func:`codes_per_db` per dB; the
    YAMNet rows stay: a level change YAMNet's classes mostly ignore). 0: off"""
    band_shift: int = 0
    """augmentation: each training clip's mel bands shifted by up to this many bands either way
    (a pitch change; the edge band repeats). 0: off"""
    mel_dropout: float = 0.0
    """augmentation: the share of training clips (per step) whose mel track is replaced by the
    training mean (0 after standardising): the detector must place sounds from YAMNet's classes
    too, not only from a recording's spectrum. 0: off"""
    yamnet_dropout: float = 0.0
    """augmentation: the share of YAMNet input classes zeroed per training clip and step (their
    logits set to 0, the scale's midpoint), so no label rests on a few classes of one recording.
    0: off"""
    prior_top_k: int = 0
    """a zero-shot prior (``detect.detector_model``, step 5): each label's output adds a learned
    weight times the highest YAMNet logit of its ``prior_top_k`` zero-shot AudioSet classes
    (``detect.labelmap.zero_shot_map``, from the training builds' bank), a path that hears
    recordings the detector never trained on as YAMNet does. 0: off (no prior in the network)"""
    pooled_dim: int = 0
    """the pooled-layer branch's width (``detect.detector_model``, step 1): the network also reads
    YAMNet's 1,024 pooled codes, which name unheard recordings better than its 521 logits do
    by nearest label mean (``bench atoms identify``); trained on one recording per label, the
    detector fit those closer and answered fewer unseen-split questions. 0: off (logits only)"""
    seed: int = 0
    threads: int = 2

    @property
    def augments(self) -> bool:
        return bool(self.gain_db or self.band_shift or self.mel_dropout or self.yamnet_dropout)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["dilations"] = list(self.dilations)
        for name in AUGMENTATIONS:  # an augmentation left off is not written: older cards stay
            if not out[name]:
                del out[name]
        return out

    def check(self) -> None:
        if self.epochs < 1 or self.batch_clips < 1 or self.hidden < 1 or self.yamnet_dim < 1:
            raise DataError("--epochs, --batch-clips, --hidden and the YAMNet width must be >= 1")
        if self.pooled_dim < 0:
            raise DataError(f"--pooled-dim must be >= 0 (0: off), got {self.pooled_dim}")
        if not self.overlap_weight > 0:
            raise DataError(f"--overlap-weight must be > 0, got {self.overlap_weight}")
        if not 0.0 <= self.val_share < 0.5:
            raise DataError(f"--val-share must be in [0, 0.5), got {self.val_share}")
        if not self.lr > 0 or self.threads < 1:
            raise DataError("--lr must be > 0 and --threads >= 1")
        if not 0 <= self.prior_top_k <= 3:
            raise DataError(f"--prior-top-k must be in 0..3 (0: no prior), got {self.prior_top_k}")
        if not (self.gain_db >= 0 and self.band_shift >= 0 and 0 <= self.mel_dropout <= 1
                and 0 <= self.yamnet_dropout < 1):
            raise DataError(f"augmentation out of range: --gain-db {self.gain_db} and --band-shift "
                            f"{self.band_shift} must be >= 0, --mel-dropout {self.mel_dropout} in [0, 1], "
                            f"--yamnet-dropout {self.yamnet_dropout} in [0, 1)")


@dataclass
class Sample:
    clip: Clip
    inputs: ClipInputs
    build: int


@dataclass
class DetectorTrainResult:
    out: Path
    weights_sha256: str
    history: list[dict[str, Any]]
    timings: dict[str, float]
    data: dict[str, Any]
    card: dict[str, Any] = field(default_factory=dict)


def _is_val(seed: int, build_seed: int, clip_id: str, share: float) -> bool:
    h = hashlib.sha256(f"{seed}\t{build_seed}\t{clip_id}".encode()).digest()
    return int.from_bytes(h[:8], "big") < share * 2 ** 64


def load_builds(data: Sequence[Path | str]) -> list[BenchmarkView]:
    """The training builds, each once; a one-line error for a folder given twice."""
    if not data:
        raise DataError("--data: give at least one training build")
    benches = [load_benchmark(d) for d in data]
    seen: dict[Path, Path] = {}
    for given, bench in zip(data, benches):
        real = bench.root.resolve()
        if real in seen:
            raise DataError(f"--data {echo(str(given))}: the same build as {echo(str(seen[real]))}")
        seen[real] = Path(given)
    return benches


def read_samples(benches: Sequence[BenchmarkView], hooks: Hooks, cache_dir: Path | None = None,
                 pooled: bool = False) -> list[Sample]:
    """Every clip of every build with its detector inputs (from the caches where they are);
    ``pooled``: with YAMNet's pooled layer."""
    tagger = load_tagger()
    out: list[Sample] = []
    total = sum(len(b.clips) for b in benches)
    done = 0
    for i, bench in enumerate(benches):
        inputs, _ = detector_inputs(bench, bench.clips, tagger, cache_dir=cache_dir, pooled=pooled,
                                    progress=hooks.counter(FEATURES_LABEL, offset=done, total=total))
        out += [Sample(c, inputs[c.id], i) for c in bench.clips]
        done += len(bench.clips)
    return out


def prior_classes(benches: Sequence[BenchmarkView], labels: Sequence[str],
                  top_k: int) -> tuple[tuple[int, ...], ...]:
    """Each label's ``top_k`` zero-shot AudioSet classes, from the first training build's bank
    (its tags: every build of one detector comes from one bank's labels)."""
    from reasonaudio.atoms.registry import open_bank

    spec = (benches[0].manifest.get("parameters") or {}).get("atoms")
    if not spec:
        raise DataError(f"--data {echo(str(benches[0].root))}: the manifest names no atom bank "
                        "(the zero-shot prior needs its tags)")
    lm = build_label_map("zero-shot", open_bank(spec), list(labels), load_tagger(), top_k=top_k)
    return tuple(tuple(c) for c in lm.classes)


def network_config(samples: Sequence[Sample], labels: Sequence[str],
                   recipe: DetectorRecipe, prior: tuple[tuple[int, ...], ...] = ()) -> DetectorConfig:
    tagger = load_tagger().tagger
    mean, std = mel_statistics([s.inputs.mel for s in samples])
    scale = pooled_statistics([s.inputs.pooled for s in samples]) if recipe.pooled_dim else 0.0
    return DetectorConfig(labels=tuple(labels), hidden=recipe.hidden, yamnet_dim=recipe.yamnet_dim,
                          dilations=recipe.dilations, logit_scale=float(tagger.output_scale),
                          logit_zero=float(tagger.output_zero), mel_mean=mean, mel_std=std,
                          prior_classes=prior, pooled_dim=recipe.pooled_dim, pooled_scale=scale)


def batch_tensors(samples: Sequence[Sample], cfg: DetectorConfig, label_index: dict[str, int]) -> tuple:
    """(logits, mel, index, phase, mask, targets) torch tensors of a batch, padded."""
    import torch

    ny = max(len(s.inputs.rows) for s in samples)
    nd = max(len(s.inputs.mel) for s in samples)
    b, n_labels = len(samples), len(cfg.labels)
    logits = np.zeros((b, ny, cfg.yamnet_width), np.float32)
    mel = np.zeros((b, nd, len(cfg.mel_mean)), np.float32)
    index = np.zeros((b, nd, 2), np.int64)
    phase = np.zeros((b, nd), np.int64)
    mask = np.zeros((b, nd), np.float32)
    targets = np.zeros((b, nd, n_labels), np.float32)
    for i, s in enumerate(samples):
        rows, m = s.inputs.rows, s.inputs.mel
        logits[i, :len(rows)] = yamnet_input(s.inputs, cfg)
        mel[i, :len(m)] = mel_input(m, cfg)
        index[i, :len(m)] = patch_index(len(m), len(rows))
        phase[i, :len(m)] = phases(len(m))
        mask[i, :len(m)] = 1.0
        targets[i, :len(m)] = frame_targets(s.clip.events, len(m), label_index)
    return tuple(torch.from_numpy(a) for a in (logits, mel, index, phase, mask, targets))


def codes_per_db(cfg: DetectorConfig) -> float:
    """How far YAMNet's log-mel codes move for a 1 dB gain: the codes are
    ``log(magnitude) / input_scale + input_zero``, a gain multiplies the magnitude by
    ``10 ** (dB / 20)``."""
    return math.log(10.0) / 20.0 / float(load_tagger().tagger.input_scale)


def augment(tensors: tuple, cfg: DetectorConfig, recipe: DetectorRecipe, generator: torch.Generator,
            code_step: float) -> tuple:
    """A training batch with the recipe's augmentations, drawn from ``generator`` (only the
    augmentations the recipe turns on draw, in a fixed order). Inputs only: the targets stay."""
    import torch

    logits, mel, index, phase, mask, targets = tensors
    b = mel.shape[0]
    std = torch.tensor(cfg.mel_std, dtype=torch.float32)
    if recipe.gain_db:
        db = (torch.rand(b, generator=generator) * 2 - 1) * recipe.gain_db
        mel = mel + (db * code_step)[:, None, None] / std
    if recipe.band_shift:
        shift = torch.randint(-recipe.band_shift, recipe.band_shift + 1, (b,), generator=generator)
        bands = torch.arange(mel.shape[-1])
        raw = mel * std + torch.tensor(cfg.mel_mean, dtype=torch.float32)
        src = (bands[None, :] - shift[:, None]).clamp(0, mel.shape[-1] - 1)
        raw = torch.gather(raw, 2, src[:, None, :].expand(-1, mel.shape[1], -1))
        mel = (raw - torch.tensor(cfg.mel_mean, dtype=torch.float32)) / std
    if recipe.mel_dropout:
        keep = (torch.rand(b, generator=generator) >= recipe.mel_dropout).float()
        mel = mel * keep[:, None, None]
    if recipe.yamnet_dropout:
        keep = (torch.rand(b, 1, N_CLASSES, generator=generator) >= recipe.yamnet_dropout).float()
        logits = torch.cat([logits[..., :N_CLASSES] * keep, logits[..., N_CLASSES:]], dim=-1)
    mel = mel * mask[..., None]
    return logits, mel, index, phase, mask, targets


def batches(samples: Sequence[Sample], size: int, generator: torch.Generator) -> list[list[int]]:
    """Seeded batches of similar length: a permutation cut into pools of 16 batches, each pool
    sorted by length and cut into batches, the batches in a seeded order."""
    import torch

    perm = torch.randperm(len(samples), generator=generator).tolist()
    pool = size * 16
    out: list[list[int]] = []
    for start in range(0, len(perm), pool):
        part = sorted(perm[start:start + pool], key=lambda i: (len(samples[i].inputs.mel), i))
        out += [part[k:k + size] for k in range(0, len(part), size)]
    order = torch.randperm(len(out), generator=generator).tolist()
    return [out[i] for i in order]


def _lr(step: int, total: int, recipe: DetectorRecipe) -> float:
    if step < recipe.warmup_steps:
        return recipe.lr * (step + 1) / recipe.warmup_steps
    progress = (step - recipe.warmup_steps) / max(1, total - recipe.warmup_steps)
    return recipe.lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def _loss(model: torch.nn.Module, tensors: tuple, overlap_weight: float) -> torch.Tensor:
    """Binary cross-entropy over every frame and label of the batch; a label's active frames
    where another label is active too weigh ``overlap_weight``."""
    import torch

    logits, mel, index, phase, mask, targets = tensors
    out = model(logits, mel, index, phase, mask)
    each = torch.nn.functional.binary_cross_entropy_with_logits(out, targets, reduction="none")
    if overlap_weight != 1.0:
        shared = (targets.sum(dim=-1, keepdim=True) >= 2).float() * targets
        each = each * (1.0 + (overlap_weight - 1.0) * shared)
    return (each * mask[..., None]).sum() / (mask.sum() * targets.shape[-1])


def frame_f1(model: torch.nn.Module, samples: Sequence[Sample], cfg: DetectorConfig,
             label_index: dict[str, int], size: int) -> float:
    """Micro F1 of frame activity (logit > 0) on ``samples``."""
    import torch

    tp = fp = fn = 0
    with torch.no_grad():
        for k in range(0, len(samples), size):
            logits, mel, index, phase, mask, targets = batch_tensors(samples[k:k + size], cfg, label_index)
            pred = (model(logits, mel, index, phase, mask) > 0) & (mask[..., None] > 0)
            truth = targets > 0.5
            tp += int((pred & truth).sum())
            fp += int((pred & ~truth).sum())
            fn += int((~pred & truth).sum())
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def fit(train: Sequence[Sample], val: Sequence[Sample], cfg: DetectorConfig, recipe: DetectorRecipe,
        hooks: Hooks) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Train the network; (its state dict, one record per epoch)."""
    import torch

    from reasonaudio.train.loss import finite_loss, finite_weights

    label_index = {lab: j for j, lab in enumerate(cfg.labels)}
    with deterministic_torch(recipe.threads):
        torch.manual_seed(recipe.seed)
        model = torch_module(cfg)
        decay = [p for p in model.parameters() if p.ndim >= 2]
        keep = [p for p in model.parameters() if p.ndim < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                                 {"params": keep, "weight_decay": 0.0}], lr=recipe.lr)
        gen = torch.Generator().manual_seed(recipe.seed)
        aug_gen = torch.Generator().manual_seed(recipe.seed + 1) if recipe.augments else None
        code_step = codes_per_db(cfg) if recipe.gain_db else 0.0
        per_epoch = math.ceil(len(train) / recipe.batch_clips)
        total, step, history = per_epoch * recipe.epochs, 0, []
        progress = hooks.counter(EPOCHS_LABEL)
        progress(0, recipe.epochs)
        for epoch in range(1, recipe.epochs + 1):
            model.train()
            losses = []
            for rows in batches(train, recipe.batch_clips, gen):
                for group in opt.param_groups:
                    group["lr"] = _lr(step, total, recipe)
                tensors = batch_tensors([train[i] for i in rows], cfg, label_index)
                if aug_gen is not None:
                    tensors = augment(tensors, cfg, recipe, aug_gen, code_step)
                loss = _loss(model, tensors, recipe.overlap_weight)
                losses.append(finite_loss(loss, f"epoch {epoch}, step {step + 1}", recipe.lr))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                step += 1
            model.eval()
            record = {"epoch": epoch, "train_loss": round(sum(losses) / max(1, len(losses)), 6),
                      "val_frame_f1": round(frame_f1(model, val, cfg, label_index, recipe.batch_clips), 4)
                      if val else None}
            history.append(record)
            hooks.notify(f"epoch {epoch}/{recipe.epochs}: loss {record['train_loss']:.5f}"
                         + (f", validation frame F1 {record['val_frame_f1']:.3f}" if val else ""))
            progress(epoch, recipe.epochs)
        state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    finite_weights(state, f"epoch {recipe.epochs}, the last", recipe.lr)
    return state, history


def train_detector(data: Sequence[Path | str], out: Path | str, recipe: DetectorRecipe = DetectorRecipe(),
                   hooks: Hooks = SILENT, overwrite: bool = False,
                   cache_dir: Path | None = None) -> DetectorTrainResult:
    """Train on the builds ``data``; write the model directory ``out`` (atomically)."""
    recipe.check()
    out = Path(out)
    check_output_dir(out, MODEL_OUTPUT, overwrite, list(data))
    benches = load_builds(data)
    clear_stale_partials(out, "training", hooks.notify)
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    samples = read_samples(benches, hooks, cache_dir, pooled=recipe.pooled_dim > 0)
    times["features_s"] = time.perf_counter() - t0
    labels = sorted({lab for b in benches for lab in b.labels})
    val = [s for s in samples if _is_val(recipe.seed, benches[s.build].seed, s.clip.id, recipe.val_share)]
    train = [s for s in samples if not _is_val(recipe.seed, benches[s.build].seed, s.clip.id,
                                               recipe.val_share)]
    if not train:
        raise DataError(f"--data: no training clips left after the validation share {recipe.val_share}")
    prior = prior_classes(benches, labels, recipe.prior_top_k) if recipe.prior_top_k else ()
    cfg = network_config(train, labels, recipe, prior)
    t1 = time.perf_counter()
    state, history = fit(train, val, cfg, recipe, hooks)
    times["train_s"] = time.perf_counter() - t1
    stats = {"clips_train": len(train), "clips_val": len(val), "labels": len(labels),
             "frames_train": sum(len(s.inputs.mel) for s in train)}
    result = DetectorTrainResult(out, "", history, times, stats)
    save_detector_dir(out, cfg, state, benches, recipe, result, overwrite)
    return result


def _build_record(bench: BenchmarkView) -> dict[str, Any]:
    return {"path": str(Path(bench.root).resolve()), "seed": bench.seed,
            "manifest_sha256": sha256_file(Path(bench.root) / "manifest.json"),
            "counts": bench.manifest.get("counts", {}), "bank": bench.manifest.get("bank", {}),
            "atoms": (bench.manifest.get("parameters") or {}).get("atoms")}


def save_detector_dir(out: Path, cfg: DetectorConfig, state: dict[str, Any], benches: Sequence[BenchmarkView],
                      recipe: DetectorRecipe, result: DetectorTrainResult, overwrite: bool) -> None:
    """config.json, model.safetensors, card.json, README.md, training_builds.json."""
    from safetensors.torch import save

    from reasonaudio.detect.detector_features import HOP_MS, MEL_CACHE, POOL

    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "network": cfg.to_json(),
              "inputs": {"yamnet": {"revision": yamnet.REVISION, "rows": "uint8 outputs, 0.48 s hop"},
                         "mel": {"cache": MEL_CACHE, "pool": POOL, "hop_ms": HOP_MS,
                                 "codes": "YAMNet's log-mel input codes, summed"}}}
    builds = {"builds": [{"path": str(Path(b.root).resolve()), "seed": b.seed,
                          "clip_keys": sorted({clip_key(c) for c in b.clips}),
                          "atoms": sorted({e.atom_id for c in b.clips for e in c.events})} for b in benches]}
    with atomic_dir(out, MODEL_OUTPUT, overwrite, [b.root for b in benches]) as tmp:
        write_json(tmp / CONFIG, config)
        (tmp / WEIGHTS).write_bytes(save(state, metadata={"format": FORMAT}))
        result.weights_sha256 = sha256_file(tmp / WEIGHTS)
        write_json(tmp / BUILDS, builds)
        card = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "weights_sha256": result.weights_sha256,
                "training_builds": [_build_record(b) for b in benches],
                "recipe": recipe.to_json(), "network": {k: v for k, v in cfg.to_json().items()
                                                        if k not in ("labels", "mel_mean", "mel_std")},
                "data": result.data, "validation": result.history,
                "timings_s": {k: round(v, 1) for k, v in result.timings.items()},
                "threads": recipe.threads, "float_kernels": float_kernels(), "versions": versions()}
        result.card = card
        write_json(tmp / CARD, card)
        (tmp / README).write_text(card_text(card), encoding="utf-8")


def card_text(card: dict[str, Any]) -> str:
    """The model card in words (README.md)."""
    builds = card["training_builds"]
    last = card["validation"][-1] if card["validation"] else {}
    lines = ["# Trained frame detector (reasonaudio `bench train-detector`)", "",
             f"- weights sha256: `{card['weights_sha256']}`",
             "- training builds: " + "; ".join(
                 f"seed {b['seed']}, {b['counts'].get('clips', '?')} clips, bank `{b['atoms']}`, "
                 f"manifest sha256 `{b['manifest_sha256'][:16]}`" for b in builds),
             "- recipe: " + ", ".join(f"{k} {v}" for k, v in card["recipe"].items()),
             f"- data: {card['data']}",
             f"- last epoch: train loss {last.get('train_loss')}, validation frame F1 "
             f"{last.get('val_frame_f1')}",
             f"- timings (s): {card['timings_s']}",
             f"- {float_kernels_text(card)}", "",
             "| epoch | train loss | validation frame F1 |", "|---|---|---|"]
    lines += [f"| {r['epoch']} | {r['train_loss']:.5f} | "
              f"{'-' if r['val_frame_f1'] is None else r['val_frame_f1']} |" for r in card["validation"]]
    lines += ["", "Detect with `bench detect --data DIR --tagger yamnet --mode trained --model-path "
              "THIS_DIR` (a benchmark with another seed and none of these clips).", ""]
    return "\n".join(lines)
