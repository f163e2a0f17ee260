"""`bench tune`: a combined retriever's N, w and RRF k chosen on the calibration build (another
seed), recorded with their source and grid, read back by the evaluated build's retrievers; the
evaluated build is never searched."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from hostile import one_line_error
from detected_helpers import detected_payloads, write_detected
from typer.testing import CliRunner

from reasonaudio.experiments import combine_tuning as ct
from reasonaudio.cli import app
from reasonaudio.dataset.benchmark import content_digest
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.errors import DataError
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.ingest.vector_files import PrecomputedOptions, VectorFiles, ingest_precomputed
from reasonaudio.retrievers.combined import PARAMS_FILE, combine_params
from reasonaudio.store.edge import EdgeStore

runner = CliRunner()
HYBRID = "hybrid:vectors:rnd,soft:yamnet"
RRF = "rrf:vectors:rnd,soft:yamnet"
DBSF = "dbsf:vectors:rnd,soft:yamnet"


def _parts(root, seed: int, clips: int, tmp):
    """A synthetic build with random vectors ``rnd`` and a detected collection, on Edge."""
    build_benchmark(root, BuildParams(atoms="synthetic", seed=seed, n_clips=clips, n_queries=25))
    bench = load_benchmark(root)
    rng = np.random.default_rng(seed)
    files = {}
    for side, items in (("c", [c.id for c in bench.clips]), ("q", [q.id for q in bench.queries])):
        np.save(tmp / f"{root.name}-{side}.npy", rng.normal(size=(len(items), 6)).astype(np.float32))
        (tmp / f"{root.name}-{side}.txt").write_text("\n".join(items))
        files[side] = VectorFiles(tmp / f"{root.name}-{side}.npy", tmp / f"{root.name}-{side}.txt")
    payloads, thresholds = detected_payloads(bench, seed=seed + 3)
    with EdgeStore(root / "qdrant" / "edge", write=True) as store:
        write_detected(bench, store, payloads, thresholds)
        ingest_precomputed(bench, store, PrecomputedOptions("rnd", files["c"], files["q"]))
    return bench


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tune")
    bench = _parts(tmp / "bench", 0, 80, tmp)
    calib = _parts(tmp / "calib", 1, 70, tmp)
    return bench, calib


def test_tuning_chooses_on_the_calibration_build_and_records_it(builds):
    from reasonaudio.retrievers.registry import get_retriever

    bench, calib = builds
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        before = store.collections()
    assert combine_params(bench, HYBRID).source == "default"
    tuned = ct.tune_combined(bench, [HYBRID, RRF, DBSF], calib.root)
    source = "calibration:" + content_digest(calib.manifest)[:12]  # content, not the install's versions
    saved = json.loads((bench.root / "results" / PARAMS_FILE).read_text())
    for name, size in ((HYBRID, 9), (RRF, 6), (DBSF, 3)):
        entry = saved[name]
        tuning = entry["tuning"]
        assert entry["source"] == source and tuned[name].params.source == source
        assert len(tuning["grid"]) == size and tuning["calibration"]["seed"] == 1
        assert tuning["calibration"]["clips"] == 70 and tuning["evaluated_clips"] == 80
        best = max(tuning["grid"], key=lambda r: (r["acc@1"], r["ndcg@10"]))
        assert (tuning["chosen"]["acc@1"], tuning["chosen"]["ndcg@10"]) == (best["acc@1"], best["ndcg@10"])
        share = tuning["chosen"]["share"]
        assert entry["prefetch"] == max(ct.MIN_PREFETCH, round(share * 80))
        # every grid point ran on the calibration build: N there is the share of its 70 clips
        assert {r["prefetch_calibration"] for r in tuning["grid"]} == {
            max(ct.MIN_PREFETCH, round(s * 70)) for s in ct.SHARES}
    assert saved[HYBRID]["weight"] == saved[HYBRID]["tuning"]["chosen"]["weight"]
    assert saved[RRF]["rrf_k"] == saved[RRF]["tuning"]["chosen"]["rrf_k"]
    # the evaluated build's store was not touched; its retrievers run with the choice
    with EdgeStore(bench.root / "qdrant" / "edge") as store:
        assert store.collections() == before
        with get_retriever(HYBRID, bench, store=store) as hybrid:
            params = hybrid.describe()["params"]
    assert params["source"] == source and params["prefetch"] == saved[HYBRID]["prefetch"]
    assert params["weight"] == saved[HYBRID]["weight"] and params["tuning"]["grid"]
    # a second call keeps what was chosen on the same calibration build (nothing reruns)
    assert ct.tune_combined(bench, [HYBRID], calib.root) == {}
    res = runner.invoke(app, ["tune", "--data", str(bench.root), "--calibration", str(calib.root),
                              "-r", HYBRID, "-r", DBSF])
    assert res.exit_code == 0, res.output
    assert f"w {saved[HYBRID]['weight']:g}" in res.output and source in res.output
    assert "k " not in res.output.split(DBSF)[1]  # DBSF has no k: not printed


def test_tuning_refuses_the_evaluated_build_and_bad_names(builds):
    bench, _ = builds
    with pytest.raises(DataError, match="calibration build"):
        ct.tune_combined(bench, [HYBRID], bench.root, force=True)
    res = runner.invoke(app, ["tune", "--data", str(bench.root), "-r", "soft:yamnet"])
    assert res.exit_code == 2 and "soft:yamnet" in res.output


def test_tune_refuses_a_missing_calibration_build_naming_the_command(builds, tmp_path):
    """tune builds no benchmark: without DATA-calibration it says how to make it; a calibration
    build without its own (which detecting a soft: part on it needs) is refused before any part
    is made."""
    bench, _ = builds
    default = bench.root.parent / "bench-calibration"
    one_line_error(runner.invoke(app, ["tune", "--data", str(bench.root), "-r", HYBRID]),
                   str(default), f"`bench build --calibration-for {bench.root}`")
    assert not default.exists()
    made = runner.invoke(app, ["build", "--calibration-for", str(bench.root), "--out",
                               str(tmp_path / "c"), "--clips", "30", "--queries", "5"])
    assert made.exit_code == 0, made.output
    assert ct.resolve_calibration(bench, tmp_path / "c").seed == 1  # bench detect's check
    shutil.rmtree(tmp_path / "c-calibration")
    saved = bench.root / "results" / PARAMS_FILE
    before = saved.read_bytes() if saved.is_file() else None
    with pytest.raises(DataError, match=r"soft:yamnet: tuning detects events on the calibration "
                       r"build .*`bench build --calibration-for [^`]*/c`"):
        ct.tune_combined(bench, [HYBRID], tmp_path / "c", force=True)
    assert not (tmp_path / "c-calibration").exists()
    assert (saved.read_bytes() if saved.is_file() else None) == before


def test_malformed_saved_parameters_are_one_line(builds, tmp_path):
    from reasonaudio.errors import StoreError

    bench, _ = builds
    path = bench.root / "results" / PARAMS_FILE
    kept = path.read_text() if path.is_file() else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({HYBRID: {"prefetch": "many"}}))
        with pytest.raises(StoreError, match=PARAMS_FILE):
            combine_params(bench, HYBRID)
    finally:
        if kept is None:
            path.unlink()
        else:
            path.write_text(kept)
