"""The explorer's pure parts, without a server: the logic's verdict and measurements on one clip's
events, which collection holds what a retriever saw, the breakdown tables, and the background
loading of a model (its states, its one-time error and load time)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from reasonaudio.logic import And, Before, Count, Has, Lasts, Not, Or, Overlap
from reasonaudio.explorer.retriever_view import CAPTION, EVENTS, parts, pick_collection, sources, viewed
from reasonaudio.explorer.verdicts import MEETS, NO_CHECKS, Seen, breaking, checks, measurements, verdict

DOG, SIREN, RAIN = "dog barking", "siren", "rain"


def _events(*spans: tuple[str, float, float]) -> list[Seen]:
    return [Seen(label, on, off) for label, on, off in spans]


def test_verdict_names_the_broken_constraints_and_never_a_false_no():
    assert verdict((True, True)) == MEETS
    assert verdict((True, False)) == "breaks C2"
    assert verdict((False, True, False)) == "breaks C1, C3"
    assert verdict(()) == NO_CHECKS  # no logic (a text that did not parse): says so


def test_checks_and_the_events_to_outline():
    logic = And((Has(DOG), Not(Has(SIREN)), Before(DOG, RAIN)))
    events = _events((DOG, 0.0, 2.0), (SIREN, 1.0, 3.0), (RAIN, 1.5, 4.0))
    marks = checks(logic, events)
    assert marks == (True, False, False)
    assert breaking(logic, marks) == {SIREN: [2], DOG: [3], RAIN: [3]}
    assert checks(None, events) == () and breaking(None, ()) == {}


def test_measurements_of_every_relation():
    events = _events((DOG, 0.0, 2.5), (RAIN, 3.0, 13.74), (SIREN, 2.0, 2.8), (SIREN, 5.0, 6.0))
    logic = And((Before(DOG, RAIN), Overlap(DOG, SIREN), Lasts(RAIN, 15), Count(SIREN, 3),
                 Or((Has("wind"), Not(Has(DOG))))))
    lines = dict(measurements(logic, events))
    assert lines[DOG] == "0.00 s–2.50 s (2.50 s)"
    assert lines[SIREN] == "2.00 s–2.80 s (0.80 s), 5.00 s–6.00 s (1.00 s)"
    assert lines["wind"] == "absent"
    assert lines[f"{DOG} → {RAIN}"] == "gap 0.50 s"
    assert lines[f"{DOG} ∩ {SIREN}"] == "overlap 0.50 s (needs ≥ 0.50 s)"
    assert lines[f"{RAIN} lasts"] == "10.74 s (asks 15 s ± 2.25 s)"
    assert lines[f"{SIREN} count"] == "2 (asks 3)"
    reversed_ = dict(measurements(Before(RAIN, DOG), events))
    assert reversed_[f"{RAIN} → {DOG}"] == f"{DOG} starts 13.74 s before {RAIN} ends"
    apart = dict(measurements(Overlap(DOG, RAIN), events))
    assert apart[f"{DOG} ∩ {RAIN}"] == "apart by 0.50 s (needs ≥ 0.50 s)"
    missing = dict(measurements(Before("wind", DOG), events))
    assert missing[f"wind → {DOG}"] == "absent: wind"
    assert measurements(None, events) == []


def _meta(model: str) -> SimpleNamespace:
    return SimpleNamespace(model=model)


def test_which_collection_holds_a_retrievers_view():
    two, det = "two-stage:yamnet-caption+minilm", "detected:yamnet"
    collections = [("reasonaudio-two-stage-yamnet-caption-minilm", _meta(two)),
                   ("reasonaudio-two-stage-yamnet-caption-minilm.snr5", _meta(two)),
                   ("reasonaudio-detected-yamnet-zero-shot", _meta(det)),
                   ("reasonaudio-clap", _meta("clap"))]
    assert viewed(two) == (CAPTION, two) and viewed("soft:yamnet") == (EVENTS, det)
    assert viewed("clap") is None and viewed("oracle") is None
    assert parts("hybrid:clap,soft:yamnet") == ["clap", "soft:yamnet"] and parts(two) == [two]
    assert pick_collection(two, "clean", collections) == "reasonaudio-two-stage-yamnet-caption-minilm"
    assert pick_collection(two, "snr5", collections) == "reasonaudio-two-stage-yamnet-caption-minilm.snr5"
    assert pick_collection(det, "snr5", collections) is None  # never the clean copy for a noisy result
    found = sources(f"rrf:{two},soft:yamnet", "clean", collections)
    assert [(s.kind, s.collection) for s in found] == [
        (CAPTION, "reasonaudio-two-stage-yamnet-caption-minilm"),
        (EVENTS, "reasonaudio-detected-yamnet-zero-shot")]
    assert sources("clap", "clean", collections) == []


def test_breakdown_tables_sum_to_the_failures():
    from reasonaudio.evaluation.failures import Breakdown, FailureRecord
    from reasonaudio.explorer.failure_tables import by_retriever, by_task

    recs = (FailureRecord("a", "q1", "order", "order reversed", "c1"),
            FailureRecord("a", "q2", "order", "hard negative on top", "c2"),
            FailureRecord("a", "q3", "mix", "order reversed", "c3"),
            FailureRecord("b", "q1", "order", "other", "c4"))
    queries = {"order": 5, "mix": 4}
    bd = Breakdown(("a", "b"), ("order", "mix"), recs, {"a": queries, "b": queries})
    kinds, rows = by_retriever(bd, "all")
    assert kinds == ["hard negative on top", "order reversed", "other"]  # the library's order
    assert [(r.key, r.queries, r.failed, r.counts) for r in rows] == [
        ("a", 9, 3, {"hard negative on top": 1, "order reversed": 2, "other": 0}),
        ("b", 9, 1, {"hard negative on top": 0, "order reversed": 0, "other": 1})]
    _, per_task = by_task(bd, "a")
    assert [(r.key, r.failed) for r in per_task] == [("order", 2), ("mix", 1), ("all", 3)]


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_loading_reports_its_states_and_says_errors_once():
    from reasonaudio.errors import ReasonAudioError
    from reasonaudio.explorer.model_loading import COLD, FAILED, LOADING, READY, Loading

    gate, clock, built = threading.Event(), _Clock(), []

    def build(name: str) -> None:
        gate.wait(60)
        clock.now += 2.5
        if name == "bad":
            raise ReasonAudioError("no weights for bad")
        built.append(name)

    loading = Loading(build, clock)
    assert loading.state("m") == COLD
    assert loading.start("m") is True
    assert loading.start("m") is False  # no second build while loading
    assert loading.state("m") == LOADING
    clock.now = 1.0
    assert loading.elapsed("m") == 1.0
    gate.set()
    for t in list(threading.enumerate()):
        if t.name.startswith("explorer-load-"):
            t.join(60)
    assert loading.state("m") == READY and built == ["m"]
    assert loading.take_load_time("m") == pytest.approx(3.5) and loading.take_load_time("m") is None
    loading.start("bad")
    for t in list(threading.enumerate()):
        if t.name.startswith("explorer-load-"):
            t.join(60)
    assert loading.state("bad") == FAILED
    assert loading.take_error("bad") == "no weights for bad" and loading.take_error("bad") is None
    assert loading.state("bad") == COLD  # the next search tries again
