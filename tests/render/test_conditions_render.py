"""Acoustic conditions, rendered: the SNR measured on separate stems, clean unchanged, beds and
offsets deterministic, long placement keeping the logic, the name grammar, silence-aware windows."""

from __future__ import annotations

import hashlib
import logging
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from reasonaudio.querylang.judge import ClipIndex
from reasonaudio.dataset.conditions import (
    CLEAN,
    Condition,
    collection_for,
    parse_condition,
    parse_condition_list,
    results_subdir,
)
from reasonaudio.errors import DataError, ModelError
from reasonaudio.atoms.registry import open_bank
from reasonaudio.atoms.beds import PreparedBeds, open_beds
from reasonaudio.generator.build import BuildParams, compose_benchmark
from reasonaudio.render.clips import ConditionRenderer, Renderer, encode_audio
from reasonaudio.models.windowing import WindowPolicy, with_chunking

ALL_BEDS = ["pink-noise", "white-noise"]  # two of GENERATED_BEDS: each is prepared once


@pytest.fixture(scope="module")
def built():
    logging.disable(logging.WARNING)
    bank = open_bank("synthetic")
    result = compose_benchmark(BuildParams(n_clips=40, n_queries=10, seed=3), bank)
    yield bank, result
    logging.disable(logging.NOTSET)


@pytest.fixture(scope="module")
def base(built):
    return Renderer(built[0])


@pytest.fixture(scope="module")
def beds(base):
    return PreparedBeds(open_beds(), base.params.loudness_lufs)


def under(base, beds, name, seed=0, **changes):
    return ConditionRenderer(base, replace(parse_condition(name), **changes), beds, ALL_BEDS, seed)


def test_clean_audio_is_byte_identical_to_before_conditions(built, base):
    """The hash of these 12 clips' WAV bytes was computed with the renderer before conditions
    existed (commit d4eb332); the clean path must keep every sample."""
    h = hashlib.sha256()
    for c in built[1].clips[:12]:
        h.update(encode_audio(base.render(c), c.sample_rate, "wav"))
    assert h.hexdigest() == "23b5b3150d0f9cfc268f1aa2a47f4779e81208a33169089d09e39d9c5cdfacdb"


@pytest.fixture(scope="module")
def measured_events(built, base):
    """(clip, event, its stem's loudness) for every event whose stem is its levelled atom: not
    trimmed or looped, not lowered by the atom peak rule, not shaved by the 10 ms fade-in."""
    out = []
    for clip in built[1].clips[:30]:
        for e in clip.events:
            atom = base.prepared(e.atom_id, clip.sample_rate)
            seg = base.event_samples(e, clip.sample_rate)
            if len(seg) != len(atom) or len(seg) < 0.5 * clip.sample_rate:
                continue
            if abs(base.loudness(atom, clip.sample_rate) - base.params.loudness_lufs) > 0.05:
                continue
            lufs = base.loudness(seg, clip.sample_rate)
            if abs(lufs - (base.params.loudness_lufs + e.gain_db)) <= 0.1:
                out.append((clip, e, lufs))
    assert len(out) >= 20
    return out


@pytest.mark.parametrize("name", ["snr20", "snr5", "snr0", "snr-5"])
def test_rendered_snr_is_the_asked_snr_within_half_a_db(base, beds, measured_events, name):
    """Events and bed rendered as separate stems and measured with BS.1770 (the renderer's own
    meter): the bed sits NN dB below the loudness reference, so each measured event is
    NN + gain_db above it (Scaper's SNR: event LUFS minus background LUFS)."""
    r = under(base, beds, name)
    snr = r.condition.snr_db
    bed_lufs = {}
    for clip, e, event_lufs in measured_events:
        if clip.id not in bed_lufs:
            events, bed = r.stems(clip)
            assert len(events) == len(bed) == round(clip.duration * clip.sample_rate)
            bed_lufs[clip.id] = base.loudness(bed, clip.sample_rate)
            assert abs(bed_lufs[clip.id] - (base.params.loudness_lufs - snr)) <= 0.05
        assert abs((event_lufs - bed_lufs[clip.id]) - (snr + e.gain_db)) <= 0.5, (clip.id, e.label)
    # the mix is the two stems under one peak rule (the events added onto the bed one by one,
    # so the sums round in another order than events + bed): scaling keeps the SNR
    clip = measured_events[0][0]
    events, bed = r.stems(clip)
    assert np.allclose(r.render(clip), base.limited(events + bed, clip.id), rtol=0, atol=1e-7)


def test_bed_choice_and_offset_are_seeded_and_shared_by_the_snr_ladder(base, beds, built):
    clips = built[1].clips[:10]
    a, b = under(base, beds, "snr5"), under(base, beds, "snr5")
    c, other = under(base, beds, "snr0"), under(base, beds, "snr5", seed=1)
    spans = [(s.bed_id, s.bed_step) for clip in clips for s in a.bed_spans(clip)]
    assert spans == [(s.bed_id, s.bed_step) for clip in clips for s in b.bed_spans(clip)]
    assert spans == [(s.bed_id, s.bed_step) for clip in clips for s in c.bed_spans(clip)]
    assert spans != [(s.bed_id, s.bed_step) for clip in clips for s in other.bed_spans(clip)]
    assert np.array_equal(a.render(clips[0]), b.render(clips[0]))
    # the same bed at another rate: the same place, in seconds
    low = replace(clips[0], sample_rate=16_000)
    assert [(s.bed_id, s.bed_step) for s in a.bed_spans(low)] == spans[:len(a.bed_spans(low))]


def test_the_audio_index_keys_a_noisy_render_by_what_it_draws_from(base, beds, built, tmp_path):
    """Under a condition the bed is drawn by the clip id, so the same events under another id
    (two builds of one seed can number one clip differently) are other samples: the index that
    maps a render to its audio hash must not serve one for the other. Clean ignores the id."""
    from reasonaudio.ingest.audio_index import AudioHashIndex, render_key
    from reasonaudio.ingest.embedding_cache import audio_hash

    clip = replace(built[1].clips[0], sample_rate=16_000)
    twin = replace(clip, id="clip-99999")  # the same events, another id
    noisy = under(base, beds, "snr5")
    for renderer in (base, noisy):
        same_audio = np.array_equal(renderer.render(clip), renderer.render(twin))
        same_key = render_key(clip, 16_000, renderer) == render_key(twin, 16_000, renderer)
        assert same_key == same_audio, renderer
    assert render_key(clip, 16_000, base) == render_key(twin, 16_000, base)  # clean: shared
    index = AudioHashIndex(tmp_path)
    index.put(clip, 16_000, noisy, audio_hash(noisy.render(clip)))
    assert index.get(twin, 16_000, noisy) is None  # rendered again, never the other's hash
    assert index.get(clip, 16_000, noisy) == audio_hash(noisy.render(clip))


def test_long_places_the_events_and_keeps_every_querys_relevance(base, beds, built):
    clips, queries = built[1].clips, built[1].queries
    r = under(base, beds, "long")
    placed = [r.place(c) for c in clips]
    for c, p in zip(clips, placed):
        assert 60.0 <= p.duration <= 300.0 and p.id == c.id
        shift = {round(q.onset - e.onset, 3) for e, q in zip(c.events, p.events)}
        assert len(shift) == 1 and min(shift) >= 0  # one offset for all events: relative times kept
        assert max(e.offset for e in p.events) <= p.duration
    from reasonaudio.logic import from_json

    clean, long_ = ClipIndex(clips), ClipIndex(placed)
    for q in queries:
        logic = from_json(q["logic"])
        assert list(clean.relevant(logic)) == list(long_.relevant(logic))
    spans = r.bed_spans(clips[0])
    assert spans and all(0 <= s.start_s < placed[0].duration for s in spans)
    assert all(abs(s.level_db + 20.0) < 1e-9 for s in spans)


def test_a_300_s_long_clip_renders_within_its_memory_bound(base, beds, built):
    """docs/conditions.md states 300 s renders at 48 kHz within 400 MiB of Python-side memory."""
    r = under(base, beds, "long", long_min_s=300.0, long_max_s=300.0)
    clip = built[1].clips[1]
    tracemalloc.start()
    audio = r.render(clip)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(audio) == 300 * clip.sample_rate and audio.dtype == np.float32
    assert peak < 400 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_the_name_grammar():
    assert parse_condition("snr5") == Condition("snr5", "snr", snr_db=5.0)
    assert parse_condition("snr-5").snr_db == -5.0 and parse_condition("long").kind == "long"
    for bad in ("snr05", "snr", "snr100", "noisy", "SNR5", "clean "[:-1] + "x"):
        with pytest.raises(DataError):
            parse_condition(bad)
    assert [c.name for c in parse_condition_list("snr0,long,clean")] == ["clean", "snr0", "long"]
    with pytest.raises(DataError, match="twice"):
        parse_condition_list("snr5,snr5")
    assert collection_for("reasonaudio-yamnet", CLEAN) == "reasonaudio-yamnet"
    assert collection_for("reasonaudio-yamnet", "snr5") == "reasonaudio-yamnet.snr5"
    assert results_subdir(CLEAN) == "" and results_subdir("long") == "conditions/long"
    record = parse_condition("snr10").to_json()
    assert Condition.from_json(record) == parse_condition("snr10")
    with pytest.raises(DataError, match="agree"):
        Condition.from_json({**record, "snr_db": 3.0})


def test_generated_beds_are_deterministic_and_levelled(beds):
    a = open_beds().load("pink-noise")[0]
    assert np.array_equal(a, open_beds().load("pink-noise")[0])
    assert not np.array_equal(a, open_beds().load("brown-noise")[0])
    bed = beds.get("white-noise", 48_000)
    assert abs(bed.segment_loudness(0, bed.steps * bed.step) - bed.reference_lufs) < 0.05


def test_silence_aware_windows_cut_in_the_quiet_and_cover_every_sample():
    sr = 1000
    wave = np.ones(25_000, dtype=np.float32)
    wave[7_200:7_600] = 0.0  # a quiet gap in the second half of the first 10 s window
    policy = WindowPolicy(10.0, 10.0, chunking="silence")
    spans = policy.silence_spans(wave, sr)
    assert spans[0][0] == 0 and spans[-1][1] == len(wave)
    assert all(a == prev_b for (_, prev_b), (a, _) in zip(spans, spans[1:]))
    assert all(b - a <= 10_000 for a, b in spans)
    assert 7_200 <= spans[0][1] <= 7_600
    fixed = WindowPolicy(10.0, 10.0)
    assert "chunking" not in fixed.describe()  # fixed windows keep the identity (cache key) they had
    assert policy.describe()["kind"] == "silence-aware-windows"

    class Tagger:
        name = "yamnet"

    with pytest.raises(ModelError, match="cuts no windows"):
        with_chunking(Tagger(), "silence")

    class Windowed:
        window = fixed

    assert with_chunking(Windowed(), "silence").window.chunking == "silence"
    with pytest.raises(ModelError):
        WindowPolicy(10.0, 10.0, chunking="random")
