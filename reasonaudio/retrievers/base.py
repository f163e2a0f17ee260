"""What every retriever is: query text in, ranked clip ids out.

All retrievers take the query *text* (the oracle parses it too), so a run measures the whole
pipeline. One tie rule everywhere: score descending, then clip id ascending.
"""

from __future__ import annotations

import abc
import heapq
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Protocol, Sequence, runtime_checkable

from reasonaudio.dataset.view import BenchmarkView
import numpy as np

from reasonaudio.errors import QueryParseError
from reasonaudio.ingest.embedding_cache import identity_digest
from reasonaudio.models.base import EmbedderProtocol
from reasonaudio.querylang.resolve import ResolveOptions
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.store.base import Found, Request, StoreProtocol
from reasonaudio.store.payload import point_names
from reasonaudio.types import ClipId


@dataclass(frozen=True)
class Hit:
    clip_id: ClipId
    score: float


def rank(scores: Mapping[str, float] | Iterable[tuple[str, float]], k: int | None = None) -> list[Hit]:
    """Order (clip id, score) pairs by score descending, then clip id ascending; keep ``k``."""
    items = scores.items() if isinstance(scores, Mapping) else scores
    key = lambda item: (-float(item[1]), item[0])  # noqa: E731
    ordered = (heapq.nsmallest(k, items, key=key) if k is not None else sorted(items, key=key))
    return [Hit(cid, float(s)) for cid, s in ordered]


class QueryVectors:
    """Query text -> vector, per text model, for the retrievers that share it
    (``RetrieverOptions.query_vectors``): two retrievers searching with the same model (two
    captioners' collections, a fusion's dense part and the dense retriever itself) embed a
    query once. The model's batches have a fixed shape, so a vector does not depend on the
    texts embedded beside it: a shared one is the one the retriever would have made."""

    def __init__(self) -> None:
        self._by_model: dict[str, dict[str, np.ndarray]] = {}

    def embed(self, embedder: EmbedderProtocol, texts: Sequence[str]) -> np.ndarray:
        """``embedder.embed_queries(texts)``, computing only the texts not embedded yet."""
        model = identity_digest({"class": type(embedder).__qualname__, "identity": embedder.identity(),
                                 "batch": getattr(embedder, "unit_batch", None),
                                 "device": str(getattr(embedder, "device", ""))})
        memo = self._by_model.setdefault(model, {})
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        if todo:
            memo.update(zip(todo, embedder.embed_queries(todo)))
        return np.stack([memo[t] for t in texts]) if texts else embedder.embed_queries([])


@dataclass(frozen=True)
class RetrieverOptions:
    """Everything a retriever's builder may be given, typed. Adding an option is one field here
    (and, for the command line, one flag in ``cli.py``); builders read what they use."""

    model_path: str | None = None
    """local weights instead of the hub id (model retrievers)"""
    captioner_path: str | None = None
    """a two-stage retriever's captioner weights (``--captioner-path``), for the ``model-caption``
    reading of a sound given by example"""
    device: str = "cpu"
    batch_size: int | None = None
    dtype: str | None = None
    """fp32 | bf16 | fp16 for models that offer a choice (others ignore it)"""
    resolve: ResolveOptions | None = None
    """how retrievers that parse the text (oracle, bag-of-sounds) read sound phrases that are not
    labels (None: the parser's default, no semantic matcher)"""
    auto_ingest: bool | None = None
    """load the payload collection when missing (default: on for the embedded Edge store only)"""
    hooks: Hooks = SILENT
    """one-line notes for the user (e.g. "loading the payload collection"); silent by default"""
    query_vectors: QueryVectors | None = field(default=None, compare=False)
    """a :class:`QueryVectors` the text-model retrievers built with these options share (one
    evaluation, the main job): each query embedded once per model; None: each embeds its own"""

    def merged(self, **changes: object) -> "RetrieverOptions":
        """A copy with the given fields replaced (``None`` values leave a field as it is)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


@runtime_checkable
class RetrieverProtocol(Protocol):
    """What evaluating and searching need of a retriever (BEIR's ``search`` contract, one query
    text at a time): ranked hits, a batch of them, the scores of given clips (multiple choice),
    what to record about it. :class:`Retriever` implements it; a retriever from elsewhere need
    not subclass it."""

    name: str

    def search(self, text: str, k: int) -> list[Hit]:
        """The top ``k`` clips for ``text``, ranked by :func:`rank`'s rule."""
        ...

    def search_batch(self, texts: Sequence[str], k: int) -> list[list[Hit] | Exception]:
        """``search`` for several queries; a query that cannot be read gives its error."""
        ...

    def score(self, text: str, clip_ids: Sequence[ClipId]) -> list[float]:
        """Scores of given clips (multiple choice)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What a results file records about this retriever."""
        ...

    def close(self) -> None:
        ...


class Retriever(abc.ABC):
    """A named way to rank the corpus for a query (implements :class:`RetrieverProtocol`)."""

    name: str = "retriever"

    @abc.abstractmethod
    def search(self, text: str, k: int) -> list[Hit]:
        """The top ``k`` clips for ``text``, ranked by :func:`rank`'s rule."""

    def search_batch(self, texts: Sequence[str], k: int) -> list[list[Hit] | Exception]:
        """``search`` for several queries; a query that cannot be read gives its
        :class:`~reasonaudio.errors.QueryParseError` in its place. Retrievers backed by one
        Qdrant query per search override this to send the batch at once (``Store.query_batch``)."""
        out: list[list[Hit] | Exception] = []
        for text in texts:
            try:
                out.append(self.search(text, k))
            except QueryParseError as exc:
                out.append(exc)
        return out

    def prepare(self, texts: Sequence[str]) -> None:
        """Batch work for queries about to be asked (e.g. embed them all at once). Optional."""

    def reuse_parse(self, text: str, logic: Any, resolve: ResolveOptions | None) -> None:
        """``logic`` is ``text`` parsed over this benchmark's labels with ``resolve`` (``bench
        search`` parsed it to show it): a retriever that would parse ``text`` the same way
        keeps it instead of parsing again. Default: nothing to keep."""

    def score(self, text: str, clip_ids: Sequence[str]) -> list[float]:
        """Scores of given clips (multiple choice). Default: a clip outside the top 1000 scores -inf."""
        found = {h.clip_id: h.score for h in self.search(text, max(1000, len(clip_ids)))}
        return [found.get(cid, float("-inf")) for cid in clip_ids]

    def describe(self) -> dict[str, Any]:
        """What a results file records about this retriever (model, revision, parameters)."""
        return {"name": self.name}

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        """What the retriever's model wrote for these clips, when it writes text (two-stage
        captioners): shown beside the hits. Default: nothing."""
        return {}

    def close(self) -> None:
        """Release what the retriever holds (model memory, caches). The store is the caller's."""

    def __enter__(self) -> "Retriever":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


TIE_MARGIN = 16
"""extra hits fetched so ties at the k-th score are broken by clip id, not by the engine; where
the k-th score's ties reach the end of what came back, the query is asked again for four times
as many (:meth:`QueryRetriever.search_batch`)"""


def ties_reach_the_cut(scores: Sequence[float], k: int, limit: int) -> bool:
    """Whether an answer of ``limit`` hits may hold only part of the clips tied with its
    ``k``-th best score: it is full and that score is also its last."""
    if len(scores) < limit or len(scores) <= k:
        return False
    ordered = sorted(scores, reverse=True)
    return ordered[k - 1] == ordered[-1]


class QueryRetriever(Retriever):
    """A retriever whose every search is one Qdrant query (:meth:`request`) on
    ``self.collection``: searches go through ``Store.query_batch``, a run's queries in batches,
    and the project's tie rule orders what comes back."""

    store: StoreProtocol
    collection: str
    bench: BenchmarkView
    sign = 1.0
    """+1: a higher Qdrant score is better (precomputed vectors under a distance negate it)"""
    _names: dict[str, str] | None = None

    def point_names(self) -> dict[str, str]:
        """Point id -> clip id of the benchmark's clips: the store names the hits from it rather
        than from their payloads (``Store.query_batch(names=...)``)."""
        if self._names is None:
            self._names = point_names(c.id for c in self.bench.clips)
        return self._names

    def answers(self, requests: Sequence[Request]) -> list[list[Found]]:
        """``requests`` on ``self.collection`` in one batch, their points named by
        :meth:`point_names` (no payload is read for a request that asks for no fields)."""
        return self.store.query_batch(self.collection, list(requests), self.point_names())

    def request(self, text: str, limit: int) -> Request:
        """The ``store.base.Request`` answering ``text`` (a QueryParseError if it cannot)."""
        raise NotImplementedError

    def wider_request(self, text: str, limit: int, first: int) -> Request:
        """The request of ``text`` asked again for ``limit`` hits after ``first`` (the same
        ranking, longer; a retriever whose parts' depth follows the limit keeps ``first``'s)."""
        return self.request(text, limit)

    def search_batch(self, texts: Sequence[str], k: int) -> list[list[Hit] | Exception]:
        out: list[list[Hit] | Exception] = []
        asked: list[tuple[int, Request]] = []
        for i, text in enumerate(texts):
            try:
                asked.append((i, self.request(text, k + TIE_MARGIN)))
                out.append([])
            except QueryParseError as exc:
                out.append(exc)
        limit = k + TIE_MARGIN
        answers = self.answers([r for _, r in asked])
        while True:
            again = []
            for (i, _), found in zip(asked, answers):
                scores = [self.sign * f.score for f in found]
                if ties_reach_the_cut(scores, k, limit):
                    again.append(i)
                else:
                    out[i] = rank([(f.clip_id, s) for f, s in zip(found, scores)], k)
            if not again:
                return out
            # a tie group wider than the margin straddles the cut: which of its clips Qdrant
            # returned is its own (hash) order, so ask those queries again for more
            limit *= 4
            asked = [(i, self.wider_request(texts[i], limit, k + TIE_MARGIN)) for i in again]
            answers = self.answers([r for _, r in asked])

    def search(self, text: str, k: int) -> list[Hit]:
        got = self.search_batch([text], k)[0]
        if isinstance(got, Exception):
            raise got
        return got
