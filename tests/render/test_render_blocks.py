"""The render's last pass in cache-sized blocks: the bytes of the whole-clip steps it replaces
(exact float64 peak, whole-mix scaling, float32), at every block edge and at the headroom's
edge; a condition's render as the sum its definition names (``render.NOISY_MIX``); the bed's
segment loudness as ``ndarray.mean`` takes it; and the single-threaded BLAS every ingest renders
under."""

from __future__ import annotations

import logging
import os
from dataclasses import replace

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from reasonaudio.dataset.conditions import parse_condition
from reasonaudio.atoms.synthetic import SyntheticBank
from reasonaudio.atoms.beds import ABS_GATE, REL_GATE, PreparedBed, PreparedBeds, open_beds
from reasonaudio.generator.build import BuildParams, compose_benchmark
from reasonaudio.render.clips import PASS_BLOCK, ConditionRenderer, Renderer
from reasonaudio.runtime import blas_single_thread

B = PASS_BLOCK


def whole(mix, limit):
    """The steps the blocked pass replaces: the float64 peak, whole-mix scaling, float32;
    returns (audio, scaled?)."""
    mix = mix.copy()
    peak = float(np.max(np.abs(mix))) if len(mix) else 0.0
    if peak > limit:
        mix *= limit / peak
    return mix.astype(np.float32), peak > limit


@pytest.fixture(scope="module")
def renderer():
    return Renderer(SyntheticBank())


@pytest.mark.parametrize("n", [0, 1, B - 1, B, B + 1, 3 * B + 17])
def test_blocked_pass_gives_the_bytes_of_the_whole_clip_steps(renderer, n):
    rng = np.random.default_rng(n)
    limit = 10 ** (-renderer.params.peak_headroom_db / 20)
    mix = rng.standard_normal(n) * 0.05
    for gain in (1.0, 40.0):  # under the headroom, and over it (scaled)
        want, scaled = whole(mix * gain, limit)
        got = renderer.limited(mix * gain, "c")
        assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
        if n > 100:  # both sides of the headroom are taken
            assert scaled == (gain > 1.0)


@pytest.mark.parametrize("step", [-1, 0, 1])
def test_the_float32_peak_shortcut_scales_exactly_when_the_float64_peak_is_over(renderer, step):
    """A float64 peak one ulp either side of the headroom rounds to the same float32: the pass
    must still scale exactly when the float64 peak is over it, and note it once."""
    limit = 10 ** (-renderer.params.peak_headroom_db / 20)
    peak = limit
    for _ in range(abs(step)):
        peak = np.nextafter(peak, np.inf if step > 0 else -np.inf)
    assert np.float32(peak) == np.float32(limit)
    mix = np.full(B + 9, 0.25)
    mix[B + 3] = -peak
    before = renderer.adjustments.get("peak_scaled", 0)
    logging.disable(logging.WARNING)
    try:
        got = renderer.limited(mix.copy(), f"edge{step}")
    finally:
        logging.disable(logging.NOTSET)
    want, scaled = whole(mix, limit)
    assert got.tobytes() == want.tobytes()
    assert scaled == (step > 0)
    assert renderer.adjustments.get("peak_scaled", 0) - before == int(step > 0)


@pytest.fixture(scope="module")
def clips_and_beds(renderer):
    clips = compose_benchmark(BuildParams(n_clips=40, n_queries=5, seed=5), renderer.bank).clips[:4]
    return clips, PreparedBeds(open_beds(), renderer.params.loudness_lufs)


@pytest.mark.parametrize("name", ["snr5", "snr-20", "long"])
def test_a_condition_render_is_the_whole_mix_under_the_peak_rule(renderer, clips_and_beds, name):
    """The render equals the whole mix under the clean peak rule: under ``snrNN`` each event
    added in turn onto the gained bed (one daxpy of the whole bed onto zeros), under ``long``
    each stretch of bed added onto the events."""
    clips, beds = clips_and_beds
    condition = parse_condition(name)
    if name == "long":
        condition = replace(condition, long_min_s=20.0, long_max_s=30.0, long_stretch_s=(2.0, 6.0))
    r = ConditionRenderer(renderer, condition, beds, ["brown-noise", "white-noise"], 0)
    logging.disable(logging.WARNING)
    try:
        for clip in clips:
            placed = r.place(clip)
            if name == "long":
                mix = r.add_bed(renderer.events_mix(placed), clip)
            else:
                mix = r.add_bed(np.zeros(round(placed.duration * placed.sample_rate)), clip)
                sr = placed.sample_rate
                for event in placed.events:  # in the clip's order, as events_mix adds them
                    seg = renderer.event_samples(event, sr)
                    start = round(event.onset * sr)
                    mix[start:start + len(seg)] += seg[:len(mix) - start]
            limit = 10 ** (-renderer.params.peak_headroom_db / 20)
            want, _ = whole(mix, limit)
            assert r.render(clip).tobytes() == want.tobytes()
    finally:
        logging.disable(logging.NOTSET)


def _mean_loudness(bed, start_step, n):
    """PreparedBed.segment_loudness as first written, with ndarray.mean and both gates."""
    blocks = max(1, int(round((n / bed.sr - 0.4) / 0.1)) + 1)
    z = bed.block_power[start_step:start_step + blocks]
    lj = bed.block_lufs[start_step:start_step + blocks]
    kept = lj >= ABS_GATE
    z, lj = z[kept], lj[kept]
    if len(z) == 0:
        return bed.reference_lufs
    rel = -0.691 + 10 * np.log10(z.mean()) + REL_GATE
    return float(-0.691 + 10 * np.log10(z[lj > rel].mean()))


@pytest.mark.parametrize("silent_stretch", [False, True])
def test_segment_loudness_is_the_mean_of_the_gated_blocks(silent_stretch):
    sr = 16_000
    rng = np.random.default_rng(7)
    x = rng.standard_normal(sr * 20) * np.repeat(rng.uniform(0.01, 1, 200), sr // 10)
    if silent_stretch:
        x[sr * 3:sr * 6] = 0.0  # blocks under the absolute gate
    bed = PreparedBed("t", x, sr, -28.0)
    assert bed._gated == silent_stretch
    for step in range(0, bed.steps, 7):
        for n in (sr // 4, sr, int(sr * 3.3), sr * 12):
            assert bed.segment_loudness(step, n) == _mean_loudness(bed, step, n)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every BLAS is on one thread")
def test_blas_single_thread_limits_scipys_openblas_too():
    """A `long` stretch's daxpy is scipy's OpenBLAS, not numpy's: the limit must reach both."""
    with blas_single_thread():
        blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
        assert blas and all(lib["num_threads"] == 1 for lib in blas), blas
