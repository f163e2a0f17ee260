"""A ``bench train-detector`` model directory, read for ``bench detect --mode trained``.

The directory (written by :mod:`reasonaudio.train.detector`): ``config.json`` (the network,
:class:`~reasonaudio.detect.detector_model.DetectorConfig`, and its input features),
``model.safetensors`` (the weights), ``card.json`` and ``README.md`` (the model card: training
builds, recipe, figures, versions) and ``training_builds.json`` (each training build's folder,
seed, clip keys and the atoms its clips use).

:class:`TrainedMap` puts the detector behind the label map's interface (``labels``,
``tracks``, ``grid``, ``reader``, ``to_json``, ``digest``), so calibration, events, the payload
and the soft evidence are the zero-shot and enrolled modes' own code. Its tracks come from
:class:`~reasonaudio.detect.detector_model.ExactDetector` (the same bytes on every CPU) at the
detector's 80 ms frames (:data:`TRAINED_GRID`).

:func:`check_training_separate` is ``bench train``'s rule
(:func:`reasonaudio.dataset.separation.check_separate`) applied to every training build the
model records, against the evaluated build and its calibration build.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.separation import BuildRecord, check_separate
from reasonaudio.detect.calibrate_choices import ChoiceGrid
from reasonaudio.detect.clip_frames import FrameReader
from reasonaudio.detect.detector_features import HOP_MS, ClipInputs, detector_inputs
from reasonaudio.detect.detector_model import DetectorConfig, ExactDetector
from reasonaudio.detect.events import FrameGrid
from reasonaudio.errors import DataError, ModelError, echo
from reasonaudio.fileio import read_json, sha256_file
from reasonaudio.output_dirs import DETECTOR_OUTPUT

FORMAT = DETECTOR_OUTPUT.format
FORMAT_VERSION = 1
CONFIG, WEIGHTS, CARD, README, BUILDS = ("config.json", "model.safetensors", DETECTOR_OUTPUT.marker,
                                         "README.md", "training_builds.json")
MODEL_OUTPUT = DETECTOR_OUTPUT
MODE = "trained"
TRAINED_GRID = FrameGrid(hop_ms=HOP_MS, lead_ms=0, onset_shifts_ms=(-160, -80, 0, 80, 160),
                         offset_shifts_ms=(-160, -80, 0, 80, 160))
"""the detector's frames tile the clip every 80 ms; it learnt the onsets, so the shifts are small"""
TRAINED_CHOICES = ChoiceGrid(caps=(0.7, 0.5, 0.3, 0.2, 0.1), off_ratios=(0.25, 0.1, 0.05))
"""calibration's step 3 (``detect.calibrate_choices``): the detector's peaks sit near 0 or 1, so
event F1 puts most thresholds at the grid's top and misses the quieter of two overlapping sounds"""


@dataclass(frozen=True)
class TrainedDetector:
    """A loaded model directory."""

    path: Path
    config: DetectorConfig
    card: dict[str, Any]
    weights_sha256: str
    exact: ExactDetector = field(repr=False)
    builds: tuple[BuildRecord, ...]
    atoms: frozenset[str]
    """the atom ids the training clips used (the recordings the detector has heard)"""


def _where(folder: Path, name: str) -> str:
    return echo(str(folder / name))


def _builds(folder: Path) -> tuple[tuple[BuildRecord, ...], frozenset[str]]:
    obj = read_json(folder / BUILDS)
    try:
        builds = tuple(BuildRecord(Path(str(b["path"])), int(b["seed"]),
                                   frozenset(str(k) for k in b["clip_keys"])) for b in obj["builds"])
        atoms = frozenset(str(a) for b in obj["builds"] for a in b["atoms"])
    except (KeyError, TypeError, ValueError):
        raise DataError(f"{_where(folder, BUILDS)}: not a list of builds with path, seed, "
                        "clip_keys and atoms") from None
    return builds, atoms


def load_detector(path: Path | str) -> TrainedDetector:
    """The model directory at ``path``; one-line errors for a folder that is not one."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ModelError(f"--model-path {echo(str(folder))}: not a folder (make one with "
                         "`bench train-detector --out DIR`)")
    for name in (CONFIG, WEIGHTS, CARD, BUILDS):
        if not (folder / name).is_file():
            raise ModelError(f"{_where(folder, name)}: not found; not a `bench train-detector` "
                             "model directory")
    config = read_json(folder / CONFIG)
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        got = config.get("format") if isinstance(config, dict) else None
        raise ModelError(f"{_where(folder, CONFIG)}: field 'format' must be {FORMAT!r}, got {got!r}")
    try:
        cfg = DetectorConfig.from_json(config["network"])
    except (KeyError, TypeError, ValueError):
        raise ModelError(f"{_where(folder, CONFIG)}: field 'network' is not a detector "
                         "configuration") from None
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        state = load_file(str(folder / WEIGHTS))
    except (SafetensorError, OSError, ValueError) as exc:
        raise ModelError(f"{_where(folder, WEIGHTS)}: cannot load weights "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    exact = ExactDetector(cfg, state)
    try:
        exact.check()
    except ValueError as exc:
        raise ModelError(f"{_where(folder, WEIGHTS)}: {exc}") from None
    builds, atoms = _builds(folder)
    return TrainedDetector(folder, cfg, read_json(folder / CARD), sha256_file(folder / WEIGHTS),
                           exact, builds, atoms)


def check_training_separate(detector: TrainedDetector, evaluated: BenchmarkView,
                            calibration: BenchmarkView | None = None) -> None:
    """DataError unless every training build of ``detector`` is another build than
    ``evaluated`` (and than its calibration build): other folder, other seed, no shared clip."""
    for build in detector.builds:
        check_separate(build, evaluated, "training build")
        if calibration is not None:
            check_separate(build, calibration, "training build", "the calibration build")


def heard_share(detector: TrainedDetector, bench: BenchmarkView) -> dict[str, int]:
    """How many of the atoms ``bench``'s clips use the detector heard in training: the
    enrolled split hears all, the unseen-recordings split none."""
    used = {e.atom_id for c in bench.clips for e in c.events}
    return {"atoms": len(used), "heard_in_training": len(used & detector.atoms)}


@dataclass(frozen=True)
class TrainedMap:
    """A trained detector behind the label map's interface, for ``labels`` (the benchmark's)."""

    detector: TrainedDetector
    labels: tuple[str, ...]
    mode = MODE
    grid = TRAINED_GRID
    choice_grid = TRAINED_CHOICES
    top_k_choices = (0,)
    """nothing to choose: the detector has one output per label"""

    @property
    def reader(self) -> FrameReader:
        if self.detector.config.pooled_dim:
            return partial(detector_inputs, pooled=True)
        return detector_inputs

    @property
    def columns(self) -> np.ndarray:
        index = {lab: j for j, lab in enumerate(self.detector.config.labels)}
        return np.array([index[lab] for lab in self.labels], dtype=np.int64)

    def tracks(self, inputs: ClipInputs) -> np.ndarray:
        """(frames, labels) activity of one clip, every 80 ms."""
        return self.detector.exact.tracks(inputs)[:, self.columns]

    def truncated(self, k: int) -> "TrainedMap":
        return self

    def digest(self) -> str:
        return self.detector.weights_sha256[:16]

    def to_json(self) -> dict[str, Any]:
        card = self.detector.card
        return {"mode": MODE, "model": str(self.detector.path),
                "choice_grid": {"caps": list(self.choice_grid.caps),
                                "off_ratios": list(self.choice_grid.off_ratios)},
                "weights_sha256": self.detector.weights_sha256, "hop_ms": self.grid.hop_ms,
                "training_builds": [{"seed": b.seed, "path": str(b.root), "clips": len(b.keys)}
                                    for b in self.detector.builds],
                "recipe": card.get("recipe", {}), "labels": len(self.labels)}


def trained_map(path: Path | str, labels: Sequence[str]) -> TrainedMap:
    """The map of the model at ``path`` over ``labels``; a one-line error naming the labels the
    detector was not trained on."""
    detector = load_detector(path)
    known = set(detector.config.labels)
    missing = [lab for lab in labels if lab not in known]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise DataError(f"--model-path {echo(str(detector.path))}: the detector was not trained on "
                        f"{len(missing)} label(s) of this benchmark: {shown}; train it on builds "
                        "of the same atom bank")
    return TrainedMap(detector, tuple(labels))
