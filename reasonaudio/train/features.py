"""Frozen input features: YAMNet frame codes per clip and MiniLM token states per text.

Why frozen and cached: the only offline audio model with real weights is YAMNet, and training on
2 CPU cores is only affordable if both towers' backbones run once. Frame codes are the tagger's
own uint8 outputs (521 AudioSet classes every 0.48 s) in the shared ``yamnet-frames`` cache,
keyed by the sha256 of the rendered audio, read by :mod:`reasonaudio.ingest.frame_rows`: a clip
the demo's ``yamnet-caption`` ingest (or an earlier training run) already tagged costs neither a
render nor a tagger pass. MiniLM token states are stored as float16 (both in training and at
query time, so the two never differ) in a cache of their own, keyed by text hash.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip
from reasonaudio.ingest.embedding_cache import EmbeddingCache, text_hash
from reasonaudio.ingest.frame_rows import frame_rows
from reasonaudio.models.base import Embedder
from reasonaudio.models.batching import FixedBatcher
from reasonaudio.models.registry import load_model
from reasonaudio.progress import Counter

MAX_FRAMES = 64
"""frames the audio encoder sees (64 x 0.48 s = 30.7 s, the longest clip); longer input is cut"""
MAX_TOKENS = 64
"""MiniLM tokens per text (benchmark queries have at most about 40)"""


@lru_cache(maxsize=None)
def frozen_model(name: str) -> Embedder:
    """The frozen backbone ``yamnet`` or ``minilm``, loaded once per process (read-only here)."""
    return load_model(name)


def clip_frames(bench: BenchmarkView, clips: Sequence[Clip], progress: Counter | None = None,
                cache: bool = True) -> dict[str, np.ndarray]:
    """clip id -> (frames, 521) uint8 YAMNet codes for clips of ``bench`` (rendered with its bank)."""
    return frame_rows(bench, clips, frozen_model("yamnet"), cache=cache, progress=progress)[0]


def codes_to_features(codes: np.ndarray, scale: float, zero_point: float) -> np.ndarray:
    """uint8 frame codes -> float32 logits (the tagger's dequantised outputs), cut to MAX_FRAMES."""
    codes = np.asarray(codes)[:MAX_FRAMES]
    return (scale * (codes.astype(np.float32) - zero_point)).astype(np.float32)


# --- text: MiniLM token states ---------------------------------------------------------------

@dataclass(frozen=True)
class TokenSpec:
    bucket: int = 16
    """texts are padded to a multiple of this many tokens (fixed shapes: batch-independent rows)"""
    batch: int = 32
    dtype: str = "float16"


class TokenEncoder:
    """Frozen all-MiniLM-L6-v2 (the registry's ``minilm``): text -> (tokens, 384) states."""

    def __init__(self, spec: TokenSpec = TokenSpec(), cache: bool = True) -> None:
        self.spec = spec
        self.st = frozen_model("minilm")
        self.tokenizer, self.transformer = self.st.tokenizer, self.st.transformer
        self.dimension = int(self.st.dimension)
        self.revision = self.st.revision
        identity = {"model": "minilm", "revision": self.revision, "output": "token_embeddings",
                    "bucket": spec.bucket, "batch": spec.batch, "dtype": spec.dtype,
                    "max_tokens": MAX_TOKENS}
        self.identity = identity
        self.cache = EmbeddingCache("minilm-tokens", identity, enabled=cache)

    def _length(self, text: str) -> int:
        return len(self.tokenizer(text, truncation=True, max_length=MAX_TOKENS)["input_ids"])

    def _run(self, units: list[tuple[str, int, int]]) -> np.ndarray:
        import torch

        length = units[0][1]
        enc = self.tokenizer([u[0] for u in units], padding="max_length", truncation=True,
                             max_length=length, return_tensors="pt")
        with torch.inference_mode():
            out = self.transformer(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                   token_type_ids=enc.get("token_type_ids")).last_hidden_state
        return out.float().numpy().astype(self.spec.dtype)

    def encode(self, texts: Sequence[str], progress: Counter | None = None) -> dict[str, np.ndarray]:
        """text -> (n_tokens, 384) float16 states (CLS and SEP included), each text once."""
        unique = list(dict.fromkeys(texts))
        out: dict[str, np.ndarray] = {}
        todo: list[str] = []
        for t in unique:
            got = self.cache.get(text_hash(t))
            if got is not None:
                out[t] = got
            else:
                todo.append(t)
        total = len(unique)
        if progress is not None:
            progress(len(out), total)
        lengths = {t: self._length(t) for t in todo}
        pad_len = lambda n: min(MAX_TOKENS, self.spec.bucket * math.ceil(n / self.spec.bucket))  # noqa: E731
        batcher = FixedBatcher(self._run, self.spec.batch, lambda key: ("", key, 0),
                               lambda unit: unit[1])
        done = 0
        for t in todo:
            for key, rows in batcher.add(t, [(t, pad_len(lengths[t]), lengths[t])]):
                states = rows[0][: lengths[key]]
                out[key] = states
                self.cache.put(text_hash(key), states)
                done += 1
                if progress is not None and done % 64 == 0:
                    progress(len(out), total)
        for key, rows in batcher.flush():
            states = rows[0][: lengths[key]]
            out[key] = states
            self.cache.put(text_hash(key), states)
        self.cache.commit()
        if progress is not None:
            progress(len(out), total)
        return out

    def close(self) -> None:
        self.cache.close()
