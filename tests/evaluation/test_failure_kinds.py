"""The failure classifier (evaluation/failures.py): kinds on hand-made clips, the broken constraints
against the judge on random trees, and the breakdown of saved results against a count made
independently from the saved per-query Acc@1 values."""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from typing import Sequence

import evalkit
import pytest
from evalkit import BagOfLabels, Shuffle
from store_helpers import random_clip, random_logic

from reasonaudio.evaluation.evaluate import evaluate_retrievers
from reasonaudio.evaluation.failures import (KIND_NAMES, KINDS, breakdown, broken_constraints, classify,
                                        first_kind)
from reasonaudio.evaluation.results import load_results, results_dir, run_path
from reasonaudio.logic import And, Before, Count, Has, Lasts, Not, Or, Overlap, labels
from reasonaudio.querylang.semantics import evaluate
from reasonaudio.dataset.view import BenchmarkView, load_benchmark
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.retrievers.base import Hit, Retriever, rank


@pytest.fixture(scope="module")
def hand(tmp_path_factory) -> BenchmarkView:
    """evalkit's hand-made benchmark without planted pairs (kinds come from the constraints)."""
    return evalkit.write_bench(tmp_path_factory.mktemp("fail") / "bench", with_choices=False)


@pytest.mark.parametrize("qid,top,kind", [
    ("q-0000", "clip-00002", "excluded sound present"),   # dog, rain and the excluded siren
    ("q-0000", "clip-00005", "mentioned sound missing"),  # thunder and bell: no dog, no rain
    ("q-0001", "clip-00001", "order reversed"),           # rain before dog
    ("q-0001", "clip-00003", "order reversed"),           # dog and rain overlap
    ("q-0003", "clip-00004", "overlap missing"),          # they share 0.2 s
    ("q-0004", "clip-00006", "duration off"),             # thunder 9 s for 5 s
    ("q-0005", "clip-00009", "order reversed"),           # thunder 2.2 s (in tolerance) after rain
    ("q-0005", "clip-00006", "mentioned sound missing"),  # no rain: before the duration off
    ("q-0001", "clip-99999", "other"),                    # not in the corpus
])
def test_kind_of_the_first_clip(hand, qid, top, kind):
    record = classify(hand, qid, [top, "clip-00000"], "x")
    assert record is not None and record.kind == kind and record.top_clip == top
    assert not record.planted_negative
    assert record.first_relevant == (2.0 if "clip-00000" in hand.qrels[qid] else float("inf"))


def test_a_relevant_first_clip_is_no_failure_and_an_empty_run_is_no_answer(hand):
    assert classify(hand, "q-0001", ["clip-00000", "clip-00001"]) is None
    assert classify(hand, "q-0001", []).kind == "no answer"
    assert classify(hand, "q-0001", None).kind == "run not saved"


def test_several_broken_constraints_are_numbered_and_the_first_kind_wins(hand):
    record = classify(hand, "q-0005", ["clip-00006"])  # lasts(thunder, 2) & before(thunder, rain)
    assert [(b.index, b.kind) for b in record.broken] == [(1, "duration off"),
                                                            (2, "mentioned sound missing")]
    assert record.kind == "mentioned sound missing"


def test_the_planted_negative_on_top(tmp_path):
    bench = evalkit.write_bench(tmp_path / "b")
    choice = bench.choices[0]
    record = classify(bench, choice.query_id, [choice.negative])
    assert record.kind == "hard negative on top" and record.planted_negative
    assert record.broken  # which constraint the planted pair breaks is still said


def test_kind_names_are_one_table():
    assert KIND_NAMES == tuple(k.name for k in KINDS)
    assert len(set(KIND_NAMES)) == len(KIND_NAMES) and all(k.means for k in KINDS)
    assert first_kind([]) == "other"
    assert first_kind(["duration off", "mentioned sound missing"]) == "mentioned sound missing"


def _clip(events: Sequence[tuple[str, float, float]]) -> Clip:
    return Clip("c", "overlap", max(e[2] for e in events), 16000,
                tuple(Event(lab, on, off, f"{lab}-0", 0.0) for lab, on, off in events))


@pytest.mark.parametrize("logic,events,kinds", [
    (Count("knock", 3), [("knock", 0, 1), ("knock", 2, 3)], ["count off"]),
    (Count("knock", 2), [("rain", 0, 1)], ["mentioned sound missing"]),
    (Not(Before("a", "b")), [("a", 0, 1), ("b", 2, 3)], ["other"]),
    (Not(Or((Has("a"), Has("b")))), [("a", 0, 1), ("b", 2, 3)],
     ["excluded sound present", "excluded sound present"]),
    (Not(Not(Has("a"))), [("b", 0, 1)], ["mentioned sound missing"]),
    (Or((Has("a"), Has("b"))), [("c", 0, 1)], ["other"]),
    (Not(And((Has("a"), Has("b")))), [("a", 0, 1), ("b", 2, 3)], ["other"]),
    (And((Overlap("a", "b"), Lasts("a", 5))), [("a", 0, 1), ("b", 2, 3)],
     ["overlap missing", "duration off"]),
])
def test_kinds_of_every_node_type(logic, events, kinds):
    assert [b.kind for b in broken_constraints(logic, _clip(events))] == kinds


def test_a_clip_breaks_some_constraint_exactly_when_the_judge_says_it_fails():
    rng = random.Random(44)
    vocab = ["dog barking", "siren", "rain", "thunder", "bell"]
    decided = Counter()
    for i in range(600):
        clip = random_clip(rng, i, vocab)
        logic = random_logic(rng, vocab)
        broken = broken_constraints(logic, clip)
        holds = evaluate(logic, clip.events)
        assert (not broken) == holds, (logic.describe(), clip.events)
        assert all(b.kind in KIND_NAMES for b in broken)
        decided[holds] += 1
        for b in broken:
            if b.kind == "mentioned sound missing":  # a sound of that constraint is absent
                assert any(lab not in clip.labels for lab in labels(logic))
    assert decided[True] > 50 and decided[False] > 50


# --- the breakdown of saved results, on a real build ------------------------------------------

class PlantedFirst(Retriever):
    """Ranks the query's planted hard negative first, then the rest by id."""

    name = "planted-first"

    def __init__(self, bench: BenchmarkView) -> None:
        self.ids = [c.id for c in bench.clips]
        by_text = {q.text: q.id for q in bench.queries}
        neg = {c.query_id: c.negative for c in bench.choices}
        self.neg = {t: neg.get(q) for t, q in by_text.items()}

    def search(self, text: str, k: int) -> list[Hit]:
        first = self.neg.get(text)
        return rank({c: (1.0 if c == first else 0.0) for c in self.ids}, k)


@pytest.fixture(scope="module")
def built(small_bench_dir, tmp_path_factory) -> BenchmarkView:
    dest = tmp_path_factory.mktemp("failures") / "bench"
    shutil.copytree(small_bench_dir, dest)
    bench = load_benchmark(dest)
    evaluate_retrievers(bench, [PlantedFirst(bench), BagOfLabels(bench), Shuffle(bench)])
    return load_benchmark(dest)


def saved_zeros(bench: BenchmarkView) -> dict[tuple[str, str], set[str]]:
    """(retriever, task) -> query ids whose saved Acc@1 is 0, read straight from the JSON files."""
    out: dict[tuple[str, str], set[str]] = {}
    for path in results_dir(bench).glob("*.json"):
        obj = json.loads(path.read_text())
        for qid, values in obj["per_query"].items():
            if values["acc@1"] == 0:
                out.setdefault((obj["name"], values["task"]), set()).add(qid)
    return out


def test_breakdown_counts_equal_the_saved_acc_at_1_zeros(built):
    got = breakdown(built)
    zeros = saved_zeros(built)
    assert set(got.retrievers) == {"planted-first", "bag-of-labels", "shuffle"}
    counts = got.counts()
    for name in got.retrievers:
        for task in got.tasks:
            cell = got.cell(name, task)
            assert sum(counts[name][task].values()) == len(zeros.get((name, task), ()))
            assert {q for qs in cell.values() for q in qs} == zeros.get((name, task), set())
    assert sum(len(v) for v in zeros.values()) == len(got.records) > 0


def test_breakdown_kinds_on_a_real_build(built):
    got = breakdown(built)
    planted = got.of("planted-first")
    with_choice = {c.query_id for c in built.choices}
    assert planted and all(r.kind == "hard negative on top" for r in planted)
    assert {r.qid for r in planted} == with_choice  # the negative first fails every such query
    for r in got.records:
        clip = built.clip_by_id[r.top_clip]
        assert not evaluate(built.query_by_id[r.qid].logic, clip.events)
        assert r.broken and r.kind in KIND_NAMES
    bag = Counter(r.kind for r in got.of("bag-of-labels"))
    assert bag["mentioned sound missing"] == 0  # it ranks clips with every sound first
    assert json.loads(json.dumps(got.to_json()))["retrievers"]["shuffle"]


def test_without_a_saved_run_the_failures_are_still_counted(built, tmp_path):
    dest = tmp_path / "bench"
    shutil.copytree(built.root, dest)
    bench = load_benchmark(dest)
    run_path(bench, "shuffle").unlink()
    got = breakdown(bench, load_results(bench, ["shuffle"]))
    zeros = saved_zeros(bench)
    assert {r.kind for r in got.records} == {"run not saved"}
    assert len(got.records) == sum(len(v) for (n, _), v in zeros.items() if n == "shuffle")


def test_docs_define_every_kind_as_the_table_does():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text()
    section = text.split("## Failure kinds", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| kind")]
    assert [(r[0][2:], r[1].rstrip(" |")) for r in rows] == [(k.name, k.means) for k in KINDS]
