"""Every retriever by name: one plain record per name (or per name family, e.g. ``two-stage:``).

Adding a retriever is one :class:`RetrieverSpec` in :data:`BUILT_IN` (or one :func:`register`
call from outside the package) whose ``build(name, bench, store, options)`` gets typed
:class:`~reasonaudio.retrievers.base.RetrieverOptions`. The registry opens the store (embedded by
default, a server with ``url`` / ``QDRANT_URL``) so every retriever reaches Qdrant the same way.
Model-backed builders load their weights only when called, so listing names stays cheap.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from reasonaudio.querylang.ablation import ABLATIONS, Ablation
from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import ReasonAudioError
from reasonaudio.ingest.vector_files import FAMILY as PRECOMPUTED
from reasonaudio.models.mteb_models import EXAMPLE as MTEB_EXAMPLE
from reasonaudio.models.mteb_models import PREFIX as MTEB
from reasonaudio.models.names import EXAMPLE as TWO_STAGE_EXAMPLE
from reasonaudio.models.names import (FUSION_EXAMPLE, HYBRID_EXAMPLE, TWO_STAGE, is_lexical, parse_combined,
                                      parse_two_stage)
from reasonaudio.models.names import ORACLE_PERCEIVED, SOFT
from reasonaudio.models.registry import RECORDS
from reasonaudio.retrievers.base import Retriever, RetrieverOptions
from reasonaudio.store.base import Store

if TYPE_CHECKING:
    from reasonaudio.querylang.resolve import ResolveOptions

Builder = Callable[[str, BenchmarkView, Store, RetrieverOptions], Retriever]
"""``build(name, bench, store, options) -> Retriever``"""

TRUTH = "ground truth"
"""reads the benchmark's true events, labels or captions: perfect hearing"""
HEARD = "perceived audio"
"""reads what a tagger or captioner heard in the clip's audio"""
LEARNED = "learned embedding"
"""reads the audio through a learned audio embedding (or vectors made elsewhere)"""
NOTHING = "nothing"
"""reads neither the clip nor its metadata (chance level)"""
UNKNOWN = "unknown"
"""a name the registry does not know (a run file scored with ``bench eval --run``)"""
INPUT_KINDS = (TRUTH, HEARD, LEARNED, NOTHING)
"""What a retriever reads about a clip, most privileged first (a combination reads the most
privileged of its parts' inputs: a hybrid over true captions has perfect hearing)."""
SHORT_KIND = {TRUTH: "truth", HEARD: "heard", LEARNED: "learned", NOTHING: "none", UNKNOWN: "?"}
"""the kind in one word, for narrow table cells"""


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
    """for a family: a full name to show in listings, e.g. ``two-stage:oracle-caption+minilm``"""
    reads: str | Callable[[str], str] = LEARNED
    """what the retriever reads about a clip (one of :data:`INPUT_KINDS`), or for a family whose
    members differ a function of the full name; every table reads it through :func:`input_kind`"""
    examples: str | Callable[[str, Retriever], str | None] | None = None
    """how it reads a sound given by example (``<audio:NAME>``, docs/interleaved.md): the name of
    a reading in ``READINGS`` (``retrievers/example_readers.py``), for a family whose members
    differ a function of the full name and the built retriever, or None: such a query is refused"""


def lazy(target: str) -> Callable[..., Any]:
    """The function or class ``"module:name"`` names, imported on first call: the registry is read
    by every listing, the explorer's start and each table's "reads" column, and importing every
    retriever module (qdrant-client, scipy through the renderer) would cost them seconds."""
    module, _, attr = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attr)(*args, **kwargs)

    call.__qualname__ = call.__name__ = attr
    return call


build_vector = lazy("reasonaudio.retrievers.vector:build_vector")
build_two_stage = lazy("reasonaudio.retrievers.two_stage:build_two_stage")
build_bm25 = lazy("reasonaudio.retrievers.bm25:build_bm25")
build_combined = lazy("reasonaudio.retrievers.combined:build_combined")
build_detected = lazy("reasonaudio.retrievers.detected:build_detected")
build_soft = lazy("reasonaudio.retrievers.soft_rank:build_soft")
build_precomputed = lazy("reasonaudio.retrievers.stored_vectors:build_precomputed")
build_oracle_perceived = lazy("reasonaudio.retrievers.oracle:build_oracle_perceived")
vector_reading = lazy("reasonaudio.retrievers.vector:example_reading")
two_stage_reading = lazy("reasonaudio.retrievers.two_stage:example_reading")
OracleRetriever = lazy("reasonaudio.retrievers.oracle:OracleRetriever")
AblatedOracle = lazy("reasonaudio.retrievers.oracle:AblatedOracle")
BagOfSoundsRetriever = lazy("reasonaudio.retrievers.baselines:BagOfSoundsRetriever")
RandomRetriever = lazy("reasonaudio.retrievers.baselines:RandomRetriever")
ensure_payload_collection = lazy("reasonaudio.store.collections:ensure_payload_collection")
open_store = lazy("reasonaudio.store.open:open_store")


class UnknownRetriever(ReasonAudioError):
    """A retriever name nobody registered."""


def two_stage_builder(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> Retriever:
    """Dense two-stage retrievers, or BM25 when the embedder is lexical (``+bm25``)."""
    if is_lexical(name):
        return build_bm25(name, bench, store, options)
    return build_two_stage(name, bench, store, options)


def two_stage_reads(name: str) -> str:
    """Ground truth for the true captions (``oracle-caption``), perceived audio for a captioner
    that listens (``yamnet-caption``, an audio-language model)."""
    return TRUTH if parse_two_stage(name, lexical=True)[0] == "oracle-caption" else HEARD


def detector_reading(name: str, retriever: Retriever | None = None) -> str:
    """``detected:``/``soft:``: a trained detector's retriever reads an example by that detector
    (``detector-label``), the others by the zero-shot tagger (``tagger-label``)."""
    from reasonaudio.detect.collection import parse_detected

    return "detector-label" if parse_detected(name)[1] == "trained" else "tagger-label"


def combined_reads(name: str) -> str:
    """The most privileged input among the two parts (:data:`INPUT_KINDS` order)."""
    return min((input_kind(p) for p in parse_combined(name).parts), key=_privilege)


def _privilege(kind: str) -> int:
    return INPUT_KINDS.index(kind) if kind in INPUT_KINDS else len(INPUT_KINDS)


def combined_builder(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> Retriever:
    """``hybrid:`` / ``rrf:`` / ``dbsf:``: the parts are built from this registry."""
    return build_combined(name, bench, store, options,
                          build_part=lambda part: spec_for(part).build(part, bench, store, options))


def payload_builder(cls: Callable[..., Retriever]) -> Builder:
    """Builder of a retriever over the ground-truth payload collection (loaded on demand);
    ``cls(bench, store, collection, resolve)`` makes it."""
    def build(name: str, bench: BenchmarkView, store: Store, options: RetrieverOptions) -> Retriever:
        collection = ensure_payload_collection(bench, store, auto=options.auto_ingest,
                                               hooks=options.hooks)
        return cls(bench, store, collection, options.resolve)

    return build


def ablation_spec(ablation: Ablation) -> "RetrieverSpec":
    """``oracle-without:FAMILY``: the oracle over the logic without one relation family."""
    def make(bench: BenchmarkView, store: Store, collection: str, resolve: ResolveOptions | None) -> Retriever:
        return AblatedOracle(bench, store, ablation.family, collection, resolve)

    return RetrieverSpec(ablation.retriever, payload_builder(make), f"the oracle without {ablation.family}: "
                         f"{ablation.measures}", needs_logic=True, reads=TRUTH)


BUILT_IN: tuple[RetrieverSpec, ...] = (
    RetrieverSpec("oracle", payload_builder(OracleRetriever),
                  "parse the text into logic, run it as a Qdrant payload filter (upper bound)",
                  needs_logic=True, reads=TRUTH, examples="true-label"),
    *(ablation_spec(a) for a in ABLATIONS),
    RetrieverSpec(ORACLE_PERCEIVED, build_oracle_perceived,
                  "the oracle; a sound given by example is read as the tagger's label for it "
                  "(perfect logic over perceived examples, docs/interleaved.md)", needs_logic=True,
                  reads=TRUTH, examples="tagger-label"),
    RetrieverSpec("bag-of-sounds", payload_builder(BagOfSoundsRetriever),
                  "ground-truth labels: count the mentioned sounds a clip contains (no reasoning)",
                  needs_logic=True, reads=TRUTH, examples="true-label"),
    RetrieverSpec("random", payload_builder(RandomRetriever),
                  "uniform scores seeded by benchmark seed + query text (chance level)",
                  reads=NOTHING, examples="as-written"),
    *(RetrieverSpec(r.name, build_vector, f"{r.description}: text tower -> cosine top-k over "
                    f"`bench ingest --model {r.name}`", examples=vector_reading)
      for r in RECORDS if r.has_audio and r.has_text),
    RetrieverSpec("trained:", build_vector,
                  "a `bench train` model under a label of your choice (several in one eval): "
                  "--model-path trained:LABEL=MODEL_DIR", family=True, example="trained:LABEL",
                  examples=vector_reading),
    RetrieverSpec(TWO_STAGE, two_stage_builder,
                  "caption every clip (oracle-caption | yamnet-caption | an audio-LLM captioner such "
                  "as qwen2-audio-7b-instruct), embed captions and the query with a text model "
                  "(minilm | bge-m3 | qwen3-embedding-*), or index them as Qdrant BM25 sparse vectors (+bm25)",
                  family=True, example=TWO_STAGE_EXAMPLE, reads=two_stage_reads, examples=two_stage_reading),
    RetrieverSpec(MTEB, build_vector,
                  "an MTEB audio-text model by its MTEB name (its audio and text encoders, its pinned "
                  "revision): `bench ingest --model mteb:NAME` first", family=True, example=MTEB_EXAMPLE,
                  examples=vector_reading),
    RetrieverSpec(PRECOMPUTED, build_precomputed,
                  "precomputed clip and query vectors from `bench ingest --vectors ... --name NAME` "
                  "(a model run elsewhere)", family=True, example="vectors:NAME", examples="variant-vectors"),
    RetrieverSpec("detected:", build_detected,
                  "YAMNet-detected events (bench detect) as payload: the oracle's filter on perceived "
                  "metadata, then a soft score (detected:yamnet, detected:yamnet-enrolled = optimistic, "
                  "detected:yamnet-trained = bench train-detector's model)",
                  needs_logic=True, family=True, example="detected:yamnet", reads=HEARD,
                  examples=detector_reading),
    RetrieverSpec(SOFT, build_soft,
                  "the soft logic over YAMNet-detected evidence as one Qdrant score formula per "
                  "query: every clip ranked, no hard filter (bench detect first)",
                  needs_logic=True, family=True, example="soft:yamnet", reads=HEARD,
                  examples=detector_reading),
    RetrieverSpec("hybrid:", combined_builder,
                  "a vector retriever's nearest N rescored by (1 - w) x its score + w x the soft "
                  "logic, in one Qdrant formula query", needs_logic=True, family=True,
                  example=HYBRID_EXAMPLE, reads=combined_reads, examples="per-part"),
    RetrieverSpec("rrf:", combined_builder,
                  "Qdrant reciprocal-rank fusion (k = 60) of two retrievers in one joint collection",
                  family=True, example=FUSION_EXAMPLE, reads=combined_reads, examples="per-part"),
    RetrieverSpec("dbsf:", combined_builder,
                  "Qdrant distribution-based score fusion of two retrievers in one joint collection",
                  family=True, example=FUSION_EXAMPLE.replace("rrf:", "dbsf:"), reads=combined_reads,
                  examples="per-part"),
)

_REGISTRY: dict[str, RetrieverSpec] = {s.name: s for s in BUILT_IN}


def register(spec: RetrieverSpec, *, replace: bool = False) -> RetrieverSpec:
    """Add a retriever from outside the package (a plugin, a test)."""
    if spec.family and not spec.name.endswith(":"):
        raise ValueError(f"family name {spec.name!r} must end with ':'")
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"retriever {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def retriever_names() -> list[str]:
    """Registered names in registration order; families shown by their example (or ``prefix*``)."""
    return [(s.example or f"{s.name}*") if s.family else s.name for s in _REGISTRY.values()]


def spec_for(name: str) -> RetrieverSpec:
    """The record for ``name`` (exact names first, then the longest matching family prefix)."""
    if name in _REGISTRY and not _REGISTRY[name].family:
        return _REGISTRY[name]
    families = [s for s in _REGISTRY.values() if s.family and name.startswith(s.name)]
    if families:
        return max(families, key=lambda s: len(s.name))
    known = retriever_names()
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownRetriever(f"unknown retriever {name!r}{hint} (known: {', '.join(known)})")


def get_retriever(name: str, bench: BenchmarkView, options: RetrieverOptions | None = None, *,
                  backend: str | None = None, url: str | None = None,
                  store: Store | None = None) -> Retriever:
    """Build retriever ``name`` over ``bench``; opens the store unless one is passed."""
    spec = spec_for(name)
    if store is None:
        store = open_store(bench.root, backend, url)
    return spec.build(name, bench, store, options or RetrieverOptions())


def input_kind(name: str) -> str:
    """What retriever ``name`` reads about a clip (:data:`INPUT_KINDS`), from its record (a saved
    result's: its key's name); :data:`UNKNOWN` for a name no record knows (or a malformed family
    member)."""
    try:
        reads = spec_for(name).reads
        return reads(name) if callable(reads) else reads
    except ReasonAudioError:
        return UNKNOWN
