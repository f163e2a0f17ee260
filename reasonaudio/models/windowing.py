"""Deterministic windows over long clips, and pooling of per-window embeddings.

Why: audio towers see a fixed window (CLAP: 10 s) and the libraries crop longer input at random,
so the same clip would embed differently on every run. We cut fixed windows instead: starts at
0, hop, 2*hop, ... and a last window aligned to the clip's end, so every sample is seen and
nothing depends on chance. The policy is part of the embedding cache key and the collection's
metadata.

Long-form audio (a ``long`` condition's 60 to 300 s recordings, docs/conditions.md): every model
states how it covers audio longer than its window (:func:`long_form`): window models cut windows
(``chunking``: ``fixed``, the default above, or ``silence``: each cut moved to the quietest
50 ms frame in the last half of the window, so an event is rarely split) and pool them; frame
taggers (YAMNet) score every frame of the whole clip; text models never see audio. ``--chunking
silence`` sets it for a window model; it enters the policy's description, so the cache key and
the collection record change with it, while ``fixed`` describes itself as before.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence, TypeVar

import numpy as np

from reasonaudio.errors import ModelError

if TYPE_CHECKING:
    from reasonaudio.models.record import ModelRecord

E = TypeVar("E")
"""a loaded model (an ``Embedder``): :func:`with_chunking` gives back the one it was given"""

POOLINGS = ("mean-l2",)
CHUNKINGS = ("fixed", "silence")
SILENCE_FRAME_S = 0.05
"""the energy frame silence-aware chunking compares"""


@dataclass(frozen=True)
class WindowPolicy:
    window_seconds: float
    hop_seconds: float
    pooling: str = "mean-l2"
    """mean of the L2-normalised window embeddings, L2-normalised again"""
    chunking: str = "fixed"
    """``fixed``: starts at multiples of the hop; ``silence``: cuts at low-energy points"""

    def __post_init__(self) -> None:
        if not (self.window_seconds > 0 and self.hop_seconds > 0):
            raise ModelError(f"window policy: window and hop must be > 0 s, got "
                             f"{self.window_seconds} and {self.hop_seconds}")
        if self.hop_seconds > self.window_seconds:
            raise ModelError(f"window policy: hop {self.hop_seconds} s exceeds the window "
                             f"{self.window_seconds} s, which would skip audio")
        if self.pooling not in POOLINGS:
            raise ModelError(f"window policy: pooling must be one of {POOLINGS}, got {self.pooling!r}")
        if self.chunking not in CHUNKINGS:
            raise ModelError(f"--chunking must be one of {', '.join(CHUNKINGS)}, got {self.chunking!r}")

    def spans(self, n_samples: int, sample_rate: int) -> list[tuple[int, int]]:
        """Sample ranges [start, end) of the windows; a clip no longer than a window is one span."""
        window = int(round(self.window_seconds * sample_rate))
        hop = int(round(self.hop_seconds * sample_rate))
        if n_samples <= window:
            return [(0, n_samples)]
        starts = list(range(0, n_samples - window, hop))
        starts.append(n_samples - window)
        return [(s, s + window) for s in sorted(set(starts))]

    def silence_spans(self, wave: np.ndarray, sample_rate: int) -> list[tuple[int, int]]:
        """Consecutive windows of at most one window each, cut at the quietest
        :data:`SILENCE_FRAME_S` frame of each window's second half (the first such frame on a
        tie); no overlap, every sample in exactly one window."""
        n = len(wave)
        window = int(round(self.window_seconds * sample_rate))
        frame = max(1, int(round(SILENCE_FRAME_S * sample_rate)))
        if n <= window:
            return [(0, n)]
        energy = np.square(np.asarray(wave, dtype=np.float64))
        csum = np.concatenate([[0.0], np.cumsum(energy)])
        spans, start = [], 0
        while n - start > window:
            lo, hi = start + window // 2, start + window - frame
            ends = np.arange(lo, hi + 1, frame)
            if len(ends) == 0:
                cut = start + window
            else:
                power = csum[ends + frame] - csum[ends]  # the frame after each candidate cut
                cut = int(ends[int(np.argmin(power))]) + frame // 2
            spans.append((start, cut))
            start = cut
        spans.append((start, n))
        return spans

    def cut(self, wave: np.ndarray, sample_rate: int) -> list[np.ndarray]:
        if self.chunking == "silence":
            return [wave[a:b] for a, b in self.silence_spans(wave, sample_rate)]
        return [wave[a:b] for a, b in self.spans(len(wave), sample_rate)]

    def describe(self) -> dict[str, Any]:
        out = {"kind": "sliding-windows", **asdict(self),
               "last_window": "aligned to the clip end", "short_clips": "one window"}
        if self.chunking == "fixed":
            del out["chunking"]  # the description (and cache key) fixed windows always had
        else:
            out.update(kind="silence-aware-windows", hop_seconds=None, last_window="the rest",
                       cut=f"quietest {SILENCE_FRAME_S:g} s frame of the window's second half")
        return out


def with_chunking(embedder: E, chunking: str, name: str = "") -> E:
    """Set ``--chunking`` on a loaded model (before its identity keys a cache); ``fixed`` leaves
    it as it is. A model without windows refuses ``silence``, naming how it covers long audio."""
    if chunking == "fixed":
        return embedder
    policy = getattr(embedder, "window", None)
    if not isinstance(policy, WindowPolicy):
        raise ModelError(f"--chunking {chunking}: model {name or getattr(embedder, 'name', '?')!r} "
                         "cuts no windows (a frame tagger scores every frame of the whole clip; a "
                         "text model hears no audio); leave --chunking at fixed")
    embedder.window = replace(policy, chunking=chunking)
    return embedder


def long_form(record: ModelRecord) -> dict[str, Any]:
    """How a registry model covers audio longer than its window, and how it pools."""
    if not record.has_audio:
        return {"covers": "no audio (text tower only)", "pooling": record.pooling}
    if record.kind == "tagger" or (record.window_seconds or 0) < 2:
        return {"covers": f"every {record.hop_seconds:g} s frame ({record.window_seconds:g} s patches) "
                          "of the whole clip", "pooling": record.pooling, "chunking": "none"}
    return {"covers": f"{record.window_seconds:g} s windows over the whole clip (fixed: hop "
                      f"{record.hop_seconds:g} s, last aligned to the end; or silence-aware)",
            "pooling": record.pooling, "chunking": list(CHUNKINGS)}


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
