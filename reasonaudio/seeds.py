"""Every seeded random stream is named here: a seed and a purpose in, one stream out.

Three derivations, each reproducing the bytes the project has always drawn:

- :func:`named_random`: Python's ``random.Random`` seeded by the string :func:`stream_name`
  makes, ``"reasonaudio-PURPOSE-KEY-..."`` (the build, the formulations, the interleaved queries,
  a condition's bed and SNR draws, training's splits);
- :func:`seeded_rng`: numpy's ``default_rng(seed)``, or with names ``default_rng([seed,
  name_hash(*names)])``, one stream per name under one seed (bootstrap intervals, the random
  retriever, the perception model's clips, the permutation test);
- :func:`hashed_rng`: numpy's ``default_rng(name_hash(stream_name(...)))`` for a stream that has
  no seed but its name (a background bed's noise).

A stream named by its purpose does not move when another purpose draws more or less.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np


def stream_name(purpose: str, *keys: object) -> str:
    """``"reasonaudio-PURPOSE-KEY-..."``: the string a Python stream is seeded by (a manifest
    records it)."""
    return "-".join(["reasonaudio", purpose, *(f"{k}" for k in keys)])


def named_random(purpose: str, *keys: object) -> random.Random:
    """Python's ``random.Random`` seeded by :func:`stream_name` of ``purpose`` and ``keys``."""
    return random.Random(stream_name(purpose, *keys))


def name_hash(*parts: str) -> int:
    """64 bits of sha256 over ``parts`` joined by U+001F (a stream key, a colour index)."""
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()[:8], "big")


def seeded_rng(seed: int, *names: str) -> np.random.Generator:
    """numpy's generator for ``seed``; with ``names``, the stream of those names under ``seed``
    (``default_rng([seed, name_hash(*names)])``), so each name draws its own numbers."""
    if not names:
        return np.random.default_rng(seed)
    return np.random.default_rng([int(seed), name_hash(*names)])


def hashed_rng(purpose: str, *keys: object) -> np.random.Generator:
    """numpy's generator seeded by the hash of :func:`stream_name` (a stream with no seed but
    its name)."""
    return np.random.default_rng(name_hash(stream_name(purpose, *keys)))
