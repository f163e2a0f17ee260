"""``--dtype``: which floating-point precision a transformers loader uses, recorded in its identity.

Why recorded: bf16 and fp32 vectors of the same weights differ in their last bits (and captions
may differ in words), so the dtype is part of the embedding cache key and the collection's
metadata, like the revision. Default: fp32 on the CPU (bf16 matmuls are slow there), bf16 on CUDA.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reasonaudio.errors import ModelError

if TYPE_CHECKING:
    import torch

TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def resolve_dtype(dtype: str | None, device: str) -> str:
    """The dtype name to use: ``dtype`` if given, else fp32 on the CPU and bf16 on CUDA."""
    if dtype is None:
        return "bf16" if device.startswith("cuda") else "fp32"
    if dtype not in TORCH_DTYPES:
        raise ModelError(f"--dtype must be one of {', '.join(TORCH_DTYPES)}, got {dtype!r}")
    return dtype


def torch_dtype(name: str) -> torch.dtype:
    import torch

    return getattr(torch, TORCH_DTYPES[name])
