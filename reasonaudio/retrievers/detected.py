"""``detected:TAGGER[-enrolled]``: the oracle's logic on perceived events instead of the truth.

Reads ``reasonaudio-detected-<tagger>-<mode>`` (written by ``bench detect``). A query is parsed
into logic exactly as for the oracle and translated by the same code
(``store.filters.to_filter``); the clips the filter admits on the detected payload
rank first, the rest after them, each group by the soft score of the logic over the score
tracks (:mod:`reasonaudio.detect.soft`). Score = 1 + soft for an admitted clip, soft otherwise
(soft plus 1e-3 x its 3-best-frame variant, rescaled to [0, 1], which breaks the ties YAMNet's quantised scores
make), so every clip has a rank; remaining ties fall to clip id (the project rule).

``detected:yamnet-enrolled`` reads the enrolled collection: its signatures come from the bank's
own atoms, an optimistic perception bound (the detector has heard the clips' source recordings).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from reasonaudio.constraints.logic import Node
from reasonaudio.dataset.benchmark import Benchmark
from reasonaudio.dataset.conditions import condition_of
from reasonaudio.detect.collection import DetectOptions, _check, detected_collection, parse_detected
from reasonaudio.detect.soft import SEMANTICS, TIE_WEIGHT, SoftIndex
from reasonaudio.retrievers.base import Hit, RetrieverOptions, rank
from reasonaudio.retrievers.oracle import PayloadRetriever, _Lru
from reasonaudio.store.base import Store
from reasonaudio.store.collections import require_ready
from reasonaudio.store.filters import to_filter


class DetectedRetriever(PayloadRetriever):
    def __init__(self, name: str, bench: Benchmark, store: Store, collection: str,
                 command: str) -> None:
        super().__init__(bench, store, collection)
        self.name = name
        self.meta = require_ready(store, collection, bench, command)
        calib = (self.meta.extra or {}).get("calibration") or {}
        params = calib.get("params") or {}
        self.thresholds = {str(k): float(v) for k, v in (params.get("thresholds") or {}).items()}
        self.default_threshold = float(params.get("on", 0.3))
        found = sorted(store.scroll(collection, None,
                                    fields=("events", "confidence", "track", "count")),
                       key=lambda f: f.clip_id)
        self.payloads = {f.clip_id: {**(f.payload or {}), "clip_id": f.clip_id} for f in found}
        ordered = [self.payloads[c] for c in sorted(self.payloads)]
        self.soft = SoftIndex.from_payloads(ordered, self.thresholds, self.default_threshold)
        self.soft_ties = SoftIndex.from_payloads(ordered, self.thresholds, self.default_threshold,
                                                 stat="top3")
        self._matches = _Lru()
        self._scores = _Lru()

    def matching(self, logic: Node) -> list[str]:
        """Clip ids the logic's filter admits on the detected payload (the oracle's code)."""
        return self._matches.get_or(
            logic, lambda: self.store.matching_ids(self.collection, to_filter(logic)))

    def scores(self, logic: Node) -> dict[str, float]:
        def make() -> dict[str, float]:
            soft = ((self.soft.score(logic) + TIE_WEIGHT * self.soft_ties.score(logic))
                    / (1.0 + TIE_WEIGHT))  # still within [0, 1]: admitted clips stay first
            admitted = set(self.matching(logic))
            hard = np.fromiter((c in admitted for c in self.soft.clip_ids), dtype=bool,
                               count=self.soft.n)
            return dict(zip(self.soft.clip_ids, (soft + hard).tolist()))
        return self._scores.get_or(logic, make)

    def search(self, text: str, k: int) -> list[Hit]:
        return rank(self.scores(self.parse(text)), k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        got = self.scores(self.parse(text))
        return [got.get(c, float("-inf")) for c in clip_ids]

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        """The detected timeline of each clip (``bench search`` prints it beside the true one)."""
        out = {}
        for cid in clip_ids:
            pl = self.payloads.get(cid, {})
            conf = pl.get("confidence") or {}
            parts = [f"{e['label']} {e['onset']:g}-{e['offset']:g} s ({conf.get(e['label'], 0):.2f})"
                     for e in pl.get("events") or ()]
            out[cid] = "detected: " + ("; ".join(parts) if parts else "nothing")
        return out

    def describe(self) -> dict[str, Any]:
        extra = self.meta.extra or {}
        return {**super().describe(), "revision": self.meta.revision, "mode": extra.get("mode"),
                "optimistic": bool(extra.get("optimistic")),
                "calibration": {k: v for k, v in (extra.get("calibration") or {}).items()
                                if k != "params"},
                "ranking": "filter on the detected payload first, each group by soft score",
                "soft": SEMANTICS}


def build_detected(name: str, bench: Benchmark, store: Store,
                   options: RetrieverOptions) -> DetectedRetriever:
    tagger, mode = parse_detected(name)
    _check(DetectOptions(tagger=tagger, mode=mode))
    command = f"bench detect --data {bench.root} --tagger {tagger} --mode {mode}"
    command += "" if condition_of(bench).is_clean else f" --condition {condition_of(bench).name}"
    return DetectedRetriever(name, bench, store, detected_collection(tagger, mode, condition_of(bench).name),
                             command)
