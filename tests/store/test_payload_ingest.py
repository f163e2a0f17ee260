"""Payload ingest: idempotent, resumable after an interruption, refuses another corpus."""

from __future__ import annotations

import json

import pytest
from store_helpers import write_fake_benchmark

from reasonaudio.dataset.view import load_benchmark
from reasonaudio.errors import StoreError
from reasonaudio.progress import Hooks
from reasonaudio.store.base import STATE_LOADING
from reasonaudio.store.collections import (
    PAYLOAD_COLLECTION,
    ensure_payload_collection,
    ingest_payload,
    payload_meta,
    require_ready,
)
from reasonaudio.store.edge import EdgeStore
from reasonaudio.store.open import open_store, resolve_backend

pytestmark = pytest.mark.fast


@pytest.fixture()
def bench(tmp_path):
    return load_benchmark(write_fake_benchmark(tmp_path / "b", n_clips=80, n_queries=10))


@pytest.mark.parametrize("backend", ["edge", "local"])
def test_ingest_is_idempotent(bench, backend):
    with open_store(bench.root, backend) as store:
        first = ingest_payload(bench, store)
        assert first.upserted == 80 and store.count(PAYLOAD_COLLECTION) == 80
        again = ingest_payload(bench, store)
        assert again.upserted == 0 and again.points == 80
        assert require_ready(store, PAYLOAD_COLLECTION, bench, "cmd").complete
    assert (bench.root / "qdrant" / backend).is_dir()  # embedded data lives under DATA


def test_interrupted_ingest_is_detected_and_resumed(bench):
    calls = []

    class Boom(Exception):
        pass

    def stop_after_two(done, total):
        calls.append(done)
        if len(calls) == 3:  # after the second batch
            raise Boom

    with open_store(bench.root, "edge") as store:
        with pytest.raises(Boom):
            ingest_payload(bench, store, batch_size=20,
                           hooks=Hooks(on_progress=lambda _label, done, total: stop_after_two(done, total)))
        meta = store.meta(PAYLOAD_COLLECTION)
        assert meta.state == STATE_LOADING and store.count(PAYLOAD_COLLECTION) == 40
        with pytest.raises(StoreError, match="incomplete .*rerun `cmd`"):
            require_ready(store, PAYLOAD_COLLECTION, bench, "cmd")
        result = ingest_payload(bench, store, batch_size=20)
        assert result.resumed and result.upserted == 40
        assert store.meta(PAYLOAD_COLLECTION).complete and store.count(PAYLOAD_COLLECTION) == 80


def test_other_corpus_needs_force(bench, tmp_path):
    with open_store(bench.root, "edge") as store:
        ingest_payload(bench, store)
        other = load_benchmark(write_fake_benchmark(tmp_path / "o", n_clips=30, n_queries=5, seed=3))
        with pytest.raises(StoreError, match="made differently .*corpus_sha256.*--force"):
            ingest_payload(other, store)
        with pytest.raises(StoreError, match="another benchmark's corpus"):
            require_ready(store, PAYLOAD_COLLECTION, other, "cmd")
        assert ingest_payload(other, store, force=True).upserted == 30
        assert store.count(PAYLOAD_COLLECTION) == 30


def test_missing_collection_names_the_command(bench):
    with open_store(bench.root, "local") as store:
        with pytest.raises(StoreError, match="not found .*bench ingest --data .* --model none --backend local"):
            ensure_payload_collection(bench, store)  # never written implicitly on local


def test_edge_builds_the_payload_collection_on_demand(bench):
    notes = []
    with open_store(bench.root, "edge") as store:
        hooks = Hooks(on_notify=notes.append)
        assert ensure_payload_collection(bench, store, hooks=hooks) == PAYLOAD_COLLECTION
        assert notes and store.count(PAYLOAD_COLLECTION) == 80
        ensure_payload_collection(bench, store, hooks=Hooks(on_notify=notes.append))
        assert len(notes) == 1  # second time: already there


def test_edge_metadata_sidecar_records_the_collection(bench):
    with open_store(bench.root, "edge") as store:
        ingest_payload(bench, store)
    record = json.loads((bench.root / "qdrant/edge" / PAYLOAD_COLLECTION / "collection.json").read_text())
    want = payload_meta(bench).to_json()
    for key in ("model", "revision", "dimension", "distance", "pooling", "corpus_sha256"):
        assert record[key] == want[key]
    assert record["state"] == "complete" and record["points"] == 80


def test_backend_resolution(monkeypatch):
    monkeypatch.delenv("QDRANT_URL", raising=False)
    assert resolve_backend(None, None) == ("edge", None)
    assert resolve_backend("local", None) == ("local", None)
    assert resolve_backend(None, "http://h:6333") == ("server", "http://h:6333")
    monkeypatch.setenv("QDRANT_URL", "http://env:6333")
    assert resolve_backend(None, None) == ("server", "http://env:6333")
    with pytest.raises(StoreError, match="embedded but a server URL is set"):
        resolve_backend("edge", None)
    monkeypatch.delenv("QDRANT_URL")
    with pytest.raises(StoreError, match="needs --qdrant-url"):
        resolve_backend("server", None)
    with pytest.raises(StoreError, match="unknown backend"):
        resolve_backend("sqlite", None)
    assert isinstance(open_store("/nonexistent-dir-for-test", "edge"), EdgeStore)


def test_segment_pieces_cut_the_load_into_equal_parts_resumed_or_not():
    from reasonaudio.store.collections import _segment_pieces

    ids = [f"c{i}" for i in range(10)]
    assert _segment_pieces(ids, 0, 10, 1) == [ids]
    assert _segment_pieces(ids, 0, 10, 2) == [ids[:5], ids[5:]]
    assert _segment_pieces(ids, 0, 10, 3) == [ids[:3], ids[3:6], ids[6:]]
    assert _segment_pieces(ids[3:], 3, 10, 2) == [ids[3:5], ids[5:]]  # resumed before the cut
    assert _segment_pieces(ids[6:], 6, 10, 2) == [ids[6:]]  # resumed after it
    assert _segment_pieces([], 10, 10, 2) == [[]]
