"""`bench export --condition long`: the exported rows carry what the long audio holds (the
recording's length, the events at their place in it), the logic between events is unchanged, and
a corpus file holds at most 4 long recordings."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import soundfile as sf
from typer.testing import CliRunner

from reasonaudio.cli import app

pa = pytest.importorskip("pyarrow")
RATE = 4000


def test_export_under_long_writes_the_placed_events_and_bounded_shards(tonal_bank, tmp_path,  # noqa: F811
                                                                          monkeypatch) -> None:
    import pyarrow.parquet as pq

    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.render.clips import bench_renderer

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    runner = CliRunner()
    data = tmp_path / "b"
    res = runner.invoke(app, ["build", "--atoms", str(tonal_bank), "--clips", "30", "--queries", "6",
                              "--out", str(data), "--conditions", "clean,long"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "hf"
    res = runner.invoke(app, ["export", "--data", str(data), "--to", str(out), "--condition", "long",
                              "--sample-rate", str(RATE)])
    assert res.exit_code == 0, res.output
    shards = sorted((out / "corpus").glob("*.parquet"))
    assert len(shards) == 8  # 30 recordings: 7 x 4 + 2
    rows = [r for s in shards for r in pq.read_table(s).to_pylist()]
    bench = load_benchmark(data).with_condition("long")
    renderer = bench_renderer(bench)
    by_id = bench.clip_by_id
    for row in rows:
        clip = by_id[row["_id"]]
        placed = renderer.place(clip)
        assert 60.0 <= row["duration"] == placed.duration <= 300.0
        assert row["events"] == [e.to_json() for e in placed.events]
        shift = row["events"][0]["onset"] - clip.events[0].onset
        assert shift >= 0
        for got, clean in zip(row["events"], clip.events):  # one offset moves every event
            assert abs(got["onset"] - clean.onset - shift) < 2e-3
            assert abs((got["offset"] - got["onset"]) - (clean.offset - clean.onset)) < 2e-3
        audio, sr = sf.read(io.BytesIO(row["audio"]["bytes"]))
        assert sr == RATE and len(audio) == round(row["duration"] * RATE)
    record = json.loads((out / "reasonaudio-export.json").read_text())
    assert record["condition"]["condition"]["name"] == "long"
