"""YAMNet frame probabilities for every clip of a benchmark, read from the ingest's cache.

The rows come from :func:`reasonaudio.ingest.embed.frame_rows.frame_rows` (the reader training
shares): a clip the YAMNet ingest (``bench ingest --model yamnet`` or
``two-stage:yamnet-caption+...``) has seen costs neither a render nor a tagger pass; any other
clip is rendered once and tagged when the cache lacks it, and counted, so a report can say how
much work was not reused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from reasonaudio.dataset.benchmark import Benchmark
from reasonaudio.dataset.clip import Clip
from reasonaudio.ingest.embed.frame_rows import FrameStats, frame_rows
from reasonaudio.models import yamnet
from reasonaudio.models.registry import load_model
from reasonaudio.progress import SILENT, Hooks


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
                hooks: Hooks = SILENT, engine: Any = None) -> ClipFrames:
    """Frame probabilities for ``clips`` (default: all), reusing the ingest's cached rows;
    ``engine``: the rows the cache lacks computed by another scheduler (``--engine ray``:
    :meth:`reasonaudio.ingest.embed.ray_engine.RayEngine.frame_rows`)."""
    clips = list(bench.clips if clips is None else clips)
    tagger = tagger or load_tagger()
    read = frame_rows if engine is None else engine.frame_rows
    rows, stats = read(bench, clips, tagger, cache_dir=cache_dir, renderer=renderer,
                       progress=hooks.counter("detect: reading frames"))
    probs = {cid: tagger.frames(r) for cid, r in rows.items()}
    return ClipFrames(probs, tuple(tagger.tagger.class_names), yamnet.HOP_SECONDS,
                      yamnet.PATCH_SECONDS, tagger.revision, stats)
