"""A clip's Qdrant payload (docs/qdrant.md): its metadata plus fields precomputed for filtering.

A Qdrant condition compares one payload key with constants; it cannot compare two events of a
clip. So every relation the logic can ask about is precomputed here, with the judge's own
integer-millisecond semantics (``querylang/semantics.py``):

- ``labels``: every event label (keyword list);
- ``before``: ``"x>y"`` for every ordered pair with ``offset(x) <= onset(y)`` (with repeats:
  every x ends before every y starts);
- ``overlaps``: the sorted pair ``"x|y"`` when the events share at least 0.5 s (with repeats:
  some pair of occurrences);
- ``dur``: label -> seconds (integer ms / 1000), filtered by ``Range`` on ``dur."<label>"``
  with the key always quoted, since labels hold spaces; a list of every occurrence's seconds
  for a label that repeats (a ``Range`` on a list matches when any element is inside);
- ``count``: label -> number of occurrences, only for labels that occur at least twice and
  only in clips with such a label (so a clip without repeats has the payload it always had).

No boolean fields (Qdrant Edge 0.9.0 stores ``True`` as 1). Point ids are uuid5 of the clip id in
a fixed namespace, and the clip id stays in the payload so every hit can be named.
"""

from __future__ import annotations

import uuid
from itertools import permutations
from typing import Any, Iterable

from reasonaudio.querylang.semantics import before_occ, occurrences, overlap_occ
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError

POINT_NAMESPACE = uuid.UUID("6f1c1d0e-3a52-5a3e-9d1b-7d0c2a7e5b11")
"""Fixed namespace of clip point ids: the same clip id maps to the same point on every backend."""

BEFORE_SEP = ">"
OVERLAP_SEP = "|"
FORBIDDEN_IN_LABEL = ('"', "\\", BEFORE_SEP, OVERLAP_SEP)
"""Characters that would make a pair keyword or a quoted key path ambiguous."""

KEYWORD_FIELDS = ("labels", "before", "overlaps")
"""the keyword-indexed fields of every collection"""
SOFT_FIELDS = ("soft_p", "soft_p3", "soft_on", "soft_off", "soft_dur")
"""detected collections: label -> calibrated presence (peak, top-3 mean), onset, offset and
duration in seconds, the evidence the score formulas read (store/formula.py)"""
SOFT_LABELS_FIELD = "soft_labels"
"""detected collections: the labels with soft evidence (keyword list)"""
SOFT_LABEL_IDS_FIELD = "soft_label_ids"
"""detected collections: the same labels as integers, their evidence dimensions (integer index;
store/formula.py reads it)"""
SOFT_ORDER_FIELD = "soft_order"
"""detected collections: the clip's place in clip-id order, ``(n - i) / n`` for the ``i``-th
smallest id of ``n`` (also dimension 0 of the ``soft_clip`` evidence vector): the score
formulas' tie term, so equal soft values rank by
clip id in Qdrant as in numpy (store/formula.py, :data:`~reasonaudio.store.formula.ORDER_WEIGHT`)"""


def integer_fields(float_maps: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The integer-indexed fields of a collection: a detected one (soft maps) has
    ``soft_label_ids``."""
    return (SOFT_LABEL_IDS_FIELD,) if SOFT_FIELDS[0] in float_maps else ()


DUR_FIELD = "dur"
COUNT_FIELD = "count"


def point_id(clip_id: str) -> str:
    return str(uuid.uuid5(POINT_NAMESPACE, clip_id))


def point_names(clip_ids: Iterable[str]) -> dict[str, str]:
    """Point id -> clip id for these clips (``Store.query_batch(names=...)``)."""
    return {point_id(c): c for c in clip_ids}


def check_label(label: str, where: str) -> str:
    bad = [c for c in FORBIDDEN_IN_LABEL if c in label]
    if bad or not label:
        raise DataError(f"{where}: label {label!r} cannot be stored in a Qdrant payload "
                        f"(contains {' '.join(repr(c) for c in bad) or 'nothing'}; labels must "
                        f"not contain {' '.join(FORBIDDEN_IN_LABEL)})")
    return label


def before_key(a: str, b: str) -> str:
    return f"{a}{BEFORE_SEP}{b}"


def overlap_key(a: str, b: str) -> str:
    x, y = sorted((a, b))
    return f"{x}{OVERLAP_SEP}{y}"


def dur_key(label: str, field: str = DUR_FIELD) -> str:
    """The JSON path of a label's duration (or another per-label map's value), quoted because
    labels hold spaces."""
    return f'{field}."{check_label(label, "dur key")}"'


def count_key(label: str) -> str:
    """The JSON path of a label's number of occurrences (present only when it repeats)."""
    return f'{COUNT_FIELD}."{check_label(label, "count key")}"'


def clip_payload(clip: Clip) -> dict[str, Any]:
    """The payload of one clip: metadata, event list and the precomputed relation fields."""
    where = f"corpus ({clip.id})"
    for label in clip.labels:
        check_label(label, where)
    occ = occurrences(clip.events)
    before = sorted(before_key(a, b) for a, b in permutations(occ, 2) if before_occ(occ[a], occ[b]))
    overlaps = sorted({overlap_key(a, b) for a, b in permutations(occ, 2)
                       if overlap_occ(occ[a], occ[b])})
    dur = {label: ((ivs[0][1] - ivs[0][0]) / 1000.0 if len(ivs) == 1
                   else [(off - on) / 1000.0 for on, off in ivs]) for label, ivs in occ.items()}
    out = {
        "clip_id": clip.id,
        "mode": clip.mode,
        "duration": clip.duration,
        "sample_rate": clip.sample_rate,
        "n_events": len(clip.events),
        "events": [e.to_json() for e in clip.events],
        "labels": list(occ),
        "before": before,
        "overlaps": overlaps,
        DUR_FIELD: dur,
    }
    repeats = {label: len(ivs) for label, ivs in occ.items() if len(ivs) > 1}
    if repeats:
        out[COUNT_FIELD] = repeats
    return out
