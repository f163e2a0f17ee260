"""The renderer: exact lengths, events at their onsets, gains, loudness, determinism, files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pyloudnorm
import pytest
import soundfile as sf
from typer.testing import CliRunner

from reasonaudio.cli import app
from reasonaudio.dataset.atom import Atom
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.errors import DataError
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.synthetic import SyntheticBank
from reasonaudio.render.clips import Renderer, RenderParams, render_clip_to_file, write_clip_audio
from reasonaudio.dataset.benchmark import write_manifest

SR = 48_000


class ArrayBank(AtomBank):
    """An in-memory bank for tests: atom id -> (samples, rate)."""

    kind = "test"

    def __init__(self, arrays: dict[str, tuple[np.ndarray, int]]) -> None:
        self.arrays = arrays
        super().__init__([Atom(k, k.replace("-", " "), k, sr, len(x) / sr, "test", "CC0-1.0")
                          for k, (x, sr) in arrays.items()])

    def load(self, atom_id):
        return self.arrays[atom_id]

    def describe(self):
        return {"kind": "test"}


@pytest.fixture(scope="module")
def bank() -> SyntheticBank:
    return SyntheticBank()


def _atom(bank: SyntheticBank, label: str) -> str:
    return bank.by_label[label][0].atom_id


def _clip(bank, duration, events, sr=SR, cid="clip-00001", mode="sequential") -> Clip:
    return Clip(cid, mode, duration, sr,
                tuple(Event(label, on, off, _atom(bank, label), g) for label, on, off, g in events))


def _rms(x):
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0


def test_exact_length_and_events_at_their_onsets(bank):
    clip = _clip(bank, 6.217, [("steady pink noise", 0.5, 1.75, 0.0),
                               ("mid sine tone", 3.0, 5.123, -3.0)])
    x = Renderer(bank).render(clip)
    assert x.dtype == np.float32 and x.shape == (round(6.217 * SR),)
    for on, off in ((0.5, 1.75), (3.0, 5.123)):
        seg = x[round(on * SR):round(off * SR)]
        assert _rms(seg) > 1e-3
        # energy through the whole event, not only at its start
        for w in np.array_split(seg[480:-480], 10):
            assert _rms(w) > 1e-4
    silent = np.concatenate([x[:round(0.5 * SR)], x[round(1.75 * SR):round(3.0 * SR)],
                             x[round(5.123 * SR):]])
    assert np.all(silent == 0)


def test_identical_on_every_call_and_every_renderer(bank):
    clip = _clip(bank, 8.0, [("fast clicking", 0.0, 3.0, -2.0), ("large bell strike", 1.0, 7.5, -4.5),
                             ("dense bubbling", 2.0, 8.0, 0.0)], mode="overlap")
    a = Renderer(bank).render(clip)
    r = Renderer(SyntheticBank())
    assert a.tobytes() == r.render(clip).tobytes() == r.render(clip).tobytes()


def test_gain_is_applied_in_db(bank):
    base = Renderer(bank).render(_clip(bank, 3.0, [("steady white noise", 0.5, 2.5, 0.0)]))
    quiet = Renderer(bank).render(_clip(bank, 3.0, [("steady white noise", 0.5, 2.5, -6.0)]))
    np.testing.assert_allclose(quiet, base * 10 ** (-6 / 20), rtol=1e-5, atol=1e-7)


def test_events_are_levelled_to_the_loudness_reference(bank):
    params = RenderParams(loudness_lufs=-30.0)
    meter = pyloudnorm.Meter(SR)
    for label in ("steady pink noise", "mid sine tone", "low square buzz"):
        x = Renderer(bank, params).render(_clip(bank, 4.0, [(label, 0.0, 4.0, 0.0)]))
        assert abs(meter.integrated_loudness(x.astype(np.float64)) - (-30.0)) < 1.0, label


def test_looping_fills_long_events_without_gaps(bank):
    atom = bank.by_label["mid sine tone"][0]
    clip = _clip(bank, 12.0, [("mid sine tone", 0.0, 12.0, 0.0)])
    x = Renderer(bank).render(clip)
    assert atom.duration < 12.0
    frames = x[: len(x) // 480 * 480].reshape(-1, 480)[2:-2]  # 10 ms frames away from the fades
    levels = np.sqrt((frames.astype(np.float64) ** 2).mean(1))
    assert levels.min() > 0.5 * np.median(levels)  # crossfaded: no dips at the loop points


def test_resamples_to_the_clip_rate(bank):
    clip = _clip(bank, 2.0, [("mid sine tone", 0.0, 2.0, 0.0)], sr=16_000)
    x = Renderer(bank).render(clip)
    assert len(x) == 32_000
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    peak_hz = np.argmax(spec) * 16_000 / len(x)
    assert 300 < peak_hz < 360  # the 330 Hz (+-3 %) tone keeps its pitch


def test_a_mix_over_the_headroom_is_scaled_and_warned(bank, caplog):
    loud = [("steady white noise", 0.0, 2.0, 30.0), ("steady pink noise", 0.0, 2.0, 30.0)]
    r = Renderer(bank)
    with caplog.at_level(logging.WARNING, logger="reasonaudio.render"):
        x = r.render(_clip(bank, 2.0, loud, mode="overlap"))
    assert float(np.max(np.abs(x))) <= 10 ** (-1 / 20) + 1e-6
    assert r.adjustments.get("peak_scaled") == 1
    assert any("scaled by" in m for m in caplog.messages)


def test_adjustment_counts_do_not_depend_on_the_cache_or_on_how_clips_are_split(bank, caplog):
    """An atom levelled again after the cache dropped it, or a clip rendered twice, is one
    adjustment: counts are distinct atoms (or clips), so engines that split the clips among
    workers, each with its own cache, report what one local renderer does."""
    loud = [("steady white noise", 0.0, 2.0, 30.0), ("steady pink noise", 0.0, 2.0, 30.0)]
    clips = [_clip(bank, 2.0, loud, cid="loud-1", mode="overlap"),
             _clip(bank, 2.0, [("mid sine tone", 0.0, 2.0, 0.0)], cid="tone"),
             _clip(bank, 2.0, loud, cid="loud-2", mode="overlap")]
    roomy = Renderer(bank)
    for clip in clips:
        roomy.render(clip)
    assert roomy.adjustments["peak_scaled"] == 2
    caplog.clear()
    tight = Renderer(bank, cache_samples=1)  # keeps one atom: every other is levelled again
    with caplog.at_level(logging.WARNING, logger="reasonaudio.render"):
        for clip in clips + clips:
            tight.render(clip)
    assert tight.adjustments == roomy.adjustments and tight.noted == roomy.noted
    assert len(caplog.messages) == len(roomy.noted)  # each adjustment warned once
    a, b = Renderer(bank), Renderer(bank)  # two workers sharing the clips, one overlap
    a.render(clips[0]), a.render(clips[1])
    b.render(clips[1]), b.render(clips[2])
    driver = Renderer(bank)
    assert driver.merge_notes(sorted(a.noted)) == len(a.noted)
    driver.merge_notes(sorted(b.noted))
    assert driver.adjustments == roomy.adjustments and driver.noted == roomy.noted


def test_short_atoms_use_rms_loudness_and_silent_atoms_are_warned(caplog):
    t = np.arange(int(0.2 * SR)) / SR
    arrays = {"short-beep": ((0.1 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32), SR),
              "quiet-thing": (np.zeros(SR, dtype=np.float32), SR),
              "slow-rate": ((0.3 * np.sin(2 * np.pi * 440 * np.arange(22050) / 22050)).astype(np.float32), 22050)}
    bank = ArrayBank(arrays)
    r = Renderer(bank, RenderParams(loudness_lufs=-20.0))
    with caplog.at_level(logging.WARNING, logger="reasonaudio.render"):
        beep = r.prepared("short-beep", SR)
        silent = r.prepared("quiet-thing", SR)
        resampled = r.prepared("slow-rate", SR)
    assert abs(20 * np.log10(_rms(beep)) - (-20.0)) < 0.1
    assert not silent.any()
    assert len(resampled) == SR
    assert r.adjustments["rms_loudness"] == 1 and r.adjustments["silent_atom"] == 1
    clip = Clip("c", "sequential", 1.0, SR, (Event("short beep", 0.1, 0.9, "short-beep", 0.0),))
    x = r.render(clip)  # a 0.2 s atom looped to 0.8 s
    assert _rms(x[round(0.15 * SR):round(0.85 * SR)]) > 0.05


def test_unknown_atom_is_a_data_error(bank):
    clip = Clip("c", "sequential", 1.0, SR, (Event("x", 0.0, 0.5, "syn-nothing-1", 0.0),))
    with pytest.raises(DataError, match="syn-nothing-1"):
        Renderer(bank).render(clip)


def test_render_params_round_trip_and_validation():
    p = RenderParams()
    assert RenderParams.from_json(json.loads(json.dumps(p.to_json()))) == p
    assert RenderParams.from_json(None) == p
    with pytest.raises(DataError, match="unknown render parameter"):
        RenderParams.from_json({"loudness": -20})
    with pytest.raises(DataError, match="resample_quality"):
        RenderParams.from_json({"resample_quality": "best"})


# --- files and CLI ------------------------------------------------------------------------------

@pytest.fixture()
def bench_dir(tmp_path: Path, bank) -> Path:
    root = tmp_path / "bench"
    root.mkdir()
    clips = [_clip(bank, 3.0, [("steady pink noise", 0.2, 1.2, 0.0), ("high beeping", 1.5, 2.9, -3.0)],
                   cid="clip-00000"),
             _clip(bank, 2.0, [("slow rising whistle", 0.0, 1.5, 0.0), ("snare hits", 1.0, 2.0, 0.0)],
                   cid="clip-00001", mode="overlap")]
    with open(root / "corpus.jsonl", "w") as fh:
        for c in clips:
            fh.write(json.dumps(c.to_json()) + "\n")
    (root / "qrels").mkdir()
    for name in ("queries.jsonl", "choices.jsonl", "atoms.jsonl", "qrels/test.tsv"):
        (root / name).write_text("")  # not read by render; present so the manifest can hash them
    write_manifest(root, {"seed": 0, "parameters": {"atoms": "synthetic"},
                          "render": RenderParams().to_json()})
    return root


def test_render_clip_to_file_wav_and_flac(bench_dir, tmp_path, bank):
    bench = load_benchmark(bench_dir)
    want = Renderer(bank).render(bench.clip_by_id["clip-00000"])
    for suffix in (".wav", ".flac"):
        out = tmp_path / f"one{suffix}"
        assert render_clip_to_file(bench, "clip-00000", out) == 3.0
        y, sr = sf.read(out, dtype="float32")
        assert sr == SR and len(y) == len(want)
        assert sf.info(out).subtype == "PCM_16"
        assert np.max(np.abs(y - want)) < 2 / 32768
    wav, _ = sf.read(tmp_path / "one.wav", dtype="int16")
    flac, _ = sf.read(tmp_path / "one.flac", dtype="int16")
    assert np.array_equal(wav, flac)  # one quantisation for both formats
    assert np.array_equal(wav, np.rint(want.astype(np.float64) * 32767).astype(np.int16))
    first = (tmp_path / "one.flac").read_bytes()
    render_clip_to_file(bench, "clip-00000", tmp_path / "one.flac")
    assert (tmp_path / "one.flac").read_bytes() == first


def test_render_clip_to_file_bad_input(bench_dir, tmp_path):
    bench = load_benchmark(bench_dir)
    with pytest.raises(DataError, match="clip-00001"):
        render_clip_to_file(bench, "clip-0001", tmp_path / "x.wav")  # names the close id
    with pytest.raises(DataError, match=r"\.wav or \.flac"):
        render_clip_to_file(bench, "clip-00000", tmp_path / "x.mp3")
    with pytest.raises(DataError):
        render_clip_to_file(bench, "clip-00000", tmp_path / "x.wav", bank_spec="synthetic:5")
    assert not list(tmp_path.glob("x.*"))


def test_write_clip_audio(bench_dir, tmp_path, bank):
    bench = load_benchmark(bench_dir)
    summary = write_clip_audio(tmp_path / "audio", bench.clips, bank, "flac", RenderParams())
    assert summary["files"] == 2 and summary["audio_seconds"] == 5.0
    assert sorted(p.name for p in (tmp_path / "audio").iterdir()) == ["clip-00000.flac", "clip-00001.flac"]
    with pytest.raises(DataError):
        write_clip_audio(tmp_path / "a2", bench.clips, bank, "mp3", RenderParams())


def test_cli_render(bench_dir, tmp_path):
    runner = CliRunner()
    out = tmp_path / "c.wav"
    res = runner.invoke(app, ["render", "clip-00001", "--data", str(bench_dir), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert sf.info(out).frames == 2 * SR
    res = runner.invoke(app, ["render", "clip-99999", "--data", str(bench_dir), "-o", str(out)])
    assert res.exit_code == 2 and "no clip with id" in res.output
    res = runner.invoke(app, ["render", "clip-00001", "--data", str(tmp_path / "nope"), "-o", str(out)])
    assert res.exit_code == 2
