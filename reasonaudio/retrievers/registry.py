"""Every retriever by name: one plain record per name (or per name family, e.g. ``two-stage:``).

Adding a retriever is one :func:`register` call with a :class:`RetrieverSpec` whose ``build``
gets ``(name, bench, store, **opts)``; the registry opens the store (embedded by default, a
server with ``url`` / ``QDRANT_URL``) so every retriever reaches Qdrant the same way.
Builders import their heavy modules inside, so listing names stays cheap.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

from reasonaudio.errors import ReasonAudioError
from reasonaudio.ingest.benchmark import Benchmark
from reasonaudio.retrievers.base import Retriever
from reasonaudio.store.base import Store

Builder = Callable[..., Retriever]
"""``build(name, bench, store, **opts) -> Retriever``"""


@dataclass(frozen=True)
class RetrieverSpec:
    name: str
    """the exact name, or for a family the prefix up to and including ``:`` (``two-stage:``)"""
    build: Builder
    help: str
    needs_logic: bool = False
    """True when the retriever cannot run without parsing the text (oracle, bag-of-sounds)"""
    family: bool = False
    example: str = ""
    """for a family: a full name to show in listings, e.g. ``two-stage:minilm``"""


class UnknownRetriever(ReasonAudioError):
    """A retriever name nobody registered."""


_REGISTRY: dict[str, RetrieverSpec] = {}

PLUGINS: list[str] = ["reasonaudio.retrievers.vector:register_all",
                      "reasonaudio.retrievers.detected:register_all"]
"""``module:function`` hooks that register more retrievers (the model-backed ones). Run once,
on the first lookup, so importing the registry stays cheap."""
_plugins_loaded = False


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    import importlib

    for hook in PLUGINS:
        module, func = hook.split(":")
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the plugin exists but one of its imports is missing: a bug
                raise
            continue
        getattr(mod, func)()


def register(spec: RetrieverSpec, *, replace: bool = False) -> RetrieverSpec:
    if spec.family and not spec.name.endswith(":"):
        raise ValueError(f"family name {spec.name!r} must end with ':'")
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"retriever {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def retriever_names() -> list[str]:
    """Registered names in registration order; families shown by their example (or ``prefix*``)."""
    _load_plugins()
    return [(s.example or f"{s.name}*") if s.family else s.name for s in _REGISTRY.values()]


def spec_for(name: str) -> RetrieverSpec:
    """The record for ``name`` (exact names first, then the longest matching family prefix)."""
    _load_plugins()
    if name in _REGISTRY and not _REGISTRY[name].family:
        return _REGISTRY[name]
    families = [s for s in _REGISTRY.values() if s.family and name.startswith(s.name)]
    if families:
        return max(families, key=lambda s: len(s.name))
    known = retriever_names()
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownRetriever(f"unknown retriever {name!r}{hint} (known: {', '.join(known)})")


def get_retriever(name: str, bench: Benchmark, *, backend: str | None = None,
                  url: str | None = None, store: Store | None = None, **opts: Any) -> Retriever:
    """Build retriever ``name`` over ``bench``; opens the store unless one is passed."""
    spec = spec_for(name)
    if store is None:
        from reasonaudio.store.open import open_store

        store = open_store(bench.root, backend, url)
    return spec.build(name, bench, store, **opts)


# --- built-in retrievers -----------------------------------------------------------------

def _payload_builder(cls_path: str) -> Builder:
    def build(name: str, bench: Benchmark, store: Store, *, auto_ingest: bool | None = None,
              notify: Callable[[str], None] | None = None, **_: Any) -> Retriever:
        import importlib

        from reasonaudio.store.ingest import ensure_payload_collection

        module, cls = cls_path.rsplit(".", 1)
        collection = ensure_payload_collection(bench, store, auto=auto_ingest, notify=notify)
        return getattr(importlib.import_module(module), cls)(bench, store, collection)

    return build


register(RetrieverSpec(
    "oracle", _payload_builder("reasonaudio.retrievers.oracle.OracleRetriever"),
    "parse the text into logic, run it as a Qdrant payload filter (upper bound)",
    needs_logic=True))
register(RetrieverSpec(
    "bag-of-sounds", _payload_builder("reasonaudio.retrievers.baselines.BagOfSoundsRetriever"),
    "ground-truth labels: count the mentioned sounds a clip contains (no reasoning)",
    needs_logic=True))
register(RetrieverSpec(
    "random", _payload_builder("reasonaudio.retrievers.baselines.RandomRetriever"),
    "uniform scores seeded by benchmark seed + query text (chance level)"))
