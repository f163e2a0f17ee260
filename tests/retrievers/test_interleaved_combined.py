"""Interleaved queries through the hybrid and fusion retrievers (issue 28): each part reads the
example by its own reading (``per-part``), the combiner still sends one Qdrant query per search.

A small synthetic build with ``--interleaved 0.5`` (64 clips, 16 queries: ten interleaved
variants, each task twice), a detected collection with random evidence
(``test_qdrant_formula``'s), the oracle-caption + MiniLM collection and the tiny random-weight
CLAP. The tagger's hearing of the examples is set by hand (right on every example, or wrong on
every one), so what each part reads is known exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from model_fixtures import tiny_clap_path
from test_interleaved import heard_as
from test_interleaved_models import build_and_ingest
from test_combined_retrievers import Counting
from detected_helpers import detected_payloads, write_detected

from reasonaudio.evaluation.by_example import by_example, evaluate_interleaved
from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers, run_retriever
from reasonaudio.querylang.examples import names_in
from reasonaudio.querylang.parser import parse, same_logic
from reasonaudio.dataset.interleaved import INTERLEAVED, examples, interleaved_rows
from reasonaudio.detect.perceive_examples import Heard
from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.retrievers.example_readers import (AudioTextReader, ExampleSet, PartsReader,
                                                    with_examples)
from reasonaudio.retrievers.registry import get_retriever
from reasonaudio.store.open import open_store

OC = "two-stage:oracle-caption+minilm"
BM25 = "two-stage:oracle-caption+bm25"
TEXT_PARTS = [f"hybrid:{OC},soft:yamnet", f"rrf:{OC},soft:yamnet", f"dbsf:{OC},soft:yamnet",
              f"rrf:{OC},{BM25}"]
AUDIO = "hybrid:clap,soft:yamnet"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    def detected(b, store):
        write_detected(b, store, *detected_payloads(b))

    # 64 clips, 16 queries: the ten variants (two per task) that 80 and 20 gave, and a detected
    # collection still of two segments (32 points each; with 24 each it came out as one)
    return build_and_ingest(tmp_path_factory.mktemp("il-combined") / "b", 64, 16, (OC,), detected)


def _heard(bench, right: bool) -> ExampleSet:
    """The build's examples, the tagger hearing each one as its true label (``right``) or as
    another label of the bank (the first one that is not it)."""
    return heard_as(bench, lambda ex: ex.label if right else next(x for x in bench.labels
                                                                   if x != ex.label))


def _context(save: bool = True) -> EvalContext:
    return EvalContext(save=save, retriever_options={
        AUDIO: RetrieverOptions(model_path=str(tiny_clap_path()))})


def test_combined_retrievers_read_each_part_its_way_and_score_as_named_when_heard_right(built):
    """Heard right, every part of a text + soft combination reads exactly the named query (the
    caption part the true label's caption, the soft part the true label), so each variant's
    Qdrant query is its named twin's, and the hybrid scores as named query by query; the audio
    part reads the example's audio (audio+text). (RRF and DBSF over a soft part are compared by
    their query, not their answers: Qdrant fuses the soft part's tied scores in an arbitrary
    order, so two identical fusion queries can answer differently.)"""
    b = built
    names = [*TEXT_PARTS, AUDIO]
    hybrid = f"hybrid:{OC},soft:yamnet"
    named = evaluate_retrievers(b, [hybrid], _context())
    inter = evaluate_interleaved(b, names, _context(), example_set=_heard(b, right=True))
    rows = interleaved_rows(b.files)
    for name in names:
        r = inter.runs[f"{name}@interleaved"]
        assert set(r.per_query) == set(rows) and not r.failures, (name, r.failures)
        assert r.describe["examples"].startswith("per-part ("), name
    for q in rows:  # the hybrid's formula over the model's nearest: the same answers
        assert inter.runs[f"{hybrid}@interleaved"].per_query[q] == named.runs[hybrid].per_query[q], q
    view = b.with_view(INTERLEAVED)
    found = _heard(b, right=True)
    with open_store(b.root) as store:
        for name in TEXT_PARTS:  # each variant's one Qdrant query is its named twin's, exactly
            plain = get_retriever(name, b, store=store)
            reader = with_examples(get_retriever(name, view, store=store), found)
            for q in view.queries:
                twin = b.query_by_id[q.id].text
                assert reader.inner.request(q.text, 15) == plain.request(twin, 15), (name, q.id)
            plain.close()
            reader.close()
    readings = {n: inter.runs[f"{n}@interleaved"].describe["part_readings"] for n in names}
    assert readings[f"hybrid:{OC},soft:yamnet"] == {OC: "oracle-caption", "soft:yamnet": "tagger-label"}
    assert readings[f"rrf:{OC},{BM25}"] == {OC: "oracle-caption", BM25: "oracle-caption"}
    assert readings[AUDIO] == {"clap": "audio+text", "soft:yamnet": "tagger-label"}
    assert inter.runs[f"hybrid:{OC},soft:yamnet@interleaved"].describe["heard"] == {
        n: e.label for n, e in sorted(examples(b.files).items())}
    table = {r.name: r for r in by_example(b).rows}
    assert table[hybrid].reading == "per-part (oracle-caption + tagger-label)"
    assert all(t.delta("acc@1") == 0.0 for t in table[hybrid].tasks)


def test_misheard_example_each_part_by_its_own_reading_one_query_per_search(built):
    """Heard wrong: the caption part still reads the true label (its reading is the ground-truth
    caption), the soft part the tagger's wrong label, the audio part the example's audio; and a
    run over the variants sends exactly one Qdrant query per search."""
    b = built
    view = b.with_view(INTERLEAVED)
    found = _heard(b, right=False)
    truth = examples(b.files)
    with open_store(b.root) as store:
        for name in [*TEXT_PARTS, AUDIO]:
            opts = RetrieverOptions(model_path=str(tiny_clap_path())) if name == AUDIO else RetrieverOptions()
            counting = Counting(store)
            reader = with_examples(get_retriever(name, view, opts, store=counting), found)
            assert isinstance(reader, PartsReader)
            combined = reader.inner
            before = counting.requests
            failures: dict[str, str] = {}
            run = run_retriever(view, reader, depth=10, failures=failures)
            assert counting.requests - before == len(view.queries), name
            assert len(run.hits) == len(view.queries) and not failures, (name, failures)
            for q in view.queries[:4]:
                (ex,) = names_in(q.text)
                true_text = q.text.replace(f"<audio:{ex}>", truth[ex].label)
                heard_text = q.text.replace(f"<audio:{ex}>", found.heard(ex).label)
                if combined.soft is not None:
                    assert same_logic(combined._logic(q.text), parse(heard_text, view.labels))
                    assert not same_logic(combined._logic(q.text), parse(true_text, view.labels))
                first = combined.parts[0]
                got = combined.part_request(first, q.text, 7)
                if name == AUDIO:
                    audio = next(p for p in reader.parts if isinstance(p, AudioTextReader))
                    np.testing.assert_allclose(got.nearest, audio.vector(q.text), rtol=1e-6)
                else:
                    assert got == combined.part_request(first, true_text, 7), name
            reader.close()


def test_a_part_that_cannot_read_the_example_refuses_that_query_only(built):
    """The tagger hears nothing in one example: the soft part cannot read that variant, so the
    combination refuses it (scores 0) and answers the others."""
    b = built
    found = _heard(b, right=True)
    silent = sorted(examples(b.files))[0]
    found._heard[silent] = Heard(None, 0.0, (), "silence")
    got = evaluate_interleaved(b, [f"hybrid:{OC},soft:yamnet"], _context(save=False), example_set=found)
    r = got.runs[f"hybrid:{OC},soft:yamnet@interleaved"]
    refused = {q for q, row in interleaved_rows(b.files).items() if silent in row.examples}
    assert refused and set(r.failures) == refused
    assert r.describe["example_formula"] is not None
