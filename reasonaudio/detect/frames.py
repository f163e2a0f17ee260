"""YAMNet frame scores for every clip of a benchmark, read from the ingest's cache.

The YAMNet ingest (``bench ingest --model yamnet`` or ``two-stage:yamnet-caption+...``) caches
each clip's frame rows (the model's uint8 outputs) by audio hash, and records clip -> audio hash
in :class:`reasonaudio.ingest.audio_index.AudioHashIndex`. Detection reads both: no tagger
pass and no rendering for a clip the ingest has seen. A clip the index does not know is
rendered once to learn its hash; a clip the cache lacks is tagged here (counted, so a report
can say how much work was not reused).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from reasonaudio.dataset.benchmark import Benchmark
from reasonaudio.dataset.clip import Clip
from reasonaudio.ingest.audio_index import AudioHashIndex
from reasonaudio.ingest.embed.cache import EmbeddingCache, audio_hash
from reasonaudio.ingest.render import bench_renderer
from reasonaudio.models import yamnet
from reasonaudio.models.registry import load_model
from reasonaudio.progress import Progress


@dataclass
class FrameStats:
    clips: int = 0
    from_index: int = 0
    """clips whose audio hash came from the ingest's index (no rendering)"""
    rendered: int = 0
    """clips rendered to learn their hash"""
    cached_rows: int = 0
    """clips whose frame rows came from the cache (no tagger pass)"""
    tagged: int = 0
    """clips the tagger had to run on (absent from the cache)"""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ClipFrames:
    """Frame probabilities (frames, 521) of every clip, by clip id."""

    probs: dict[str, np.ndarray]
    class_names: tuple[str, ...]
    hop_seconds: float
    patch_seconds: float
    tagger_revision: str
    stats: FrameStats = field(default_factory=FrameStats)


def load_tagger() -> Any:
    """The YAMNet ingest model (the same identity keys the frame cache)."""
    return load_model("yamnet")


def clip_frames(bench: Benchmark, clips: Sequence[Clip] | None = None, *, tagger: Any = None,
                cache_dir: Path | None = None, renderer: Any = None,
                progress: Progress | None = None) -> ClipFrames:
    """Frame probabilities for ``clips`` (default: all), reusing the ingest's cached rows."""
    t0 = time.perf_counter()
    clips = list(bench.clips if clips is None else clips)
    tagger = tagger or load_tagger()
    rows_cache = EmbeddingCache(f"{tagger.name}-frames", tagger.identity(), cache_dir)
    index = AudioHashIndex(cache_dir)
    renderer = renderer or bench_renderer(bench)
    stats = FrameStats(clips=len(clips))
    probs: dict[str, np.ndarray] = {}
    sr = tagger.sample_rate
    todo: list[tuple[Clip, str, np.ndarray]] = []
    try:
        for i, clip in enumerate(clips):
            digest = index.get(clip, sr, renderer)
            wave = None
            if digest is None:
                wave = renderer.render(replace(clip, sample_rate=sr))
                digest = audio_hash(wave)
                index.put(clip, sr, renderer, digest)
                stats.rendered += 1
            else:
                stats.from_index += 1
            rows = rows_cache.get(digest)
            if rows is None:
                if wave is None:
                    wave = renderer.render(replace(clip, sample_rate=sr))
                todo.append((clip, digest, wave))
            else:
                stats.cached_rows += 1
                probs[clip.id] = tagger.frames(rows)
            if progress:
                progress("detect: reading frames", i + 1, len(clips))
        for clip, digest, wave in todo:  # clips no ingest has tagged: run the tagger here
            rows = tagger.run_units(tagger.audio_units(wave))
            rows_cache.put(digest, rows)
            probs[clip.id] = tagger.frames(rows)
            stats.tagged += 1
    finally:
        rows_cache.close()
        index.close()
    stats.seconds = time.perf_counter() - t0
    return ClipFrames(probs, tuple(tagger.tagger.class_names), yamnet.HOP_SECONDS,
                      yamnet.PATCH_SECONDS, tagger.revision, stats)
