"""The perception stage: teach the audio side's per-frame layer which sounds are active.

Why a separate stage: a contrastive loss over captions teaches *which clip goes with which
text* only through the pooled vector, so a small model spends most of its budget learning to
hear, and while the top clip often lacks a sound the query names, no relation can be right
(docs/training.md has the before and after). The training build knows every event's label
and time, so the per-frame layer is first fitted as a multi-label frame tagger (one sigmoid per
training sound, a frame is positive for a sound when its 0.96 s patch covers at least
``min_overlap_s`` of the event), then frozen, and the contrastive stage learns composition on
top. Sounds held out with ``--hold-out-labels`` are not targets: their frames count as
background, so nothing about them is taught by name.

Only training-split clips are used; the validation clips give the frame F1 in the card.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from reasonaudio.dataset.clip import Clip
from reasonaudio.models import yamnet

if TYPE_CHECKING:
    from reasonaudio.train.model import SequenceEncoder


@dataclass(frozen=True)
class PerceptionOptions:
    epochs: int = 8
    """passes over the training clips' frames (0: no perception stage)"""
    lr: float = 3e-3
    batch_frames: int = 512
    min_overlap_s: float = 0.25
    """a frame is positive for a sound when its patch covers at least this much of the event"""
    freeze: bool = True
    """keep the fitted layer fixed in the contrastive stage (False: fine-tune it with the rest)"""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def frame_targets(clip: Clip, n_frames: int, label_index: Mapping[str, int],
                  min_overlap_s: float) -> np.ndarray:
    """(n_frames, len(label_index)) float32: 1 where the frame's patch covers a target sound."""
    bounds = yamnet.frame_times(n_frames)
    out = np.zeros((n_frames, len(label_index)), np.float32)
    for e in clip.events:
        k = label_index.get(e.label)
        if k is None:
            continue
        covered = np.minimum(bounds[:, 1], e.offset) - np.maximum(bounds[:, 0], e.onset)
        out[covered >= min_overlap_s, k] = 1.0
    return out


def _f1(scores: np.ndarray, targets: np.ndarray) -> float:
    pred = scores > 0.0
    tp = float((pred & (targets > 0)).sum())
    denom = float(pred.sum() + (targets > 0).sum())
    return 2 * tp / denom if denom else 0.0


def fit_perception(encoder: SequenceEncoder, train: Sequence[tuple[np.ndarray, np.ndarray]],
                   val: Sequence[tuple[np.ndarray, np.ndarray]], n_labels: int,
                   options: PerceptionOptions, seed: int, device: str = "cpu") -> dict[str, Any]:
    """Fit ``encoder``'s norm and frame layer as a frame tagger on (features, targets) pairs.

    Returns the figures the card records: frames seen, last-epoch loss, frame F1 on the
    validation clips (threshold 0.5). The tagger's output layer is discarded afterwards."""
    import torch
    from torch import nn

    from reasonaudio.train.loss import finite_loss

    if options.epochs <= 0 or not train:
        return {"epochs": 0}
    x = torch.from_numpy(np.concatenate([f for f, _ in train])).to(device)
    y = torch.from_numpy(np.concatenate([t for _, t in train])).to(device)
    kept = getattr(encoder, "tagger", None)
    head = kept if kept is not None else nn.Linear(encoder.frame_dim, n_labels).to(device)
    if head.out_features != n_labels:
        raise ValueError(f"the encoder's tagger has {head.out_features} sounds, targets {n_labels}")
    params = [*encoder.norm_in.parameters(), *encoder.frame.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=options.lr, weight_decay=1e-4)
    gen = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    for epoch in range(1, options.epochs + 1):
        perm = torch.randperm(len(x), generator=gen).to(device)
        total, batches = 0.0, 0
        for i in range(0, len(x), options.batch_frames):
            idx = perm[i:i + options.batch_frames]
            logits = head(encoder.frame_features(x[idx]))
            loss = nn.functional.binary_cross_entropy_with_logits(logits, y[idx])
            total += finite_loss(loss, f"the perception stage, epoch {epoch}, batch {batches + 1}", options.lr)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            batches += 1
        losses.append(total / max(1, batches))
    stats: dict[str, Any] = {"epochs": options.epochs, "frames": len(x),
                             "loss_per_epoch": [round(v, 6) for v in losses]}
    if val:
        with torch.no_grad():
            vx = torch.from_numpy(np.concatenate([f for f, _ in val])).to(device)
            scores = head(encoder.frame_features(vx)).cpu().numpy()
        stats["val_frame_f1"] = round(_f1(scores, np.concatenate([t for _, t in val])), 4)
    if options.freeze:
        for p in [*encoder.norm_in.parameters(), *encoder.frame.parameters(),
                  *(kept.parameters() if kept is not None else ())]:
            p.requires_grad_(False)
    return stats
