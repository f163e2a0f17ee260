"""Omni embedders: one Qwen2.5-Omni thinker embeds audio and text into one space.

One loader for every Qwen2.5-Omni-based embedder whose recipe is public (OmniEmbed-v0.1,
LCO-Embedding-Omni, e5-omni); they differ only in the :class:`OmniRecipe` (prompt text around
the query and the audio, whether the chat turn ends with the assistant header, whether
``<|endoftext|>`` is appended, text truncation), all recorded in the identity. Common to all:
the checkpoint's own chat template, one user turn, the last token's final hidden state,
L2-normalised.

Audio: the checkpoint's ``WhisperFeatureExtractor`` at 16 kHz; clips longer than
``max_audio_seconds`` (and than the extractor's own chunk) are cut into deterministic windows
(:class:`WindowPolicy`, last aligned to the end) whose vectors are mean-pooled and normalised
again, as for CLAP.

Interleaved queries (a sound given by example, issue 28): the embedders declare
``interleaved_input`` and embed one user turn of text and audio parts in their order
(:meth:`OmniEmbedder.embed_interleaved`), the query prefix before and the suffix after it.

Bit-identical whatever the batch: each window's audio tower runs alone (the Omni audio encoder
packs all clips of a call into one sequence, so a batch would change its shapes), its features are
scattered into the ``<|AUDIO|>`` positions, and the language model runs on fixed-shape batches of
prompts left-padded to a length class (positions follow the attention mask), a partial batch
filled with copies of one of its own prompts.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Hashable, Sequence, TypeAlias

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, first_line, loading_weights
from reasonaudio.models.precision import resolve_dtype, torch_dtype
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.windowing import WindowPolicy

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

PROMPT_BUCKET = 32
"""prompts are left-padded to a multiple of this many tokens (a fixed shape per length class)"""
AUDIO_TOKEN = "<|AUDIO|>"
EOS = "<|endoftext|>"
INTERLEAVED = "interleaved"
"""the unit kind of one user turn holding text and audio parts in order"""


UnitFeatures: TypeAlias = "np.ndarray | tuple[np.ndarray, ...] | None"
"""a unit's features or feature mask: one window's, each window's of an interleaved turn, or none (text)"""
OmniUnit: TypeAlias = "tuple[str, tuple[int, ...], UnitFeatures, UnitFeatures, int]"
"""(``audio`` | ``text`` | ``interleaved``, token ids, features, feature mask, padded length)"""


@dataclass(frozen=True)
class OmniRecipe:
    """How one omni embedder formats its inputs (from its authors' encoding code)."""

    query_prefix: str = ""
    query_suffix: str = ""
    audio_text: str = ""
    """text after the audio in the clip's user turn"""
    add_generation_prompt: bool = True
    append_eos: bool = False
    """append ``<|endoftext|>`` after the rendered chat (the pooled token)"""
    max_text_tokens: int = 512
    max_audio_seconds: float = 30.0
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


RECIPES: dict[str, OmniRecipe] = {
    "omniembed-v0.1": OmniRecipe(
        query_prefix="Query: ", add_generation_prompt=False, append_eos=True,
        source="texttron/tevatron encode_mm (collator, --append_eos_token, pooling eos, --normalize)"),
    "lco-embedding-omni-3b": OmniRecipe(
        query_suffix="\nSummarize the above text in one word:",
        audio_text="\nSummarize the above audio in one word:", max_text_tokens=300,
        source="MTEB lco_embedding_models.py"),
    "lco-embedding-omni-7b": OmniRecipe(
        query_suffix="\nSummarize the above text in one word:",
        audio_text="\nSummarize the above audio in one word:", max_text_tokens=300,
        source="MTEB lco_embedding_models.py"),
    "e5-omni-3b": OmniRecipe(query_prefix="Query: ", append_eos=True,
                             source="MTEB e5_omni_models.py (model-card wrapper)"),
    "e5-omni-7b": OmniRecipe(query_prefix="Query: ", append_eos=True,
                             source="MTEB e5_omni_models.py (model-card wrapper)"),
}


def chat_template(folder: Path, tokenizer: PreTrainedTokenizerBase) -> str:
    """The checkpoint's chat template: the processor's (``chat_template.jinja`` or
    ``chat_template.json``), else the tokenizer's."""
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    js = folder / "chat_template.json"
    if js.is_file():
        try:
            return str(json.loads(js.read_text(encoding="utf-8"))["chat_template"])
        except (ValueError, KeyError) as exc:
            raise ModelError(f"{js}: no readable chat_template ({first_line(exc)})") from None
    if getattr(tokenizer, "chat_template", None):
        return str(tokenizer.chat_template)
    raise ModelError(f"{folder}: no chat template (chat_template.jinja / chat_template.json / "
                     "tokenizer_config.json)")


class OmniThinker(Embedder):
    """What every user of a Qwen2.5-Omni thinker shares: loading the checkpoint's thinker,
    tokenizer, feature extractor and chat template, prompts as units, windows, and the fixed-shape
    input batch with each window's audio tower run alone (:meth:`batch_inputs`)."""

    keep_lm_head = False

    def __init__(self, record: ModelRecord, recipe: OmniRecipe, *, model_path: str | None = None,
                 device: str = "cpu", batch_size: int | None = None, dtype: str | None = None) -> None:
        self.recipe = recipe
        weights = self._hub_weights(record, model_path, device)
        import torch
        from transformers import (
            AutoTokenizer,
            Qwen2_5OmniThinkerForConditionalGeneration,
            WhisperFeatureExtractor,
        )

        self._torch = torch
        self.dtype = resolve_dtype(dtype, self.device)
        folder = Path(weights.path)
        with loading_weights(f"model {record.name!r}: cannot load a Qwen2.5-Omni thinker, "
                             f"tokenizer and feature extractor from {folder}"):
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
            self.features = WhisperFeatureExtractor.from_pretrained(str(folder))
            thinker = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(
                str(folder), dtype=torch_dtype(self.dtype))
        self.thinker = thinker.eval().to(self.device) if self.keep_lm_head else None
        self.model = thinker.model.eval().to(self.device)  # the thinker without its LM head
        self.template = chat_template(folder, self.tokenizer)
        self.audio_token_id = int(self.model.config.audio_token_id)
        self.pad_id = int(self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None
                          else self.tokenizer.convert_tokens_to_ids(EOS))
        self.sample_rate = int(self.features.sampling_rate)
        window = min(self.recipe.max_audio_seconds, float(self.features.n_samples) / self.sample_rate)
        self.window = WindowPolicy(window, window)
        self.window_frames = int(round(window * self.sample_rate / self.features.hop_length))
        self.dimension = int(self.model.config.text_config.hidden_size)
        self.unit_batch = batch_size or (8 if self.device.startswith("cuda") else 4)
        self.audio_prompt = self._render([{"type": "audio", "audio": "clip"}]
                                         + ([{"type": "text", "text": self.recipe.audio_text}]
                                            if self.recipe.audio_text else []))
        if self.audio_prompt.count(AUDIO_TOKEN) != 1:
            raise ModelError(f"model {record.name!r}: the chat template of {folder} does not render "
                             f"one {AUDIO_TOKEN} for an audio item")
        self._pads: dict[Hashable, Any] = {}

    def _render(self, content: list[dict[str, Any]]) -> str:
        text = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": content}], chat_template=self.template, tokenize=False,
            add_generation_prompt=self.recipe.add_generation_prompt)
        return text + EOS if self.recipe.append_eos else text

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # --- units: ("audio"|"text", token ids, features, feature mask, padded length) ------------
    def _unit(self, kind: str, ids: list[int], feats: UnitFeatures = None,
              mask: UnitFeatures = None) -> OmniUnit:
        length = PROMPT_BUCKET * math.ceil(len(ids) / PROMPT_BUCKET)
        unit = (kind, tuple(ids), feats, mask, length)
        self._pads.setdefault((kind, length), unit)
        return unit

    def _windows(self, wave: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """(log-mel features, feature mask, number of audio tokens) of each window of ``wave``."""
        if wave.size == 0:
            raise ModelError(f"model {self.name!r}: cannot embed an empty waveform")
        out = []
        for w in self.window.cut(wave, self.sample_rate):
            got = self.features([np.asarray(w, dtype=np.float32)], sampling_rate=self.sample_rate,
                                padding="max_length",
                                max_length=self.window_frames * self.features.hop_length,
                                truncation=True, return_attention_mask=True, return_tensors="np")
            mask = np.asarray(got["attention_mask"][0], dtype=np.int64)
            n = int(mask.sum())
            tokens = (((n - 1) // 2 + 1) - 2) // 2 + 1
            out.append((np.asarray(got["input_features"][0], np.float32), mask, tokens))
        return out

    def audio_units(self, wave: np.ndarray) -> list[Any]:
        units = []
        before, after = self.audio_prompt.split(AUDIO_TOKEN)
        for feats, mask, tokens in self._windows(wave):
            ids = self._encode(before) + [self.audio_token_id] * tokens + self._encode(after)
            units.append(self._unit("audio", ids, feats, mask))
        return units

    def _text_ids(self, text: str, prefix: str, suffix: str) -> list[int]:
        ids = self._encode(text)[: self.recipe.max_text_tokens]
        text = self.tokenizer.decode(ids) if len(ids) == self.recipe.max_text_tokens else text
        return self._encode(self._render([{"type": "text", "text": prefix + text + suffix}]))

    def text_units(self, text: str) -> list[Any]:
        """A text document (no query prefix)."""
        return [self._unit("text", self._text_ids(text, "", ""))]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_units([self.query_units(t) for t in texts])

    def query_units(self, text: str) -> list[Any]:
        return [self._unit("text", self._text_ids(text, self.recipe.query_prefix, self.recipe.query_suffix))]

    def unit_key(self, unit: OmniUnit) -> Hashable:
        return unit[0], unit[4]

    def pad_unit(self, key: Hashable) -> OmniUnit:
        return self._pads[key]

    def batch_inputs(self, units: list[Any]) -> tuple[Any, Any, Any]:
        """(input ids, attention mask, input embeddings) of one fixed-shape batch: prompts
        left-padded to the batch's length class, each window's audio features (its audio tower
        run alone) in the ``<|AUDIO|>`` positions. Call under ``torch.inference_mode()``."""
        torch = self._torch
        length = int(units[0][4])
        ids = torch.full((len(units), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(units), length), dtype=torch.long)
        for i, unit in enumerate(units):
            row = unit[1]
            ids[i, length - len(row):] = torch.tensor(row, dtype=torch.long)
            mask[i, length - len(row):] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        embeds = self.model.get_input_embeddings()(ids)
        if units[0][0] in ("audio", INTERLEAVED):
            for i, unit in enumerate(units):
                windows = zip(unit[2], unit[3]) if unit[0] == INTERLEAVED else [(unit[2], unit[3])]
                audio = torch.cat([self.model.get_audio_features(
                    torch.from_numpy(f[None]).to(self.device, embeds.dtype),
                    torch.from_numpy(m[None]).to(self.device)).last_hidden_state for f, m in windows])
                slots = (ids[i] == self.audio_token_id).nonzero().squeeze(1)
                if len(slots) != len(audio):
                    raise ModelError(f"model {self.name!r}: {len(slots)} audio tokens for "
                                     f"{len(audio)} audio features")
                embeds[i, slots] = audio.to(embeds.dtype)
        return ids, mask, embeds

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "dtype": self.dtype}


class OmniEmbedder(OmniThinker):
    interleaved_input = True
    """its chat format takes one user turn of text and audio parts in order
    (:meth:`embed_interleaved`): the ``interleaved`` reading of a sound given by example"""

    def __init__(self, record: ModelRecord, **kwargs: Any) -> None:
        if record.name not in RECIPES:
            raise ModelError(f"model {record.name!r}: no omni recipe (known: {', '.join(RECIPES)})")
        super().__init__(record, RECIPES[record.name], **kwargs)

    def interleaved_units(self, parts: Sequence[str | np.ndarray]) -> list[Any]:
        """One query of text and audio parts in order (a waveform at :attr:`sample_rate`) as
        ONE unit: the query prefix before the first part, the suffix after the last, each
        audio window its own audio item of the user turn (a part longer than the window: its
        windows in order), rendered by the checkpoint's chat template. The text is not cut."""
        content: list[dict[str, Any]] = []
        windows: list[tuple[np.ndarray, np.ndarray, int]] = []
        texts = [p for p in parts if isinstance(p, str)]
        items = list(parts)
        if not items or isinstance(items[0], np.ndarray):
            items.insert(0, "")
        if isinstance(items[-1], np.ndarray):
            items.append("")
        for j, part in enumerate(items):
            if isinstance(part, str):
                text = (self.recipe.query_prefix if j == 0 else "") + part \
                    + (self.recipe.query_suffix if j == len(items) - 1 else "")
                if text:
                    content.append({"type": "text", "text": text})
            else:
                for w in self._windows(np.asarray(part, dtype=np.float32).reshape(-1)):
                    windows.append(w)
                    content.append({"type": "audio", "audio": "example"})
        if not windows:
            raise ModelError(f"model {self.name!r}: an interleaved input needs an audio part "
                             f"(got {len(texts)} text parts only)")
        pieces = self._render(content).split(AUDIO_TOKEN)
        if len(pieces) != len(windows) + 1:
            raise ModelError(f"model {self.name!r}: the chat template renders {len(pieces) - 1} "
                             f"{AUDIO_TOKEN} for {len(windows)} audio items")
        ids = self._encode(pieces[0])
        for (_, _, tokens), after in zip(windows, pieces[1:]):
            ids += [self.audio_token_id] * tokens + self._encode(after)
        return [self._unit(INTERLEAVED, ids, tuple(w[0] for w in windows), tuple(w[1] for w in windows))]

    def embed_interleaved(self, queries: Sequence[Sequence[str | np.ndarray]]) -> np.ndarray:
        """(n, dimension) unit vectors, one per interleaved query (:meth:`interleaved_units`),
        pooled as every other input (the last token's final hidden state, L2-normalised)."""
        return self.embed_units([self.interleaved_units(q) for q in queries])

    def run_units(self, units: list[Any]) -> np.ndarray:
        torch = self._torch
        with torch.inference_mode():
            ids, mask, embeds = self.batch_inputs(units)
            out = self.model(input_ids=ids, inputs_embeds=embeds, attention_mask=mask)
            last = torch.nn.functional.normalize(out.last_hidden_state[:, -1].float(), p=2, dim=-1)
        return last.cpu().numpy()

    def policy(self) -> dict[str, Any]:
        return {**self.window.describe(), "embedding": "omni-last-token", "recipe": self.recipe.to_json(),
                "audio_prompt": self.audio_prompt,
                "query_prompt": self._render([{"type": "text", "text": self.recipe.query_prefix
                                               + "{text}" + self.recipe.query_suffix}]),
                "pooling_tokens": "last token of the final hidden state, L2-normalised",
                "padding": f"left, to a multiple of {PROMPT_BUCKET} tokens"}


def load(record: ModelRecord, **kwargs: Any) -> OmniEmbedder:
    return OmniEmbedder(record, **kwargs)
