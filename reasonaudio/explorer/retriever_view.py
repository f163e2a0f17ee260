"""What a retriever saw of a clip, beside the truth: the caption a two-stage retriever embedded, the
events (with confidence) a detected or soft retriever reads.

A saved result's name says which collection holds that view: ``two-stage:C+E`` reads its own
caption collection, ``detected:T`` and ``soft:T`` read the collection ``bench detect`` recorded as
``detected:T``, a combination (``hybrid:``, ``rrf:``, ``dbsf:``) reads what its two parts read,
and a result under a condition (its ``describe`` records it) reads that condition's copy of the
collection (``NAME.CONDITION``, ``dataset/conditions.collection_for``). Collections are found by
the model their record names, so nothing here parses a collection name. This module reads no
store: :class:`~reasonaudio.explorer.catalog.Catalog` fetches the payloads it names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from reasonaudio.dataset.conditions import collection_for
from reasonaudio.models.names import PART_SEP, SOFT, TWO_STAGE, is_combined

CAPTION = "caption"
EVENTS = "events"
DETECTED = "detected:"
"""a detected collection records its retriever's name (``detect/collection.detected_name``)"""
FIELDS = {CAPTION: ("clip_id", "caption"), EVENTS: ("clip_id", "events", "confidence")}
"""the payload fields each kind of view reads"""


@dataclass(frozen=True)
class Source:
    """One collection a retriever reads a view of a clip from."""

    kind: str
    """:data:`CAPTION` or :data:`EVENTS`"""
    model: str
    """the model the collection records (``two-stage:...``, ``detected:...``)"""
    collection: str


def parts(name: str) -> list[str]:
    """The base retrievers of retriever ``name`` (a saved result's: its key's name)."""
    if is_combined(name):
        return [p.strip() for p in name.partition(":")[2].split(PART_SEP) if p.strip()]
    return [name]


def viewed(part: str) -> tuple[str, str] | None:
    """(kind, recorded model) of the view ``part`` reads, or None (it reads no caption or event)."""
    if part.startswith(TWO_STAGE):
        return CAPTION, part
    if part.startswith(DETECTED):
        return EVENTS, part
    if part.startswith(SOFT):
        return EVENTS, DETECTED + part[len(SOFT):]
    return None


def pick_collection(model: str, condition: str, collections: Sequence[tuple[str, Any]]) -> str | None:
    """The collection recording ``model`` under ``condition``: the model's clean collection is the
    shortest of its names, every other condition's is that name plus ``.CONDITION``."""
    names = sorted(c for c, meta in collections if meta.model == model)
    if not names:
        return None
    wanted = collection_for(min(names, key=len), condition)
    return wanted if wanted in names else None


def sources(name: str, condition: str, collections: Sequence[tuple[str, Any]]) -> list[Source]:
    """Every view the saved result ``name`` (read under ``condition``) has in the store."""
    out = []
    for part in parts(name):
        found = viewed(part)
        if found is None:
            continue
        collection = pick_collection(found[1], condition, collections)
        if collection is not None:
            out.append(Source(found[0], found[1], collection))
    return out
