"""``bench search``: one query read into logic, answered by one retriever, with what a person
needs to judge the hits (each hit's caption where the retriever reads one).

Audio examples (``<audio:NAME>`` in the text, ``--example NAME=PATH``) are read first: a label
the parser may use for each, then the retriever reads them its own way (docs/interleaved.md).
Text that does not parse is refused for a retriever that needs logic; any other retriever still
searches, and the outcome says why no constraint can be checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.errors import QueryParseError
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.querylang.parser import ResolveOptions, parse_detailed
from reasonaudio.retrievers.base import Hit, RetrieverOptions
from reasonaudio.retrievers.registry import get_retriever, spec_for
from reasonaudio.store.base import Store


@dataclass(frozen=True)
class ExamplesRead:
    """Event: the query's audio examples were read (each named example -> how it was heard)."""

    readings: dict[str, Any]
    notes: Any


@dataclass(frozen=True)
class NoConstraintChecks:
    """Event: the text did not parse; a retriever that needs no logic searches anyway."""

    reason: str


@dataclass
class SearchOutcome:
    """One query's answer: the text searched, its logic (None where it did not parse), the parse
    (its label resolutions), the hits, their captions, and the audio examples read."""

    text: str
    logic: Any
    parsed: Any
    hits: list[Hit]
    captions: dict[str, str] = field(default_factory=dict)
    examples: Any = None


def search_one(bench: BenchmarkView, text: str, retriever: str, k: int, store: Store,
               options: RetrieverOptions = RetrieverOptions(), resolve: ResolveOptions | None = None,
               example_files: Sequence[str] = (), captions: bool = True,
               hooks: Hooks = SILENT) -> SearchOutcome:
    """Answer ``text`` (or a benchmark query's id) with ``retriever`` over ``store``: its ``k``
    best clips. ``resolve``: the parser's label resolution options (default: the parser's).
    ``hooks`` receive :class:`ExamplesRead` and :class:`NoConstraintChecks` as they happen."""
    from reasonaudio.retrievers.stored_vectors import resolve_query_text

    text = resolve_query_text(bench, text)  # a benchmark query's id stands for its text
    spec = spec_for(retriever)
    resolve = resolve if resolve is not None else ResolveOptions()
    examples = None
    if example_files or "<audio:" in text:
        from reasonaudio.retrievers.example_readers import ExampleSet

        examples = ExampleSet.for_search(bench, text, example_files)  # hostile files: one line
        resolve = replace(resolve, examples=examples.true_labels())
        hooks.event(ExamplesRead({n: examples.heard(n) for n in examples.given if f"<audio:{n}>" in text},
                                 examples.notes))
    parsed, logic = None, None
    try:
        parsed = parse_detailed(text, bench.labels, resolve)
        logic = parsed.logic
    except QueryParseError as exc:
        if spec.needs_logic or not text.strip():
            raise
        hooks.event(NoConstraintChecks(str(exc)))
    found = get_retriever(retriever, bench, options.merged(resolve=resolve), store=store)
    if examples is not None:
        from reasonaudio.retrievers.example_readers import with_examples

        found = with_examples(found, examples)
        by_detector = {n: h for n, h in examples.detector_heard().items() if f"<audio:{n}>" in text}
        if by_detector:  # the retriever reads examples by its trained detector: say what it heard
            hooks.event(ExamplesRead(by_detector, []))
    if logic is not None:
        found.reuse_parse(text, logic, resolve)  # parsed once: above, kept where read alike
    with found:
        hits = found.search(text, k)
        shown = found.captions([h.clip_id for h in hits]) if captions else {}
    return SearchOutcome(text, logic, parsed, hits, shown, examples)
