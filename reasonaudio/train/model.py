"""The dual encoder: small temporal transformers over frozen YAMNet frames and MiniLM tokens.

Audio side: per 0.48 s frame the tagger's 521 AudioSet logits -> LayerNorm -> a per-frame
layer of ``audio_hidden`` GELU units (the *perception* layer: pretrained to tell which sounds
are active in the frame, see :mod:`reasonaudio.train.perception_stage`) -> linear to ``d`` ->
sinusoidal position of the frame (its time in the clip, so order and duration are
representable) -> ``audio_layers`` pre-norm transformer layers -> masked mean and max pooling
-> linear to the joint space -> L2 norm.

Text side: all-MiniLM-L6-v2's frozen token states (384-d, already contextual) -> LayerNorm ->
linear to ``d`` -> position -> ``text_layers`` transformer layers -> the same pooling and
projection. Training the layers above the frozen tokens (rather than projecting MiniLM's
mean-pooled sentence vector) is what lets the text side tell "A, then B" from "B, then A" and
see which sound a "no" applies to: a mean of token states largely loses both.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from reasonaudio.models import yamnet
from reasonaudio.train.features import MAX_FRAMES, MAX_TOKENS


@dataclass(frozen=True)
class ModelConfig:
    d_model: int = 128
    heads: int = 4
    ff: int = 256
    audio_layers: int = 2
    text_layers: int = 2
    joint_dim: int = 256
    dropout: float = 0.0
    """0 by default: dropout costs a fifth of a CPU step; against overfitting a bigger training
    build helped (docs/training.md)"""
    audio_hidden: int = 256
    """width of the per-frame perception layer on the audio side (0: a plain linear input)"""
    frame_peak: bool = True
    """also pool the perception layer's units by their maximum over time into the clip vector
    (a direct path for "which sounds occur", beside the transformer's mean and max)"""
    event_slots: bool = True
    """keep the perception stage's tagger (one sigmoid per taught sound and frame) and add four
    figures per sound to the clip vector: peak, peak while another sound is active, time centre,
    extent (:func:`slot_features`)"""
    n_sounds: int = 0
    """how many sounds the tagger has (set by the trainer from the training build)"""
    audio_in: int = yamnet.N_CLASSES
    text_in: int = 384
    max_frames: int = MAX_FRAMES
    max_tokens: int = MAX_TOKENS
    init_temperature: float = 0.07

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "ModelConfig":
        known = {k: obj[k] for k in cls.__dataclass_fields__ if k in obj}
        known.setdefault("audio_hidden", 0)  # configs written before the perception layer
        known.setdefault("event_slots", False)  # ... and before the event figures
        return cls(**known)


def sinusoid(length: int, dim: int) -> torch.Tensor:
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    out = torch.zeros(length, dim)
    out[:, 0::2] = torch.sin(pos * div)
    out[:, 1::2] = torch.cos(pos * div)
    return out


class SequenceEncoder(nn.Module):
    """Frames or tokens -> one unit vector (transformer, masked mean + max pooling).

    ``hidden`` > 0 puts a per-position GELU layer of that width before the projection to
    ``d_model`` (the audio side's perception layer); its output is :meth:`frame_features`."""

    def __init__(self, d_in: int, cfg: ModelConfig, layers: int, max_len: int, hidden: int = 0,
                 frame_peak: bool = False, sounds: int = 0) -> None:
        super().__init__()
        self.norm_in = nn.LayerNorm(d_in)
        self.frame: nn.Module = (nn.Sequential(nn.Linear(d_in, hidden), nn.GELU()) if hidden
                                 else nn.Identity())
        self.frame_dim = hidden or d_in
        self.inp = nn.Linear(self.frame_dim, cfg.d_model)
        self.register_buffer("pos", sinusoid(max_len, cfg.d_model), persistent=False)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.heads, cfg.ff, cfg.dropout,
                                           batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm_out = nn.LayerNorm(cfg.d_model)
        self.frame_peak = frame_peak and hidden > 0
        self.tagger: nn.Linear | None = nn.Linear(self.frame_dim, sounds) if sounds else None
        extra = (hidden if self.frame_peak else 0) + (SLOT_FIGURES * sounds)
        self.out = nn.Linear(2 * cfg.d_model + extra, cfg.joint_dim)

    def frame_features(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_in) -> (B, T, frame_dim): what each position says before any context."""
        return self.frame(self.norm_in(x))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``x`` (B, T, d_in), ``mask`` (B, T) True on real positions -> (B, joint) unit rows."""
        frames = self.frame_features(x)
        h = self.inp(frames) + self.pos[: x.shape[1]]
        h = self.norm_out(self.layers(h, src_key_padding_mask=~mask))
        m = mask[..., None].to(h.dtype)
        pooled = [(h * m).sum(1) / m.sum(1).clamp(min=1.0), _peak(h, mask)]
        if self.frame_peak:
            pooled.append(_peak(frames, mask))
        if self.tagger is not None:
            pooled.append(slot_features(torch.sigmoid(self.tagger(frames)), mask))
        return nn.functional.normalize(self.out(torch.cat(pooled, dim=-1)), dim=-1)


SLOT_FIGURES = 4


def slot_features(p: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per-frame sound probabilities ``p`` (B, T, K) -> (B, 4K) event figures per sound.

    Why: a dual encoder scores by a dot product, so a relation reaches the score only if the clip
    vector holds a figure that is *linear* in it. For each sound: its peak (is it there), its peak
    while any other sound is active (meant for overlap; it reads little there, since the planted
    negative often keeps both sounds overlapping other events: docs/training.md), its time centre
    in [-1, 1] times the peak (order: "A then B" reads centre(B) - centre(A)), and its extent in
    tens of seconds (duration)."""
    m = mask[..., None].to(p.dtype)
    p = p * m
    peak = p.max(1).values
    others = (p.sum(-1, keepdim=True) - p).clamp(max=1.0)
    together = (p * others).max(1).values
    n = mask.sum(1, keepdim=True).to(p.dtype)
    t = torch.arange(p.shape[1], dtype=p.dtype, device=p.device)[None]
    rel = 2.0 * t / (n - 1.0).clamp(min=1.0) - 1.0
    mass = p.sum(1)
    centre = (p * rel[..., None]).sum(1) / (mass + 1e-3) * peak
    extent = mass * yamnet.HOP_SECONDS / 10.0
    return torch.cat([peak, together, centre, extent], dim=-1)


def _peak(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Maximum over the real positions."""
    return h.masked_fill(~mask[..., None], -1e4).max(1).values


class DualEncoder(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.audio = SequenceEncoder(cfg.audio_in, cfg, cfg.audio_layers, cfg.max_frames,
                                     cfg.audio_hidden, cfg.frame_peak,
                                     cfg.n_sounds if cfg.event_slots and cfg.audio_hidden else 0)
        self.text = SequenceEncoder(cfg.text_in, cfg, cfg.text_layers, cfg.max_tokens)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1.0 / cfg.init_temperature)))

    def scale(self) -> torch.Tensor:
        return self.logit_scale.clamp(max=math.log(100.0)).exp()


def pad_batch(arrays: list[Any], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Variable-length (T_i, D) arrays -> (B, T, D) float32 and a (B, T) mask (T = longest)."""
    length = max(1, min(max_len, max(len(a) for a in arrays)))
    dim = arrays[0].shape[1]
    out = np.zeros((len(arrays), length, dim), dtype=np.float32)
    mask = np.zeros((len(arrays), length), dtype=bool)
    for i, a in enumerate(arrays):
        n = min(len(a), length)
        out[i, :n] = a[:n]
        mask[i, :n] = True
    return torch.from_numpy(out), torch.from_numpy(mask)
