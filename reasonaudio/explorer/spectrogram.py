"""A clip's spectrogram as a PNG (numpy and zlib: no plotting library), for the clip page.

The image spans the clip's duration left to right (one column per hop) and 0 Hz to the clip's
Nyquist frequency bottom to top, on a log-frequency axis from :data:`LOW_HZ` (where sound events
differ); levels are dB below the clip's loudest bin, :data:`RANGE_DB` of them, in a dark-to-light
colour ramp. The page stretches it to the same pixels per second as the event timelines drawn
under it, so an event's rectangle sits under its sound.
"""

from __future__ import annotations

import io
import struct
import wave
import zlib

import numpy as np

N_FFT = 1024
COLUMNS = 480
"""time columns of the image at most (a longer clip takes a longer hop)"""
ROWS = 128
LOW_HZ = 50.0
RANGE_DB = 80.0
RAMP = np.array([(13, 8, 135), (84, 2, 163), (139, 10, 165), (185, 50, 137), (219, 92, 104),
                 (244, 136, 73), (254, 188, 43), (240, 249, 33)], dtype=np.float64)
"""the colour ramp, quiet to loud (plasma's stops)"""


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """(mono float samples, sample rate) of 16-bit PCM WAV bytes (the explorer's audio)."""
    with wave.open(io.BytesIO(data), "rb") as w:
        rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        raw = w.readframes(w.getnframes())
    if width != 2:
        raise ValueError(f"expected 16-bit PCM, got {8 * width}-bit")
    samples = np.frombuffer(raw, dtype="<i2").astype(np.float64) / 32768.0
    return samples.reshape(-1, channels).mean(axis=1), rate


def levels(samples: np.ndarray, rate: int) -> np.ndarray:
    """ROWS x columns of levels in [0, 1] (1: the loudest bin), low frequencies in the last row."""
    hop = max(1, int(np.ceil(max(len(samples) - N_FFT, 1) / (COLUMNS - 1))))
    padded = np.concatenate([samples, np.zeros(N_FFT)])
    starts = np.arange(0, max(len(samples), 1), hop)
    frames = np.stack([padded[s:s + N_FFT] for s in starts]) * np.hanning(N_FFT)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2  # columns x bins
    freqs = np.fft.rfftfreq(N_FFT, 1.0 / rate)
    edges = np.geomspace(LOW_HZ, rate / 2, ROWS + 1)
    rows = np.empty((ROWS, power.shape[0]))
    for i in range(ROWS):  # each row: the strongest bin in its band (or the nearest bin)
        band = (freqs >= edges[i]) & (freqs < edges[i + 1])
        rows[i] = power[:, band].max(axis=1) if band.any() else \
            power[:, int(np.argmin(np.abs(freqs - edges[i])))]
    db = 10 * np.log10(rows + 1e-12)
    return np.clip((db - (db.max() - RANGE_DB)) / RANGE_DB, 0.0, 1.0)[::-1]


def colour(values: np.ndarray) -> np.ndarray:
    """values in [0, 1] -> uint8 RGB by :data:`RAMP`."""
    x = values * (len(RAMP) - 1)
    lo = np.floor(x).astype(int).clip(0, len(RAMP) - 2)
    t = (x - lo)[..., None]
    return np.round(RAMP[lo] * (1 - t) + RAMP[lo + 1] * t).astype(np.uint8)


def png(rgb: np.ndarray) -> bytes:
    """An RGB uint8 array (rows x columns x 3) as PNG bytes."""
    height, width, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def spectrogram_png(wav: bytes) -> bytes:
    """The spectrogram of a clip's WAV bytes as PNG bytes."""
    samples, rate = read_wav(wav)
    return png(colour(levels(samples, rate)))
