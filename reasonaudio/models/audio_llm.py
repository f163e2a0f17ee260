"""Audio-language captioners (Qwen2-Audio-7B-Instruct) for two-stage pipelines: audio -> caption.

The recipe, fixed and recorded in the collection's identity: the processor's chat template with
its default system turn, one user turn holding the clip and :data:`PROMPT`, greedy decoding
(``do_sample=False``) for at most :data:`MAX_NEW_TOKENS` new tokens (unless the checkpoint's own
``generation_config.json`` sets ``max_new_tokens``; the value used is recorded). Qwen2-Audio hears at most
30 s (its processor pads/truncates the log-mel input to ``chunk_length``); longer clips are cut
into deterministic windows of that length (:class:`WindowPolicy`, the last aligned to the clip's
end), each window is captioned, and the captions are joined with :data:`JOIN` in time order.

Batched generation with bit-identical captions per clip: prompts are left-padded to a length
class (a multiple of :data:`PROMPT_BUCKET` tokens) and every ``generate`` call gets exactly
``unit_batch`` prompts of one class (:mod:`reasonaudio.models.batching`; a partial batch is filled
with copies of one of its own prompts). A prompt's tokens then never depend on what it was
batched with: the input shape is fixed, and a finished row only emits padding while the others
go on. The rows this returns are the generated token ids (``-1`` after the end), cached by audio
hash and captioner identity by the two-stage ingest.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Hashable, TypeAlias

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, loading_weights
from reasonaudio.models.precision import resolve_dtype, torch_dtype
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.windowing import WindowPolicy

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

PROMPT = ("Describe the sounds in this audio clip in the order they occur. Name each sound, "
          "say roughly how many seconds it lasts, and say which sounds happen at the same time.")
MAX_NEW_TOKENS = 96
PROMPT_BUCKET = 32
"""prompts are left-padded to a multiple of this many tokens (a fixed shape per length class)"""
END = -1
"""pads a window's row of generated token ids after its end token"""
JOIN = "; then "
"""between the captions of consecutive windows of a clip longer than the model hears"""


PromptUnit: TypeAlias = "tuple[tuple[int, ...], np.ndarray, np.ndarray, int]"
"""one window's prompt: token ids, features, feature mask, padded length"""


class Qwen2AudioCaptioner(Embedder):
    """``Qwen2AudioForConditionalGeneration`` + its processor, as a captioning model whose rows
    are generated token ids (``caption`` turns an item's rows into text)."""

    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None, dtype: str | None = None) -> None:
        weights = self._hub_weights(record, model_path, device)
        import torch
        from transformers import AutoProcessor, Qwen2AudioForConditionalGeneration

        self._torch = torch
        self.dtype = resolve_dtype(dtype, self.device)
        with loading_weights(f"model {record.name!r}: cannot load a Qwen2-Audio checkpoint and "
                             f"processor from {weights.path}"):
            self.processor = AutoProcessor.from_pretrained(str(weights.path))
            self.model = Qwen2AudioForConditionalGeneration.from_pretrained(
                str(weights.path), dtype=torch_dtype(self.dtype)).eval().to(self.device)
        tokenizer = self.processor.tokenizer
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                          else tokenizer.eos_token_id)
        eos = self.model.generation_config.eos_token_id
        self.eos_ids = {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]) if e is not None}
        if tokenizer.eos_token_id is not None:
            self.eos_ids.add(int(tokenizer.eos_token_id))
        features = self.processor.feature_extractor
        self.sample_rate = int(features.sampling_rate)
        self.max_seconds = float(features.n_samples) / self.sample_rate
        self.window = WindowPolicy(self.max_seconds, self.max_seconds)
        self.max_new_tokens = int(self.model.generation_config.max_new_tokens or MAX_NEW_TOKENS)
        self.dimension = self.max_new_tokens
        self.unit_batch = batch_size or (16 if self.device.startswith("cuda") else 4)
        conversation = [{"role": "user", "content": [{"type": "audio", "audio": "clip"},
                                                     {"type": "text", "text": PROMPT}]}]
        self.chat = self.processor.apply_chat_template(conversation, add_generation_prompt=True,
                                                       tokenize=False)
        self._pads: dict[Hashable, Any] = {}

    # --- units: one prompt per window ------------------------------------------------------
    def audio_units(self, wave: np.ndarray) -> list[Any]:
        if wave.size == 0:
            raise ModelError(f"model {self.name!r}: cannot caption an empty waveform")
        return [self._prompt(w) for w in self.window.cut(wave, self.sample_rate)]

    def _prompt(self, window: np.ndarray) -> tuple[tuple[int, ...], np.ndarray, np.ndarray, int]:
        out = self.processor(text=[self.chat], audio=[np.asarray(window, dtype=np.float32)],
                             sampling_rate=self.sample_rate, return_tensors="np")
        ids = tuple(int(i) for i in out["input_ids"][0])
        length = PROMPT_BUCKET * math.ceil(len(ids) / PROMPT_BUCKET)
        unit = (ids, np.asarray(out["input_features"][0], dtype=np.float32),
                np.asarray(out["feature_attention_mask"][0], dtype=np.int64), length)
        self._pads.setdefault(length, unit)
        return unit

    def unit_key(self, unit: PromptUnit) -> Hashable:
        return unit[3]

    def pad_unit(self, key: Hashable) -> PromptUnit:
        """A copy of a real prompt of this length class (its output is dropped)."""
        return self._pads[key]

    def run_units(self, units: list[Any]) -> np.ndarray:
        torch = self._torch
        length = int(units[0][3])
        ids = torch.full((len(units), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(units), length), dtype=torch.long)
        for i, (row, _, _, _) in enumerate(units):
            ids[i, length - len(row):] = torch.tensor(row, dtype=torch.long)
            mask[i, length - len(row):] = 1
        feats = torch.from_numpy(np.stack([u[1] for u in units])).to(self.device, torch_dtype(self.dtype))
        feat_mask = torch.from_numpy(np.stack([u[2] for u in units])).to(self.device)
        with torch.inference_mode():
            out = self.model.generate(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                      input_features=feats, feature_attention_mask=feat_mask,
                                      do_sample=False, num_beams=1, max_new_tokens=self.max_new_tokens,
                                      pad_token_id=self.pad_id, temperature=None, top_p=None, top_k=None)
        return generated_rows(out[:, length:].cpu().numpy(), self.max_new_tokens, self.eos_ids)

    def caption(self, rows: np.ndarray) -> str:
        """An item's rows (one per window, in time order) -> its caption."""
        return decode_caption(self.processor.tokenizer, rows)

    def policy(self) -> dict[str, Any]:
        return {"kind": "audio-llm-caption", "chat": self.chat, "prompt": PROMPT,
                "decoding": "greedy", "max_new_tokens": self.max_new_tokens,
                "padding": f"left, to a multiple of {PROMPT_BUCKET} tokens",
                "windows": {**self.window.describe(), "join": JOIN}}

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "dtype": self.dtype}


def load_qwen2_audio(record: ModelRecord, **kwargs: Any) -> Qwen2AudioCaptioner:
    return Qwen2AudioCaptioner(record, **kwargs)


def generated_rows(new_tokens: np.ndarray, max_new_tokens: int, eos_ids: set[int] | frozenset[int]
                   ) -> np.ndarray:
    """Generated token ids (batch, steps) -> fixed-width rows cut at the first end token and
    padded with :data:`END`: what the caption cache stores per window."""
    rows = np.full((len(new_tokens), max_new_tokens), END, dtype=np.int64)
    for i, seq in enumerate(new_tokens):
        for j, tok in enumerate(seq[:max_new_tokens]):
            if int(tok) in eos_ids:
                break
            rows[i, j] = tok
    return rows


def decode_caption(tokenizer: PreTrainedTokenizerBase, rows: np.ndarray) -> str:
    """An item's rows (one per window, in time order) -> one caption, windows joined by
    :data:`JOIN`, whitespace normalised."""
    texts = []
    for row in np.atleast_2d(rows):
        text = tokenizer.decode([int(t) for t in row if t != END], skip_special_tokens=True,
                                clean_up_tokenization_spaces=False)
        texts.append(" ".join(text.split()))
    return JOIN.join(t for t in texts if t) or "(no caption)"
