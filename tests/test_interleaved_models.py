"""Interleaved queries through the learned retrievers that run offline (issue 28): every one
evaluates on a build with interleaved queries, each by its reading; the audio+text composition
is the documented sum of normalised embeddings."""

from __future__ import annotations

import numpy as np
import pytest
from model_fixtures import tiny_clap_path

from reasonaudio.bench.by_example import by_example, evaluate_interleaved
from reasonaudio.bench.evaluate import EvalContext, evaluate_retrievers
from reasonaudio.constraints.examples import names_in
from reasonaudio.dataset.benchmark import load_benchmark
from reasonaudio.dataset.interleaved import interleaved_rows, interleaved_view
from reasonaudio.ingest.build import BuildParams, build_benchmark
from reasonaudio.ingest.embed.run import IngestOptions, ingest_model
from reasonaudio.models.yamnet import resample
from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.retrievers.example_readers import (AUDIO_WORDS, AudioTextReader, ExampleReader,
                                                    ExampleSet, with_examples)
from reasonaudio.retrievers.registry import get_retriever
from reasonaudio.store.open import open_store

LEARNED = ["two-stage:oracle-caption+minilm", "two-stage:yamnet-caption+minilm",
           "two-stage:oracle-caption+bm25", "clap"]


def build_and_ingest(root, n_clips: int, n_queries: int, models, before=None):
    """A synthetic build with ``--interleaved 0.5``, ``before(bench, store)`` run first, then
    each text model of ``models`` and the tiny CLAP ingested."""
    build_benchmark(root, BuildParams(atoms="synthetic", seed=0, n_clips=n_clips,
                                      n_queries=n_queries, interleaved=0.5))
    b = load_benchmark(root)
    with open_store(b.root) as store:
        if before is not None:
            before(b, store)
        for model in models:
            ingest_model(b, store, model, IngestOptions())
        ingest_model(b, store, "clap", IngestOptions(model_path=str(tiny_clap_path())))
    return b


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    return build_and_ingest(tmp_path_factory.mktemp("il-models") / "b", 40, 10,
                            ("two-stage:oracle-caption+minilm", "two-stage:yamnet-caption+minilm"))


def _context():
    return EvalContext(retriever_options={"clap": RetrieverOptions(model_path=str(tiny_clap_path()))})


def test_every_offline_retriever_evaluates_by_example(ingested):
    b = ingested
    names = ["oracle", "oracle-perceived", "bag-of-sounds", "random", *LEARNED]
    evaluate_retrievers(b, names, _context())
    got = evaluate_interleaved(b, names, _context())
    n = len(interleaved_rows(b))
    readings = {}
    for name in names:
        r = got.runs[f"{name}@interleaved"]
        assert len(r.per_query) == n
        readings[name] = r.describe["examples"]
        if name != "oracle-perceived":  # the tagger may hear nothing: that query is refused
            assert not r.failures, (name, r.failures)
    assert readings == {"oracle": "true-label", "oracle-perceived": "tagger-label",
                        "bag-of-sounds": "true-label", "random": "as-written",
                        "two-stage:oracle-caption+minilm": "oracle-caption",
                        "two-stage:yamnet-caption+minilm": "tagger-caption",
                        "two-stage:oracle-caption+bm25": "oracle-caption", "clap": "audio+text"}
    assert {r.name for r in by_example(b).rows} == set(names)


def _first_variant(bench):
    """(the interleaved view, its examples, its first query, that query's example name)."""
    b = interleaved_view(bench)
    q = b.queries[0]
    (name,) = names_in(q.text)
    return b, ExampleSet.of_build(b), q, name


def test_caption_readers_see_the_examples_caption(ingested):
    b, found, q, name = _first_variant(ingested)
    with open_store(b.root) as store:
        oracle_cap = with_examples(get_retriever("two-stage:oracle-caption+minilm", b, store=store), found)
        yamnet_cap = with_examples(get_retriever("two-stage:yamnet-caption+minilm", b, store=store), found)
        assert isinstance(oracle_cap, ExampleReader)
        assert oracle_cap.text(q.text) == q.text.replace(f"<audio:{name}>", found.label(name))
        heard = found.heard(name).caption
        assert yamnet_cap.text(q.text) == q.text.replace(f"<audio:{name}>", heard)
        oracle_cap.close()
        yamnet_cap.close()


def test_audio_text_is_the_sum_of_normalised_embeddings(ingested):
    b, found, q, name = _first_variant(ingested)
    with open_store(b.root) as store:
        clap = get_retriever("clap", b, RetrieverOptions(model_path=str(tiny_clap_path())), store=store)
        reader = with_examples(clap, found)
        assert isinstance(reader, AudioTextReader)
        emb = clap.embedder
        t = emb.embed_queries([q.text.replace(f"<audio:{name}>", AUDIO_WORDS)])[0]
        wave, sr = found.audio(name)
        a = emb.embed_audio([resample(wave, sr, emb.sample_rate)])[0]
        want = t / np.linalg.norm(t) + a / np.linalg.norm(a)
        want /= np.linalg.norm(want)
        np.testing.assert_allclose(reader.vector(q.text), want, rtol=1e-5, atol=1e-6)
        hits = reader.search(q.text, 5)
        assert len(hits) == 5
        reader.close()
