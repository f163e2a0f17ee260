"""Symmetric InfoNCE over the batch, with the planted hard negatives as extra candidates.

Text -> audio: each caption's softmax runs over every clip in the batch plus the batch's
planted hard-negative clips; audio -> text: each clip's over every caption plus the batch's
hard-negative captions. Candidates the judge says also satisfy the caption (another clip of the
batch that happens to fit, the same clip twice) are masked out, so the loss never pushes a
true match away.

Weighting: a hard negative enters the same softmax as one more candidate with weight
``hard_weight`` (its logit plus ``log(hard_weight)``), default 1, as NegCLIP/CompA do. No separate
margin term is needed: a hard negative differs from the positive by one constraint, so while
the model cannot tell them apart its logit sits next to the positive's and it takes the largest
share of the softmax, hence of the gradient; once told apart it costs nothing. A weight above 1
only rescales that pressure (and the loss values, making runs harder to compare), so we keep 1
and ablate by removing the candidates (``--no-hard-negatives``), not by weighting them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import torch
import torch.nn.functional as F

from reasonaudio.errors import ReasonAudioError


@dataclass
class BatchLoss:
    loss: torch.Tensor
    t2a_acc: float
    """share of captions whose own clip scores highest among the candidates"""
    a2t_acc: float
    presence: float | None = None
    """the presence loss of the batch, when it is on"""


NEG_INF = -1e4


def contrastive_loss(text: torch.Tensor, audio: torch.Tensor, scale: torch.Tensor,
                     valid_t2a: torch.Tensor, valid_a2t: torch.Tensor,
                     hard_audio: torch.Tensor | None = None, hard_text: torch.Tensor | None = None,
                     hard_valid_t2a: torch.Tensor | None = None,
                     hard_valid_a2t: torch.Tensor | None = None,
                     hard_weight: float = 1.0) -> BatchLoss:
    """``text``/``audio`` (B, D) unit rows, row i a matching pair. ``valid_*`` (B, B) bool: which
    candidates may serve as negatives (the diagonal is always kept). ``hard_audio`` (H, D) and
    ``hard_text`` (G, D) extra candidates with masks (B, H) / (B, G)."""
    b = text.shape[0]
    eye = torch.eye(b, dtype=torch.bool, device=text.device)
    t2a = scale * text @ audio.T
    a2t = t2a.T.clone()
    t2a = t2a.masked_fill(~(valid_t2a | eye), NEG_INF)
    a2t = a2t.masked_fill(~(valid_a2t | eye), NEG_INF)
    bonus = math.log(hard_weight) if hard_weight != 1.0 else 0.0
    if hard_audio is not None and hard_audio.shape[0] and hard_valid_t2a is not None:
        extra = (scale * text @ hard_audio.T + bonus).masked_fill(~hard_valid_t2a, NEG_INF)
        t2a = torch.cat([t2a, extra], dim=1)
    if hard_text is not None and hard_text.shape[0] and hard_valid_a2t is not None:
        extra = (scale * audio @ hard_text.T + bonus).masked_fill(~hard_valid_a2t, NEG_INF)
        a2t = torch.cat([a2t, extra], dim=1)
    target = torch.arange(b, device=text.device)
    loss = 0.5 * (F.cross_entropy(t2a, target) + F.cross_entropy(a2t, target))
    with torch.no_grad():
        t2a_acc = float((t2a.argmax(1) == target).float().mean())
        a2t_acc = float((a2t.argmax(1) == target).float().mean())
    return BatchLoss(loss, t2a_acc, a2t_acc)


class PresenceHead(torch.nn.Module):
    """Training-only scale and bias of the presence logits (not part of the saved model)."""

    def __init__(self) -> None:
        super().__init__()
        self.log_scale = torch.nn.Parameter(torch.tensor(math.log(10.0)))
        self.bias = torch.nn.Parameter(torch.tensor(-5.0))


def presence_loss(audio: torch.Tensor, label_text: torch.Tensor, targets: torch.Tensor,
                  head: PresenceHead) -> torch.Tensor:
    """Multi-label BCE in the joint space: clip vector x each training sound's *name* embedded by
    the text side (``label_text`` (K, D)), target 1 when the clip has the sound. Summed over
    sounds, averaged over clips.

    Why: it is the shortest path to the thing every task needs first (which sounds are in the
    clip), in the very space retrieval uses, and it ties each sound's name on the text side to
    its audio; the caption loss is left to learn the relations."""
    logits = head.log_scale.exp() * audio @ label_text.T + head.bias
    return F.binary_cross_entropy_with_logits(logits, targets, reduction="none").sum(-1).mean()


# --- divergence: one check, every training loop -----------------------------------------------


def _diverged(where: str, what: str, lr: float) -> ReasonAudioError:
    return ReasonAudioError(
        f"training stopped at {where}: {what} not finite; the learning rate ({lr:g}) is likely "
        "too high for this data (or an input holds NaN or inf); nothing was written")


def finite_loss(loss: torch.Tensor, where: str, lr: float) -> float:
    """``loss`` as a float, checked before its step is taken: a NaN or infinite loss (weights
    that diverged, an input that is not finite) stops training in one line naming ``where``
    (stage, epoch, step) and the likely cause, before the model directory is written. Every
    training loop (the dual encoder's two stages, the frame detector's) reads its losses here."""
    value = float(loss.detach())
    if not math.isfinite(value):
        raise _diverged(where, f"the loss is {value},", lr)
    return value


def finite_weights(state: Mapping[str, torch.Tensor], where: str, lr: float) -> None:
    """The weights about to be saved are finite (a last step may diverge after its loss was
    read): else one line, as :func:`finite_loss`, and nothing is written."""
    bad = [name for name, t in state.items() if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    if bad:
        raise _diverged(where, f"the weights ({', '.join(bad[:3])}{', ...' if len(bad) > 3 else ''}) are",
                        lr)
