"""A perceiver on an audio example: which bank label it hears, so an example can be read by a
system that only perceives (issue 28; the trained detector's, issue 52).

:class:`ExamplePerceiver` is the perception tagger: the label is the bank label whose zero-shot
track (:mod:`reasonaudio.detect.labelmap`, the map ``bench detect`` uses by default: each label's
AudioSet classes, max over them per frame) peaks highest over the example's YAMNet frames; the
score is that peak. An example on which no label's track rises above zero is unresolvable
(None): the query that holds it is refused. Its caption is the ``yamnet-caption`` captioner's
reading of the same frames without durations (what the tagger hears, ``while``/``then`` between
segments).

:class:`DetectorPerceiver` is a ``bench train-detector`` model (:mod:`reasonaudio.detect.trained`):
the example's detector inputs are made as a clip's are (the tagger's rows and the mel sums of the
same input patches, :mod:`reasonaudio.detect.detector_features`), the label is the one whose
track peaks highest, and an example on which no track rises above :data:`DETECTOR_HEARS` (the
detector's sigmoid says no label sounds) is unresolvable. Each label has its own output, so the
zero-shot map's ties (labels sharing an AudioSet class, hence one track) do not arise; a tie
that remains is a refusal (:mod:`reasonaudio.retrievers.example_hearing`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from reasonaudio.atoms.bank import AtomBank
from reasonaudio.models.yamnet_embedder import FrameTagger
from reasonaudio.detect.clip_frames import load_tagger
from reasonaudio.detect.detector_features import ClipInputs, mel_for, mel_sums, pooled_codes
from reasonaudio.detect.labelmap import build_label_map
from reasonaudio.detect.trained import TrainedMap
from reasonaudio.models import yamnet
from reasonaudio.models.captioners import YamnetCaptionParams, describe_segments, frames_to_segments

TAGGER = "tagger"
"""``ExampleLabel.how`` for a label the tagger chose"""
DETECTOR = "detector"
"""``ExampleLabel.how`` for a label a trained detector chose"""
DETECTOR_HEARS = 0.5
"""a trained detector hears a label in an example when its track rises above this somewhere (its
outputs are sigmoids trained against 0/1 frame targets)"""


@dataclass(frozen=True)
class Heard:
    """A perceiver on one example: the label (None: nothing heard), its score, the runners-up."""

    label: str | None
    score: float
    top: tuple[tuple[str, float], ...]
    caption: str
    who: str = TAGGER
    """who heard it: :data:`TAGGER` or :data:`DETECTOR` (``ExampleLabel.how``)"""


def peak_label(tracks: np.ndarray, labels: Sequence[str], floor: float, caption: str = "",
               who: str = TAGGER) -> Heard:
    """The label whose track ((frames, labels)) peaks highest, its peak (4 decimals) and the three
    best; None when no peak rises above ``floor``."""
    peaks = tracks.max(axis=0) if len(tracks) else np.zeros(len(labels), dtype=np.float32)
    order = sorted(range(len(labels)), key=lambda j: (-float(peaks[j]), labels[j]))
    top = tuple((labels[j], round(float(peaks[j]), 4)) for j in order[:3])
    best = order[0] if order else None
    if best is None or float(peaks[best]) <= floor:
        return Heard(None, 0.0, top, caption, who)
    return Heard(labels[best], round(float(peaks[best]), 4), top, caption, who)


class ExamplePerceiver:
    """YAMNet and the zero-shot label map of a bank, loaded once; :meth:`hear` per example."""

    def __init__(self, bank: AtomBank, labels: Sequence[str], tagger: FrameTagger | None = None) -> None:
        self.tagger = tagger or load_tagger()
        self.labels = tuple(labels)
        self.label_map = build_label_map("zero-shot", bank, self.labels, self.tagger)

    def hear(self, wave: np.ndarray, sample_rate: int) -> Heard:
        rows = self.tagger.run_units(self.tagger.audio_units(yamnet.resample(wave, int(sample_rate))))
        probs = self.tagger.frames(rows)
        segments = frames_to_segments(probs, self.tagger.tagger.class_names, yamnet.HOP_SECONDS,
                                      yamnet.PATCH_SECONDS, YamnetCaptionParams())
        caption = describe_segments(segments, durations=False)
        return peak_label(self.label_map.tracks(probs), self.labels, 0.0, caption)


class DetectorPerceiver:
    """A trained detector (a :class:`~reasonaudio.detect.trained.TrainedMap` over the benchmark's
    labels) and its tagger, loaded once; :meth:`hear` per example."""

    def __init__(self, detector_map: TrainedMap, tagger: FrameTagger | None = None) -> None:
        self.tagger = tagger or load_tagger()
        self.map = detector_map
        self.labels = detector_map.labels

    def inputs(self, wave: np.ndarray, sample_rate: int) -> ClipInputs:
        """The example's detector inputs, made from one pass of the tagger's front end as a
        clip's are (rows and mel sums of the same input patches)."""
        wave16 = yamnet.resample(wave, int(sample_rate))
        units = self.tagger.audio_units(wave16)
        rows = self.tagger.run_units(units)
        duration_ms = round(len(wave) * 1000 / int(sample_rate))
        patches = np.stack(units)
        pooled = pooled_codes(self.tagger, patches) if self.map.detector.config.pooled_dim else None
        return ClipInputs(rows, mel_for(mel_sums(patches), duration_ms), pooled)

    def hear(self, wave: np.ndarray, sample_rate: int) -> Heard:
        tracks = self.map.tracks(self.inputs(wave, sample_rate))
        return peak_label(tracks, self.labels, DETECTOR_HEARS, who=DETECTOR)
