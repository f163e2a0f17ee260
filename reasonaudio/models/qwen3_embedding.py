"""Qwen3-Embedding (0.6B / 4B / 8B) through transformers ``AutoModel``: the second stage of
two-stage pipelines, beside MiniLM and BGE-M3.

The model card's recipe, made explicit so the collection records it: queries are wrapped as
``Instruct: {task}\\nQuery:{query}`` (documents, here captions, are not), the tokenizer's output
ends with ``<|endoftext|>`` (appended when the tokenizer does not add it itself), the vector is
the last real token's final hidden state, L2-normalised. Texts are right-padded to a length class
(a multiple of :data:`TEXT_BUCKET` tokens) and run in fixed-size batches, so a text's vector never
depends on its batch neighbours; with right padding and a causal model the padding cannot reach
the last real token.
"""

from __future__ import annotations

import math
from typing import Any, Hashable, Sequence, TypeAlias

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, loading_weights
from reasonaudio.models.precision import resolve_dtype, torch_dtype
from reasonaudio.models.record import ModelRecord

TEXT_BUCKET = 16
"""texts are padded to a multiple of this many tokens (a fixed shape per length class)"""
TASK = "Given a description of sounds, retrieve the audio caption that matches it"
"""the instruction for queries (the card: one short task sentence per retrieval task)"""
QUERY_TEMPLATE = "Instruct: {task}\nQuery:{text}"
MAX_TOKENS = 8192
EOS = "<|endoftext|>"


Qwen3Unit: TypeAlias = "tuple[tuple[int, ...], int]"
"""a text's token ids and its padded length"""


class Qwen3Embedder(Embedder):
    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None, dtype: str | None = None) -> None:
        weights = self._hub_weights(record, model_path, device)
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self.dtype = resolve_dtype(dtype, self.device)
        with loading_weights(f"model {record.name!r}: cannot load a Qwen3 embedding checkpoint "
                             f"from {weights.path}"):
            self.tokenizer = AutoTokenizer.from_pretrained(str(weights.path))
            self.model = AutoModel.from_pretrained(str(weights.path), dtype=torch_dtype(self.dtype)
                                                   ).eval().to(self.device)
        eos = self.tokenizer.convert_tokens_to_ids(EOS)
        if not isinstance(eos, int) or eos == self.tokenizer.unk_token_id:
            raise ModelError(f"model {record.name!r}: the tokenizer in {weights.path} has no {EOS} token")
        self.eos_id = int(eos)
        self.pad_id = int(self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos)
        self.dimension = int(self.model.config.hidden_size)
        self.max_tokens = int(min(MAX_TOKENS, self.model.config.max_position_embeddings))
        self.unit_batch = batch_size or (32 if self.device.startswith("cuda") else 8)
        self.task = TASK

    # --- units: (token ids, padded length) ---------------------------------------------------
    def _ids(self, text: str) -> tuple[int, ...]:
        ids = list(self.tokenizer(text, add_special_tokens=True, truncation=True,
                                  max_length=self.max_tokens - 1)["input_ids"])
        if not ids or ids[-1] != self.eos_id:
            ids.append(self.eos_id)
        return tuple(ids)

    def _unit(self, text: str) -> tuple[tuple[int, ...], int]:
        ids = self._ids(text)
        return ids, min(self.max_tokens, TEXT_BUCKET * math.ceil(len(ids) / TEXT_BUCKET))

    def query_text(self, text: str) -> str:
        return QUERY_TEMPLATE.format(task=self.task, text=text)

    def text_units(self, text: str) -> list[Any]:
        """A document (a caption): no instruction."""
        return [self._unit(text)]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_units([self.query_units(t) for t in texts])

    def query_units(self, text: str) -> list[Any]:
        return [self._unit(self.query_text(text))]

    def unit_key(self, unit: Qwen3Unit) -> Hashable:
        return unit[1]

    def pad_unit(self, key: Hashable) -> Qwen3Unit:
        return (self.eos_id,), key

    def run_units(self, units: list[Any]) -> np.ndarray:
        torch = self._torch
        length = int(units[0][1])
        ids = torch.full((len(units), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(units), length), dtype=torch.long)
        for i, (row, _) in enumerate(units):
            ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
            mask[i, :len(row)] = 1
        with torch.inference_mode():
            hidden = self.model(input_ids=ids.to(self.device),
                                attention_mask=mask.to(self.device)).last_hidden_state
            last = mask.sum(dim=1) - 1
            pooled = hidden[torch.arange(len(units), device=hidden.device), last.to(hidden.device)]
            pooled = torch.nn.functional.normalize(pooled.float(), p=2, dim=-1)
        return pooled.cpu().numpy()

    def policy(self) -> dict[str, Any]:
        return {"kind": "qwen3-embedding", "pooling": "last token", "normalize": True,
                "query_template": QUERY_TEMPLATE, "task": self.task, "documents": "no instruction",
                "append_eos": EOS, "padding": f"right, to a multiple of {TEXT_BUCKET} tokens"}

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "dtype": self.dtype}


def load(record: ModelRecord, **kwargs: Any) -> Qwen3Embedder:
    return Qwen3Embedder(record, **kwargs)
