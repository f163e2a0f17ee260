"""Named types for the units and ids the package passes around, so a signature says what a
value is (``onset: Seconds``, ``clip_id: ClipId``) and not only how it is stored.

Aliases, not new types: a ``ClipId`` is a ``str`` and a ``Seconds`` a ``float`` wherever they
meet plain values (JSON, numpy, Qdrant payloads), so nothing converts at a boundary. One place
names them; every layer may import it (it imports nothing of the package).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeAlias, Union

if TYPE_CHECKING:
    import numpy as np

Seconds: TypeAlias = float
"""a time or a duration in seconds (clip times are rounded to the millisecond)"""
Milliseconds: TypeAlias = int
"""a time or a duration in integer milliseconds (the relation semantics and the payload filters)"""
MillisecondsLike: TypeAlias = "int | np.ndarray"
"""integer milliseconds, or an integer array of them (the calibration scores every detection and
shift at once by the rule that judges one)"""
Hertz: TypeAlias = int
"""a sample rate"""
Decibels: TypeAlias = float
"""a gain or a signal-to-noise ratio in dB"""

ClipId: TypeAlias = str
"""a clip's ``_id`` in the corpus (also the key of its Qdrant point, via its uuid5)"""
QueryId: TypeAlias = str
"""a query's ``_id`` (``q-0001``); the qrels and every run are keyed by it"""
Label: TypeAlias = str
"""a sound label of the vocabulary (an atom's class, an event's label)"""
AtomId: TypeAlias = str
"""an atom's id in its bank"""

Pathlike: TypeAlias = Union[str, "os.PathLike[str]"]
"""a file or folder given as a string or a path"""

JsonDict: TypeAlias = dict[str, Any]
"""a JSON object as ``json.loads`` gives it or ``json.dumps`` takes it (values of any JSON type)"""

Qrels: TypeAlias = dict[QueryId, set[ClipId]]
"""query id -> its relevant clips (relevance is binary here)"""
Run: TypeAlias = dict[QueryId, dict[ClipId, float]]
"""query id -> clip id -> score: one retriever's ranking of the corpus for each query"""
