"""A benchmark as readers take it: a frozen (files, condition, view) that gives its result key.

One small build with formulations and interleaved queries, read as several views at once: each
view is a value (never changed in place), its key names its three axes, and making one view
never changes another (the old copy-and-patch views dropped the condition they were made under).
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from reasonaudio.dataset.interleaved import INTERLEAVED
from reasonaudio.dataset.keys import ResultKey
from reasonaudio.dataset.view import CLEAN_CONDITION, BenchmarkView, load_benchmark
from reasonaudio.errors import DataError
from reasonaudio.generator.build import BuildParams, build_benchmark
from reasonaudio.tasks.base import CAPTION


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    out = tmp_path_factory.mktemp("views") / "bench"
    build_benchmark(out, BuildParams(atoms="synthetic", seed=0, n_clips=24, n_queries=10, interleaved=0.5))
    return out


def _texts(view: BenchmarkView) -> dict[str, str]:
    return {q.id: q.text for q in view.queries}


def test_a_view_is_frozen(root):
    bench = load_benchmark(root)
    for field in ("files", "condition", "view"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(bench, field, getattr(bench, field))
    with pytest.raises(AttributeError):
        bench.formulation = "question"  # no attribute to patch: a view is its three fields
    assert (bench.condition, bench.view) == (CLEAN_CONDITION, CAPTION)


def test_views_of_one_load_give_distinct_keys(root):
    bench = load_benchmark(root)
    views = {
        "as loaded": bench,
        "formulation": bench.with_view("question"),
        "interleaved": bench.with_view(INTERLEAVED),
        "condition": bench.with_condition("snr5"),
        "condition and formulation": bench.with_condition("snr5").with_view("question"),
    }
    keys = {name: view.key("oracle") for name, view in views.items()}
    assert keys == {
        "as loaded": ResultKey("oracle"),
        "formulation": ResultKey("oracle", "clean", "question"),
        "interleaved": ResultKey("oracle", "clean", INTERLEAVED),
        "condition": ResultKey("oracle", "snr5"),
        "condition and formulation": ResultKey("oracle", "snr5", "question"),
    }
    assert {k.stored_name for k in keys.values()} == {"oracle", "oracle@question", "oracle@interleaved"}
    assert len(set(views.values())) == len(views)  # values: hashable, and no two equal


def test_making_a_view_leaves_the_others_as_they_were(root):
    bench = load_benchmark(root)
    lines = (root / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    as_built = {o["_id"]: o["text"] for o in map(json.loads, lines)}
    question = bench.with_view("question")
    inter = bench.with_view(INTERLEAVED)
    noisy = question.with_condition("snr5")

    assert _texts(bench) == as_built  # the view it was made from keeps the captions
    assert bench.condition == CLEAN_CONDITION and question.condition == CLEAN_CONDITION
    assert noisy.condition.name == "snr5" and noisy.view == "question"  # both axes kept
    assert _texts(noisy) == _texts(question) != as_built
    assert all(q.extra["formulation"] == "question" for q in question.queries)
    assert set(_texts(inter)) < set(as_built)  # only the queries with a variant
    assert all("<audio:" in t for t in _texts(inter).values())
    assert all("examples" not in q.extra for q in bench.queries)
    # views do not stack: each is made from the files
    assert _texts(question.with_view(INTERLEAVED)) == _texts(inter)
    assert question.with_view(CAPTION) == bench and question.with_view(CAPTION).queries == bench.queries


def test_views_share_the_files_and_what_depends_only_on_them(root):
    bench = load_benchmark(root)
    other = bench.with_condition("snr5").with_view("question")
    assert other.files is bench.files
    assert other.qrels is bench.qrels and other.choices is bench.choices and other.clips is bench.clips
    assert load_benchmark(root) != bench  # another load: other files, another value
    assert bench.with_condition("clean") is bench and bench.with_view(CAPTION) is bench


def test_a_view_the_build_cannot_give_fails_when_made(root):
    bench = load_benchmark(root)
    with pytest.raises(DataError, match=r"formulations\.jsonl: no queries in formulation 'nonesuch'"):
        bench.with_view("nonesuch")
    with pytest.raises(DataError, match="unknown condition"):
        bench.with_condition("snr-loud")
