"""MTEB's audio-text models as embedders here: ``mteb:<MTEB model name>``.

MTEB (its audio side, MAEB) keeps a registry of models, each a ``ModelMeta`` with a pinned
revision and a loader that returns an encoder with one method,
``encode(DataLoader, *, task_metadata, hf_split, hf_subset, prompt_type)``: audio arrives as
``batch["audio"]``, a list of ``{"array", "sampling_rate"}`` items, text as ``batch["text"]``.
:class:`MtebEmbedder` wraps such an encoder behind this project's
:class:`~reasonaudio.models.base.Embedder`, feeding it exactly what ``mteb.evaluate`` feeds it
(the same ``create_dataloader`` over a ``datasets.Dataset``, with the metadata of the overall
ReasonAudio task), so ``bench ingest --model mteb:NAME`` and ``--retriever mteb:NAME`` put any
model MTEB knows through the whole testbed. The collection records the MTEB revision.

``mteb`` is imported only when an ``mteb:`` name is used (it takes seconds to import), so
``bench --help`` and every other command never load it. :func:`register` adds a ``ModelMeta`` to
MTEB's own registry (a model of yours, or the tiny random-weight model of the tests), after which
MTEB and this testbed both know it by name.

Only models that score by cosine similarity load here (collections are cosine); a model whose
``similarity_fn_name`` is dot or max-sim is refused with one line.
"""

from __future__ import annotations

import difflib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING, Any, Hashable, TypeAlias

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.base import Embedder, first_line, set_torch_threads, torch_device
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.windowing import l2_normalise

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.models.model_meta import ModelMeta
    from mteb.models.models_protocols import EncoderProtocol
    from torch.utils.data import DataLoader

PREFIX = "mteb:"
EXAMPLE = "mteb:laion/clap-htsat-unfused"
INSTALL = "pip install 'reasonaudio[mteb]'"
REFERENCE = "https://arxiv.org/abs/2605.03361"
OVERALL_TASK = "ReasonAudioT2ARetrieval"
"""the MTEB task over every query; per reasoning task ``ReasonAudio<Task>T2ARetrieval``"""
SPLIT = "test"
SUBSET = "default"
DEFAULT_SAMPLE_RATE = 16_000
"""audio rate for an MTEB wrapper that does not say its own (``sampling_rate`` attribute)"""
TEXT, AUDIO = "text", "audio"
MTEB_LICENCES = ("mit", "apache-2.0", "cc0-1.0", "cc-by-4.0", "cc-by-3.0", "cc-by-sa-4.0",
                 "cc-by-sa-3.0", "cc-by-nc-4.0", "gpl-3.0", "lgpl-3.0", "bsd-3-clause", "mpl-2.0")
"""licence ids MTEB's TaskMetadata accepts that atom banks use (lower-cased); others: ``multiple``
or ``not specified``, with the exact licences in the description"""


def is_mteb(name: str) -> bool:
    return name.startswith(PREFIX)


def mteb_name(name: str) -> str:
    """The MTEB model name inside ``mteb:NAME`` (a one-line error when empty)."""
    body = name[len(PREFIX):] if is_mteb(name) else name
    if not body.strip():
        raise ModelError(f"{name!r}: name an MTEB model, e.g. {EXAMPLE}")
    return body


def require_mteb() -> None:
    """A one-line error when mteb is not installed (without importing it)."""
    if importlib.util.find_spec("mteb") is None:
        raise ModelError(f"MTEB models, tasks and results need the mteb package, not installed here "
                         f"({INSTALL})")


def import_mteb() -> ModuleType:
    require_mteb()
    import mteb

    return mteb


def registry() -> dict[str, Any]:
    """MTEB's own model registry (name -> ModelMeta)."""
    import_mteb()
    from mteb.models.model_implementations import MODEL_REGISTRY

    return MODEL_REGISTRY


def register(meta: ModelMeta, *, replace: bool = False) -> ModelMeta:
    """Add a ``ModelMeta`` to MTEB's registry, so ``mteb.get_model_meta`` and ``mteb:NAME`` find it."""
    reg = registry()
    if meta.name in reg and not replace and reg[meta.name] is not meta:
        raise ValueError(f"MTEB model {meta.name!r} is already registered")
    reg[meta.name] = meta
    return meta


def model_meta(name: str) -> ModelMeta:
    """The ``ModelMeta`` of ``mteb:NAME`` from MTEB's registry (never the hub), checked to have an
    audio and a text side and to score by cosine."""
    body = mteb_name(name)

    reg = registry()
    meta = reg.get(body)
    if meta is None:
        close = difflib.get_close_matches(body, list(reg), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ModelError(f"MTEB knows no model {body!r}{hint} (mteb.get_model_metas() lists them)")
    modalities = set(meta.modalities or ())
    if not {AUDIO, TEXT} <= modalities:
        raise ModelError(f"MTEB model {body!r} handles {', '.join(sorted(modalities)) or 'nothing'}; "
                         "text-to-audio retrieval needs both audio and text")
    sim = str(getattr(meta.similarity_fn_name, "value", meta.similarity_fn_name) or "cosine").lower()
    if sim != "cosine":
        raise ModelError(f"MTEB model {body!r} scores by {sim}; collections here are cosine, so only "
                         "cosine models load")
    return meta


def record_for(name: str) -> ModelRecord:
    """A :class:`ModelRecord` for ``mteb:NAME`` made from its ``ModelMeta`` (pinned revision)."""
    meta = model_meta(name)
    dim = meta.embed_dim if isinstance(meta.embed_dim, int) else 0
    return ModelRecord(
        name=PREFIX + meta.name, kind="audio-text", hub_id=meta.name,
        revision=str(meta.revision or "unpinned"), towers=(AUDIO, TEXT), sample_rate=None,
        window_seconds=None, hop_seconds=None, pooling="the MTEB wrapper's own (whole clip in)",
        dimension=dim, distance="Cosine", licence=str(meta.license or "not specified"),
        loader="reasonaudio.models.mteb_models:load", extra="mteb", requires=("mteb",),
        weights="mteb", description=f"MTEB model {meta.name} through its MTEB encoder",
        notes=("weights as MTEB's loader finds them (the Hugging Face cache offline)",))


def task_metadata(name: str = OVERALL_TASK, *, description: str = "", revision: str = "unknown",
                  path: str = "reasonaudio", licence: str = "not specified",
                  eval_langs: list[str] | dict[str, list[str]] | None = None) -> TaskMetadata:
    """MTEB ``TaskMetadata`` of a ReasonAudio text-to-audio retrieval task (one source for the
    tasks of :mod:`reasonaudio.evaluation.mteb_tasks` and for the encode calls of
    :class:`MtebEmbedder`)."""
    import_mteb()
    from mteb.abstasks.task_metadata import TaskMetadata

    return TaskMetadata(
        name=name,
        description=description or "ReasonAudio: reasoning-intensive text-to-audio retrieval over "
                                   "composite clips (negation, order, overlap, duration, mix).",
        reference=REFERENCE,
        dataset={"path": path, "revision": revision},
        type="Any2AnyRetrieval", category="t2a", modalities=[TEXT, AUDIO],
        eval_splits=[SPLIT], eval_langs=eval_langs or ["eng-Latn"], main_score="ndcg_at_10",
        date=None, domains=None, task_subtypes=["Reasoning as Retrieval"],
        license=licence, annotations_creators="derived", dialect=[], sample_creation="created",
        bibtex_citation=BIBTEX)


BIBTEX = r"""
@misc{reasonaudio2026,
  title = {ReasonAudio: Reasoning-Intensive Text-to-Audio Retrieval},
  year = {2026},
  eprint = {2605.03361},
  archivePrefix = {arXiv},
}
"""


def mteb_licence(licences: set[str] | list[str]) -> str:
    """The TaskMetadata licence for a set of atom licences."""
    ids = {str(x).strip().lower() for x in licences if str(x).strip()}
    if len(ids) > 1:
        return "multiple"
    if len(ids) == 1 and next(iter(ids)) in MTEB_LICENCES:
        return next(iter(ids))
    return "not specified"


def encode(model: EncoderProtocol, rows: dict[str, list[Any]], prompt: str, meta: TaskMetadata | None = None,
           batch_size: int = 32) -> np.ndarray:
    """``model.encode`` over ``rows`` (columns ``id`` + ``text`` or ``audio``), batched as MTEB's
    retrieval evaluator batches a retrieval task's inputs (:func:`batches`)."""
    from mteb.types import PromptType

    meta = meta or task_metadata()
    prompt_type = PromptType.query if prompt == "query" else PromptType.document
    out = model.encode(batches(rows, prompt, batch_size), task_metadata=meta, hf_split=SPLIT,
                       hf_subset=SUBSET, prompt_type=prompt_type, show_progress_bar=False,
                       batch_size=batch_size)
    if hasattr(out, "detach"):
        out = out.detach().float().cpu().numpy()
    return np.asarray(out, dtype=np.float32)


def batches(rows: dict[str, list[Any]], prompt: str, batch_size: int) -> DataLoader:
    """A torch ``DataLoader`` over a ``datasets.Dataset`` of ``rows`` (MTEB's wrappers read the
    loader's ``dataset.features``), yielding MTEB's ``BatchedInput`` dicts in order: a query's
    ``text`` also as ``query`` (no instruction is added), a document's ``text`` also as ``body``,
    ``audio`` a list of ``{"array", "sampling_rate"}`` items (clips differ in length), every other
    column collated by torch. This is the input contract of an MTEB encoder's ``encode``
    (``mteb.types.BatchedInput``), built here so that no private MTEB module is imported."""
    from datasets import Dataset
    from torch.utils.data import DataLoader, default_collate

    ds = Dataset.from_dict(rows)
    if "text" in rows:
        ds = ds.add_column("query" if prompt == "query" else "body", list(rows["text"]))
    if AUDIO in rows:
        ds = ds.with_format("numpy", columns=[AUDIO], output_all_columns=True)

    def collate(batch: list[dict[str, Any]]) -> dict[str, Any]:
        return {key: [item[key] for item in batch] if key == AUDIO
                else default_collate([item[key] for item in batch]) for key in batch[0]}

    return DataLoader(ds, batch_size=batch_size, collate_fn=collate, shuffle=False)


MtebUnit: TypeAlias = "tuple[str, np.ndarray | str]"
"""(``audio``, samples) or (``text``, the text)"""


class MtebEmbedder(Embedder):
    """An MTEB encoder behind the project's Embedder: one unit per clip (the whole waveform, at
    the wrapper's own rate) or per query; vectors L2-normalised (cosine)."""

    def __init__(self, record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
                 batch_size: int | None = None) -> None:
        if model_path is not None:
            raise ModelError(f"{record.name}: MTEB loads its models by name and revision; "
                             "--model-path does not apply (put the weights in the Hugging Face cache)")
        self.record = record
        self.device = torch_device(device)
        self.meta = model_meta(record.name)
        set_torch_threads()
        try:
            self.model = self.meta.load_model(device=self.device)
        except Exception as exc:  # any loader failure (no weights offline, a missing package)
            raise ModelError(f"{record.name}: MTEB cannot load {self.meta.name!r} here "
                             f"({first_line(exc)})") from None
        self.revision = str(self.meta.revision or "unpinned")
        rate = getattr(self.model, "sampling_rate", None) or getattr(self.model, "sample_rate", None)
        self.sample_rate = int(rate or DEFAULT_SAMPLE_RATE)
        self.unit_batch = batch_size or 8
        self.task_meta = task_metadata()
        self.dimension = record.dimension or int(self._encode([(TEXT, "a sound")])[0].shape[0])

    def policy(self) -> dict[str, Any]:
        import mteb

        return {"kind": "mteb-encoder", "mteb_model": self.meta.name, "mteb_revision": self.revision,
                "mteb_version": mteb.__version__, "sample_rate": self.sample_rate,
                "input": "whole clip, one encode item"}

    def audio_units(self, wave: np.ndarray) -> list[Any]:
        if wave.size == 0:
            raise ModelError(f"model {self.name!r}: cannot embed an empty waveform")
        return [(AUDIO, np.asarray(wave, dtype=np.float32))]

    def text_units(self, text: str) -> list[Any]:
        return [(TEXT, text)]

    def unit_key(self, unit: MtebUnit) -> Hashable:
        return unit[0]

    def pad_unit(self, key: Hashable) -> MtebUnit:
        return (AUDIO, np.zeros(self.sample_rate, np.float32)) if key == AUDIO else (TEXT, "")

    def run_units(self, units: list[Any]) -> np.ndarray:
        return self._encode(units)

    def _encode(self, units: list[Any]) -> np.ndarray:
        ids = [str(i) for i in range(len(units))]
        if units[0][0] == TEXT:
            rows: dict[str, list[Any]] = {"id": ids, TEXT: [u[1] for u in units]}
            prompt = "query"
        else:
            rows = {"id": ids, AUDIO: [{"array": u[1], "sampling_rate": self.sample_rate} for u in units]}
            prompt = "document"
        try:
            out = encode(self.model, rows, prompt, self.task_meta, batch_size=len(units))
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"{self.name}: the MTEB encoder failed ({first_line(exc)})") from None
        if out.shape[0] != len(units):
            raise ModelError(f"{self.name}: the MTEB encoder returned {out.shape[0]} vectors for "
                             f"{len(units)} inputs")
        return out

    def pool(self, rows: np.ndarray) -> np.ndarray:
        return l2_normalise(rows[0])

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "mteb_model": self.meta.name}


def load(record: ModelRecord, *, model_path: str | None = None, device: str = "cpu",
         batch_size: int | None = None) -> MtebEmbedder:
    return MtebEmbedder(record, model_path=model_path, device=device, batch_size=batch_size)
