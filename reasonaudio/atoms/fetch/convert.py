"""Turn a source recording into a bank file: 48 kHz mono 16-bit WAV, silence trimmed, gain applied.

Decoding is libsndfile (WAV, FLAC, Ogg Vorbis, MP3), resampling soxr (deterministic, HQ), so the
same source bytes give the same bank bytes with the same library versions.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import soundfile as sf
import soxr

from reasonaudio.atoms.fetch.errors import FetchError
from reasonaudio.atoms.fetch.recipes import Trim

SAMPLE_RATE = 48_000
SUBTYPE = "PCM_16"
FRAME_SECONDS = 0.010
PAD_SECONDS = 0.010
FADE_SECONDS = 0.002
MIN_SECONDS = 0.05
MAX_SECONDS = 60.0
PEAK_CEILING = 0.999


@dataclass(frozen=True)
class Converted:
    wav_bytes: bytes
    duration: float
    source_sample_rate: int
    source_channels: int
    source_duration: float
    peak_guard_db: float
    """extra attenuation applied so the gain did not clip (0 when none was needed)"""


def decode(data: bytes, where: str) -> tuple[np.ndarray, int, int]:
    """(mono float32 samples, sample rate, channel count) of an audio file's bytes."""
    try:
        samples, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as exc:  # libsndfile raises LibsndfileError/RuntimeError with a reason
        raise FetchError(f"{where}: cannot decode audio ({exc})") from None
    if samples.size == 0 or sr <= 0:
        raise FetchError(f"{where}: decoded to no samples")
    channels = samples.shape[1]
    return samples.mean(axis=1, dtype=np.float64).astype(np.float32), int(sr), channels


def resample(wave: np.ndarray, sr: int, target: int = SAMPLE_RATE) -> np.ndarray:
    if sr == target:
        return np.asarray(wave, dtype=np.float32)

    return soxr.resample(np.asarray(wave, dtype=np.float32), sr, target, quality="HQ").astype(np.float32)


def trim_silence(wave: np.ndarray, sr: int, silence_db: float) -> np.ndarray:
    """Cut leading and trailing frames quieter than ``silence_db`` below the loudest frame."""
    frame = max(1, int(round(FRAME_SECONDS * sr)))
    n_frames = int(np.ceil(len(wave) / frame))
    padded = np.zeros(n_frames * frame, dtype=np.float64)
    padded[:len(wave)] = wave
    rms = np.sqrt(np.mean(padded.reshape(n_frames, frame) ** 2, axis=1))
    top = float(rms.max())
    if top <= 0.0:
        return wave[:0]
    loud = np.nonzero(rms >= top * 10.0 ** (silence_db / 20.0))[0]
    pad = int(round(PAD_SECONDS * sr))
    start = max(0, int(loud[0]) * frame - pad)
    end = min(len(wave), (int(loud[-1]) + 1) * frame + pad)
    return wave[start:end]


def _fade(wave: np.ndarray, sr: int) -> np.ndarray:
    n = min(int(round(FADE_SECONDS * sr)), len(wave) // 2)
    if n <= 0:
        return wave
    ramp = (0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)).astype(np.float32)
    out = wave.copy()
    out[:n] *= ramp
    out[-n:] *= ramp[::-1]
    return out


def to_wav_bytes(wave: np.ndarray, sr: int = SAMPLE_RATE) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.clip(wave, -1.0, 1.0), sr, format="WAV", subtype=SUBTYPE)
    return buf.getvalue()


def finish(wave: np.ndarray, trim: Trim, gain_db: float, where: str,
           max_seconds: float = MAX_SECONDS, fade: bool = True) -> tuple[np.ndarray, float]:
    """Silence-trim, cap the length, fade the edges (unless ``fade`` is False: a loop's ends
    join), apply gain; returns (wave, peak guard dB)."""
    wave = trim_silence(wave, SAMPLE_RATE, trim.silence_db)
    if len(wave) < MIN_SECONDS * SAMPLE_RATE:
        raise FetchError(f"{where}: silent or shorter than {MIN_SECONDS} s after trimming")
    wave = wave[:int(max_seconds * SAMPLE_RATE)]
    wave = (_fade(wave, SAMPLE_RATE) if fade else wave) * np.float32(10.0 ** (gain_db / 20.0))
    peak = float(np.max(np.abs(wave)))
    guard = 0.0
    if peak > PEAK_CEILING:
        guard = 20.0 * np.log10(PEAK_CEILING / peak)
        wave = wave * np.float32(PEAK_CEILING / peak)
    return wave.astype(np.float32), round(guard, 3)


def convert(data: bytes, trim: Trim, gain_db: float, where: str,
            max_seconds: float = MAX_SECONDS, fade: bool = True) -> Converted:
    """Source bytes -> bank WAV bytes (see module doc)."""
    mono, sr, channels = decode(data, where)
    source_duration = len(mono) / sr
    start = int(round(trim.start * sr))
    end = len(mono) if trim.end is None else min(len(mono), int(round(trim.end * sr)))
    if start >= end:
        raise FetchError(f"{where}: trim start {trim.start} s is past the end ({source_duration:.2f} s)")
    wave = resample(mono[start:end], sr)
    wave, guard = finish(wave, trim, gain_db, where, max_seconds, fade)
    return Converted(to_wav_bytes(wave), round(len(wave) / SAMPLE_RATE, 3), sr, channels,
                     round(source_duration, 3), guard)


def mix_parts(parts: list[tuple[bytes, float]], where: str) -> tuple[np.ndarray, int]:
    """Mix decoded parts (bytes, onset seconds) into one 48 kHz mono wave (e.g. key clicks)."""
    waves = []
    for data, at in parts:
        mono, sr, _ = decode(data, where)
        waves.append((resample(mono, sr), int(round(at * SAMPLE_RATE))))
    total = max(off + len(w) for w, off in waves)
    out = np.zeros(total, dtype=np.float32)
    for w, off in waves:
        out[off:off + len(w)] += w
    return out, SAMPLE_RATE
