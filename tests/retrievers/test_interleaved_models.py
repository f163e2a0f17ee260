"""Interleaved queries through the learned retrievers that run offline (issue 28): every one
evaluates on a build with interleaved queries, each by its reading; the audio+text composition
is the documented sum of normalised embeddings; an audio-language captioner reads an example as
its own caption of it, an omni embedder as one interleaved input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from model_fixtures import tiny_clap_path, tiny_omni_path, tiny_qwen2_audio_path
from typer.testing import CliRunner

from reasonaudio.evaluation.by_example import by_example, evaluate_interleaved
from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
from reasonaudio.querylang.examples import names_in, placeholder, substitute
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.dataset.interleaved import INTERLEAVED, example_path, examples, interleaved_rows
from reasonaudio.errors import ModelError, ReasonAudioError
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.ingest.run import IngestOptions, ingest_model
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
    n = len(interleaved_rows(b.files))
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
    b = bench.with_view(INTERLEAVED)
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


# --- model readers (issue 28): the audio-language captioners and the omni embedders ------------
# A two-stage retriever whose captioner is an audio-language model reads a placeholder as the
# caption that captioner writes for the example (``model-caption``, cached like the clips'
# captions); an omni embedder that declares ``interleaved_input`` embeds the query as one
# interleaved input (``interleaved``), one that does not gets the ``audio+text`` sum; a retriever
# with no reading is still refused in one line.

CAPTIONER = "qwen2-audio-7b-instruct"
TWO_STAGE = f"two-stage:{CAPTIONER}+minilm"
OMNI = "omniembed-v0.1"


@pytest.fixture(scope="module")
def model_built(tmp_path_factory):
    """A 24-clip interleaved build with the tiny Qwen2-Audio two-stage retriever and the tiny
    omni embedder ingested (their caches in a folder of their own)."""
    root = tmp_path_factory.mktemp("il-model-readers")

    def ingest(b, store):
        ingest_model(b, store, TWO_STAGE, IngestOptions(captioner_path=str(tiny_qwen2_audio_path())))
        ingest_model(b, store, OMNI, IngestOptions(model_path=str(tiny_omni_path())))

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REASONAUDIO_CACHE", str(root / "ingest-cache"))
        return build_and_ingest(root / "b", 24, 10, (), before=ingest)


@pytest.fixture()
def bench_copy(model_built, tmp_path, monkeypatch):
    """The build, with an empty cache of its own (examples are captioned afresh)."""
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    return model_built


def _example_wave(b, name, rate):
    wave, sr = sf.read(str(example_path(b.files, examples(b.files)[name])), dtype="float32")
    return resample(wave, sr, rate)


# --- audio-language captioners: model-caption --------------------------------------------------

def test_two_stage_model_captioner_reads_the_example_as_its_own_caption(bench_copy, monkeypatch,
                                                                       tmp_path):
    from reasonaudio.cli import app
    from reasonaudio.models.audio_llm import Qwen2AudioCaptioner
    from reasonaudio.models.batching import run_all
    from reasonaudio.models.captioners import get_captioner
    from reasonaudio.models.registry import load_model

    b = bench_copy
    path = str(tiny_qwen2_audio_path())

    calls = []
    run_units = Qwen2AudioCaptioner.run_units
    monkeypatch.setattr(Qwen2AudioCaptioner, "run_units",
                        lambda self, units: calls.append(len(units)) or run_units(self, units))
    embedded: list[str] = []
    text_model = type(load_model("minilm"))
    embed_queries = text_model.embed_queries
    monkeypatch.setattr(text_model, "embed_queries",
                        lambda self, texts: embedded.extend(texts) or embed_queries(self, texts))

    ctx = EvalContext(save=False, retriever_options={TWO_STAGE: RetrieverOptions(captioner_path=path)})
    first = evaluate_interleaved(b, [TWO_STAGE], ctx).runs[f"{TWO_STAGE}@interleaved"]
    rows = interleaved_rows(b.files)
    assert first.describe["examples"] == "model-caption" and not first.failures
    assert len(first.per_query) == len(rows)
    assert calls  # the examples were captioned by the model

    # each example captioned directly: its audio at the captioner's rate, the model's own units
    captioner = get_captioner(CAPTIONER, model_path=path)
    model = captioner.audio_model
    used = sorted({n for row in rows.values() for n in row.examples})
    waves = [_example_wave(b, n, model.sample_rate) for n in used]
    direct = dict(zip(used, (captioner.caption_from_rows(r) for r in run_all(
        model.run_units, model.unit_batch, model.pad_unit, [model.audio_units(w) for w in waves],
        model.unit_key))))
    assert first.describe["example_captions"] == direct
    want = {substitute(row.text, direct.get) for row in rows.values()}
    assert want <= set(embedded)
    assert not any("<audio:" in t for t in embedded)

    # asked again (a new retriever, a new captioner): every example caption from the cache
    calls.clear()
    again = evaluate_interleaved(b, [TWO_STAGE], ctx).runs[f"{TWO_STAGE}@interleaved"]
    assert calls == [] and again.per_query == first.per_query
    assert again.describe["example_captions"] == direct

    # the command line passes the captioner's weights the same way
    out = tmp_path / "inter.json"
    got = CliRunner().invoke(app, ["eval", "--data", str(b.root), "--interleaved", "-r", TWO_STAGE,
                                   "--captioner-path", path, "--json", str(out)], env={"COLUMNS": "160"})
    assert got.exit_code == 0, got.output
    assert calls == [] and "model-caption" in json.dumps(json.loads(out.read_text()))


def test_model_caption_refuses_a_captioner_other_than_the_collections(bench_copy, tmp_path):
    from reasonaudio.models.tiny_qwen import build_tiny_qwen2_audio

    b = bench_copy
    other = str(build_tiny_qwen2_audio(tmp_path / "other", seed=1))
    ctx = EvalContext(save=False, retriever_options={TWO_STAGE: RetrieverOptions(captioner_path=other)})
    with pytest.raises(ModelError, match=r"was captioned by qwen2-audio-7b-instruct weights .*"
                                         r"--captioner-path") as err:
        evaluate_interleaved(b, [TWO_STAGE], ctx)
    assert "\n" not in str(err.value)


# --- omni embedders: interleaved ---------------------------------------------------------------

def _omni_reader(b, store):
    view = b.with_view(INTERLEAVED)
    found = ExampleSet.of_build(view)
    r = get_retriever(OMNI, view, RetrieverOptions(model_path=str(tiny_omni_path())), store=store)
    return view, found, r, with_examples(r, found)


def _short_single_example_query(b):
    """An interleaved query with one example no longer than the twin's 5 s window."""
    for row in interleaved_rows(b.files).values():
        if len(row.examples) == 1 and examples(b.files)[row.examples[0]].duration <= 5.0:
            return row
    pytest.skip("no interleaved query with one short example in this build")


def test_omni_embedder_reads_the_query_as_one_interleaved_input(bench_copy):
    import torch

    from reasonaudio.retrievers.example_readers import READINGS

    b = bench_copy
    with open_store(b.root) as store:
        view, found, r, reader = _omni_reader(b, store)
        emb = r.embedder
        assert reader.reading.name == "interleaved"
        row = _short_single_example_query(b)
        (name,) = row.examples
        before, _, after = row.text.partition(placeholder(name))
        wave = _example_wave(b, name, emb.sample_rate)
        reader.prepare([row.text])
        got = r._prepared[row.text]

        # the hand-built message, through the embedder's own interleaved embedding
        parts = [p for p in (before, wave, after) if not isinstance(p, str) or p]
        assert np.array_equal(got, emb.embed_interleaved([parts])[0])
        # ... and through the thinker's own multimodal forward (input_features, its chat template)
        recipe = emb.recipe  # omniembed-v0.1: "Query: " before, no suffix, <|endoftext|> pooled
        assert recipe.query_prefix == "Query: " and not recipe.query_suffix and recipe.append_eos
        content = ([{"type": "text", "text": recipe.query_prefix + before}, {"type": "audio", "audio": name}]
                   + ([{"type": "text", "text": after}] if after else []))
        chat = emb.tokenizer.apply_chat_template([{"role": "user", "content": content}],
                                                 chat_template=emb.template, tokenize=False,
                                                 add_generation_prompt=recipe.add_generation_prompt)
        chat += "<|endoftext|>"
        feats = emb.features([wave], sampling_rate=emb.sample_rate, padding="max_length",
                             max_length=emb.window_frames * emb.features.hop_length, truncation=True,
                             return_attention_mask=True, return_tensors="pt")
        with torch.inference_mode():
            n = emb.model.get_audio_features(feats["input_features"], feats["attention_mask"]
                                             ).last_hidden_state.shape[0]
            ids = emb.tokenizer(chat.replace("<|AUDIO|>", "<|AUDIO|>" * n), add_special_tokens=False)["input_ids"]
            ref = emb.model(input_ids=torch.tensor([ids]), input_features=feats["input_features"],
                            feature_attention_mask=feats["attention_mask"],
                            attention_mask=torch.ones((1, len(ids)), dtype=torch.long)).last_hidden_state[0, -1]
        assert np.allclose(torch.nn.functional.normalize(ref, dim=-1).numpy(), got, atol=1e-5)

        # not the audio+text sum
        plus = next(x for x in READINGS if x.name == "audio+text")
        summed = AudioTextReader(r, plus, found).vector(row.text)
        assert not np.allclose(summed, got, atol=1e-3)
        reader.close()

    result = evaluate_interleaved(b, [OMNI], EvalContext(save=False, retriever_options={
        OMNI: RetrieverOptions(model_path=str(tiny_omni_path()))})).runs[f"{OMNI}@interleaved"]
    assert result.describe["examples"] == "interleaved" and not result.failures
    assert len(result.per_query) == len(interleaved_rows(b.files))


def test_an_embedder_without_the_capability_gets_audio_plus_text(bench_copy, monkeypatch):
    """The capability is the embedder's declared ``interleaved_input``, not its name."""
    from reasonaudio.models.omni import OmniEmbedder
    from reasonaudio.retrievers.example_readers import InterleavedReader

    b = bench_copy
    monkeypatch.setattr(OmniEmbedder, "interleaved_input", False)
    with open_store(b.root) as store:
        _, found, r, reader = _omni_reader(b, store)
        assert reader.reading.name == "audio+text"
        assert isinstance(reader, AudioTextReader) and not isinstance(reader, InterleavedReader)
        row = _short_single_example_query(b)
        reader.prepare([row.text])
        emb = r.embedder
        (name,) = row.examples
        t = emb.embed_queries([row.text.replace(placeholder(name), "this sound")])[0]
        a = emb.embed_audio([_example_wave(b, name, emb.sample_rate)])[0]
        want = (t / np.linalg.norm(t) + a / np.linalg.norm(a))
        assert np.allclose(r._prepared[row.text], want / np.linalg.norm(want), atol=1e-6)
        reader.close()


# --- no reading: refused -----------------------------------------------------------------------

def test_a_retriever_with_no_reading_is_refused_in_one_line():
    from reasonaudio.retrievers.base import Retriever
    from reasonaudio.retrievers.bm25 import Bm25Retriever
    from reasonaudio.retrievers.example_readers import reading_for

    class Mine(Retriever):
        name = "mine"

        def search(self, text, k):
            return []

    lexical = object.__new__(Bm25Retriever)  # BM25 over a model captioner's captions: no reading yet
    lexical.name = f"two-stage:{CAPTIONER}+bm25"
    for name, r in (("mine", Mine()), (lexical.name, lexical)):
        with pytest.raises(ReasonAudioError, match="no way to read a sound given by example") as err:
            reading_for(name, r)
        assert "\n" not in str(err.value) and name in str(err.value)
