"""The perception tagger on an audio example (issue 28): which bank label it hears, and its
caption, so an example can be read by a system that only perceives.

The label is the bank label whose zero-shot track (:mod:`reasonaudio.detect.labelmap`, the map
``bench detect`` uses by default: each label's AudioSet classes, max over them per frame) peaks
highest over the example's YAMNet frames; the score is that peak. An example on which no label's
track rises above zero is unresolvable (None): the query that holds it is refused. The caption
is the ``yamnet-caption`` captioner's reading of the same frames without durations (what the
tagger hears, ``while``/``then`` between segments).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from reasonaudio.atoms.bank import AtomBank
from reasonaudio.models.yamnet_embedder import FrameTagger
from reasonaudio.querylang.examples import ExampleLabel
from reasonaudio.detect.clip_frames import load_tagger
from reasonaudio.detect.labelmap import build_label_map
from reasonaudio.models import yamnet
from reasonaudio.models.captioners import YamnetCaptionParams, describe_segments, frames_to_segments

TAGGER = "tagger"
"""``ExampleLabel.how`` for a label the tagger chose"""


@dataclass(frozen=True)
class Heard:
    """The tagger on one example: the label (None: nothing heard), its score, the runners-up."""

    label: str | None
    score: float
    top: tuple[tuple[str, float], ...]
    caption: str

    def as_label(self) -> ExampleLabel | None:
        return None if self.label is None else ExampleLabel(self.label, TAGGER, self.score)


class ExamplePerceiver:
    """YAMNet and the zero-shot label map of a bank, loaded once; :meth:`hear` per example."""

    def __init__(self, bank: AtomBank, labels: Sequence[str], tagger: FrameTagger | None = None) -> None:
        self.tagger = tagger or load_tagger()
        self.labels = tuple(labels)
        self.label_map = build_label_map("zero-shot", bank, self.labels, self.tagger)

    def identity(self) -> dict[str, Any]:
        return {"tagger": self.tagger.identity(), "label_map": self.label_map.digest(),
                "mode": "zero-shot", "rule": "argmax over labels of the peak track score"}

    def hear(self, wave: np.ndarray, sample_rate: int) -> Heard:
        rows = self.tagger.run_units(self.tagger.audio_units(yamnet.resample(wave, int(sample_rate))))
        probs = self.tagger.frames(rows)
        tracks = self.label_map.tracks(probs)
        peaks = tracks.max(axis=0) if len(tracks) else np.zeros(len(self.labels), dtype=np.float32)
        order = sorted(range(len(self.labels)), key=lambda j: (-float(peaks[j]), self.labels[j]))
        top = tuple((self.labels[j], round(float(peaks[j]), 4)) for j in order[:3])
        segments = frames_to_segments(probs, self.tagger.tagger.class_names, yamnet.HOP_SECONDS,
                                      yamnet.PATCH_SECONDS, YamnetCaptionParams())
        caption = describe_segments(segments, durations=False)
        best = order[0] if order else None
        if best is None or float(peaks[best]) <= 0.0:
            return Heard(None, 0.0, top, caption)
        return Heard(self.labels[best], round(float(peaks[best]), 4), top, caption)
