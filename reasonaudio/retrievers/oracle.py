"""The oracle: parse the query text into logic, run it as a Qdrant payload filter, rank.

It is the upper bound of the testbed: with a correct parse its result set is exactly the
judge's relevant set (the differential tests check this against qrels on every backend).

Ranking rule (documented, deterministic): every clip the filter admits scores 1.0, every other
clip 0.0; hits are the admitted clips in clip id ascending order (the project's tie rule:
score descending, then clip id ascending), cut at ``k``. Clips the filter rejects are not
returned.

``oracle-without:FAMILY`` (:class:`AblatedOracle`) is the same retriever over the logic with one
relation family removed (:mod:`reasonaudio.querylang.ablation`); logic with nothing left to
check admits every clip.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable, Sequence, TypeVar

from reasonaudio.querylang.ablation import BY_FAMILY, without
from reasonaudio.logic import Node
from reasonaudio.querylang.parser import parse
from reasonaudio.querylang.resolve import ResolveOptions
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.retrievers.base import Hit, Retriever, RetrieverOptions
from reasonaudio.store.base import Store
from reasonaudio.store.collections import PAYLOAD_COLLECTION, ensure_payload_collection
from reasonaudio.store.filters import to_filter

_CACHE_SIZE = 256


V = TypeVar("V")


class _Lru(OrderedDict):
    """A tiny bounded cache: eval asks for the same query's search and scores back to back."""

    def get_or(self, key: Hashable, make: Callable[[], V]) -> V:
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = self[key] = make()
        if len(self) > _CACHE_SIZE:
            self.popitem(last=False)
        return value


class PayloadRetriever(Retriever):
    """Shared by the oracle and the baselines: a benchmark, a store, the payload collection."""

    def __init__(self, bench: BenchmarkView, store: Store, collection: str = PAYLOAD_COLLECTION,
                 resolve: ResolveOptions | None = None) -> None:
        self.bench = bench
        self.store = store
        self.collection = collection
        self.resolve = resolve
        self._parsed = _Lru()

    def parse(self, text: str) -> Node:
        """Query text -> logic over the benchmark's vocabulary (QueryParseError if it cannot),
        reading sound phrases as ``resolve`` says (the CLI's --strict, the semantic fallback)."""
        return self._parsed.get_or(text, lambda: parse(text, self.bench.labels, self.resolve))

    def reuse_parse(self, text: str, logic: Any, resolve: ResolveOptions | None) -> None:
        if resolve == self.resolve:  # read as this retriever reads: the same logic
            self._parsed.get_or(text, lambda: logic)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "collection": self.collection, "store": self.store.describe()}


class OracleRetriever(PayloadRetriever):
    name = "oracle"

    def __init__(self, bench: BenchmarkView, store: Store, collection: str = PAYLOAD_COLLECTION,
                 resolve: ResolveOptions | None = None) -> None:
        super().__init__(bench, store, collection, resolve)
        self._matches = _Lru()

    def matching(self, logic: Node) -> list[str]:
        """Clip ids the logic's filter admits, ascending (this is the oracle's ranking)."""
        return self._matches.get_or(
            logic, lambda: self.store.matching_ids(self.collection, to_filter(logic)))

    def search_logic(self, logic: Node, k: int) -> list[Hit]:
        return [Hit(cid, 1.0) for cid in self.matching(logic)[:k]]

    def search(self, text: str, k: int) -> list[Hit]:
        return self.search_logic(self.parse(text), k)

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        admitted = set(self.matching(self.parse(text)))
        return [1.0 if cid in admitted else 0.0 for cid in clip_ids]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "ranking": "filter matches score 1.0, clip id ascending"}


class AblatedOracle(OracleRetriever):
    """The oracle over the parsed logic without one relation family, ranked like the oracle."""

    def __init__(self, bench: BenchmarkView, store: Store, family: str,
                 collection: str = PAYLOAD_COLLECTION, resolve: ResolveOptions | None = None) -> None:
        super().__init__(bench, store, collection, resolve)
        self.ablation = BY_FAMILY[family]
        self.name = self.ablation.retriever

    def parse(self, text: str) -> Node | None:  # type: ignore[override]
        """The query's logic without the family (``None``: nothing left, every clip admitted)."""
        return without(super().parse(text), self.ablation.family)

    def matching(self, logic: Node | None) -> list[str]:  # type: ignore[override]
        if logic is None:
            return self._matches.get_or(None, lambda: self.store.matching_ids(self.collection))
        return super().matching(logic)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "without": self.ablation.family,
                "rewrite": "querylang.ablation.without (docs/evaluation.md, logic ablations)"}


def build_oracle_perceived(name: str, bench: BenchmarkView, store: Store,
                           options: RetrieverOptions) -> Retriever:
    """The oracle under another name: on a named query it is the oracle; on an interleaved one
    its parser gets the tagger's label for each example (its reading, ``tagger-label``)."""
    collection = ensure_payload_collection(bench, store, auto=options.auto_ingest, hooks=options.hooks)
    r = OracleRetriever(bench, store, collection, options.resolve)
    r.name = name
    return r
