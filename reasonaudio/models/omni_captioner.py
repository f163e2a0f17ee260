"""Qwen2.5-Omni's thinker as a captioner for two-stage pipelines (text out, no speech).

The same fixed prompt, greedy decoding and window/join policy as the Qwen2-Audio captioner
(:mod:`reasonaudio.models.audio_llm`), so the two are comparable; the inputs are built like the
omni embedders' (:class:`reasonaudio.models.omni.OmniThinker`: the checkpoint's chat template,
each window's audio tower run alone, fixed-shape left-padded batches), then
``generate(input_ids, inputs_embeds, ...)`` decodes. A test checks that this gives the tokens the
thinker's own audio path (``input_features``) gives for the same clip.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reasonaudio.models.audio_llm import JOIN, MAX_NEW_TOKENS, PROMPT, decode_caption, generated_rows
from reasonaudio.models.omni import PROMPT_BUCKET, OmniRecipe, OmniThinker
from reasonaudio.models.record import ModelRecord

CAPTION_RECIPE = OmniRecipe(audio_text=PROMPT, add_generation_prompt=True,
                            source="this testbed (the Qwen2-Audio captioning prompt)")


class OmniCaptioner(OmniThinker):
    keep_lm_head = True

    def __init__(self, record: ModelRecord, **kwargs: Any) -> None:
        super().__init__(record, CAPTION_RECIPE, **kwargs)
        config = self.thinker.generation_config
        self.max_new_tokens = int(config.max_new_tokens or MAX_NEW_TOKENS)
        self.dimension = self.max_new_tokens
        eos = config.eos_token_id
        self.eos_ids = {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]) if e is not None}
        for token in ("<|im_end|>", "<|endoftext|>"):
            tid = self.tokenizer.convert_tokens_to_ids(token)
            if isinstance(tid, int) and tid != self.tokenizer.unk_token_id:
                self.eos_ids.add(tid)

    def run_units(self, units: list[Any]) -> np.ndarray:
        torch = self._torch
        length = int(units[0][4])
        with torch.inference_mode():
            ids, mask, embeds = self.batch_inputs(units)
            out = self.thinker.generate(input_ids=ids, inputs_embeds=embeds, attention_mask=mask,
                                        do_sample=False, num_beams=1, max_new_tokens=self.max_new_tokens,
                                        pad_token_id=self.pad_id, temperature=None, top_p=None, top_k=None)
        return generated_rows(out[:, length:].cpu().numpy(), self.max_new_tokens, self.eos_ids)

    def caption(self, rows: np.ndarray) -> str:
        return decode_caption(self.tokenizer, rows)

    def policy(self) -> dict[str, Any]:
        return {"kind": "audio-llm-caption", "chat": self.audio_prompt, "prompt": PROMPT,
                "decoding": "greedy", "max_new_tokens": self.max_new_tokens,
                "padding": f"left, to a multiple of {PROMPT_BUCKET} tokens",
                "audio_tower": "each window alone", "windows": {**self.window.describe(), "join": JOIN}}


def load(record: ModelRecord, **kwargs: Any) -> OmniCaptioner:
    return OmniCaptioner(record, **kwargs)
