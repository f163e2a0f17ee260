"""The trained frame detector's network: defined once, trained in torch, run in exact numpy.

Per clip, from its :class:`~reasonaudio.detect.detector_features.ClipInputs`:

1. each YAMNet frame's dequantised logits (521) -> a linear layer + ReLU (``yamnet_dim``);
   with ``pooled_dim``, also its pooled layer (the 1,024 codes YAMNet's classifier reads, scaled
   by ``pooled_scale``) -> a linear layer + ReLU (``pooled_dim``): a richer representation
   than the 521 classes (by nearest label mean it names unheard recordings better, ``bench
   atoms identify``), which a detector also fits its training recordings with more closely;
2. every detector frame (80 ms) takes the two 0.96 s patches that cover its middle (the
   patches ``i - 1`` and ``i``, ``i = t // 6``; both branches), its normalised mel sums (64 bands) and an
   embedding of its place inside the 0.48 s hop (``t % 6``);
3. a 1x1 convolution to ``hidden`` channels, residual dilated convolutions over time
   (kernel 3, ``dilations``: about 2.5 s of context each way with the defaults), ReLU;
4. one logit per label and frame (a 1x1 convolution);
5. with a prior (``prior_classes``, the zero-shot label map's AudioSet classes of each label):
   plus ``scale[label] * prior + bias[label]``, the prior being the highest YAMNet logit of the
   label's classes over the two patches: what YAMNet's own classes say, a path that does not
   depend on the recordings the detector trained on.

Training (:mod:`reasonaudio.train.detector`) runs the torch module in float32. Detection runs
:class:`ExactDetector`, the same network in numpy float64 with every sum in a fixed order (one
input channel and kernel tap at a time: no BLAS, whose kernels sum in a CPU's own order; ReLU,
no transcendental function), and each logit rounded to 1/64 before a sigmoid read from a table
computed in decimal arithmetic: the tracks are the same bytes on every CPU, as YAMNet's are.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from reasonaudio.detect.detector_features import HOP_MS, PER_YAMNET_HOP, POOL, ClipInputs
from reasonaudio.models import yamnet

if TYPE_CHECKING:
    import torch

LOGIT_STEPS = 64
"""output logits are rounded to 1/64 before the sigmoid"""
LOGIT_LIMIT = 16
PHASE_DIM = 8
OUT_BIAS = -4.0
"""initial output bias (sigmoid 0.018: a label is active in few frames)"""
PRIOR_SCALE = 0.5
"""initial weight of the zero-shot prior's logit"""


@dataclass(frozen=True)
class DetectorConfig:
    labels: tuple[str, ...]
    hidden: int = 64
    yamnet_dim: int = 64
    dilations: tuple[int, ...] = (1, 2, 4, 8)
    kernel: int = 3
    logit_scale: float = 0.0
    """YAMNet's output quantisation (logit = logit_scale * (code - logit_zero))"""
    logit_zero: float = 0.0
    mel_mean: tuple[float, ...] = field(default=(), repr=False)
    """per band, of the mel sums divided by POOL, over the training frames"""
    mel_std: tuple[float, ...] = field(default=(), repr=False)
    prior_classes: tuple[tuple[int, ...], ...] = ()
    """per label, the YAMNet classes of its zero-shot prior (empty: no prior)"""
    pooled_dim: int = 0
    """width of the pooled-layer branch (0: none, the network reads the logits only)"""
    pooled_scale: float = 0.0
    """the pooled codes' multiplier: one over their standard deviation on the training patches"""

    @property
    def in_channels(self) -> int:
        return 2 * self.yamnet_dim + 2 * self.pooled_dim + yamnet.N_MELS + PHASE_DIM

    @property
    def yamnet_width(self) -> int:
        """the columns of a YAMNet frame the network reads: the logits, then the pooled codes"""
        return yamnet.N_CLASSES + (yamnet.EMBEDDING_DIM if self.pooled_dim else 0)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(labels=list(self.labels), dilations=list(self.dilations), hop_ms=HOP_MS,
                   pool=POOL, mel_mean=list(self.mel_mean), mel_std=list(self.mel_std))
        if self.prior_classes:
            out["prior_classes"] = [list(c) for c in self.prior_classes]
        else:  # no prior: not written, so a model without one has the config it always had
            del out["prior_classes"]
        if not self.pooled_dim:  # likewise without the pooled branch
            del out["pooled_dim"], out["pooled_scale"]
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "DetectorConfig":
        return cls(labels=tuple(str(x) for x in obj["labels"]), hidden=int(obj["hidden"]),
                   yamnet_dim=int(obj["yamnet_dim"]),
                   dilations=tuple(int(d) for d in obj["dilations"]), kernel=int(obj["kernel"]),
                   logit_scale=float(obj["logit_scale"]), logit_zero=float(obj["logit_zero"]),
                   mel_mean=tuple(float(x) for x in obj["mel_mean"]),
                   mel_std=tuple(float(x) for x in obj["mel_std"]),
                   prior_classes=tuple(tuple(int(c) for c in x) for x in obj.get("prior_classes", ())),
                   pooled_dim=int(obj.get("pooled_dim", 0)), pooled_scale=float(obj.get("pooled_scale", 0.0)))


# --- inputs, the same arithmetic for training and detection ---------------------------------

def patch_index(n_detector: int, n_yamnet: int) -> np.ndarray:
    """(frames, 2) int64: the YAMNet frames whose patches cover each detector frame's middle."""
    i = np.minimum(np.arange(n_detector) // PER_YAMNET_HOP, n_yamnet - 1)
    return np.stack([np.maximum(i - 1, 0), i], axis=1)


def phases(n_detector: int) -> np.ndarray:
    return np.arange(n_detector) % PER_YAMNET_HOP


def yamnet_logits(rows: np.ndarray, cfg: DetectorConfig) -> np.ndarray:
    """(frames, 521) float64 dequantised logits of the tagger's uint8 rows."""
    return cfg.logit_scale * (np.asarray(rows, dtype=np.float64) - cfg.logit_zero)


def yamnet_input(inputs: ClipInputs, cfg: DetectorConfig) -> np.ndarray:
    """(frames, :attr:`DetectorConfig.yamnet_width`) float64: the dequantised logits, then with
    the pooled branch the pooled codes times ``pooled_scale`` (a one-line error without them)."""
    logits = yamnet_logits(inputs.rows, cfg)
    if not cfg.pooled_dim:
        return logits
    if inputs.pooled is None or inputs.pooled.shape != (len(inputs.rows), yamnet.EMBEDDING_DIM):
        raise ValueError("the detector reads YAMNet's pooled layer: read its inputs with pooled=True")
    return np.concatenate([logits, cfg.pooled_scale * np.asarray(inputs.pooled, dtype=np.float64)], axis=1)


def pooled_statistics(pooled: Sequence[np.ndarray]) -> float:
    """One over the standard deviation of every pooled code of ``pooled``, from exact integer
    sums (the same on every CPU), rounded to 6 significant digits."""
    total = squares = n = 0
    for p in pooled:
        p = np.asarray(p, dtype=np.int64)
        total += int(p.sum())
        squares += int((p * p).sum())
        n += p.size
    n = max(n, 1)
    var = max(squares / n - (total / n) ** 2, 1e-6)
    return float(f"{1.0 / math.sqrt(var):.6g}")


def mel_input(mel: np.ndarray, cfg: DetectorConfig) -> np.ndarray:
    """(frames, 64) float64: the mel sums as per-frame means, standardised per band."""
    return (np.asarray(mel, dtype=np.float64) / POOL - np.asarray(cfg.mel_mean)) / np.asarray(cfg.mel_std)


def mel_statistics(mels: Sequence[np.ndarray]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-band mean and standard deviation of ``sum / POOL`` over every frame, from exact
    integer sums (the same on every CPU)."""
    total = np.zeros(yamnet.N_MELS, dtype=np.int64)
    squares = np.zeros(yamnet.N_MELS, dtype=np.int64)
    n = 0
    for m in mels:
        m = np.asarray(m, dtype=np.int64)
        total += m.sum(axis=0)
        squares += (m * m).sum(axis=0)
        n += len(m)
    n = max(n, 1)
    mean = [int(t) / (n * POOL) for t in total]
    var = [max(int(s) / (n * POOL * POOL) - mu * mu, 1e-6) for s, mu in zip(squares, mean)]
    return tuple(round(v, 6) for v in mean), tuple(round(float(np.sqrt(v)), 6) for v in var)


def prior_track(logits: np.ndarray, cfg: DetectorConfig, index: np.ndarray) -> np.ndarray:
    """(frames, labels) float64: per detector frame, the highest logit of each label's prior
    classes over its two patches (``logits``: (yamnet frames, 521) dequantised)."""
    z = np.stack([logits[:, list(c)].max(axis=1) for c in cfg.prior_classes], axis=1)
    return np.maximum(z[index[:, 0]], z[index[:, 1]])


def frame_targets(events: Sequence[Any], n: int, label_index: Mapping[str, int]) -> np.ndarray:
    """(n, labels) float32: 1 where an event of the label covers at least half the frame."""
    out = np.zeros((n, len(label_index)), np.float32)
    starts = np.arange(n) * HOP_MS
    for e in events:
        k = label_index.get(e.label)
        if k is None:
            continue
        on, off = round(e.onset * 1000), round(e.offset * 1000)
        covered = np.minimum(starts + HOP_MS, off) - np.maximum(starts, on)
        out[2 * covered >= HOP_MS, k] = 1.0
    return out


# --- torch: the module training fits ---------------------------------------------------------

def torch_module(cfg: DetectorConfig) -> torch.nn.Module:
    """The network as a torch module (float32 for training)."""
    import torch
    from torch import nn

    class FrameDetector(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.yam = nn.Linear(yamnet.N_CLASSES, cfg.yamnet_dim)
            if cfg.pooled_dim:
                self.pool = nn.Linear(yamnet.EMBEDDING_DIM, cfg.pooled_dim)
            self.phase = nn.Embedding(PER_YAMNET_HOP, PHASE_DIM)
            self.inp = nn.Conv1d(cfg.in_channels, cfg.hidden, 1)
            self.blocks = nn.ModuleList(
                nn.Conv1d(cfg.hidden, cfg.hidden, cfg.kernel, dilation=d, padding=d * (cfg.kernel - 1) // 2)
                for d in cfg.dilations)
            self.out = nn.Conv1d(cfg.hidden, len(cfg.labels), 1)
            nn.init.constant_(self.out.bias, OUT_BIAS)  # labels are rare: start from "absent"
            if cfg.prior_classes:
                self.prior_scale = nn.Parameter(torch.full((len(cfg.labels),), PRIOR_SCALE))
                self.prior_bias = nn.Parameter(torch.zeros(len(cfg.labels)))
                self.prior_index = [torch.tensor(c, dtype=torch.long) for c in cfg.prior_classes]

        def forward(self, logits: torch.Tensor, mel: torch.Tensor, index: torch.Tensor, phase: torch.Tensor,
                    mask: torch.Tensor) -> torch.Tensor:
            """(B, Ny, yamnet_width), (B, Nd, 64), (B, Nd, 2), (B, Nd), (B, Nd) -> (B, Nd, labels)."""
            branches = [torch.relu(self.yam(logits[..., :yamnet.N_CLASSES]))]
            if cfg.pooled_dim:
                branches.append(torch.relu(self.pool(logits[..., yamnet.N_CLASSES:])))
            parts = []
            for y in branches:
                d = y.shape[-1]
                parts += [torch.gather(y, 1, index[..., :1].expand(-1, -1, d)),
                          torch.gather(y, 1, index[..., 1:].expand(-1, -1, d))]
            x = torch.cat([*parts, mel, self.phase(phase)], dim=-1).transpose(1, 2)
            m = mask[:, None, :]
            x = self.inp(x) * m
            for conv in self.blocks:
                x = x + conv(torch.relu(x)) * m
            out = self.out(torch.relu(x)).transpose(1, 2)
            if cfg.prior_classes:
                z = torch.stack([logits[..., c].max(dim=-1).values for c in self.prior_index], dim=-1)
                n = z.shape[-1]
                za = torch.gather(z, 1, index[..., :1].expand(-1, -1, n))
                zb = torch.gather(z, 1, index[..., 1:].expand(-1, -1, n))
                out = out + self.prior_scale * torch.maximum(za, zb) + self.prior_bias
            return out

    return FrameDetector()


# --- numpy: the exact detector detection runs -------------------------------------------------

@lru_cache(maxsize=None)
def sigmoid_table() -> np.ndarray:
    """sigmoid(k / LOGIT_STEPS) for k in [-LIMIT*STEPS, LIMIT*STEPS], in decimal arithmetic."""
    ctx = decimal.Context(prec=40)
    with decimal.localcontext(ctx):
        steps = decimal.Decimal(LOGIT_STEPS)
        return np.array([float(1 / (1 + (-(decimal.Decimal(k) / steps)).exp()))
                         for k in range(-LOGIT_LIMIT * LOGIT_STEPS, LOGIT_LIMIT * LOGIT_STEPS + 1)],
                        dtype=np.float32)


def _dense(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(C_in, N) -> (C_out, N): ``w @ x + b`` summed one input channel at a time."""
    out = np.repeat(b[:, None], x.shape[1], axis=1)
    for c in range(x.shape[0]):
        out += w[:, c:c + 1] * x[c:c + 1]
    return out


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, dilation: int) -> np.ndarray:
    """A zero-padded 'same' dilated convolution (C_in, N) -> (C_out, N), taps then channels."""
    k = w.shape[2]
    pad = dilation * (k - 1) // 2
    xp = np.pad(x, ((0, 0), (pad, pad)))
    n = x.shape[1]
    out = np.repeat(b[:, None], n, axis=1)
    for j in range(k):
        window = xp[:, j * dilation: j * dilation + n]
        for c in range(x.shape[0]):
            out += w[:, c, j:j + 1] * window[c:c + 1]
    return out


def weight_shapes(cfg: DetectorConfig) -> dict[str, tuple[int, ...]]:
    """Every weight of the network and its shape (torch's names)."""
    h, d, n = cfg.hidden, cfg.yamnet_dim, len(cfg.labels)
    out = {"yam.weight": (d, yamnet.N_CLASSES), "yam.bias": (d,),
           **({"pool.weight": (cfg.pooled_dim, yamnet.EMBEDDING_DIM), "pool.bias": (cfg.pooled_dim,)}
              if cfg.pooled_dim else {}),
           "phase.weight": (PER_YAMNET_HOP, PHASE_DIM),
           "inp.weight": (h, cfg.in_channels, 1), "inp.bias": (h,)}
    for i in range(len(cfg.dilations)):
        out[f"blocks.{i}.weight"], out[f"blocks.{i}.bias"] = (h, h, cfg.kernel), (h,)
    out["out.weight"], out["out.bias"] = (n, h, 1), (n,)
    if cfg.prior_classes:
        out["prior_scale"], out["prior_bias"] = (n,), (n,)
    return out


class ExactDetector:
    """The network in numpy float64 with fixed-order sums (module docstring)."""

    def __init__(self, cfg: DetectorConfig, state: Mapping[str, np.ndarray]) -> None:
        self.cfg = cfg
        self.w = {k: np.asarray(v, dtype=np.float64) for k, v in state.items()}

    def check(self) -> None:
        """ValueError naming the first weight or statistic that does not fit the configuration."""
        for name, shape in weight_shapes(self.cfg).items():
            got = self.w.get(name)
            if got is None:
                raise ValueError(f"weight {name!r} missing")
            if got.shape != shape or not np.all(np.isfinite(got)):
                raise ValueError(f"weight {name!r} has shape {got.shape}, expected {shape} (finite)")
        if self.cfg.pooled_dim and not self.cfg.pooled_scale > 0:
            raise ValueError("pooled_scale must be > 0 with a pooled branch")
        stats = (self.cfg.mel_mean, self.cfg.mel_std)
        if any(len(s) != yamnet.N_MELS for s in stats) or min(self.cfg.mel_std) <= 0:
            raise ValueError(f"mel statistics must be {yamnet.N_MELS} means and positive deviations")
        prior = self.cfg.prior_classes
        if prior and (len(prior) != len(self.cfg.labels)
                      or not all(c and all(0 <= i < yamnet.N_CLASSES for i in c) for c in prior)):
            raise ValueError(f"prior_classes must name 1 or more of the {yamnet.N_CLASSES} classes "
                             f"for each of the {len(self.cfg.labels)} labels")

    def logits(self, inputs: ClipInputs) -> np.ndarray:
        """(frames, labels) float64 output logits of one clip."""
        cfg, w = self.cfg, self.w
        both = yamnet_input(inputs, cfg)
        logits = both[:, :yamnet.N_CLASSES]
        branches = [np.maximum(_dense(logits.T, w["yam.weight"], w["yam.bias"]), 0.0)]
        if cfg.pooled_dim:
            branches.append(np.maximum(_dense(both[:, yamnet.N_CLASSES:].T, w["pool.weight"],
                                              w["pool.bias"]), 0.0))
        n = len(inputs.mel)
        idx = patch_index(n, len(logits))
        x = np.concatenate([*(y[:, idx[:, k]] for y in branches for k in (0, 1)),
                            mel_input(inputs.mel, cfg).T, w["phase.weight"][phases(n)].T])
        x = _dense(x, w["inp.weight"][:, :, 0], w["inp.bias"])
        for i, d in enumerate(cfg.dilations):
            x = x + _conv(np.maximum(x, 0.0), w[f"blocks.{i}.weight"], w[f"blocks.{i}.bias"], d)
        out = _dense(np.maximum(x, 0.0), w["out.weight"][:, :, 0], w["out.bias"]).T
        if cfg.prior_classes:
            out = out + w["prior_scale"] * prior_track(logits, cfg, idx) + w["prior_bias"]
        return out

    def tracks(self, inputs: ClipInputs) -> np.ndarray:
        """(frames, labels) float32 activity in [0, 1]: logits rounded to 1/64, sigmoid by table."""
        q = np.clip(np.rint(self.logits(inputs) * LOGIT_STEPS), -LOGIT_LIMIT * LOGIT_STEPS,
                    LOGIT_LIMIT * LOGIT_STEPS).astype(np.int64)
        return sigmoid_table()[q + LOGIT_LIMIT * LOGIT_STEPS]
