"""Tiny random-weight twins of the Qwen-family models, built from local configs, for tests offline.

No Qwen weights or tokenizers can be downloaded here, so the real loaders (``from_pretrained``,
chat templates, processors, pooling, generation) are exercised with these: a byte-level BPE
tokenizer trained in-process on a few sentences (with the Qwen special tokens the models and
processors look up by name), a ``Qwen3Model`` of ~50 k parameters, and a ``Qwen2AudioForConditionalGeneration``
whose audio encoder takes 5 s of audio (``WhisperFeatureExtractor(chunk_length=1)``). Each is
written with ``save_pretrained`` into one folder that ``--model-path`` accepts. Their outputs mean
nothing; the pipeline around them is what gets tested.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonaudio.fileio import atomic_dir
from reasonaudio.models.tiny import TINY_MODEL

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase, PreTrainedTokenizerFast

QWEN_SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>",
                "<|audio_eos|>")
_CORPUS = (
    "dog barking for 2 seconds, then siren for 5 seconds while rain for 12 seconds",
    "Instruct: Given a query, retrieve audio clips whose captions match it",
    "Query: a bird sings after the car horn, no speech. Describe the sounds in this audio clip.",
    "You are a helpful assistant. Audio 1: system user assistant",
    "keyboard typing, door knock, glass breaking, engine idling, footsteps, thunder, applause",
)
TINY_AUDIO_CHUNK_SECONDS = 5
"""the tiny Qwen2-Audio twin hears at most this much audio (the real model: 30 s)"""
TINY_MAX_NEW_TOKENS = 24
"""the twin's generation_config caps captions at this many tokens (keeps tests fast)"""


def tiny_qwen_tokenizer(vocab_size: int = 320) -> PreTrainedTokenizerFast:
    """A ``PreTrainedTokenizerFast`` with Qwen's special tokens (pad ``<|endoftext|>``, eos
    ``<|im_end|>``) trained deterministically on a fixed corpus."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(QWEN_SPECIAL),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(list(_CORPUS), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        extra_special_tokens={"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>",
                              "audio_eos_token": "<|audio_eos|>"})


def build_tiny_qwen3_embedding(out: Path | str, seed: int = 0, overwrite: bool = False) -> Path:
    """A tiny ``Qwen3Model`` + tokenizer folder, loadable as Qwen3-Embedding by ``--model-path``."""
    import torch
    from transformers import Qwen3Config, Qwen3Model

    tokenizer = tiny_qwen_tokenizer()
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=8, max_position_embeddings=256,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed)
    model = Qwen3Model(config).eval()
    return _save(out, overwrite, model, tokenizer)


def _generation_defaults(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """The twins' generation settings: the tokenizer's pad/eos, a short answer."""
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.max_new_tokens = TINY_MAX_NEW_TOKENS


def _save(out: Path | str, overwrite: bool, *parts: Any, files: dict[str, str] | None = None) -> Path:
    """Every part's ``save_pretrained`` (and any extra text files) into ``out``, atomically."""
    out = Path(out)
    with atomic_dir(out, TINY_MODEL, overwrite) as tmp:
        for part in parts:
            part.save_pretrained(str(tmp))
        for name, text in (files or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
    return out


def build_tiny_qwen2_audio(out: Path | str, seed: int = 0, overwrite: bool = False) -> Path:
    """A tiny ``Qwen2AudioForConditionalGeneration`` + ``Qwen2AudioProcessor`` folder (80 mel
    bins, 5 s of audio, the processor's own chat template)."""
    import torch
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        WhisperFeatureExtractor,
    )

    tokenizer = tiny_qwen_tokenizer()
    chunk = TINY_AUDIO_CHUNK_SECONDS
    features = WhisperFeatureExtractor(feature_size=80, sampling_rate=16_000, chunk_length=chunk,
                                       return_attention_mask=True)
    processor = Qwen2AudioProcessor(feature_extractor=features, tokenizer=tokenizer)
    config = Qwen2AudioConfig(
        text_config={"model_type": "qwen2", "vocab_size": len(tokenizer), "hidden_size": 32,
                     "intermediate_size": 36, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "max_position_embeddings": 512,
                     "pad_token_id": tokenizer.pad_token_id, "eos_token_id": tokenizer.eos_token_id},
        audio_config={"model_type": "qwen2_audio_encoder", "d_model": 16, "encoder_attention_heads": 4,
                      "encoder_ffn_dim": 16, "encoder_layers": 2, "num_mel_bins": 80,
                      "max_source_positions": chunk * 50},
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"))
    torch.manual_seed(seed)
    model = Qwen2AudioForConditionalGeneration(config).eval()
    _generation_defaults(model, tokenizer)
    return _save(out, overwrite, model, processor)


OMNI_TWIN_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
"""the Qwen2.5-Omni chat format for audio and text turns, written into the twin's folder
(real checkpoints ship their own ``chat_template.json`` / ``.jinja``, which the loader uses)"""


def build_tiny_omni_thinker(out: Path | str, seed: int = 0, overwrite: bool = False) -> Path:
    """A tiny ``Qwen2_5OmniThinkerForConditionalGeneration`` folder with a tokenizer, a
    ``WhisperFeatureExtractor`` (80 mel bins, 5 s) and a chat template: what the omni loader reads
    from a Qwen2.5-Omni-based embedder checkpoint."""
    import torch
    from transformers import (
        Qwen2_5OmniThinkerConfig,
        Qwen2_5OmniThinkerForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    tokenizer = tiny_qwen_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL}
    features = WhisperFeatureExtractor(feature_size=80, sampling_rate=16_000,
                                       chunk_length=TINY_AUDIO_CHUNK_SECONDS, return_attention_mask=True)
    config = Qwen2_5OmniThinkerConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 37,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 1024, "rope_scaling": {"mrope_section": [1, 1, 2],
                                                                       "rope_type": "default"},
                     "pad_token_id": tokenizer.pad_token_id},
        audio_config={"d_model": 32, "encoder_attention_heads": 4, "encoder_ffn_dim": 32,
                      "encoder_layers": 2, "num_mel_bins": 80, "max_source_positions": 1500,
                      "n_window": 100, "output_dim": 32},
        vision_config={"depth": 2, "embed_dim": 32, "hidden_size": 32, "num_heads": 4,
                       "intermediate_size": 37, "out_hidden_size": 32, "spatial_merge_size": 1,
                       "patch_size": 14, "temporal_patch_size": 2},
        audio_token_index=ids["<|AUDIO|>"], audio_start_token_id=ids["<|audio_bos|>"],
        audio_end_token_id=ids["<|audio_eos|>"], image_token_index=len(tokenizer) - 1,
        video_token_index=len(tokenizer) - 2, vision_start_token_id=len(tokenizer) - 3)
    torch.manual_seed(seed)
    model = Qwen2_5OmniThinkerForConditionalGeneration(config).eval()
    _generation_defaults(model, tokenizer)
    return _save(out, overwrite, model, tokenizer, features,
                 files={"chat_template.jinja": OMNI_TWIN_CHAT_TEMPLATE})
