"""YAMNet frame probabilities for every clip of a benchmark, read from the ingest's cache, and the
clips as the benchmark's condition renders them (the truth detected events are judged against).

The rows come from :func:`reasonaudio.ingest.frame_rows.frame_rows` (the reader training
shares): a clip the YAMNet ingest (``bench ingest --model yamnet`` or
``two-stage:yamnet-caption+...``) has seen costs neither a render nor a tagger pass; any other
clip is rendered once and tagged when the cache lacks it, and counted, so a report can say how
much work was not reused.

Memory: :class:`ClipFrames` keeps the tagger's uint8 rows (521 bytes per 0.48 s frame) and
decodes a clip's float32 probabilities only when it is read (:class:`DecodedFrames`), and
:func:`frame_chunks` serves a benchmark in chunks of at most :data:`CHUNK_FRAME_BYTES` of rows,
so a detection run over ``long`` recordings (60 to 300 s each) holds a bounded number of frames
whatever the number of clips (docs/conditions.md, "Detection under long").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence, TypeAlias, cast

import numpy as np

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError
from reasonaudio.ingest.frame_rows import FrameStats, frame_rows
from reasonaudio.models.yamnet_embedder import FrameTagger, YamnetEmbedder
from reasonaudio.render.clips import ClipRenderer, bench_renderer
from reasonaudio.models import yamnet
from reasonaudio.models.registry import load_model
from reasonaudio.progress import SILENT, Counter, Hooks

if TYPE_CHECKING:
    from reasonaudio.ingest.ray_engine import RayEngine

ROW_BYTES = 521
"""bytes of one frame row (the tagger's uint8 output per AudioSet class)"""
FRAMES_LABEL = "detect: reading frames"
CHUNK_FRAME_BYTES = 64 * 1024 * 1024
"""at most this many bytes of frame rows per chunk of :func:`frame_chunks` (128 K frames, about
17 h of audio): a clean benchmark of 2,000 clips of at most 30 s is one chunk, as before"""


class DecodedFrames(Mapping[str, np.ndarray]):
    """clip id -> (frames, 521) float32 probabilities, decoded from the uint8 rows each time one
    is read (4 bytes per class and frame exist for one clip at a time, not for every clip)."""

    def __init__(self, rows: Mapping[str, np.ndarray], tagger: FrameTagger) -> None:
        self.rows = rows
        self._tagger = tagger

    def __getitem__(self, clip_id: str) -> np.ndarray:
        return self._tagger.frames(self.rows[clip_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


@dataclass
class ClipFrames:
    """Frame probabilities (frames, 521) of every clip, by clip id (decoded when read)."""

    probs: Mapping[str, Any]
    """a :class:`DecodedFrames`; a reader's own values when one was given"""
    class_names: tuple[str, ...]
    hop_seconds: float
    patch_seconds: float
    tagger_revision: str
    stats: FrameStats = field(default_factory=FrameStats)

    @property
    def row_bytes(self) -> int:
        """bytes of the frame rows held"""
        return sum(int(r.nbytes) for r in getattr(self.probs, "rows", {}).values())


FrameReader: TypeAlias = Callable[..., "tuple[Mapping[str, Any], FrameStats]"]
"""what a detector's tracks are read from, as :func:`reasonaudio.ingest.frame_rows.frame_rows`
is called (bench, clips, tagger, cache_dir=, renderer=, progress=): clip id -> its input, and
how the rows were served"""


def load_tagger() -> FrameTagger:
    """The YAMNet ingest model (the same identity keys the frame cache)."""
    return cast(YamnetEmbedder, load_model("yamnet"))


def heard_clips(bench: BenchmarkView, clips: Sequence[Clip] | None = None, *,
                renderer: ClipRenderer | None = None) -> list[Clip]:
    """``clips`` (default: all) as the benchmark's condition renders them: under ``long`` each
    one placed in its long recording (events shifted, duration the recording's), by the
    renderer's own placement (:meth:`reasonaudio.render.clips.ConditionRenderer.place`); the
    clips themselves otherwise. The truth detection is calibrated and judged against, and the
    length it detects in. ``renderer``: the benchmark's renderer when the caller has one."""
    clips = list(bench.clips if clips is None else clips)
    if bench.condition.is_clean:
        return clips
    renderer = renderer or bench_renderer(bench)
    return [renderer.place(c) for c in clips]


def frame_count(duration_s: float) -> int:
    """An upper bound of the tagger's frames for ``duration_s`` of audio (a 0.48 s hop)."""
    return int(math.ceil(duration_s / yamnet.HOP_SECONDS)) + 1


def chunked(clips: Sequence[Clip], budget_bytes: int = CHUNK_FRAME_BYTES) -> list[list[Clip]]:
    """``clips`` (as heard: their durations are the rendered lengths) in order, cut into chunks
    whose frame rows stay within ``budget_bytes`` (a clip larger than the budget alone)."""
    out: list[list[Clip]] = []
    size = 0
    for clip in clips:
        need = frame_count(clip.duration) * ROW_BYTES
        if not out or size + need > budget_bytes:
            out.append([])
            size = 0
        out[-1].append(clip)
        size += need
    return out


def clip_frames(bench: BenchmarkView, clips: Sequence[Clip] | None = None, *, tagger: FrameTagger | None = None,
                cache_dir: Path | None = None, renderer: ClipRenderer | None = None,
                hooks: Hooks = SILENT, engine: RayEngine | None = None,
                reader: FrameReader | None = None) -> ClipFrames:
    """Frame probabilities for ``clips`` (default: all), reusing the ingest's cached rows;
    ``engine``: the rows the cache lacks computed by another scheduler (``--engine ray``:
    :meth:`reasonaudio.ingest.ray_engine.RayEngine.frame_rows`). ``reader``: another
    input than the decoded frames (a label map's ``reader``: the trained detector's
    ``detect.detector_features.detector_inputs``), whose values ``probs`` then holds."""
    clips = list(bench.clips if clips is None else clips)
    return _frames(bench, clips, tagger or load_tagger(), cache_dir, renderer, engine,
                   hooks.counter(FRAMES_LABEL), reader)


def frame_chunks(bench: BenchmarkView, heard: Sequence[Clip], *, tagger: FrameTagger | None = None,
                 cache_dir: Path | None = None, renderer: ClipRenderer | None = None,
                 hooks: Hooks = SILENT, engine: RayEngine | None = None,
                 budget_bytes: int = CHUNK_FRAME_BYTES,
                 reader: FrameReader | None = None) -> Iterator[ClipFrames]:
    """:func:`clip_frames` of ``heard`` (:func:`heard_clips`) a chunk at a time
    (:func:`chunked`): a chunk's rows can be dropped before the next is read. The clips are
    read from the benchmark as built (the renderer places them itself)."""
    tagger = tagger or load_tagger()
    by_id = bench.clip_by_id
    done = 0
    for part in chunked(heard, budget_bytes):
        yield _frames(bench, [by_id[c.id] for c in part], tagger, cache_dir, renderer, engine,
                      hooks.counter(FRAMES_LABEL, offset=done, total=len(heard)), reader)
        done += len(part)


def _frames(bench: BenchmarkView, clips: list[Clip], tagger: FrameTagger, cache_dir: Path | None,
            renderer: ClipRenderer | None, engine: RayEngine | None, progress: Counter,
            reader: FrameReader | None = None) -> ClipFrames:
    if reader is not None and engine is not None:
        raise DataError("--engine ray: the trained detector's inputs are read in this process; "
                        "omit --engine")
    read = reader or (frame_rows if engine is None else engine.frame_rows)
    rows, stats = read(bench, clips, tagger, cache_dir=cache_dir, renderer=renderer,
                       progress=progress)
    probs = rows if reader is not None else DecodedFrames(rows, tagger)
    return ClipFrames(probs, tuple(tagger.tagger.class_names),
                      yamnet.HOP_SECONDS, yamnet.PATCH_SECONDS, tagger.revision, stats)


def merged_stats(parts: Sequence[FrameStats]) -> FrameStats:
    """The frame statistics of a run read in chunks: every count and the seconds summed."""
    out = FrameStats()
    for part in parts:
        for f in fields(FrameStats):
            setattr(out, f.name, getattr(out, f.name) + getattr(part, f.name))
    return out
