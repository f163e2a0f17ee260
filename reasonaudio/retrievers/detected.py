"""``detected:TAGGER[-enrolled]``: the oracle's logic on perceived events instead of the truth.

Reads ``reasonaudio-detected-<tagger>-<mode>`` (written by ``bench detect``). A query is parsed
into logic exactly as for the oracle and translated by the same code
(``store.filters.to_filter``); one Qdrant formula query per search ranks every clip by
``filter(logic) + soft`` (``store.formula.detected_formula``): the clips the filter admits on the
detected payload first, the rest after them, each group by the soft score of the logic (soft
plus 1e-3 x its 3-best-frame variant, rescaled to [0, 1], which breaks the ties YAMNet's
quantised scores make). Remaining ties fall to clip id among the returned points (the project
rule; see :mod:`reasonaudio.retrievers.soft_rank`).

``detected:yamnet-enrolled`` reads the enrolled collection: its signatures come from the bank's
own atoms, an optimistic perception bound (the detector has heard the clips' source recordings).
``detected:yamnet-trained`` reads the collection ``bench detect --mode trained --model-path DIR``
wrote: events of a frame detector trained on other builds' strong labels
(docs/trained-detector.md).
"""

from __future__ import annotations

from typing import Any, Sequence

from reasonaudio.logic import Node
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.detect.collection import (DetectOptions, _check, detect_command, detected_collection,
                                          parse_detected)
from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.retrievers.oracle import _Lru
from reasonaudio.retrievers.soft_rank import FormulaRetriever
from reasonaudio.store import formula as fm
from reasonaudio.store.base import Store
from reasonaudio.store.filters import to_filter


class DetectedRetriever(FormulaRetriever):
    kind = "detected"

    def __init__(self, name: str, bench: BenchmarkView, store: Store, collection: str,
                 command: str) -> None:
        super().__init__(name, bench, store, collection, command)
        self._matches = _Lru()
        self._payloads = _Lru()

    def expression(self, logic: Node, order: bool = True) -> fm.Expr:
        return fm.detected_formula(logic, to_filter(logic), order)

    def matching(self, logic: Node) -> list[str]:
        """Clip ids the logic's filter admits on the detected payload (the oracle's code)."""
        return self._matches.get_or(
            logic, lambda: self.store.matching_ids(self.collection, to_filter(logic)))

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        """The detected timeline of each clip (``bench search`` prints it beside the true one),
        then the soft value of each constraint."""
        found = self.store.retrieve(self.collection, list(clip_ids),
                                    fields=("clip_id", "events", "confidence"))
        payloads = {f.clip_id: f.payload or {} for f in found}
        soft = self.breakdown(clip_ids)
        out = {}
        for cid in clip_ids:
            pl = payloads.get(cid, {})
            conf = pl.get("confidence") or {}
            parts = [f"{e['label']} {e['onset']:g}-{e['offset']:g} s ({conf.get(e['label'], 0):.2f})"
                     for e in pl.get("events") or ()]
            line = "detected: " + ("; ".join(parts) if parts else "nothing")
            out[cid] = line + (f" | {soft[cid]}" if cid in soft else "")
        return out

    def describe(self) -> dict[str, Any]:
        extra = self.meta.extra or {}
        return {**super().describe(),
                "calibration": {k: v for k, v in (extra.get("calibration") or {}).items()
                                if k != "params"},
                "ranking": "one Qdrant formula query: filter(logic) on the detected payload + soft"}


def build_detected(name: str, bench: BenchmarkView, store: Store,
                   options: RetrieverOptions) -> DetectedRetriever:
    tagger, mode = parse_detected(name)
    _check(DetectOptions(tagger=tagger, mode=mode))
    command = detect_command(bench.root, tagger, mode, bench.condition.name)
    return DetectedRetriever(name, bench, store, detected_collection(tagger, mode, bench.condition.name),
                             command)
