"""What every detector is: a clip's frames in, one activity track per label out.

Two kinds implement it: the label map (:class:`~reasonaudio.detect.labelmap.LabelMap`, tagger
classes -> a label's track, on YAMNet's 0.48 s frames) and a trained detector
(:class:`~reasonaudio.detect.trained.TrainedMap`, every 80 ms). Calibration, the detection pass
and the example reader see only this interface.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from reasonaudio.detect.calibrate_choices import ChoiceGrid
from reasonaudio.detect.events import FrameGrid
from reasonaudio.types import JsonDict, Label


@runtime_checkable
class DetectorProtocol(Protocol):
    """A detector over ``labels``: its tracks, the grid their frames lie on, what calibration
    may choose for it, and a digest that keys what is cached from it."""

    mode: str
    """``zero-shot`` | ``enrolled`` (a label map) or ``trained``"""
    labels: tuple[Label, ...]
    grid: FrameGrid
    """the tracks' frames"""
    choice_grid: ChoiceGrid | None
    """calibration's step 3 (caps, off ratios); None: calibration stops at event F1"""
    top_k_choices: tuple[int, ...]
    """what calibration chooses a label's number of tagger classes among"""

    @property
    def reader(self) -> Callable[..., Any] | None:
        """what the tracks are made from (None: the tagger's decoded frames)"""
        ...

    def tracks(self, frames: Any, /) -> np.ndarray:
        """(frames, labels) activity of one clip, from what :attr:`reader` gives for it."""
        ...

    def truncated(self, k: int) -> DetectorProtocol:
        """The detector keeping at most ``k`` tagger classes per label (a trained one: itself)."""
        ...

    def digest(self) -> str:
        ...

    def to_json(self) -> JsonDict:
        ...
