"""Clip audio for the explorer: rendered on demand from the clip spec, kept in memory.

The same renderer as ``bench render`` (the manifest's atom bank and render parameters), encoded as
16-bit WAV by the same encoder, so the bytes served equal ``bench render CLIP -o x.wav``. Clips are
cached least-recently-used up to a byte budget; nothing is written to disk (the explorer is
read-only).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from reasonaudio.dataset.view import BenchmarkView

DEFAULT_BUDGET = 256 * 1024 * 1024
CONTENT_TYPE = "audio/wav"


class AudioCache:
    """``wav(clip_id)`` -> the clip's WAV bytes (the caller checks the id first)."""

    def __init__(self, bench: BenchmarkView, budget_bytes: int = DEFAULT_BUDGET,
                 bank_spec: str | None = None) -> None:
        self.bench = bench
        self.budget = budget_bytes
        self.bank_spec = bank_spec
        self._renderer: Any = None
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.renders = 0

    def wav(self, clip_id: str) -> bytes:
        with self._lock:
            data = self._items.get(clip_id)
            if data is not None:
                self._items.move_to_end(clip_id)
                return data
            from reasonaudio.render.clips import bench_renderer, encode_audio  # scipy: 1-2 s to import

            if self._renderer is None:
                self._renderer = bench_renderer(self.bench, self.bank_spec)
            clip = self.bench.clip_by_id[clip_id]
            data = encode_audio(self._renderer.render(clip), clip.sample_rate, "wav")
            self.renders += 1
            self._items[clip_id] = data
            self._size += len(data)
            while self._size > self.budget and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                self._size -= len(old)
            return data
