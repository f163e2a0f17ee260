"""The trained detector's inputs for every clip: YAMNet's frame rows and a finer log-mel track.

Two frozen inputs, both integers, so the features are the same bytes on every CPU:

- **YAMNet rows**: the tagger's uint8 outputs (521 AudioSet classes, a 0.96 s patch every
  0.48 s), from the shared ``yamnet-frames`` cache through
  :func:`reasonaudio.ingest.frame_rows.frame_rows` (the reader detection and ``bench
  train`` share): what the ingest already tagged costs nothing;
- **mel sums**: YAMNet's own log-mel input codes (64 bands every 10 ms, uint8, the exact front end
  of :mod:`reasonaudio.models.yamnet_features`) summed over :data:`POOL` STFT frames, one row
  every :data:`HOP_MS` ms (uint16: the sum of 8 uint8 codes is exact). They give the detector
  the onsets and offsets a 0.48 s hop cannot: YAMNet says *what*, the mel track *when*.

The mel track is read from the tagger's own input patches (each 0.96 s patch holds 96 STFT
frames, consecutive patches overlap by half), so a clip the tagger runs on costs no second front
end: while :func:`frame_rows` tags a clip, :class:`_MelTap` keeps the mel sums of its patches in
their own cache (``yamnet-mel80``, keyed by the audio hash). A clip whose rows were cached
earlier is rendered once more for its mel track, and then cached too.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.ingest.embedding_cache import EmbeddingCache, audio_hash
from reasonaudio.ingest.frame_rows import FrameStats, frame_rows
from reasonaudio.ingest.pipelines import Pipeline
from reasonaudio.ingest.run import _quiet_render_log
from reasonaudio.models.yamnet_embedder import FrameTagger
from reasonaudio.render.clips import ClipRenderer, bench_renderer
from reasonaudio.models import yamnet
from reasonaudio.models import yamnet_features as front
from reasonaudio.progress import Counter
from reasonaudio.runtime import blas_single_thread

POOL = 8
"""STFT frames (10 ms each) per detector frame"""
HOP_MS = POOL * front.STFT_HOP * 1000 // front.SAMPLE_RATE
"""the detector's frame hop: 80 ms (six detector frames per YAMNet hop)"""
PER_YAMNET_HOP = round(yamnet.HOP_SECONDS * 1000) // HOP_MS
MEL_CACHE = f"yamnet-mel{HOP_MS}"
POOLED_CACHE = "yamnet-pooled"


def n_frames(duration_ms: int) -> int:
    """Detector frames of a clip: frame ``t`` covers ``[t * HOP_MS, (t + 1) * HOP_MS)`` ms."""
    return max(1, math.ceil(duration_ms / HOP_MS))


def mel_sums(patches: np.ndarray) -> np.ndarray:
    """(frames, 64) uint16: the STFT codes inside ``patches`` ((n, 96, 64) uint8, a patch every
    48 STFT frames) summed over :data:`POOL` consecutive frames from the start; the last partial
    group is summed over what there is, scaled up to :data:`POOL` frames with integer rounding."""
    patches = np.asarray(patches, dtype=np.uint8)
    half = front.PATCH_HOP_FRAMES
    seq = np.concatenate([patches[:, :half].reshape(-1, front.N_MELS), patches[-1, half:]])
    seq = seq.astype(np.int64)
    full = len(seq) // POOL
    out = seq[: full * POOL].reshape(full, POOL, front.N_MELS).sum(axis=1)
    rest = seq[full * POOL:]
    if len(rest):
        out = np.concatenate([out, (rest.sum(axis=0, keepdims=True) * POOL + len(rest) // 2) // len(rest)])
    return out.astype(np.uint16)


def mel_for(sums: np.ndarray, duration_ms: int) -> np.ndarray:
    """``sums`` cut or edge-padded to the clip's :func:`n_frames`."""
    n = n_frames(duration_ms)
    if len(sums) >= n:
        return sums[:n]
    return np.concatenate([sums, np.repeat(sums[-1:], n - len(sums), axis=0)])


def mel_identity(tagger: FrameTagger) -> dict[str, Any]:
    return {"front_end": front.FRONT_END, "tagger": tagger.revision, "pool": POOL,
            "hop_ms": HOP_MS, "dtype": "uint16", "schema": 1}


class _MelTap:
    """The YAMNet ingest model, except that cutting a clip into patches also keeps the clip's
    mel sums (by the audio hash) in ``cache``: one front end for both inputs."""

    def __init__(self, tagger: FrameTagger, cache: EmbeddingCache) -> None:
        self._tagger = tagger
        self._cache = cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tagger, name)

    def audio_units(self, wave: np.ndarray) -> list[Any]:
        units = self._tagger.audio_units(wave)
        self._cache.put(audio_hash(wave), mel_sums(np.stack(units)))
        return units


class _CachedPipeline(Pipeline):
    """Renders the clips whose per-clip array is not in ``cache``: ``cut`` makes the array's
    input from the wave (in the render thread), ``compute`` the array from it."""

    def __init__(self, tagger: FrameTagger, cache: EmbeddingCache, cache_dir: Path | None,
                 enabled: bool, cut: Callable[[np.ndarray], Any],
                 compute: Callable[[Any], np.ndarray] = lambda x: x) -> None:
        super().__init__()
        self.tagger, self.cache = tagger, cache
        self._cut, self._compute = cut, compute
        self._index_audio(cache_dir, enabled)

    def known(self, clip: Clip) -> np.ndarray | None:
        assert self.audio_index is not None
        digest = self.audio_index.get(clip, self.tagger.sample_rate, self._renderer)
        return None if digest is None else self.cache.get(digest)

    def fill(self, clips: Sequence[Clip], out: dict[str, np.ndarray]) -> None:
        def units(wave: np.ndarray) -> list[Any]:
            return [self._cut(wave)]

        for clip, cut, digest in self.rendered(clips, self.tagger.sample_rate, units, self.cache.contains):
            if cut is None:
                found = self.cache.get(digest)
                assert found is not None
                out[clip.id] = found
            else:
                value = self._compute(cut[0])
                self.cache.put(digest, value)
                out[clip.id] = value
        self.cache.commit()

    def read(self, clips: Sequence[Clip], renderer: ClipRenderer) -> tuple[dict[str, np.ndarray], int]:
        """clip id -> array for ``clips`` (cached, else computed), and how many were rendered."""
        self.attach_renderer(renderer)
        out: dict[str, np.ndarray] = {}
        missing = []
        try:
            with _quiet_render_log(), blas_single_thread():
                for clip in clips:
                    found = self.known(clip)
                    if found is None:
                        missing.append(clip)
                    else:
                        out[clip.id] = found
                self.fill(missing, out)
        finally:
            for c in self.caches:
                if c is not self.cache:
                    c.close()
        return out, len(missing)


def pooled_identity(tagger: FrameTagger) -> dict[str, Any]:
    return {"tagger": tagger.revision, "layer": "pooled", "dtype": "int16", "schema": 1}


def pooled_codes(tagger: FrameTagger, patches: np.ndarray) -> np.ndarray:
    """(patches, 1024) int16: YAMNet's pooled layer for input patches ((n, 96, 64) uint8), as
    integer steps above its zero point (exact: the same on every CPU)."""
    _, emb = tagger.tagger.patch_codes_and_embeddings(patches)
    return np.rint(emb).astype(np.int16)


@dataclass(frozen=True)
class ClipInputs:
    """One clip's detector inputs."""

    rows: np.ndarray
    """(yamnet frames, 521) uint8 tagger outputs"""
    mel: np.ndarray
    """(detector frames, 64) uint16 mel sums, :func:`n_frames` of the clip's length"""
    pooled: np.ndarray | None = None
    """(yamnet frames, 1024) int16 pooled-layer codes, read only for a detector with a pooled
    branch (``pooled=True``)"""


def detector_inputs(bench: BenchmarkView, clips: Sequence[Clip], tagger: FrameTagger, *, cache: bool = True,
                    cache_dir: Path | None = None, renderer: ClipRenderer | None = None,
                    progress: Counter | None = None, pooled: bool = False
                    ) -> tuple[dict[str, ClipInputs], FrameStats]:
    """clip id -> :class:`ClipInputs` for ``clips`` of ``bench`` (rendered by ``renderer``, by
    default the benchmark's), and how the YAMNet rows were served. ``clips`` are the clips as
    heard (their durations fix the detector frames). ``pooled``: also YAMNet's pooled layer
    (its own cache, ``yamnet-pooled``; a clip not in it is rendered and run once more)."""
    t0 = time.perf_counter()
    renderer = renderer or bench_renderer(bench)
    mel_cache = EmbeddingCache(MEL_CACHE, mel_identity(tagger), cache_dir, cache)
    try:
        rows, stats = frame_rows(bench, clips, _MelTap(tagger, mel_cache), cache=cache,
                                 cache_dir=cache_dir, renderer=renderer, progress=progress)
        mel_cache.commit()
        sums, rendered = _CachedPipeline(tagger, mel_cache, cache_dir, cache,
                                         lambda w: mel_sums(tagger.tagger.input_codes(w))).read(clips, renderer)
    finally:
        mel_cache.close()
    codes: dict[str, np.ndarray] = {}
    if pooled:
        pooled_cache = EmbeddingCache(POOLED_CACHE, pooled_identity(tagger), cache_dir, cache)
        try:
            codes, more = _CachedPipeline(tagger, pooled_cache, cache_dir, cache, tagger.tagger.input_codes,
                                          lambda p: pooled_codes(tagger, p)).read(clips, renderer)
        finally:
            pooled_cache.close()
        rendered += more
    stats.rendered += rendered
    stats.seconds = time.perf_counter() - t0
    return {c.id: ClipInputs(rows[c.id], mel_for(sums[c.id], round(c.duration * 1000)), codes.get(c.id))
            for c in clips}, stats
