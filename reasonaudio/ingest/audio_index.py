"""Clip spec -> sha256 of its rendered audio, remembered by every audio ingest.

Everything computed from audio (vectors, YAMNet frame rows) is cached by the hash of the
rendered samples. Finding a clip's cached rows later (``bench detect``) would otherwise mean
rendering the clip again just to learn its hash; this index records the hash the ingest already
computed, keyed by what determines the samples: the clip's events and duration, the sample
rate, the render parameters and the atom bank's description (fingerprint included), and under a
condition its identity and the clip id its per-clip draws are seeded by. A key the index lacks
is simply rendered again, so the index can never serve wrong audio, only save work.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from reasonaudio.dataset.clip import Clip
from reasonaudio.ingest.embedding_cache import EmbeddingCache

if TYPE_CHECKING:
    from reasonaudio.render.clips import ClipRenderer

INDEX_LABEL = "clip-audio-hash"
INDEX_IDENTITY = {"kind": "clip render key -> sha256 of rendered float32 samples", "schema": 1}


def renderer_identity(renderer: ClipRenderer) -> str:
    """The bank description and render parameters, as one stable string (cached on the renderer)."""
    cached = getattr(renderer, "_audio_index_identity", None)
    if cached is None:
        parts = {"bank": renderer.bank.describe(), "render": renderer.params.to_json()}
        condition = getattr(renderer, "condition_identity", None)  # a ConditionRenderer
        if condition is not None:
            parts["condition"] = condition
        cached = json.dumps(parts, sort_keys=True, default=str)
        try:
            renderer._audio_index_identity = cached
        except AttributeError:  # pragma: no cover - a renderer with __slots__
            pass
    return cached


def render_key(clip: Clip, sample_rate: int, renderer: ClipRenderer) -> str:
    """sha256 of everything the rendered samples depend on: the clip's events, not its id,
    unless the renderer draws by it (a condition's bed and offsets: ``draw_key``)."""
    spec: dict[str, Any] = {"duration": clip.duration, "events": [e.to_json() for e in clip.events],
                            "sample_rate": int(sample_rate)}
    draw_key = getattr(renderer, "draw_key", None)
    if draw_key is not None:
        spec["drawn_by"] = draw_key(clip)
    text = json.dumps(spec, sort_keys=True) + "\n" + renderer_identity(renderer)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class AudioHashIndex:
    """A thin layer over :class:`reasonaudio.ingest.EmbeddingCache` (same SQLite/WAL file
    handling): key = :func:`render_key`, value = the 32 bytes of the audio hash."""

    def __init__(self, cache_dir: Path | None = None, enabled: bool = True) -> None:
        self.cache = EmbeddingCache(INDEX_LABEL, INDEX_IDENTITY, cache_dir, enabled)

    def put(self, clip: Clip, sample_rate: int, renderer: ClipRenderer, digest: str) -> None:
        self.cache.put(render_key(clip, sample_rate, renderer),
                       np.frombuffer(bytes.fromhex(digest), dtype=np.uint8))

    def get(self, clip: Clip, sample_rate: int, renderer: ClipRenderer) -> str | None:
        found = self.cache.get(render_key(clip, sample_rate, renderer))
        return None if found is None else bytes(np.asarray(found, dtype=np.uint8)).hex()

    def commit(self) -> None:
        self.cache.commit()

    def close(self) -> None:
        self.cache.close()
