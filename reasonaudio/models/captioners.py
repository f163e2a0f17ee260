"""Captioners for two-stage retrieval: each clip becomes one line of text, in temporal order.

- ``oracle-caption`` writes the ground-truth metadata: events in onset order, their labels as they
  are, how long each lasts, ``then`` between events that follow each other and ``while`` between
  events that sound together ("dog barking for 2 seconds, then siren for 5 seconds while rain for
  12 seconds"). It is the upper bound of any captioner: it isolates whether a text embedder can
  handle the query's logic when the description is perfect.
- ``yamnet-caption`` writes what the YAMNet tagger detects over time, in the same grammar, with
  AudioSet class names (lower-cased).
- audio-language models from the registry (records of kind ``captioner``, e.g.
  ``qwen2-audio-7b-instruct``) write free text from the audio with a fixed prompt and greedy
  decoding (:class:`ModelCaptioner`, :mod:`reasonaudio.models.audio_llm`).

All are deterministic; the caption grammar and thresholds are part of the captioner's identity
(recorded with the collection).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import ModelError
from reasonaudio.models import yamnet
from reasonaudio.models.base import Embedder
from reasonaudio.models.registry import RECORDS, load_model

CAPTION_GRAMMAR = "v1: '<label> for N seconds', ', then ' between blocks, ' while ' inside a block"


@dataclass(frozen=True)
class Segment:
    label: str
    onset: float
    offset: float

    @property
    def seconds(self) -> float:
        return self.offset - self.onset


def _seconds_text(seconds: float) -> str:
    n = max(1, int(math.floor(seconds + 0.5)))
    return f"{n} second" if n == 1 else f"{n} seconds"


def describe_segments(segments: Sequence[Segment], durations: bool = True) -> str:
    """Segments in onset order; segments that intersect form a block joined by ``while``,
    blocks are joined by ``, then``."""
    ordered = sorted(segments, key=lambda s: (s.onset, s.offset, s.label))
    if not ordered:
        return "silence"
    blocks: list[list[Segment]] = []
    block_end = -math.inf
    for seg in ordered:
        if blocks and seg.onset < block_end:
            blocks[-1].append(seg)
            block_end = max(block_end, seg.offset)
        else:
            blocks.append([seg])
            block_end = seg.offset

    def one(seg: Segment) -> str:
        return f"{seg.label} for {_seconds_text(seg.seconds)}" if durations else seg.label

    return ", then ".join(" while ".join(one(s) for s in block) for block in blocks)


def oracle_caption(clip: Clip) -> str:
    """The clip's ground truth as one sentence (labels exactly as in the metadata)."""
    return describe_segments([Segment(e.label, e.onset, e.offset) for e in clip.events])


@dataclass(frozen=True)
class YamnetCaptionParams:
    threshold: float = 0.3
    """a class is heard in a frame when its score reaches this"""
    top_k: int = 2
    """at most this many classes per frame"""
    max_gap_frames: int = 1
    """runs of one class separated by at most this many frames are merged"""
    max_segments: int = 8
    """the strongest segments kept (by peak score), so captions stay short"""
    ignore: tuple[str, ...] = ("Silence",)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def frames_to_segments(frames: np.ndarray, class_names: Sequence[str], hop: float, patch: float,
                       params: YamnetCaptionParams = YamnetCaptionParams()) -> list[Segment]:
    """Per-frame detections (top-k over the threshold) merged into timed segments per class.

    Frame ``i`` stands for the middle ``hop`` seconds of its patch, ``[i*hop + lead, (i+1)*hop +
    lead)`` with ``lead = (patch - hop) / 2``: consecutive frames tile time, so two classes only
    read as "while" when they are detected in the same frames."""
    if frames.size == 0:
        return []
    lead = (patch - hop) / 2
    ignore = {i for i, n in enumerate(class_names) if n in params.ignore}
    order = np.argsort(-frames, axis=1, kind="stable")[:, : params.top_k + len(ignore)]
    active: dict[int, list[int]] = {}
    for t, row in enumerate(order):
        kept = [c for c in row if c not in ignore][: params.top_k]
        for c in kept:
            if frames[t, c] >= params.threshold:
                active.setdefault(int(c), []).append(t)
    found: list[tuple[float, Segment]] = []
    for c, ts in active.items():
        start = prev = ts[0]
        for t in ts[1:] + [None]:  # type: ignore[list-item]
            if t is not None and t - prev <= params.max_gap_frames + 1:
                prev = t
                continue
            peak = float(frames[start:prev + 1, c].max())
            found.append((peak, Segment(class_names[c].lower(), round(start * hop + lead, 3),
                                        round((prev + 1) * hop + lead, 3))))
            if t is not None:
                start = prev = t
    found.sort(key=lambda ps: (-ps[0], ps[1].onset, ps[1].label))
    return [s for _, s in found[: params.max_segments]]


class Captioner:
    """Turns clips into caption texts; ``identity()`` keys caches and is stored with collections."""

    name = "captioner"
    needs_audio = False
    registry_model: str | None = None
    """the registry model it runs (None: it reads metadata only)"""
    rows_label = "frames"
    """names the cache of :attr:`audio_model`'s rows (YAMNet's frames are shared with its ingest)"""

    @property
    def audio_model(self) -> Embedder | None:
        """The model run over the audio (units, batches, rows) when :attr:`needs_audio`."""
        return None

    def identity(self) -> dict[str, Any]:
        return {"captioner": self.name, "grammar": CAPTION_GRAMMAR}


class OracleCaptioner(Captioner):
    name = "oracle-caption"

    def caption(self, clip: Clip) -> str:
        return oracle_caption(clip)


class YamnetCaptioner(Captioner):
    """Captions from YAMNet frame scores; the audio side is run by the ingest (batched, cached)."""

    name = "yamnet-caption"
    needs_audio = True
    registry_model = "yamnet"

    def __init__(self, params: YamnetCaptionParams = YamnetCaptionParams()) -> None:
        self.params = params
        self.tagger = load_model("yamnet")

    @property
    def audio_model(self) -> Embedder:
        return self.tagger

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "tagger": self.tagger.identity(), "params": self.params.to_json()}

    def caption_from_rows(self, rows: np.ndarray) -> str:
        frames = self.tagger.frames(rows)
        segments = frames_to_segments(frames, self.tagger.tagger.class_names, yamnet.HOP_SECONDS,
                                      yamnet.PATCH_SECONDS, self.params)
        return describe_segments(segments)


class ModelCaptioner(Captioner):
    """A registry captioner (an audio-language model): its rows are generated token ids, cached
    by audio hash and the model's identity (prompt, decoding, weights, dtype)."""

    needs_audio = True
    rows_label = "captions"

    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.name = model.name
        self.registry_model = model.name

    @property
    def audio_model(self) -> Embedder:
        return self.model

    def identity(self) -> dict[str, Any]:
        return {"captioner": self.name, "model": self.model.identity()}

    def caption_from_rows(self, rows: np.ndarray) -> str:
        return self.model.caption(rows)


CAPTIONERS = {"oracle-caption": OracleCaptioner, "yamnet-caption": YamnetCaptioner}


def model_captioners() -> tuple[str, ...]:
    """Registry models usable as CAPTIONER in ``two-stage:CAPTIONER+EMBEDDER``."""
    return tuple(r.name for r in RECORDS if r.kind == "captioner")


def captioner_names() -> tuple[str, ...]:
    return tuple(CAPTIONERS) + model_captioners()


def get_captioner(name: str, *, model_path: str | None = None, device: str = "cpu",
                  batch_size: int | None = None, dtype: str | None = None) -> Captioner:
    """The captioner ``name``; ``model_path`` / ``device`` / ``batch_size`` / ``dtype`` apply to
    audio-language models only (``--captioner-path`` etc.)."""
    if name in CAPTIONERS:
        if model_path is not None:
            raise ModelError(f"captioner {name!r} takes no --captioner-path")
        return CAPTIONERS[name]()
    if name in model_captioners():
        try:
            model = load_model(name, model_path=model_path, device=device, batch_size=batch_size,
                               dtype=dtype)
        except ModelError as exc:  # in a two-stage ingest --model-path is the embedder's
            raise ModelError(str(exc).replace("--model-path", "--captioner-path")) from None
        return ModelCaptioner(model)
    raise ModelError(f"unknown captioner {name!r}; known: {', '.join(captioner_names())}")
