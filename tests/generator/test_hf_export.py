"""`bench export --format hf`: a folder the Hugging Face `datasets` library loads, every row intact."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.logic import to_json
from reasonaudio.dataset.view import load_benchmark

pytest.importorskip("pyarrow")
runner = CliRunner()
RATE = 8000


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory) -> Path:
    from reasonaudio.generator.build import BuildParams, build_benchmark

    out = tmp_path_factory.mktemp("byo-export") / "bench"
    build_benchmark(out, BuildParams(atoms="synthetic", seed=2, n_clips=30, n_queries=10))
    return out


@pytest.fixture(scope="module")
def exported(bench_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("byo-export-out") / "hf"
    res = runner.invoke(app, ["export", "--data", str(bench_dir), "--to", str(out), "--format", "hf",
                              "--sample-rate", str(RATE)])
    assert res.exit_code == 0, res.output
    return out


def _load(path: Path, config: str, cache: Path):
    datasets = pytest.importorskip("datasets")
    return datasets.load_dataset(str(path), config, split="test", cache_dir=str(cache))


def test_datasets_loads_every_clip_query_qrel(bench_dir, exported, tmp_path):
    import soundfile as sf
    from datasets import Audio

    from reasonaudio.querylang.judge import hard_negatives
    from reasonaudio.atoms.registry import open_bank
    from reasonaudio.render.clips import Renderer, RenderParams, encode_audio

    bench = load_benchmark(bench_dir)
    cache = tmp_path / "hf-cache"
    corpus = _load(exported, "corpus", cache)
    assert corpus.features["audio"].sampling_rate == RATE
    corpus = corpus.cast_column("audio", Audio(decode=False))  # decoding needs torchcodec
    assert [r["_id"] for r in corpus] == [c.id for c in bench.clips]
    renderer = Renderer(open_bank(bench.manifest["parameters"]["atoms"]),
                        RenderParams.from_json(bench.manifest["render"]))
    for row, clip in zip(corpus, bench.clips):
        assert row["events"] == [e.to_json() for e in clip.events]
        assert row["labels"] == list(clip.labels)
        assert (row["mode"], row["duration"], row["sample_rate"]) == (clip.mode, clip.duration, RATE)
        samples, sr = sf.read(io.BytesIO(row["audio"]["bytes"]), dtype="int16")
        want = renderer.render(replace(clip, sample_rate=RATE))
        assert sr == RATE and len(samples) == round(clip.duration * RATE)
        expect, _ = sf.read(io.BytesIO(encode_audio(want, RATE, "flac")), dtype="int16")
        np.testing.assert_array_equal(samples, expect)
        assert np.abs(samples.astype(np.float64) / 32767 - want).max() <= 1 / 32767
    queries = _load(exported, "queries", cache)
    assert [(r["_id"], r["text"], r["task"], json.loads(r["logic"])) for r in queries] == \
        [(q.id, q.text, q.task, to_json(q.logic)) for q in bench.queries]
    assert [json.loads(r["extra"]) for r in queries] == \
        [{k: v for k, v in q.extra.items()} for q in bench.queries]
    qrels = _load(exported, "default", cache)
    assert {(r["query-id"], r["corpus-id"]) for r in qrels} == \
        {(q, c) for q, cs in bench.qrels.items() for c in cs}
    assert all(r["score"] == 1 for r in qrels)
    choices = _load(exported, "choices", cache)
    assert [(r["query-id"], r["positive"], r["negative"]) for r in choices] == \
        [(c.query_id, c.positive, c.negative) for c in bench.choices]
    hn = _load(exported, "hard_negatives", cache)
    assert {(r["query-id"], r["corpus-id"]) for r in hn} == \
        {(q, c) for q, cs in hard_negatives(bench).items() for c in cs}
    atoms = _load(exported, "atoms", cache)
    assert [r["license"] for r in atoms] == [a.license for a in bench.atoms]


def test_plain_parquet_loading_and_the_card(bench_dir, exported, tmp_path):
    datasets = pytest.importorskip("datasets")
    from reasonaudio.generator.export import config_files

    files = config_files(exported)
    ds = datasets.load_dataset("parquet", data_files={"test": files["queries"]}, split="test",
                               cache_dir=str(tmp_path / "c"))
    assert len(ds) == 10
    bench = load_benchmark(bench_dir)
    card = (exported / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: corpus" in card
    for atom in bench.atoms:  # every atom's licence and source is in the card
        assert f"| `{atom.atom_id}` | {atom.label} | {atom.license} | {atom.source} |" in card
    assert bench.manifest["files"]["corpus.jsonl"]["sha256"] in card
    record = json.loads((exported / "reasonaudio-export.json").read_text())
    from reasonaudio.fileio import sha256_file

    for rel, digest in record["files"].items():
        assert sha256_file(exported / rel) == digest


def test_same_benchmark_same_bytes_and_files_mode(bench_dir, exported, tmp_path):
    import soundfile as sf

    again = tmp_path / "again"
    res = runner.invoke(app, ["export", "--data", str(bench_dir), "--to", str(again),
                              "--sample-rate", str(RATE)])
    assert res.exit_code == 0, res.output
    for path in exported.rglob("*"):  # rendered audio included
        if path.is_file():
            assert path.read_bytes() == (again / path.relative_to(exported)).read_bytes(), path
    outs = []
    for i in range(2):
        out = tmp_path / f"x{i}"
        res = runner.invoke(app, ["export", "--data", str(bench_dir), "--to", str(out), "--audio", "none"])
        assert res.exit_code == 0, res.output
        outs.append(out)
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for rel in files:
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel
    out = tmp_path / "files"
    res = runner.invoke(app, ["export", "--data", str(bench_dir), "--to", str(out), "--audio", "files",
                              "--audio-format", "wav", "--sample-rate", "4000"])
    assert res.exit_code == 0, res.output
    import pyarrow.parquet as pq

    table = pq.read_table(next((out / "corpus").glob("*.parquet")))
    paths = table.column("audio_path").to_pylist()
    assert len(paths) == 30 and all(p.startswith("audio/") and p.endswith(".wav") for p in paths)
    info = sf.info(str(out / paths[0]))
    assert info.samplerate == 4000


def test_bad_export_options_exit_2(bench_dir, exported, tmp_path):
    for args in (["--audio", "loud"], ["--format", "mteb"], ["--audio-format", "mp3"],
                 ["--sample-rate", "5"], ["--atoms", str(tmp_path / "no-such-bank")]):
        res = runner.invoke(app, ["export", "--data", str(bench_dir), "--to", str(tmp_path / "y"), *args])
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, (args, res.output)
        assert not (tmp_path / "y").exists()
    res = runner.invoke(app, ["export", "--data", str(bench_dir), "--to", str(exported), "--audio", "none"])
    assert res.exit_code == 2 and "--force" in res.output
