"""Shared, once-per-session model fixtures for the models / ingest / two-stage tests.

The tiny random-weight CLAP is built once per test process (``build_tiny_clap``: local configs,
the BERT tokenizer from the installed MiniLM package, ``save_pretrained``) and loaded back by
path, exactly as a user's ``--model-path`` would be.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def tiny_clap_path() -> Path:
    from reasonaudio.models.tiny import build_tiny_clap

    root = Path(tempfile.mkdtemp(prefix="reasonaudio-tiny-clap-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return build_tiny_clap(root / "tiny-clap")


@lru_cache(maxsize=None)
def tiny_clap():
    from reasonaudio.models.registry import load_model

    return load_model("clap", model_path=str(tiny_clap_path()), batch_size=4)


@lru_cache(maxsize=None)
def minilm():
    from reasonaudio.models.registry import load_model

    return load_model("minilm")
