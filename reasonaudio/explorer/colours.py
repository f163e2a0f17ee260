"""One colour per retriever, on every page, derived from its name alone.

A retriever's hue is read from a hash of its name, so it does not change when other retrievers
are saved or removed (a colour by position in a list would shift them all); saturation and
lightness are fixed so every hue reads on white and carries white text.
"""

from __future__ import annotations

import hashlib

SATURATION = 62
LIGHTNESS = 40


def hue(name: str) -> int:
    """0-359 from the first two bytes of the name's SHA-256."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:2], "big") * 360 // 65536


def colour(name: str) -> str:
    """The CSS colour of retriever ``name`` (``hsl(H, 62%, 40%)``)."""
    return f"hsl({hue(name)}, {SATURATION}%, {LIGHTNESS}%)"
