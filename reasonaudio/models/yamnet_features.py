"""YAMNet's log-mel front end, computed so that every CPU gets the same input codes.

The recipe is YAMNet's (16 kHz, 25 ms periodic-Hann STFT every 10 ms, 512-point FFT, 64 HTK
mel bands 125-7500 Hz with the DC bin zeroed, ``log(mel + 0.001)``, 0.96 s patches every 0.48 s);
the arithmetic is chosen so that no step depends on which SIMD path numpy picks at run time:

- constants (the Hann window, the mel filters, the code thresholds, the output probabilities) are
  computed once in decimal arithmetic (:mod:`decimal`, 40 digits) and rounded once to binary;
  numpy's ``cos``/``log``/``exp`` are not used, since their float32 results (and on AVX-512
  machines their float64 ones) differ between SIMD paths;
- the spectrum is float64: ``scipy.fft.rfft`` (pocketfft, no run-time dispatch, one worker),
  magnitude ``sqrt(re * re + im * im)`` (IEEE operations, correctly rounded) instead of
  ``np.abs`` on complex values (a dispatched loop), and the mel projection is a sparse product
  (a fixed order of additions) instead of BLAS;
- the model's uint8 input code is ``clip(rint(log(v) / s + z), 0, 255)`` with ``v = mel + 0.001``;
  it is the number of thresholds ``exp((k - 0.5 - z) s)``, ``k = 1..255``, that ``v`` reaches
  (a tie goes up), counted exactly (a logarithm only guesses where to start counting:
  :func:`count_reached`).
"""

from __future__ import annotations

import decimal
from functools import lru_cache

import numpy as np

SAMPLE_RATE = 16_000
STFT_WINDOW = 400          # 25 ms
STFT_HOP = 160             # 10 ms
FFT_LENGTH = 512
N_MELS = 64
MEL_LOW_HZ, MEL_HIGH_HZ = 125, 7500
LOG_OFFSET = 0.001
PATCH_FRAMES = 96          # 0.96 s
PATCH_HOP_FRAMES = 48      # 0.48 s
MIN_SAMPLES = PATCH_FRAMES * STFT_HOP + STFT_WINDOW - STFT_HOP      # 15600: one full patch
PATCH_HOP_SAMPLES = PATCH_HOP_FRAMES * STFT_HOP                     # 7680
FRONT_END = "yamnet-logmel-exact-v1"
"""names this front end's arithmetic (part of the tagger's revision)"""

_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494")
_CONTEXT = decimal.Context(prec=40)


def _cos(x: decimal.Decimal) -> decimal.Decimal:
    """cos(x) by its Taylor series, in the 40-digit context (|x| <= 2 pi here)."""
    with decimal.localcontext(_CONTEXT):
        term, total, k = decimal.Decimal(1), decimal.Decimal(1), 0
        while True:
            k += 2
            term = -term * x * x / (k * (k - 1))
            if abs(term) < decimal.Decimal("1e-45"):
                return +total
            total += term


@lru_cache(maxsize=None)
def hann_window() -> np.ndarray:
    """(400,) float64 periodic Hann window, ``0.5 - 0.5 cos(2 pi n / 400)``."""
    with decimal.localcontext(_CONTEXT):
        half = decimal.Decimal("0.5")
        return np.array([float(half - half * _cos(2 * _PI * n / STFT_WINDOW)) for n in range(STFT_WINDOW)])


def _mel(hz: decimal.Decimal) -> decimal.Decimal:
    with decimal.localcontext(_CONTEXT):
        return 1127 * (1 + hz / 700).ln()


@lru_cache(maxsize=None)
def mel_matrix() -> np.ndarray:
    """(257, 64) float64 HTK triangular filters on the linear FFT bins, DC bin zeroed."""
    with decimal.localcontext(_CONTEXT):
        n_bins = FFT_LENGTH // 2 + 1
        step = decimal.Decimal(SAMPLE_RATE) / 2 / (n_bins - 1)
        low, high = _mel(decimal.Decimal(MEL_LOW_HZ)), _mel(decimal.Decimal(MEL_HIGH_HZ))
        edges = [low + (high - low) * i / (N_MELS + 1) for i in range(N_MELS + 2)]
        out = np.zeros((n_bins, N_MELS))
        for b in range(1, n_bins):
            m = _mel(step * b)
            for j in range(N_MELS):
                lower, center, upper = edges[j], edges[j + 1], edges[j + 2]
                weight = min((m - lower) / (center - lower), (upper - m) / (upper - center))
                if weight > 0:
                    out[b, j] = float(weight)
    return out


@lru_cache(maxsize=None)
def _mel_projection_matrix():
    import scipy.sparse

    return scipy.sparse.csr_matrix(mel_matrix().T)


@lru_cache(maxsize=None)
def code_thresholds(scale: float, zero: int) -> np.ndarray:
    """(255,) float64 ascending: the code of ``v`` is how many of these ``v`` reaches."""
    with decimal.localcontext(_CONTEXT):
        s, half = decimal.Decimal(scale), decimal.Decimal("0.5")
        return np.array([float(((k - half - zero) * s).exp()) for k in range(1, 256)])


@lru_cache(maxsize=None)
def sigmoid_table(scale: float, zero: int) -> np.ndarray:
    """(256,) float32 probabilities of the output codes: ``sigmoid(scale * (code - zero))``."""
    with decimal.localcontext(_CONTEXT):
        s = decimal.Decimal(scale)
        return np.array([float(1 / (1 + (-(s * (k - zero))).exp())) for k in range(256)], dtype=np.float32)


def pad_waveform(wave: np.ndarray) -> np.ndarray:
    """Zero-pad to at least one patch and to a whole number of patch hops (YAMNet's rule)."""
    n = max(len(wave), MIN_SAMPLES)
    hops = int(np.ceil((n - MIN_SAMPLES) / PATCH_HOP_SAMPLES))
    target = MIN_SAMPLES + hops * PATCH_HOP_SAMPLES
    return np.pad(wave, (0, target - len(wave))) if target > len(wave) else wave


def mel_energies(wave16k: np.ndarray) -> np.ndarray:
    """(frames, 64) float64 ``mel + 0.001`` of a mono 16 kHz waveform (padded as YAMNet pads)."""
    import scipy.fft

    wave = pad_waveform(np.asarray(wave16k, dtype=np.float32).reshape(-1)).astype(np.float64)
    frames = np.lib.stride_tricks.sliding_window_view(wave, STFT_WINDOW)[::STFT_HOP] * hann_window()
    spectrum = scipy.fft.rfft(frames, n=FFT_LENGTH, axis=1, workers=1)
    magnitude = np.sqrt(spectrum.real * spectrum.real + spectrum.imag * spectrum.imag)
    return (_mel_projection_matrix() @ magnitude.T).T + LOG_OFFSET


def _patches(frames: np.ndarray) -> np.ndarray:
    view = np.lib.stride_tricks.sliding_window_view(frames, (PATCH_FRAMES, N_MELS))
    return np.ascontiguousarray(view[::PATCH_HOP_FRAMES, 0])


def count_reached(values: np.ndarray, scale: float, zero: int) -> np.ndarray:
    """The code of each value: how many of :func:`code_thresholds` it reaches (as
    ``np.searchsorted(thresholds, values, side="right")``, NaN past every one).

    Counted from a guess: ``rint(log(v) / s + z)``, numpy's logarithm (whose last bits vary
    with the CPU), then moved a step at a time while the next threshold is reached or the
    last one is not. The thresholds are ascending, so the count it stops at is exact whatever
    the guess; the logarithm is within a step, so a value moves once at most, and the whole is
    a quarter of a binary search's cost."""
    thresholds = code_thresholds(scale, zero)
    top = len(thresholds)
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.rint(np.log(values) / scale + zero)
    codes = np.clip(np.nan_to_num(guess, nan=top, posinf=top, neginf=0), 0, top).astype(np.intp)
    reached = np.concatenate(([-np.inf], thresholds, [np.inf]))  # reached[k]: the k-th threshold
    while True:  # up while the next threshold is reached
        up = (codes < top) & (reached[codes + 1] <= values)
        if not up.any():
            break
        codes += up
    while True:  # down while the last one counted is not
        down = reached[codes] > values
        if not down.any():
            break
        codes -= down
    return codes


def log_mel_codes(wave16k: np.ndarray, scale: float, zero: int) -> np.ndarray:
    """(patches, 96, 64) uint8: the model's input codes for each 0.96 s patch."""
    energies = mel_energies(wave16k)
    codes = count_reached(energies.ravel(), scale, zero)
    return _patches(codes.astype(np.uint8).reshape(energies.shape))


def log_mel_patches(wave16k: np.ndarray) -> np.ndarray:
    """(patches, 96, 64) float32 log-mel patches (for inspection; the tagger reads codes)."""
    return _patches(np.log(mel_energies(wave16k)).astype(np.float32))
