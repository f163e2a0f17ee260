"""Two-stage retrievers: audio -> caption -> text embedding, searched with the same text model.

``two-stage:CAPTIONER+EMBEDDER`` (e.g. ``two-stage:oracle-caption+minilm``) searches the
collection ``reasonaudio-two-stage-CAPTIONER-EMBEDDER`` made by
``bench ingest --model two-stage:CAPTIONER+EMBEDDER``; the query is embedded by EMBEDDER. With
``oracle-caption`` the captions are the ground truth, so what remains is whether a text embedder
can read order, overlap, duration and negation; the clip's caption sits in the payload
(:meth:`TwoStageRetriever.captions`).
"""

from __future__ import annotations

from typing import Sequence

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import StoreError
from reasonaudio.models.captioners import model_captioners
from reasonaudio.models.names import parse_two_stage
from reasonaudio.models.registry import dtype_for, load_model
from reasonaudio.retrievers.base import Retriever, RetrieverOptions
from reasonaudio.retrievers.vector import VectorRetriever, ingest_hint
from reasonaudio.dataset.conditions import collection_for
from reasonaudio.store.base import Store, collection_name


class TwoStageRetriever(VectorRetriever):
    options: RetrieverOptions = RetrieverOptions()
    """what it was built with (its captioner's weights, device, dtype)"""

    def check_compatible(self, command: str) -> None:
        if self.meta.dimension != self.embedder.dimension:
            raise StoreError(f"collection {self.collection!r} holds {self.meta.dimension}-d vectors; "
                             f"{self.embedder.name!r} makes {self.embedder.dimension}-d ones "
                             f"(rerun `{command} --force`)")
        if not self.meta.revision.endswith("+" + self.embedder.revision):
            raise StoreError(f"collection {self.collection!r} was embedded with other "
                             f"{self.embedder.name} weights ({self.meta.revision.split('+')[-1]}, "
                             f"loaded {self.embedder.revision}); rerun `{command} --force`")
        self.check_dtype(((self.meta.extra or {}).get("identity") or {}).get("embedder") or {}, command)

    def captions(self, clip_ids: Sequence[str]) -> dict[str, str]:
        """The stored caption of each clip (what the text model saw)."""
        found = self.store.retrieve(self.collection, list(clip_ids), fields=("clip_id", "caption"))
        return {f.clip_id: str((f.payload or {}).get("caption", "")) for f in found}


def build_two_stage(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> TwoStageRetriever:
    _, embedder_name = parse_two_stage(name)
    embedder = load_model(embedder_name, model_path=options.model_path, device=options.device,
                          batch_size=options.batch_size, dtype=dtype_for(embedder_name, options.dtype))
    collection = collection_for(collection_name(name), bench.condition.name)
    made = TwoStageRetriever(name, bench, store, embedder, collection=collection,
                             ingest_hint=ingest_hint(bench, name, options),
                             query_vectors=options.query_vectors)
    made.options = options  # how its captioner loads, should a sound given by example need it
    return made


def captioner_of(name: str) -> str | None:
    """The captioner a two-stage name (dense or BM25) names; None for another name."""
    try:
        return parse_two_stage(name, lexical=True)[0]
    except Exception:  # noqa: BLE001 - not a two-stage name
        return None


def example_reading(name: str, r: Retriever) -> str | None:
    """How a two-stage retriever reads a sound given by example (``RetrieverSpec.examples``):
    as its captioner would caption it, the true caption (``oracle-caption``), the tagger's
    (``tagger-caption``) or a dense retriever's audio-language captioner's (``model-caption``);
    None (refused) for BM25 over a model's captions."""
    captioner = captioner_of(name)
    if captioner == "oracle-caption":
        return "oracle-caption"
    if captioner == "yamnet-caption":
        return "tagger-caption"
    return "model-caption" if isinstance(r, TwoStageRetriever) and captioner in model_captioners() else None
