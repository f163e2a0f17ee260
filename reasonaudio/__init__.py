"""ReasonAudio testbed: reasoning-intensive text-to-audio retrieval over Qdrant.

The public Python API (docs/python.md), silent and returning values::

    import reasonaudio as ra

    bench = ra.build("data/mine", clips=600, queries=200)   # or ra.load("data/mine")
    logic = ra.parse("dog barking, then a siren", bench)     # query text -> logic
    results = ra.evaluate(bench, ["oracle", "bag-of-sounds"])
    ra.scores(results)                                       # retriever -> task -> Acc@1

Benchmarks: :func:`build`, :func:`load`. Queries: :func:`parse`, :func:`parse_detailed`.
Retrievers: :func:`retriever_names`, :func:`get_retriever`, :func:`search`. Results:
:func:`evaluate`, :func:`load_results`, :func:`scores`, :func:`load_run`. Types:
:class:`BenchmarkView` (a benchmark as read: files x condition x view), :class:`Node` (logic), :class:`ParseResult`, :class:`Retriever`,
:class:`RetrieverOptions`, :class:`Results`, :class:`RetrieverResult`, :class:`Run`,
:class:`SearchOutcome`, ``Pathlike``.

``import reasonaudio`` loads none of them: each name is read from ``reasonaudio.api`` on first
use, so the command line and the light core start fast and never load torch.
"""

import importlib
from typing import Any

from reasonaudio.runtime import default_blas_threads as _default_blas_threads

_default_blas_threads()  # before anything imports numpy (see reasonaudio.runtime)

__version__ = "0.1.0"

__all__ = ["BenchmarkView", "Node", "ParseResult", "Pathlike", "Results", "Retriever", "RetrieverOptions",
           "RetrieverResult", "Run", "SearchOutcome", "__version__", "build", "evaluate",
           "get_retriever", "load", "load_results", "load_run", "parse", "parse_detailed",
           "retriever_names", "scores", "search"]



def __getattr__(name: str) -> Any:
    """A name of ``__all__`` from ``reasonaudio.api``, loaded on first use (the one import that
    runs up the layers, docs/architecture.md)."""
    if name in __all__:
        value = getattr(importlib.import_module("reasonaudio.api"), name)
        globals()[name] = value  # loaded once
        return value
    raise AttributeError(f"module 'reasonaudio' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
