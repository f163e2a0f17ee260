"""YAMNet frame rows (the tagger's uint8 outputs, 521 classes every 0.48 s) for clips of a
benchmark: the one reader behind detection (``bench detect``) and training (``bench train``).

Rows live in the ``yamnet-frames`` cache the YAMNet ingest and the ``yamnet-caption`` captioner
fill, keyed by the sha256 of the rendered audio; every audio ingest also records clip -> audio
hash in :class:`reasonaudio.ingest.audio_index.AudioHashIndex`. So a clip an ingest has seen
costs neither a render nor a tagger pass. Any other clip is rendered once (its hash recorded
for the next reader) and, when the cache lacks its rows, tagged in fixed-shape batches while
the next clips render. :class:`FrameStats` counts each way a clip was served.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.ingest.embedding_cache import EmbeddingCache
from reasonaudio.ingest.pipelines import Pipeline, frames_cache_spec
from reasonaudio.ingest.run import _quiet_render_log
from reasonaudio.models.yamnet_embedder import FrameTagger
from reasonaudio.render.clips import ClipRenderer, bench_renderer
from reasonaudio.progress import Counter
from reasonaudio.runtime import blas_single_thread

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


class FramePipeline(Pipeline):
    """Renders clips at the tagger's rate and returns its frame rows, cached by audio hash."""

    def __init__(self, tagger: FrameTagger, cache_enabled: bool = True,
                 cache_dir: Path | None = None) -> None:
        super().__init__()
        self.tagger = tagger
        self.name = "yamnet-frames"
        label, identity = frames_cache_spec(tagger)
        self.cache = EmbeddingCache(label, identity, cache_dir, cache_enabled)
        self.caches = [self.cache]
        self._index_audio(cache_dir, cache_enabled)

    def identity(self) -> dict[str, Any]:
        return self.tagger.identity()

    def with_caches(self, cache_enabled: bool, cache_dir: Path | None) -> "FramePipeline":
        return FramePipeline(self.tagger, cache_enabled, cache_dir)

    def known_rows(self, clip: Clip) -> np.ndarray | None:
        """The clip's rows when the index knows its hash and the cache has them (no render)."""
        assert self.audio_index is not None
        digest = self.audio_index.get(clip, self.tagger.sample_rate, self._renderer)
        return None if digest is None else self.cache.get(digest)

    def rows(self, clips: Sequence[Clip], stats: FrameStats,
             done: Callable[[str, np.ndarray], None]) -> None:
        """Render, look up and (for cache misses) tag ``clips``; ``done(clip_id, rows)`` each."""
        def count(cid: str, rows: np.ndarray, computed: bool) -> None:
            stats.rendered += 1
            if computed:
                stats.tagged += 1
            else:
                stats.cached_rows += 1
            done(cid, rows)

        self.cached_rows(clips, self.tagger, self.cache, count)


def frame_rows(bench: BenchmarkView, clips: Sequence[Clip], tagger: FrameTagger, *, cache: bool = True,
               cache_dir: Path | None = None, renderer: ClipRenderer | None = None,
               progress: Counter | None = None) -> tuple[dict[str, np.ndarray], FrameStats]:
    """clip id -> (frames, 521) uint8 rows for ``clips`` of ``bench``, and how each was served;
    ``progress(done, total)`` over the clips asked for."""
    t0 = time.perf_counter()
    stats = FrameStats(clips=len(clips))
    out: dict[str, np.ndarray] = {}
    pipe = FramePipeline(tagger, cache, cache_dir)
    pipe.attach_renderer(renderer or bench_renderer(bench))

    def done(cid: str, rows: np.ndarray) -> None:
        out[cid] = rows
        if progress is not None:
            progress(len(out), len(clips))

    try:
        with _quiet_render_log(), blas_single_thread():
            misses = []
            for clip in clips:
                rows = pipe.known_rows(clip)
                if rows is None:
                    misses.append(clip)
                else:
                    stats.from_index += 1
                    stats.cached_rows += 1
                    done(clip.id, rows)
            pipe.rows(misses, stats, done)
            for store in pipe.caches:  # the rows and the clip -> hash index
                store.commit()
    finally:
        pipe.close()
    stats.seconds = time.perf_counter() - t0
    return {c.id: out[c.id] for c in clips}, stats
