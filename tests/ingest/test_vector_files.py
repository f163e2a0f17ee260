"""`bench ingest --vectors`: a model's vectors brought from elsewhere evaluate like the model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.view import load_benchmark

runner = CliRunner()
MODEL = "two-stage:oracle-caption+minilm"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict:
    """A small benchmark with MODEL ingested and evaluated, and its stored clip vectors plus its
    query vectors written out as .npy files with id lists, as a user's own model would."""
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.retrievers.registry import get_retriever

    root = tmp_path_factory.mktemp("byo-vectors")
    data = root / "bench"
    build_benchmark(data, BuildParams(atoms="synthetic", seed=5, n_clips=60, n_queries=10))
    res = runner.invoke(app, ["ingest", "--data", str(data), "--model", MODEL])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", MODEL, "--json", str(root / "model.json")])
    assert res.exit_code == 0, res.output
    bench = load_benchmark(data)
    retriever = get_retriever(MODEL, bench)
    try:
        clip_ids = [c.id for c in bench.clips][::-1]  # any row order: ids say which row is which
        np.save(root / "clips.npy", retriever.clip_vectors(clip_ids))
        np.save(root / "queries.npy", retriever.embedder.embed_text([q.text for q in bench.queries]))
    finally:
        retriever.store.close()
    (root / "clip_ids.txt").write_text("\n".join(clip_ids) + "\n")
    (root / "query_ids.txt").write_text("\n".join(q.id for q in bench.queries) + "\n")
    figures = json.loads((root / "model.json").read_text())["runs"][MODEL]
    return {"root": root, "data": data, "figures": figures}


def _files(e: dict, **over: Path) -> list[str]:
    r = e["root"]
    files = {"vectors": r / "clips.npy", "ids": r / "clip_ids.txt",
             "query-vectors": r / "queries.npy", "query-ids": r / "query_ids.txt", **over}
    out = []
    for flag, path in files.items():
        out += [f"--{flag}", str(path)]
    return out


def _copy(e: dict, tmp_path: Path) -> Path:
    dst = tmp_path / "bench"
    shutil.copytree(e["data"], dst, ignore=shutil.ignore_patterns("results", "qdrant"))
    return dst


def _collections(data: Path) -> list[str]:
    from reasonaudio.store.open import open_store

    with open_store(data) as store:
        return sorted(store.collections())


def test_precomputed_npy_evaluates_like_the_model(exported, tmp_path):
    data = _copy(exported, tmp_path)
    res = runner.invoke(app, ["ingest", "--data", str(data), "--name", "mine", *_files(exported)])
    assert res.exit_code == 0, res.output
    assert "vectors:mine" in res.output
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "vectors:mine", "--json",
                              str(tmp_path / "v.json")])
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "v.json").read_text())["runs"]["vectors:mine"]
    for key in ("overall", "per_task", "per_query"):
        assert got[key] == exported["figures"][key], key
    from reasonaudio.store.open import open_store

    with open_store(data) as store:
        meta = store.meta("reasonaudio-vectors-mine")
        assert (meta.dimension, meta.distance, meta.state) == (384, "cosine", "complete")
        assert meta.extra["source"]["vectors_sha256"]
        one = store.retrieve("reasonaudio-vectors-mine", ["clip-00000"], fields=True)[0]
        assert one.payload["events"] and one.payload["labels"]  # the event payload, like any model
    # ingesting the same files again is a no-op; other vectors under the name need --force
    res = runner.invoke(app, ["ingest", "--data", str(data), "--name", "mine", *_files(exported)])
    assert res.exit_code == 0 and "already complete" in res.output, res.output
    np.save(tmp_path / "other.npy", np.load(exported["root"] / "clips.npy") * 2 + 1)
    res = runner.invoke(app, ["ingest", "--data", str(data), "--name", "mine",
                              *_files(exported, vectors=tmp_path / "other.npy")])
    assert res.exit_code == 2 and "--force" in res.output, res.output


def test_precomputed_parquet_reads_like_npy(exported, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    data = _copy(exported, tmp_path)
    clips = np.load(exported["root"] / "clips.npy")
    pq.write_table(pa.table({"embedding": list(clips)}), tmp_path / "clips.parquet")
    res = runner.invoke(app, ["ingest", "--data", str(data), "--name", "pq",
                              *_files(exported, vectors=tmp_path / "clips.parquet")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "vectors:pq", "--json", str(tmp_path / "p.json")])
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "p.json").read_text())["runs"]["vectors:pq"]
    assert got["per_query"] == exported["figures"]["per_query"]


def _bad(tmp_path: Path, exported: dict, kind: str) -> dict:
    r = exported["root"]
    clips = np.load(r / "clips.npy")
    ids = (r / "clip_ids.txt").read_text().split()
    queries = np.load(r / "queries.npy")
    if kind == "wrong dimension":
        np.save(tmp_path / "q.npy", queries[:, :100])
        return {"query-vectors": tmp_path / "q.npy"}
    if kind == "missing ids":
        np.save(tmp_path / "c.npy", clips[:-1])
        (tmp_path / "ids.txt").write_text("\n".join(ids[:-1]) + "\n")
        return {"vectors": tmp_path / "c.npy", "ids": tmp_path / "ids.txt"}
    if kind == "NaN":
        bad = clips.copy()
        bad[7, 3] = np.nan
        np.save(tmp_path / "c.npy", bad)
        return {"vectors": tmp_path / "c.npy"}
    if kind == "inf":
        bad = clips.astype(np.float64)
        bad[2, 0] = 1e300  # beyond float32
        np.save(tmp_path / "c.npy", bad)
        return {"vectors": tmp_path / "c.npy"}
    if kind == "unknown ids":
        (tmp_path / "ids.txt").write_text("\n".join(ids[:-1] + ["clip-99999"]) + "\n")
        return {"ids": tmp_path / "ids.txt"}
    if kind == "unknown query ids":
        qids = (r / "query_ids.txt").read_text().split()
        (tmp_path / "qids.txt").write_text("\n".join(qids[:-1] + ["q-9999"]) + "\n")
        return {"query-ids": tmp_path / "qids.txt"}
    if kind == "duplicate id":
        (tmp_path / "ids.txt").write_text("\n".join(ids[:-1] + [ids[0]]) + "\n")
        return {"ids": tmp_path / "ids.txt"}
    if kind == "rows != ids":
        np.save(tmp_path / "c.npy", clips[:-3])
        return {"vectors": tmp_path / "c.npy"}
    if kind == "zero vector":
        bad = clips.copy()
        bad[0] = 0
        np.save(tmp_path / "c.npy", bad)
        return {"vectors": tmp_path / "c.npy"}
    if kind == "1-d":
        np.save(tmp_path / "c.npy", clips[:, 0])
        return {"vectors": tmp_path / "c.npy"}
    raise AssertionError(kind)


@pytest.mark.parametrize("kind, message", [
    ("wrong dimension", "dimension 100"), ("missing ids", "have no vector"), ("NaN", "NaN"),
    ("inf", "inf"), ("unknown ids", "unknown clip id"), ("unknown query ids", "unknown query id"),
    ("duplicate id", "appears twice"), ("rows != ids", "rows but"), ("zero vector", "all zeros"),
    ("1-d", "2-D"),
])
def test_bad_vectors_one_line_exit_2_store_untouched(exported, tmp_path, kind, message):
    data = _copy(exported, tmp_path)
    before = _collections(data)
    res = runner.invoke(app, ["ingest", "--data", str(data), "--name", "bad",
                              *_files(exported, **_bad(tmp_path, exported, kind))])
    assert res.exit_code == 2, res.output
    assert message in res.output, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
    assert _collections(data) == before
    assert not any("vectors" in c for c in before)


def test_flag_combinations(exported, tmp_path):
    data = _copy(exported, tmp_path)
    r = exported["root"]
    for args in (["--vectors", str(r / "clips.npy"), "--name", "x"],
                 ["--vectors", str(r / "clips.npy"), "--ids", str(r / "clip_ids.txt")],
                 ["--model", "none", "--vectors", str(r / "clips.npy")],
                 [],
                 ["--name", "bad name!", *_files(exported)],
                 ["--name", "x", "--vectors", str(r / "clips.npy"), "--ids", str(r / "clip_ids.txt"),
                  "--query-vectors", str(r / "queries.npy")]):
        res = runner.invoke(app, ["ingest", "--data", str(data), *args])
        assert res.exit_code == 2, (args, res.output)
        assert len(res.output.strip().splitlines()) == 1, res.output


def test_search_by_query_id_or_text_shows_checks(exported, tmp_path):
    data = _copy(exported, tmp_path)
    res = runner.invoke(app, ["ingest", "--data", str(data), "--name", "mine", *_files(exported)])
    assert res.exit_code == 0, res.output
    q = load_benchmark(data).queries[0]
    by_id = runner.invoke(app, ["search", q.id, "--data", str(data), "-r", "vectors:mine", "-k", "3"])
    assert by_id.exit_code == 0, by_id.output
    flat = " ".join(by_id.output.split())  # whatever the console width wrapped
    assert q.text in flat and "C1" in by_id.output and ("✓" in by_id.output or "✗" in by_id.output)
    js_id = runner.invoke(app, ["search", q.id, "--data", str(data), "-r", "vectors:mine", "--json"])
    js_text = runner.invoke(app, ["search", q.text, "--data", str(data), "-r", "vectors:mine", "--json"])
    assert js_id.exit_code == 0 and js_text.exit_code == 0
    assert json.loads(js_id.output) == json.loads(js_text.output)
    assert len(json.loads(js_id.output)["hits"]) == 10
    other = runner.invoke(app, ["search", "some text no query has", "--data", str(data),
                                "-r", "vectors:mine"])
    assert other.exit_code == 2 and "only for the benchmark's queries" in other.output


def test_without_query_vectors_the_retriever_says_what_is_missing(exported, tmp_path):
    data = _copy(exported, tmp_path)
    r = exported["root"]
    res = runner.invoke(app, ["ingest", "--data", str(data), "--name", "noq", "--vectors",
                              str(r / "clips.npy"), "--ids", str(r / "clip_ids.txt")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "vectors:noq"])
    assert res.exit_code == 2 and "no query vectors" in res.output, res.output
    res = runner.invoke(app, ["eval", "--data", str(data), "-r", "vectors:never"])
    assert res.exit_code == 2 and "not found" in res.output, res.output


def test_every_distance_ranks_nearest_first(exported, tmp_path):
    """Random vectors, brute force in numpy: Qdrant's euclid/manhattan scores are distances, so
    the retriever negates them (higher is better everywhere, as the tie rule and MC assume)."""
    from reasonaudio.retrievers.registry import get_retriever
    from reasonaudio.store.open import open_store

    data = _copy(exported, tmp_path)
    bench = load_benchmark(data)
    rng = np.random.default_rng(1)
    clips = rng.normal(size=(len(bench.clips), 8)).astype(np.float32)
    queries = rng.normal(size=(len(bench.queries), 8)).astype(np.float32)
    np.save(tmp_path / "c.npy", clips)
    np.save(tmp_path / "q.npy", queries)
    ids = [c.id for c in bench.clips]
    (tmp_path / "c.txt").write_text("\n".join(ids))
    (tmp_path / "q.txt").write_text("\n".join(q.id for q in bench.queries))
    c = clips.astype(np.float64)
    for distance in ("dot", "euclid", "manhattan", "cosine"):
        res = runner.invoke(app, ["ingest", "--data", str(data), "--name", f"rnd-{distance}",
                                  "--distance", distance,
                                  "--vectors", str(tmp_path / "c.npy"), "--ids", str(tmp_path / "c.txt"),
                                  "--query-vectors", str(tmp_path / "q.npy"),
                                  "--query-ids", str(tmp_path / "q.txt")])
        assert res.exit_code == 0, res.output
        with open_store(data) as store:
            retriever = get_retriever(f"vectors:rnd-{distance}", bench, store=store)
            for qi, q in enumerate(bench.queries):
                v = queries[qi].astype(np.float64)
                good = {"dot": c @ v, "euclid": -np.linalg.norm(c - v, axis=1),
                        "manhattan": -np.abs(c - v).sum(axis=1),
                        "cosine": (c @ v) / np.linalg.norm(c, axis=1) / np.linalg.norm(v)}[distance]
                want = [ids[i] for i in np.argsort(-good, kind="stable")[:5]]
                assert [h.clip_id for h in retriever.search(q.text, 5)] == want, distance
                pair = retriever.score(q.text, [want[0], want[-1]])
                assert pair[0] > pair[1], distance
