"""Deterministic windows over long clips, and pooling of per-window embeddings.

Why: audio towers see a fixed window (CLAP: 10 s) and the libraries crop longer input at random,
so the same clip would embed differently on every run. We cut fixed windows instead: starts at
0, hop, 2*hop, ... and a last window aligned to the clip's end, so every sample is seen and
nothing depends on chance. The policy is part of the embedding cache key and the collection's
metadata.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from reasonaudio.errors import ModelError

POOLINGS = ("mean-l2",)


@dataclass(frozen=True)
class WindowPolicy:
    window_seconds: float
    hop_seconds: float
    pooling: str = "mean-l2"
    """mean of the L2-normalised window embeddings, L2-normalised again"""

    def __post_init__(self) -> None:
        if not (self.window_seconds > 0 and self.hop_seconds > 0):
            raise ModelError(f"window policy: window and hop must be > 0 s, got "
                             f"{self.window_seconds} and {self.hop_seconds}")
        if self.hop_seconds > self.window_seconds:
            raise ModelError(f"window policy: hop {self.hop_seconds} s exceeds the window "
                             f"{self.window_seconds} s, which would skip audio")
        if self.pooling not in POOLINGS:
            raise ModelError(f"window policy: pooling must be one of {POOLINGS}, got {self.pooling!r}")

    def spans(self, n_samples: int, sample_rate: int) -> list[tuple[int, int]]:
        """Sample ranges [start, end) of the windows; a clip no longer than a window is one span."""
        window = int(round(self.window_seconds * sample_rate))
        hop = int(round(self.hop_seconds * sample_rate))
        if n_samples <= window:
            return [(0, n_samples)]
        starts = list(range(0, n_samples - window, hop))
        starts.append(n_samples - window)
        return [(s, s + window) for s in sorted(set(starts))]

    def cut(self, wave: np.ndarray, sample_rate: int) -> list[np.ndarray]:
        return [wave[a:b] for a, b in self.spans(len(wave), sample_rate)]

    def describe(self) -> dict[str, Any]:
        return {"kind": "sliding-windows", **asdict(self),
                "last_window": "aligned to the clip end", "short_clips": "one window"}


def l2_normalise(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norm = np.linalg.norm(x, axis=axis, keepdims=True)
    return x / np.maximum(norm, 1e-12)


def pool_windows(window_vectors: np.ndarray, counts: Sequence[int], pooling: str = "mean-l2") -> np.ndarray:
    """One vector per clip from its consecutive rows in ``window_vectors`` (``counts`` per clip)."""
    if pooling != "mean-l2":
        raise ModelError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    if sum(counts) != len(window_vectors):
        raise ValueError(f"{len(window_vectors)} window vectors for {sum(counts)} windows")
    normed = l2_normalise(window_vectors)
    out = np.empty((len(counts), normed.shape[1]), dtype=np.float32)
    start = 0
    for i, n in enumerate(counts):
        out[i] = normed[start:start + n].mean(axis=0)
        start += n
    return l2_normalise(out)
