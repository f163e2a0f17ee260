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


def copy_bench(src: Path, dst: Path) -> Path:
    """A private copy of a built benchmark (its files only), so a test's store starts empty."""
    dst.mkdir(parents=True, exist_ok=True)
    for item in Path(src).iterdir():
        if item.name == "qdrant" or item.name == "results":
            continue
        if item.is_dir():
            shutil.copytree(item, dst / item.name)
        else:
            shutil.copy2(item, dst / item.name)
    return dst


def stored_vectors(bench_dir: Path, collection: str) -> dict:
    """clip id -> stored vector, read straight from the embedded Edge shard."""
    import numpy as np
    import qdrant_edge as qe

    shard = qe.EdgeShard.load(str(Path(bench_dir) / "qdrant" / "edge" / collection / "shard"))
    try:
        out = {}
        offset = None
        while True:
            records, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=1000, with_payload=True,
                                                            with_vector=True))
            for r in records:
                cid = r.payload["clip_id"]
                assert cid not in out, f"duplicate point for {cid}"
                out[cid] = np.asarray(r.vector, dtype=np.float32)
            if offset is None:
                return out
    finally:
        shard.close()


@lru_cache(maxsize=None)
def tiny_qwen3_embedding_path() -> Path:
    """A tiny random-weight Qwen3Model + in-process BPE tokenizer, saved like a hub folder."""
    from reasonaudio.models.tiny_qwen import build_tiny_qwen3_embedding

    root = Path(tempfile.mkdtemp(prefix="reasonaudio-tiny-qwen3-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return build_tiny_qwen3_embedding(root / "tiny-qwen3-embedding")


@lru_cache(maxsize=None)
def tiny_qwen2_audio_path() -> Path:
    """A tiny random-weight Qwen2-Audio + its processor (Whisper features, 5 s of audio)."""
    from reasonaudio.models.tiny_qwen import build_tiny_qwen2_audio

    root = Path(tempfile.mkdtemp(prefix="reasonaudio-tiny-qwen2-audio-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return build_tiny_qwen2_audio(root / "tiny-qwen2-audio")


@lru_cache(maxsize=None)
def tiny_omni_path() -> Path:
    """A tiny random-weight Qwen2.5-Omni thinker + tokenizer + Whisper features + chat template."""
    from reasonaudio.models.tiny_qwen import build_tiny_omni_thinker

    root = Path(tempfile.mkdtemp(prefix="reasonaudio-tiny-omni-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return build_tiny_omni_thinker(root / "tiny-omni-thinker")
