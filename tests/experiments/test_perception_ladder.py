"""`bench sweep perception`: the oracle's logic over events degraded by a seeded perception model."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reasonaudio.experiments.perception_ladder import crossing, sweep_perception
from reasonaudio.experiments.perception_model import Level, degrade, similar_labels
from reasonaudio.cli import app
from reasonaudio.dataset.view import load_benchmark


@pytest.fixture(scope="module")
def bench(small_bench_dir):
    return load_benchmark(small_bench_dir)


def test_level_zero_is_the_oracle_and_acc_falls_with_event_f1(bench):
    ladder = sweep_perception(bench, [Level.severity(s) for s in (0.0, 0.1, 0.3, 0.6)], seed=0)
    top = ladder.levels[0]
    assert top["event_f1"] == top["tagging_f1"] == 1.0
    for task, values in top["per_task"].items():
        assert values == {"acc@1": 1.0, "ndcg@10": 1.0, "mc_acc": 1.0}, task
    f1 = [lv["event_f1"] for lv in ladder.levels]
    acc = [lv["overall"]["acc@1"] for lv in ladder.levels]
    assert f1 == sorted(f1, reverse=True) and f1[-1] < 0.2
    assert all(b <= a + 0.1 for a, b in zip(acc, acc[1:]))       # falls, within noise
    assert acc[-1] < 0.5 < acc[0]


def test_the_model_is_seeded_and_misses_nest(bench):
    labels, similar = bench.labels, similar_labels(bench.labels)
    clip = max(bench.clips, key=lambda c: len(c.events))
    def times(c):
        return sorted((e.label, e.onset, e.offset) for e in c.events)

    assert times(degrade(clip, Level(), 3, labels, similar)) == times(clip)   # level 0 hears it all
    for c in bench.clips[:60]:
        mild = {e.label for e in degrade(c, Level(miss=0.2), 5, labels, similar).events}
        harsh = {e.label for e in degrade(c, Level(miss=0.6), 5, labels, similar).events}
        assert harsh <= mild <= set(c.labels)                   # common random numbers
        assert degrade(c, Level.severity(0.4), 5, labels, similar) == \
            degrade(c, Level.severity(0.4), 5, labels, similar)


def test_false_alarms_lean_to_similar_labels():
    fam = similar_labels(["dog barking", "dog howling", "siren", "rain on a roof", "heavy rain"])
    assert fam["dog barking"] == ("dog howling",) and fam["rain on a roof"] == ("heavy rain",)
    assert fam["siren"] == ()


def test_crossing_is_interpolated_between_the_levels_around_the_baseline():
    levels = [{"event_f1": f, "overall": {"acc@1": a}, "per_task": {"order": {"acc@1": a}}}
              for f, a in ((1.0, 1.0), (0.6, 0.8), (0.2, 0.4), (0.1, 0.1))]
    assert crossing(levels, "order", 0.6)["event_f1"] == pytest.approx(0.4)
    assert crossing(levels, "overall", 0.05)["reached"] == "at every level"
    assert crossing(levels, "order", 1.1)["event_f1"] is None


def test_same_seed_same_bytes(small_bench_dir, tmp_path):
    def run(seed, name):
        out = tmp_path / name
        res = CliRunner().invoke(app, ["sweep", "perception", "--data", str(small_bench_dir),
                                       "--levels", "0,0.2,0.5", "--seed", str(seed), "--json", str(out)])
        assert res.exit_code == 0, res.output
        return out.read_bytes()

    a = run(7, "a.json")
    assert a == run(7, "b.json") and a != run(8, "c.json")
    doc = json.loads(a)
    assert doc["seed"] == 7 and doc["versions"]["reasonaudio"] and len(doc["levels"]) == 3
    assert set(doc["levels"][1]) >= {"params", "event_f1", "tagging_f1", "per_task"}
    bad = CliRunner().invoke(app, ["sweep", "perception", "--data", str(small_bench_dir), "--levels", "x"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
