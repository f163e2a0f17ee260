"""The MTEB bridges, offline, with a tiny random-weight audio-text model in MTEB's own shape.

One small build; ``mteb.evaluate`` runs the tiny model on the six ReasonAudio tasks (saving its
rankings); ``bench ingest --model mteb:NAME`` puts the same model's vectors into Qdrant; ``bench
eval`` scores both the ``mteb:`` retriever and MTEB's saved rankings (``--run``) and writes MTEB
result files. The differential test: MTEB's nDCG@10 and Recall@10 equal ``bench eval``'s.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from model_fixtures import tiny_clap_path
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.benchmark import MANIFEST, TASKS
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.evaluation.mteb_tasks import mteb_tasks, task_name, task_names
from reasonaudio.fileio import sha256_file
from reasonaudio.models.mteb_models import register

# mteb (and the tiny model, an mteb encoder) is imported by the tests, not at collection: every
# xdist worker collects every module, and importing mteb takes seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mteb") is None, reason="mteb is not installed")

runner = CliRunner()
TINY_MTEB_NAME = "reasonaudio/tiny-random-clap"
"""``reasonaudio.models.tiny_mteb.TINY_MTEB_NAME`` (a test below checks it), here because the parametrize
below reads it at collection"""
NAME = "mteb:" + TINY_MTEB_NAME
RATE = 16_000
MTEB_ROUNDING = 5e-6
"""MTEB rounds the scores it reports to 5 decimals"""


@pytest.fixture(scope="module")
def bridged(tmp_path_factory) -> dict:
    from reasonaudio.generator.build import BuildParams, build_benchmark

    import mteb

    from reasonaudio.models.tiny_mteb import tiny_mteb_meta

    root = tmp_path_factory.mktemp("mteb")
    data = root / "bench"
    build_benchmark(data, BuildParams(atoms="synthetic", seed=3, n_clips=30, n_queries=10))
    meta = register(tiny_mteb_meta(tiny_clap_path()), replace=True)
    tasks = mteb_tasks(data, sample_rate=RATE)
    result = mteb.evaluate(meta, tasks, cache=mteb.ResultCache(root / "mteb-cache"),
                           prediction_folder=root / "pred", show_progress_bar=False,
                           encode_kwargs={"batch_size": 8}, overwrite_strategy="always")
    mp = pytest.MonkeyPatch()
    mp.setenv("REASONAUDIO_CACHE", str(root / "cache"))
    try:
        res = runner.invoke(app, ["ingest", "--data", str(data), "--model", NAME])
        assert res.exit_code == 0, res.output
        pred = root / "pred" / f"{task_name(None)}_predictions.json"
        res = runner.invoke(app, ["eval", "--data", str(data), "-r", NAME, "--run", f"mteb-run={pred}",
                                  "--json", str(root / "eval.json"),
                                  "--mteb-results", str(root / "mteb-out")])
        assert res.exit_code == 0, res.output
    finally:
        mp.undo()
    scores = {tr.task_name: tr.scores["test"][0] for tr in result.task_results}
    return {"root": root, "data": data, "meta": meta, "tasks": tasks, "mteb": scores,
            "eval": json.loads((root / "eval.json").read_text())["runs"], "eval_output": res.output}


def _ours(run: dict, task: str | None) -> dict:
    return run["overall"] if task is None else run["per_task"][task]


@pytest.mark.parametrize("run", ["mteb-run", NAME])
def test_mteb_ndcg_and_recall_equal_bench_eval(bridged, run):
    """The differential test: for every task, MTEB's nDCG@10 and Recall@10 on the tiny model equal
    bench eval's, both on MTEB's saved rankings and on the same model's vectors in Qdrant."""
    ours = bridged["eval"][run]
    for task in (None, *TASKS):
        theirs = bridged["mteb"][task_name(task)]
        mine = _ours(ours, task)
        assert mine["ndcg@10"] == pytest.approx(theirs["ndcg_at_10"], abs=MTEB_ROUNDING), task
        assert mine["recall@10"] == pytest.approx(theirs["recall_at_10"], abs=MTEB_ROUNDING), task
    # not a vacuous agreement: the random model ranks some relevant clip into some top 10
    assert ours["overall"]["recall@10"] > 0


def test_rankings_untied_so_no_tie_rule_decides(bridged):
    assert "tied scores" not in bridged["eval_output"]


def test_task_metadata_names_the_build(bridged):
    data = bridged["data"]
    revision = sha256_file(data / MANIFEST)
    names = [t.metadata.name for t in bridged["tasks"]]
    assert names == task_names() == ["ReasonAudioT2ARetrieval"] + [
        f"ReasonAudio{t.capitalize()}T2ARetrieval" for t in TASKS]
    bench = load_benchmark(data)
    licences = {a.license for a in bench.atoms}
    for task in bridged["tasks"]:
        md = task.metadata
        assert md.revision == revision
        assert "2605.03361" in md.reference
        assert (md.type, md.category, md.main_score) == ("Any2AnyRetrieval", "t2a", "ndcg_at_10")
        assert all(lic in md.description for lic in licences)
    overall, negation = bridged["tasks"][0], bridged["tasks"][1]
    overall.load_data()  # mteb.evaluate unloads each task's data when done with it
    negation.load_data()
    split = overall.dataset["default"]["test"]
    assert list(split["corpus"]["id"]) == [c.id for c in bench.clips]
    assert sorted(split["queries"]["id"]) == sorted(q.id for q in bench.queries)
    neg_ids = set(negation.dataset["default"]["test"]["queries"]["id"])
    assert neg_ids == {q.id for q in bench.queries if q.task == "negation"}
    assert split["relevant_docs"] == {q: {c: 1 for c in cs} for q, cs in bench.qrels.items()}


def test_the_tiny_models_name_here_is_the_modules():
    from reasonaudio.models import tiny_mteb

    assert tiny_mteb.TINY_MTEB_NAME == TINY_MTEB_NAME


def test_collection_records_the_mteb_revision(bridged):
    import mteb

    from reasonaudio.store.base import collection_name
    from reasonaudio.store.open import open_store

    store = open_store(bridged["data"])
    try:
        meta = store.meta(collection_name(NAME))
    finally:
        store.close()
    assert meta.revision == bridged["meta"].revision
    identity = meta.extra["identity"]
    assert identity["mteb_model"] == TINY_MTEB_NAME
    assert identity["policy"]["mteb_version"] == mteb.__version__
    assert bridged["eval"][NAME]["describe"]["model"]["revision"] == bridged["meta"].revision


def test_mteb_run_file_is_recorded_as_mteb(bridged):
    describe = bridged["eval"]["mteb-run"]["describe"]
    assert describe["format"] == "mteb"
    assert describe["mteb_model_meta"] == {"model_name": TINY_MTEB_NAME,
                                           "revision": bridged["meta"].revision}


def test_written_mteb_results_load_in_mteb(bridged):
    from mteb.results import TaskResult

    out = bridged["root"] / "mteb-out" / "results"
    folder = out / TINY_MTEB_NAME.replace("/", "__") / bridged["meta"].revision
    files = sorted(p.name for p in folder.glob("*.json"))
    assert files == sorted(f"{n}.json" for n in task_names())
    revision = sha256_file(bridged["data"] / MANIFEST)
    ours = bridged["eval"][NAME]
    for task in (None, *TASKS):
        tr = TaskResult.from_disk(folder / f"{task_name(task)}.json")
        assert tr.dataset_revision == revision
        s = tr.scores["test"][0]
        assert s["main_score"] == s["ndcg_at_10"]
        assert s["ndcg_at_10"] == pytest.approx(_ours(ours, task)["ndcg@10"], abs=1e-6)
        assert s["hnsr_at_10"] == pytest.approx(_ours(ours, task)["hnsr@10"], abs=1e-6)
        # MTEB computed the same measure from its own ranking
        assert s["recall_at_10"] == pytest.approx(bridged["mteb"][task_name(task)]["recall_at_10"],
                                                  abs=MTEB_ROUNDING)
    # a run file has no model revision: filed under reasonaudio/<run name>
    run_folder = out / "reasonaudio__mteb-run" / "no_revision_available"
    assert (run_folder / "ReasonAudioT2ARetrieval.json").is_file()


def test_tasks_from_an_hf_export_match_the_benchmark(bridged, tmp_path):
    import numpy as np

    res = runner.invoke(app, ["export", "--data", str(bridged["data"]), "--to", str(tmp_path / "hf"),
                              "--format", "hf", "--sample-rate", str(RATE)])
    assert res.exit_code == 0, res.output
    exported = mteb_tasks(tmp_path / "hf", tasks=[None, "order"])
    direct = bridged["tasks"][0]
    assert exported[0].metadata.revision == direct.metadata.revision
    assert exported[1].metadata.name == task_name("order")
    exported[0].load_data()
    direct.load_data()
    a, b = exported[0].dataset["default"]["test"], direct.dataset["default"]["test"]
    assert list(a["corpus"]["id"]) == list(b["corpus"]["id"])
    assert a["relevant_docs"] == b["relevant_docs"]
    assert list(a["queries"]["text"]) == list(b["queries"]["text"])
    wa, wb = a["corpus"][0]["audio"], b["corpus"][0]["audio"]
    assert int(wa["sampling_rate"]) == int(wb["sampling_rate"]) == RATE
    assert np.max(np.abs(np.asarray(wa["array"]) - np.asarray(wb["array"]))) < 1e-3  # 16-bit FLAC


def test_subsets_split_the_queries(bridged):
    """A later split of the queries (formulations) is more subsets of the same tasks."""
    source = bridged["tasks"][0].source
    tasks = mteb_tasks(source, tasks=[None], subsets={"even": lambda q: q.id[-1] in "02468",
                                                      "odd": lambda q: q.id[-1] in "13579"})
    task = tasks[0]
    assert set(task.metadata.hf_subsets) == {"even", "odd"}
    task.load_data()
    even = set(task.dataset["even"]["test"]["queries"]["id"])
    odd = set(task.dataset["odd"]["test"]["queries"]["id"])
    assert even | odd == {q.id for q in source.queries} and not even & odd


def test_mrr_at_the_depth_equals_mtebs(bridged):
    """Our MRR reads the ranking to the eval depth (100 > 30 clips: the whole corpus), as MTEB's
    mrr_at_100 does; MTEB's mrr_at_10 would be cut at rank 10."""
    theirs = bridged["mteb"][task_name(None)]
    assert bridged["eval"]["mteb-run"]["overall"]["mrr"] == pytest.approx(theirs["mrr_at_100"],
                                                                          abs=MTEB_ROUNDING)


def test_search_explains_an_mteb_retrievers_hits(bridged):
    bench = load_benchmark(bridged["data"])
    text = bench.queries[0].text
    res = runner.invoke(app, ["search", text, "--data", str(bridged["data"]), "-r", NAME, "-k", "3",
                              "--json"])
    assert res.exit_code == 0, res.output
    hits = json.loads(res.output)["hits"]
    assert len(hits) == 3 and all(h["id"] in bench.clip_by_id for h in hits)
    res = runner.invoke(app, ["search", text, "--data", str(bridged["data"]), "-r", NAME, "-k", "3"])
    assert res.exit_code == 0, res.output
    assert hits[0]["id"] in res.output  # the timeline view of each hit


def test_run_reads_mtebs_prediction_folder(bridged):
    """``--run NAME=FOLDER``: where MTEB saves its rankings, the overall task's file is read."""
    res = runner.invoke(app, ["eval", "--data", str(bridged["data"]),
                              "--run", f"mteb-folder={bridged['root'] / 'pred'}",
                              "--json", str(bridged["root"] / "folder.json")])
    assert res.exit_code == 0, res.output
    run = json.loads((bridged["root"] / "folder.json").read_text())["runs"]["mteb-folder"]
    assert run["overall"] == bridged["eval"]["mteb-run"]["overall"]
    assert run["describe"]["path"].endswith("ReasonAudioT2ARetrieval_predictions.json")
    theirs = bridged["tasks"][0].prediction_file_name
    assert run["describe"]["path"].endswith(theirs)
