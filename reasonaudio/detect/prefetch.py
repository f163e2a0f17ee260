"""The frames a later detection will read, tagged ahead in a background thread.

The main job's detection reads YAMNet frames of its calibration builds, clips no ingest has
tagged. Those builds are made before the evaluations, which run Python on one core: a
:class:`FramePrefetch` tags the builds' clips meanwhile, one onnxruntime run at a time, into the
frame cache (:func:`reasonaudio.ingest.frame_rows.frame_rows`, the one detection reads), a few
clips per pass. :meth:`FramePrefetch.finish` stops it between passes, before detection starts,
which then tags whatever is left as it always did. The frames are the tagger's exact codes
whoever computes them, so what detection reads is the same bytes; only the time moves.
"""

from __future__ import annotations

import threading
from typing import Sequence

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.ingest.frame_rows import frame_rows
from reasonaudio.models.registry import get_record
from reasonaudio.models.yamnet_embedder import YamnetEmbedder

PASS_CLIPS = 8
"""clips tagged per pass: how long :meth:`FramePrefetch.finish` may wait for the pass under way"""


class FramePrefetch:
    """Tags the clips of ``benches`` (rendered under their condition) into the frame cache, in
    a daemon thread started at once; the thread only ever fills the cache, so an error in it
    leaves nothing behind but frames the cache already had (it is dropped: detection will tag
    those clips itself, and say so if it fails)."""

    def __init__(self, benches: Sequence[BenchmarkView]) -> None:
        self._stop = threading.Event()
        self.tagged = 0
        """clips served by the passes so far (tagged here or found cached)"""
        self._thread = threading.Thread(target=self._run, args=(list(benches),), name="frame-prefetch",
                                        daemon=True)
        self._thread.start()

    def _run(self, benches: list[BenchmarkView]) -> None:
        try:
            tagger = YamnetEmbedder(get_record("yamnet"), threads=1)
            for bench in benches:
                clips = list(bench.clips)  # as built, as detection asks (the renderer places them)
                for start in range(0, len(clips), PASS_CLIPS):
                    if self._stop.is_set():
                        return
                    rows, _ = frame_rows(bench, clips[start:start + PASS_CLIPS], tagger)
                    self.tagged += len(rows)
        except Exception:  # a head start only: detection tags what is missing and reports errors
            return

    def finish(self) -> None:
        """Stop after the pass under way and wait for it (at most :data:`PASS_CLIPS` clips)."""
        self._stop.set()
        self._thread.join()
