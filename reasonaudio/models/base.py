"""What a loaded model offers ingest and retrievers: audio and/or text in, unit vectors out.

One small interface for CLAP, text embedders and the tagger, so ingest and search never branch on
the model. ``identity()`` is what makes two sets of vectors comparable (model, exact weights,
window policy): it keys the embedding cache and is stored with the collection.
"""

from __future__ import annotations

import abc
import contextlib
import pickle
from typing import Any, Hashable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.batching import FixedBatcher, run_all
from reasonaudio.models.hub import Weights, resolve_weights
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.windowing import l2_normalise
from reasonaudio.runtime import set_torch_threads as _set_torch_threads


@runtime_checkable
class EmbedderProtocol(Protocol):
    """What ranking needs of a model: texts (queries) in, unit vectors out, and the identity that
    makes two sets of vectors comparable. :class:`Embedder` implements it (and the audio side);
    a wrapper or a model from elsewhere need only offer these."""

    dimension: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dimension) float32 unit vectors of search queries."""
        ...

    def embed_text(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dimension) float32 unit vectors of texts (captions, labels)."""
        ...

    def identity(self) -> dict[str, Any]:
        """What makes two sets of vectors comparable (model, weights, window policy)."""
        ...


class Embedder(abc.ABC):
    """A loaded model (implements :class:`EmbedderProtocol`): its units, batches and pooling."""

    record: ModelRecord
    revision: str
    """the exact weights (hub commit or content hash)"""
    dimension: int
    sample_rate: int | None = None
    device: str = "cpu"

    @property
    def name(self) -> str:
        return self.record.name

    def _hub_weights(self, record: ModelRecord, model_path: str | None, device: str) -> Weights:
        """The start every hub-backed embedder shares: record, checked device, the exact weights
        (``--model-path`` or the local hub cache; a one-line error otherwise), torch threads."""
        self.record = record
        self.device = torch_device(device)
        weights = resolve_weights(record.name, record.hub_id, record.revision, model_path)
        self.revision = weights.revision
        set_torch_threads()
        return weights

    unit_batch: int = 8
    """units per model call; every call gets exactly this many (see models/batching.py)"""

    # --- units: what one model call consumes ------------------------------------------------
    def audio_units(self, wave: np.ndarray) -> list[Any]:
        """A mono waveform at :attr:`sample_rate` cut into model inputs (windows, patches)."""
        raise ModelError(f"model {self.name!r} has no audio tower (towers: {', '.join(self.record.towers)})")

    def text_units(self, text: str) -> list[Any]:
        raise ModelError(f"model {self.name!r} has no text tower; for text search over its "
                         "output use a two-stage pipeline, e.g. two-stage:yamnet-caption+minilm")

    def unit_key(self, unit: Any) -> Hashable:
        """Units with equal keys share a batch shape (e.g. texts padded to one length)."""
        return None

    def pad_unit(self, key: Hashable) -> Any:
        """A filler unit of shape ``key`` for the last, partial batch."""
        raise NotImplementedError

    def run_units(self, units: list[Any]) -> np.ndarray:
        """One model call: a row per unit (all units share one key)."""
        raise NotImplementedError

    def pool(self, rows: np.ndarray) -> np.ndarray:
        """An item's rows (its units' outputs, in order) -> its unit vector: the mean of the
        L2-normalised rows, normalised again (one row: just normalised)."""
        return l2_normalise(l2_normalise(rows).mean(axis=0))

    def batcher(self) -> FixedBatcher:
        return FixedBatcher(self.run_units, self.unit_batch, self.pad_unit, self.unit_key)

    # --- whole items ------------------------------------------------------------------------
    def unit_rows(self, unit_lists: Sequence[Sequence[Any]]) -> list[np.ndarray]:
        """Each item's rows (its units' outputs, in order), through fixed-shape model batches."""
        return run_all(self.run_units, self.unit_batch, self.pad_unit, unit_lists, self.unit_key)

    def embed_units(self, unit_lists: Sequence[Sequence[Any]]) -> np.ndarray:
        if not unit_lists:
            return np.zeros((0, self.dimension), np.float32)
        return np.stack([self.pool(r) for r in self.unit_rows(unit_lists)]).astype(np.float32)

    def embed_audio(self, waves: Sequence[np.ndarray]) -> np.ndarray:
        """(n, dimension) float32 unit vectors for mono waveforms at :attr:`sample_rate`;
        each row independent of the others in the call."""
        return self.embed_units([self.audio_units(np.asarray(w, dtype=np.float32).reshape(-1))
                                 for w in waves])

    def embed_text(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dimension) float32 unit vectors."""
        return self.embed_units([self.text_units(t) for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dimension) float32 unit vectors of search queries: embedded exactly as texts,
        unless the model has a query form (an instruction prefix: Qwen3-Embedding, omni)."""
        return self.embed_text(texts)

    def policy(self) -> dict[str, Any]:
        """How audio becomes one vector (windows, pooling); empty for text-only models."""
        return {}

    def identity(self) -> dict[str, Any]:
        return {"model": self.name, "hub_id": self.record.hub_id, "revision": self.revision,
                "dimension": self.dimension, "distance": self.record.distance,
                "sample_rate": self.sample_rate, "policy": self.policy()}


def first_line(exc: BaseException) -> str:
    """An exception's first line, for one-line ModelErrors."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def weight_errors() -> tuple[type[BaseException], ...]:
    """What a checkpoint that is corrupt, truncated or of another architecture raises on load:
    a safetensors header or body cut short (``SafetensorError``), a pickle that is not a
    checkpoint, a state dict of other shapes (torch's ``RuntimeError``), a config missing keys."""
    errors: list[type[BaseException]] = [OSError, ValueError, KeyError, TypeError, EOFError,
                                         RuntimeError, pickle.UnpicklingError]
    try:
        from safetensors import SafetensorError
        errors.append(SafetensorError)
    except ImportError:  # pragma: no cover - safetensors comes with transformers
        pass
    return tuple(errors)


@contextlib.contextmanager
def loading_weights(what: str) -> Iterator[None]:
    """The one weight check every loader shares: a bad checkpoint loaded in the block (see
    :func:`weight_errors`) ends as one ModelError line, ``WHAT (first line of the error)``."""
    try:
        yield
    except Exception as exc:
        if isinstance(exc, ModelError) or not isinstance(exc, weight_errors()):
            raise
        raise ModelError(f"{what} ({first_line(exc)})") from None


def torch_device(device: str) -> str:
    """Validate ``--device``: ``cpu`` or ``cuda`` (only where torch sees a GPU)."""
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise ModelError(f"--device must be cpu or cuda, got {device!r}")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ModelError(f"--device {device}: torch sees no CUDA GPU here (use --device cpu)")
    return device


def quiet_hub_progress() -> None:
    """No per-file "Loading weights" bars from transformers / huggingface_hub on a CLI run."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass


def set_torch_threads() -> None:
    """Quiet hub progress bars and apply the project's torch thread policy (:mod:`reasonaudio.runtime`)."""
    quiet_hub_progress()
    _set_torch_threads()
