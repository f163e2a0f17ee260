"""The built-in synthetic atom bank: procedurally generated, deterministic, no audio files shipped.

Every class is a *recipe* (a family of synthesis plus its parameters) whose label says what the
sound is ("fast clicking", "slow rising whistle", "pulsing pink noise"). Each class has 1 to 3
atoms; an atom's samples are generated on demand from the recipe and a seed derived from its label
and index (sha256, not Python's salted ``hash``), so the same bank gives the same samples on every
machine and every call. Atoms are generated lazily and kept in a small LRU cache.

Labels are chosen to be safe for the query parser: lower-case letters and spaces only, no digits,
no word the query language uses (:data:`reasonaudio.querylang.labels.UNSAFE_WORDS`), and no label is a contiguous run of words
inside another label. Labels describe timbre and texture, not length, because the composer loops
or trims atoms to any event duration.

Changing any recipe changes audio: bump :data:`RECIPE_VERSION` so manifests tell builds apart.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from threading import Lock
from typing import Any, Callable

import numpy as np
from scipy import fft, signal

from reasonaudio.dataset.atom import Atom
from reasonaudio.errors import DataError
from reasonaudio.atoms.bank import AtomBank

SAMPLE_RATE = 48_000
RECIPE_VERSION = "1"
SOURCE = "reasonaudio synthetic"
LICENSE = "CC0-1.0"


# ---------------------------------------------------------------------------------------------
# Recipes


@dataclass(frozen=True)
class Recipe:
    label: str
    family: str
    params: tuple[tuple[str, Any], ...]
    min_dur: float = 0.5
    max_dur: float = 4.0

    @property
    def p(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def slug(self) -> str:
        return self.label.replace(" ", "-")


def _r(label: str, family: str, min_dur: float = 0.5, max_dur: float = 4.0, **params: Any) -> Recipe:
    return Recipe(label, family, tuple(sorted(params.items())), min_dur, max_dur)


# One function per family of recipes, each with its own parameter table and naming; the bank
# interleaves the families in the order of FAMILIES (a change of order or of any recipe changes
# the bank's audio: bump RECIPE_VERSION).

def _waves() -> list[Recipe]:
    regs = {"deep": 55.0, "low": 130.0, "mid": 330.0, "high": 1050.0, "shrill": 2800.0}
    waves = {"sine": "{} sine tone", "square": "{} square buzz", "saw": "{} sawtooth drone",
             "triangle": "{} triangle wave"}
    return [_r(name.format(reg), "wave", wave=w, freq=f) for w, name in waves.items() for reg, f in regs.items()]


def _sweeps() -> list[Recipe]:
    timbres = {"whistle": ("sine", 1000.0, 3000.0), "tone sweep": ("triangle", 250.0, 1000.0),
               "buzz": ("square", 80.0, 320.0)}
    return [_r(f"{speed} {direction} {t}", "sweep", min_dur=1.0 if speed == "slow" else 0.5,
               wave=w, lo=lo, hi=hi, direction=direction, speed=speed)
            for t, (w, lo, hi) in timbres.items()
            for direction in ("rising", "falling", "swooping")
            for speed in ("slow", "quick")]


def _clicks() -> list[Recipe]:
    rates = {"sparse": 2.0, "slow": 4.0, "steady": 8.0, "fast": 16.0, "rapid": 32.0}
    clicks = [_r(f"{rname} {kind}", "clicks", rate=rate, kind=kind)
              for kind in ("clicking", "ticking", "knocking") for rname, rate in rates.items()]
    return clicks + [_r(f"{name} crackling", "crackle", rate=rate)
                     for name, rate in (("sparse", 6.0), ("busy", 30.0), ("dense", 150.0))]


def _beeps() -> list[Recipe]:
    regs = {"low": 400.0, "mid": 1000.0, "high": 2000.0, "shrill": 4000.0}
    patterns = ("beeping", "double beeps", "rapid beeping", "alternating beeps", "chirping beeps")
    return [_r(f"{reg} {pat}", "beeps", freq=f, pattern=pat) for pat in patterns for reg, f in regs.items()]


def _coloured_noises() -> list[Recipe]:
    colours = {"white": 0.0, "pink": 1.0, "brown": 2.0, "blue": -1.0}
    envs = {"steady": "steady {} noise", "pulsing": "pulsing {} noise",
            "swelling": "swelling {} noise", "bursts": "{} noise bursts",
            "gusting": "gusting {} noise"}
    return [_r(name.format(c), "colour", alpha=a, env=e) for e, name in envs.items() for c, a in colours.items()]


def _band_noises() -> list[Recipe]:
    regs = {"deep": 60.0, "low": 200.0, "mid": 800.0, "high": 3000.0, "shrill": 9000.0}
    textures = {"steady": "{} band noise", "whoosh": "{} noise whoosh", "flutter": "{} noise flutter"}
    return [_r(name.format(reg), "band", centre=c, texture=t)
            for t, name in textures.items() for reg, c in regs.items()]


def _modulated_tones() -> list[Recipe]:
    regs = {"deep": 70.0, "low": 150.0, "mid": 440.0, "high": 1200.0}
    mods = {"pulsing": "{} pulsing tone", "warbling": "{} warbling tone",
            "trilling": "{} trilling tone", "beating": "{} beating drone",
            "throbbing": "{} throbbing hum"}
    return [_r(name.format(reg), "modulated", freq=f, mod=m) for m, name in mods.items() for reg, f in regs.items()]


def _metals() -> list[Recipe]:
    sizes = {"tiny": 2500.0, "small": 1200.0, "large": 300.0, "huge": 90.0}
    metals = {"bell": "{} bell strike", "chime": "{} chime", "gong": "{} gong", "clang": "{} metal clang"}
    return [_r(name.format(s), "metal", min_dur=1.0, freq=f, kind=k)
            for k, name in metals.items() for s, f in sizes.items()]


def _plucks() -> list[Recipe]:
    regs = {"deep": 55.0, "low": 110.0, "mid": 262.0, "high": 660.0, "shrill": 1320.0}
    return [_r(f"{reg} {name}", "pluck", min_dur=0.8, freq=f, damping=d)
            for name, d in (("string pluck", 0.996), ("muted pluck", 0.93))
            for reg, f in regs.items()]


def _drums() -> list[Recipe]:
    drums = ("low drum", "mid drum", "high drum", "snare", "clap", "shaker", "woodblock", "cowbell")
    return [_r(f"{d} {pat}", "drum", drum=d, pattern=pat) for pat in ("hits", "roll") for d in drums]


def _chords() -> list[Recipe]:
    qualities = {"major": (0, 4, 7), "minor": (0, 3, 7), "diminished": (0, 3, 6),
                 "augmented": (0, 4, 8), "suspended": (0, 5, 7), "cluster": (0, 1, 2, 3)}
    chords = [_r(f"{reg} {q} chord", "chord", root=root, intervals=iv)
              for q, iv in qualities.items()
              for reg, root in (("low", 110.0), ("mid", 262.0), ("high", 880.0))]
    return chords + [_r(f"{q} arpeggio", "arpeggio", root=330.0, intervals=iv) for q, iv in qualities.items()]


def _sirens() -> list[Recipe]:
    return [_r(f"{t} {kind} siren", "siren", kind=kind, wave="sine" if t == "pure" else "saw")
            for kind in ("wailing", "yelping", "alternating", "whooping")
            for t in ("pure", "harsh")]


def _water() -> list[Recipe]:
    return [_r("sparse bubbling", "bubbles", rate=8.0), _r("dense bubbling", "bubbles", rate=40.0),
            _r("slow dripping", "drips", rate=1.5), _r("fast dripping", "drips", rate=5.0),
            _r("light patter", "patter", rate=60.0), _r("heavy patter", "patter", rate=400.0)]


def _vowels() -> list[Recipe]:
    vowels = {"ah": (800, 1150, 2900), "ee": (270, 2300, 3000), "oo": (300, 870, 2240),
              "oh": (450, 800, 2830), "eh": (530, 1840, 2480)}
    return [_r(f"{reg} {v} vowel", "vowel", pitch=pitch, formants=fm)
            for v, fm in vowels.items() for reg, pitch in (("low", 110.0), ("high", 220.0))]


def _shepard_tones() -> list[Recipe]:
    return [_r("rising shepard tone", "shepard", direction="rising"),
            _r("falling shepard tone", "shepard", direction="falling")]


FAMILIES: tuple[Callable[[], list[Recipe]], ...] = (
    _waves, _sweeps, _clicks, _beeps, _coloured_noises, _band_noises, _modulated_tones, _metals, _plucks,
    _drums, _chords, _sirens, _water, _vowels, _shepard_tones)
"""the recipe families, in the order the bank interleaves them"""


def _interleave(fams: list[list[Recipe]]) -> tuple[Recipe, ...]:
    """Round-robin over families, so the first N classes of ``synthetic:N`` are varied."""
    out: list[Recipe] = []
    depth = max(len(f) for f in fams)
    for i in range(depth):
        for f in fams:
            if i < len(f):
                out.append(f[i])
    return tuple(out)


RECIPES: tuple[Recipe, ...] = _interleave([family() for family in FAMILIES])
RECIPE_BY_LABEL: dict[str, Recipe] = {r.label: r for r in RECIPES}

# ---------------------------------------------------------------------------------------------
# Synthesis helpers (numpy/scipy, vectorised so ~500 atoms generate in a few seconds)

SR = SAMPLE_RATE
_NYQ = SR / 2


def _phase(freq: np.ndarray | float, n: int) -> np.ndarray:
    f = np.broadcast_to(np.asarray(freq, dtype=np.float64), (n,))
    return 2 * np.pi * np.cumsum(f) / SR


_TABLE_SIZE = 4096


@lru_cache(maxsize=256)
def _table(amps: tuple[float, ...]) -> np.ndarray:
    """One period of sum_k amps[k-1] * sin(k * phase), plus a wrap-around sample."""
    ph = 2 * np.pi * np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE
    out = np.zeros(_TABLE_SIZE + 1)
    for k, a in enumerate(amps, 1):
        if a:
            out += a * np.sin(k * ph)
    return out


def _lookup(amps: tuple[float, ...], ph: np.ndarray) -> np.ndarray:
    table = _table(amps)
    pos = (ph / (2 * np.pi)) % 1.0 * _TABLE_SIZE
    i = pos.astype(np.int64)
    frac = pos - i
    return table[i] * (1 - frac) + table[i + 1] * frac


def _harmonic_amps(wave: str, nharm: int) -> tuple[float, ...]:
    amps = []
    for k in range(1, nharm + 1):
        if wave == "sine":
            a = 1.0 if k == 1 else 0.0
        elif wave == "square":
            a = 0.0 if k % 2 == 0 else 1.0 / k
        elif wave == "triangle":
            a = 0.0 if k % 2 == 0 else (-1) ** ((k - 1) // 2) / k**2
        else:  # saw
            a = (-1) ** (k + 1) / k
        amps.append(a)
    return tuple(amps)


def _osc(wave: str, freq: np.ndarray | float, n: int, max_harm: int = 24) -> np.ndarray:
    """Band-limited oscillator: a wavetable holding the harmonics below 0.45*SR at the top pitch."""
    ph = _phase(freq, n)
    if wave == "sine":
        return np.sin(ph)
    fmax = float(np.max(freq))
    nharm = int(max(1, min(max_harm, 0.45 * SR // max(fmax, 1.0))))
    return _lookup(_harmonic_amps(wave, nharm), ph)


def _t(n: int) -> np.ndarray:
    return np.arange(n) / SR


def _shaped_noise(rng: np.random.Generator, n: int, alpha: float) -> np.ndarray:
    """Noise with power spectrum ~ 1/f^alpha (0 white, 1 pink, 2 brown, -1 blue)."""
    if alpha == 0:
        return rng.standard_normal(n)
    m = fft.next_fast_len(n, real=True)  # an awkward n (large prime factors) makes the FFT slow
    spec = np.fft.rfft(rng.standard_normal(m))
    f = np.fft.rfftfreq(m, 1 / SR)
    spec *= np.maximum(f, 20.0) ** (-alpha / 2)
    return np.fft.irfft(spec, m)[:n]


def _bandpass(x: np.ndarray, lo: float, hi: float, order: int = 4) -> np.ndarray:
    lo = max(lo, 10.0)
    hi = min(hi, 0.95 * _NYQ)
    sos = signal.butter(order, [lo, hi], btype="bandpass", fs=SR, output="sos")
    return signal.sosfilt(sos, x)


def _lowpass(x: np.ndarray, cut: float, order: int = 4) -> np.ndarray:
    sos = signal.butter(order, min(cut, 0.95 * _NYQ), btype="lowpass", fs=SR, output="sos")
    return signal.sosfilt(sos, x)


def _highpass(x: np.ndarray, cut: float, order: int = 4) -> np.ndarray:
    sos = signal.butter(order, cut, btype="highpass", fs=SR, output="sos")
    return signal.sosfilt(sos, x)


def _decay(n: int, tau: float, attack: float = 0.002) -> np.ndarray:
    t = _t(n)
    env = np.exp(-t / tau)
    a = max(1, int(attack * SR))
    env[:a] *= np.linspace(0, 1, a, endpoint=False)
    return env


def _gate(n: int, period: float, on: float, offset: float = 0.0, ramp: float = 0.004) -> np.ndarray:
    """Smoothed on/off pattern: on for ``on`` seconds every ``period`` seconds."""
    t = (_t(n) - offset) % period
    g = (t < on).astype(np.float64)
    k = max(1, int(ramp * SR))
    c = np.concatenate([np.zeros(k), np.cumsum(g)])
    return (c[k:] - c[:-k]) / k


def _place(n: int, times: np.ndarray, grain: np.ndarray | Callable[[int], np.ndarray],
           amps: np.ndarray | None = None) -> np.ndarray:
    out = np.zeros(n)
    for i, t0 in enumerate(times):
        s = int(t0 * SR)
        if s >= n:
            continue
        g = grain(i) if callable(grain) else grain
        e = min(n, s + len(g))
        out[s:e] += (1.0 if amps is None else amps[i]) * g[: e - s]
    return out


def _poisson_times(rng: np.random.Generator, rate: float, dur: float) -> np.ndarray:
    k = rng.poisson(rate * dur)
    return np.sort(rng.uniform(0, dur, size=k))


# ---------------------------------------------------------------------------------------------
# Families


def _gen_wave(rng, n, p, j):
    return _osc(p["wave"], p["freq"] * j, n)


def _gen_sweep(rng, n, p, j):
    lo, hi = p["lo"] * j, p["hi"] * j
    period = n / SR if p["speed"] == "slow" else 0.3 * j
    u = (_t(n) % period) / period
    if p["direction"] == "rising":
        shape = u
    elif p["direction"] == "falling":
        shape = 1 - u
    else:  # swooping: up then down
        shape = np.sin(np.pi * u)
    freq = lo * (hi / lo) ** shape
    x = _osc(p["wave"], freq, n)
    if p["speed"] == "quick":
        x *= _gate(n, period, 0.85 * period)
    return x


def _click_grain(kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "clicking":  # an impulse plus a 1 ms broadband tail (a bare impulse is all peak)
        m = int(0.008 * SR)
        g = 0.6 * _highpass(rng.standard_normal(m), 1000.0) * _decay(m, 0.0012, attack=0.0)
        g[0] += 1.0
        return g
    if kind == "ticking":
        m = int(0.004 * SR)
        return _highpass(rng.standard_normal(m), 3000.0) * _decay(m, 0.001)
    m = int(0.06 * SR)  # knocking: damped low resonance plus a soft noise transient
    t = _t(m)
    return np.sin(2 * np.pi * 180 * t) * _decay(m, 0.015) + 0.3 * _lowpass(rng.standard_normal(m), 800) * _decay(m, 0.004)


def _gen_clicks(rng, n, p, j):
    rate = p["rate"] * j
    times = np.arange(0, n / SR, 1 / rate) + rng.uniform(0, 0.3 / rate)
    grain = _click_grain(p["kind"], rng)
    return _place(n, times, grain, amps=rng.uniform(0.85, 1.0, size=len(times)))


def _gen_crackle(rng, n, p, j):
    times = _poisson_times(rng, p["rate"] * j, n / SR)
    amps = rng.pareto(2.5, size=len(times)) + 0.2
    m = int(0.003 * SR)
    grains = [_highpass(rng.standard_normal(m), 1500.0) * _decay(m, 0.0006) for _ in range(8)]
    return _place(n, times, lambda i: grains[i % 8], amps=np.minimum(amps, 4.0))


def _gen_beeps(rng, n, p, j):
    f = p["freq"] * j
    pat = p["pattern"]
    if pat == "beeping":
        return np.sin(_phase(f, n)) * _gate(n, 0.30, 0.12)
    if pat == "double beeps":
        return np.sin(_phase(f, n)) * (_gate(n, 0.6, 0.08) + _gate(n, 0.6, 0.08, offset=0.14))
    if pat == "rapid beeping":
        return np.sin(_phase(f, n)) * _gate(n, 0.08, 0.04)
    if pat == "alternating beeps":
        hi = _gate(n, 0.5, 0.25)
        freq = f * np.where(hi > 0.5, 1.26, 1.0)
        return np.sin(_phase(freq, n)) * (_gate(n, 0.25, 0.22))
    # chirping beeps: each beep glides up by a fifth
    u = (_t(n) % 0.3) / 0.1
    freq = f * (1.0 + 0.5 * np.clip(u, 0, 1))
    return np.sin(_phase(freq, n)) * _gate(n, 0.3, 0.1)


def _smooth_random(rng: np.random.Generator, n: int, rate_hz: float) -> np.ndarray:
    """A slowly varying positive envelope in [0.1, 1] (random control points, cubic interp)."""
    k = max(4, int(n / SR * rate_hz) + 4)
    pts = rng.uniform(0.1, 1.0, size=k)
    x = np.linspace(0, k - 1, n)
    return np.clip(np.interp(x, np.arange(k), pts), 0.1, 1.0)


def _gen_colour(rng, n, p, j):
    x = _shaped_noise(rng, n, p["alpha"])
    x /= np.std(x) + 1e-12
    env = p["env"]
    if env == "pulsing":
        x *= 0.05 + 0.95 * _gate(n, 0.25 / j, 0.12 / j, ramp=0.01)
    elif env == "swelling":
        x *= 0.05 + 0.95 * np.sin(np.pi * (_t(n) % (1.6 * j)) / (1.6 * j)) ** 2
    elif env == "bursts":
        x *= _gate(n, 0.5 * j, 0.15, ramp=0.005)
    elif env == "gusting":
        x *= _smooth_random(rng, n, 1.5)
    return x


def _gen_band(rng, n, p, j):
    c = p["centre"] * j
    tex = p["texture"]
    x = rng.standard_normal(n)
    if tex == "whoosh":
        # time-varying band-pass by frame-wise FFT shaping: the centre glides an octave up and down
        frame, hop = 2048, 1024
        pad = np.concatenate([np.zeros(frame), x, np.zeros(frame)])
        win = np.hanning(frame)
        freqs = np.fft.rfftfreq(frame, 1 / SR)
        out = np.zeros_like(pad)
        norm = np.zeros_like(pad)
        for s in range(0, len(pad) - frame, hop):
            tc = max(0.0, (s - frame) / SR)
            centre = c * 2 ** np.sin(2 * np.pi * tc / 1.5)
            gain = np.exp(-0.5 * (np.log2(np.maximum(freqs, 1.0) / centre) / 0.35) ** 2)
            seg = np.fft.irfft(np.fft.rfft(pad[s:s + frame] * win) * gain, frame)
            out[s:s + frame] += seg * win
            norm[s:s + frame] += win**2
        return out[frame:frame + n] / np.maximum(norm[frame:frame + n], 1e-3)
    x = _bandpass(x, c / np.sqrt(2), c * np.sqrt(2))
    if tex == "flutter":
        x *= 0.1 + 0.9 * (0.5 + 0.5 * np.sin(2 * np.pi * 12.0 * j * _t(n)))
    return x


def _gen_modulated(rng, n, p, j):
    f = p["freq"] * j
    t = _t(n)
    m = p["mod"]
    if m == "pulsing":
        return np.sin(_phase(f, n)) * (0.55 + 0.45 * np.sin(2 * np.pi * 6.0 * t))
    if m == "warbling":
        return _osc("triangle", f * (1 + 0.06 * np.sin(2 * np.pi * 5.0 * t)), n)
    if m == "trilling":
        hi = (t * 12.0) % 1.0 < 0.5
        return _osc("triangle", f * np.where(hi, 1.12, 1.0), n)
    if m == "beating":
        return _osc("saw", f, n, 12) + _osc("saw", f + 3.0, n, 12)
    return _osc("saw", f, n) * (0.2 + 0.8 * np.sin(np.pi * 2.0 * t) ** 2)  # throbbing


def _gen_metal(rng, n, p, j):
    f = p["freq"] * j
    t = _t(n)
    dur = n / SR
    kind = p["kind"]
    if kind == "bell":
        ratios, amps = [0.5, 1.0, 1.19, 1.5, 2.0, 2.5, 2.67, 3.0], [0.6, 1, 0.7, 0.5, 0.6, 0.3, 0.25, 0.2]
        tau = dur / 4
    elif kind == "chime":
        ratios, amps = [1.0, 2.76, 5.40, 8.93], [1.0, 0.5, 0.25, 0.12]
        tau = dur / 5
    elif kind == "gong":
        ratios = list(1 + rng.uniform(0, 6, size=14))
        amps = list(rng.uniform(0.2, 1.0, size=14))
        tau = dur / 3
    else:  # clang
        ratios = list(1 + rng.uniform(0, 9, size=10))
        amps = list(rng.uniform(0.3, 1.0, size=10))
        tau = min(0.25, dur / 6)
    x = np.zeros(n)
    env = np.exp(-t / tau)
    step = np.exp(-0.3 * t / tau)  # partial i decays (1 + 0.3 i) times faster than the first
    for r, a in zip(ratios, amps):
        if r * f < 0.45 * SR:
            x += a * np.sin(2 * np.pi * r * f * t + rng.uniform(0, 2 * np.pi)) * env
        env = env * step
    if kind == "gong":
        x *= 1 - np.exp(-t / 0.05)
    if kind in ("clang", "bell"):
        m = int(0.01 * SR)
        x[:m] += 0.5 * _highpass(rng.standard_normal(m), 2000.0) * _decay(m, 0.002)
    return x


def _gen_pluck(rng, n, p, j):
    """Karplus-Strong string: a noise burst through a damped comb (one vector step per period)."""
    period = max(2, int(round(SR / (p["freq"] * j))))
    g = p["damping"]
    # y[i] = x[i] + g/2 (y[i-P] + y[i-P-1]); the excitation fills the first period, so every
    # later block of P samples depends only on earlier blocks: a vector step per period.
    y = np.zeros(n + period + 1)
    off = period + 1  # y[off + i] is sample i; y[:off] are zeros before the start
    y[off:off + min(period, n)] = rng.uniform(-1, 1, size=min(period, n))
    for s in range(period, n, period):
        e = min(n, s + period)
        y[off + s:off + e] = 0.5 * g * (y[off + s - period:off + e - period]
                                        + y[off + s - period - 1:off + e - period - 1])
    x = y[off:]
    if g < 0.99:
        x = _lowpass(x, 2500.0, 2)
    return x * _decay(n, n / SR / 2.5, attack=0.0005)


def _drum_grain(drum: str, rng: np.random.Generator) -> np.ndarray:
    def tone(f0: float, f1: float, tau: float, length: float) -> np.ndarray:
        m = int(length * SR)
        t = _t(m)
        freq = f1 + (f0 - f1) * np.exp(-t / 0.03)
        return np.sin(_phase(freq, m)) * _decay(m, tau)

    if drum in ("low drum", "mid drum", "high drum"):
        f = {"low drum": 55.0, "mid drum": 120.0, "high drum": 220.0}[drum]
        return tone(2 * f, f, 0.12, 0.45)
    m = int(0.25 * SR)
    noise = rng.standard_normal(m)
    if drum == "snare":
        return 0.8 * _bandpass(noise, 1500, 7000) * _decay(m, 0.06) + 0.5 * tone(330, 180, 0.04, 0.25)
    if drum == "clap":
        env = sum(_decay(m, 0.004) * (np.arange(m) >= int(d * SR)) * np.exp(-(_t(m) - d).clip(0) / 0.006)
                  for d in (0.0, 0.011, 0.023)) + 0.4 * (np.arange(m) >= int(0.03 * SR)) * _decay(m, 0.05)
        return _bandpass(noise, 800, 3000) * env
    if drum == "shaker":
        t = _t(m)
        env = np.sin(np.pi * np.clip(t / 0.07, 0, 1)) ** 2
        return _highpass(noise, 5000.0) * env
    if drum == "woodblock":
        return tone(900, 880, 0.02, 0.12)
    t = _t(m)  # cowbell: two detuned square partials through a band-pass
    x = _osc("square", 540.0, m, 8) + _osc("square", 800.0, m, 8)
    return _bandpass(x, 400, 4000, 2) * _decay(m, 0.08) + 0 * t


def _gen_drum(rng, n, p, j):
    grain = _drum_grain(p["drum"], rng)
    if p["pattern"] == "hits":
        step = 0.5 * j
        times = np.arange(0, n / SR, step)
        amps = np.ones(len(times))
    else:
        step = 0.065 * j
        times = np.arange(0, n / SR, step)
        amps = 0.6 + 0.4 * (np.arange(len(times)) % 4 == 0) + rng.uniform(-0.08, 0.08, len(times))
    return _place(n, times, grain, amps)


def _organ(freq: float, n: int) -> np.ndarray:
    return _lookup((1.0, 0.5, 0.3, 0.15), _phase(freq, n))


def _gen_chord(rng, n, p, j):
    root = p["root"] * j
    x = sum(_organ(root * 2 ** (iv / 12), n) for iv in p["intervals"])
    t = _t(n)
    return x * (1 - np.exp(-t / 0.08))


def _gen_arpeggio(rng, n, p, j):
    root = p["root"] * j
    notes = [root * 2 ** (iv / 12) for iv in p["intervals"]] + [root * 2]
    step = 0.14
    m = int(step * SR * 2)
    grains = []
    for f in notes:
        t = _t(m)
        grains.append((np.sin(2 * np.pi * f * t) + 0.3 * np.sin(4 * np.pi * f * t)) * _decay(m, 0.09))
    times = np.arange(0, n / SR, step)
    return _place(n, times, lambda i: grains[i % len(grains)])


def _gen_siren(rng, n, p, j):
    t = _t(n)
    kind = p["kind"]
    if kind == "wailing":
        freq = 600 + 700 * (0.5 - 0.5 * np.cos(2 * np.pi * t / (3.0 * j)))
    elif kind == "yelping":
        freq = 600 + 700 * (0.5 - 0.5 * np.cos(2 * np.pi * t / (0.3 * j)))
    elif kind == "alternating":
        freq = np.where((t / (0.5 * j)) % 2 < 1, 950.0, 700.0)
    else:  # whooping: rising then reset
        u = (t % (1.0 * j)) / (1.0 * j)
        freq = 400 * (1400 / 400) ** u
    return _osc(p["wave"], freq * j, n, 12)


def _gen_bubbles(rng, n, p, j):
    times = _poisson_times(rng, p["rate"] * j, n / SR)
    m = int(0.06 * SR)
    t = _t(m)

    def grain(i: int) -> np.ndarray:
        f0 = rng.uniform(400, 1500)
        return np.sin(_phase(f0 * (1 + 8 * t), m)) * _decay(m, rng.uniform(0.008, 0.02))

    return _place(n, times, grain, amps=rng.uniform(0.3, 1.0, len(times)))


def _gen_drips(rng, n, p, j):
    times = np.arange(0.05, n / SR, 1 / (p["rate"] * j)) + rng.uniform(-0.03, 0.03)
    times = np.clip(times, 0, None)
    m = int(0.15 * SR)
    t = _t(m)

    def grain(i: int) -> np.ndarray:
        f0 = rng.uniform(900, 1400)
        return np.sin(_phase(f0 * (1 + 2.5 * t / 0.15), m)) * _decay(m, 0.03)

    return _place(n, times, grain)


def _gen_patter(rng, n, p, j):
    times = _poisson_times(rng, p["rate"] * j, n / SR)
    m = int(0.004 * SR)
    grains = [_bandpass(rng.standard_normal(m), 2000, 9000, 2) * _decay(m, 0.0008) for _ in range(8)]
    base = 0.05 * _bandpass(rng.standard_normal(n), 3000, 10000, 2)
    return base + _place(n, times, lambda i: grains[i % 8], amps=rng.uniform(0.2, 1.0, len(times)))


def _gen_vowel(rng, n, p, j):
    pitch = p["pitch"] * j
    src = _osc("saw", pitch * (1 + 0.01 * np.sin(2 * np.pi * 5 * _t(n))), n, 60)
    x = np.zeros(n)
    for k, fmt in enumerate(p["formants"]):
        bw = 60 + 30 * k
        x += (0.5**k) * _bandpass(src, fmt - bw, fmt + bw, 2)
    return x


def _gen_shepard(rng, n, p, j):
    t = _t(n)
    cycle = 4.0 * j
    u = (t / cycle) % 1.0
    if p["direction"] == "falling":
        u = 1 - u
    x = np.zeros(n)
    for k in range(8):
        pos = (k + u) / 8  # position along 8 octaves, 0..1
        freq = 27.5 * 2 ** (8 * pos)
        amp = np.exp(-0.5 * ((pos - 0.5) / 0.18) ** 2)
        x += amp * np.sin(_phase(freq, n))
    return x


_GENERATORS: dict[str, Callable[..., np.ndarray]] = {
    "wave": _gen_wave, "sweep": _gen_sweep, "clicks": _gen_clicks, "crackle": _gen_crackle,
    "beeps": _gen_beeps, "colour": _gen_colour, "band": _gen_band, "modulated": _gen_modulated,
    "metal": _gen_metal, "pluck": _gen_pluck, "drum": _gen_drum, "chord": _gen_chord,
    "arpeggio": _gen_arpeggio, "siren": _gen_siren, "bubbles": _gen_bubbles, "drips": _gen_drips,
    "patter": _gen_patter, "vowel": _gen_vowel, "shepard": _gen_shepard,
}


def _seed(label: str, index: int) -> int:
    digest = hashlib.sha256(f"reasonaudio-synthetic-v{RECIPE_VERSION}/{label}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def synthesize(recipe: Recipe, index: int, duration: float) -> np.ndarray:
    """The samples of atom ``index`` of ``recipe``: float32 mono at 48 kHz, peak 0.5."""
    rng = np.random.default_rng(_seed(recipe.label, index))
    jitter = 1.0 + rng.uniform(-0.03, 0.03)
    n = int(round(duration * SR))
    x = np.asarray(_GENERATORS[recipe.family](rng, n, recipe.p, jitter), dtype=np.float64)
    x = x - x.mean()
    fade = min(n // 4, int(0.005 * SR))
    if fade > 0:
        ramp = np.linspace(0.0, 1.0, fade)
        x[:fade] *= ramp
        x[n - fade:] *= ramp[::-1]
    peak = np.max(np.abs(x))
    if not np.isfinite(peak) or peak == 0:
        raise RuntimeError(f"synthetic recipe {recipe.label!r} produced silence")  # a bug
    return (0.5 * x / peak).astype(np.float32)


def _atoms_for(recipe: Recipe) -> list[Atom]:
    rng = np.random.default_rng(_seed(recipe.label, -1))
    count = int(rng.integers(1, 4))
    out = []
    for k in range(1, count + 1):
        dur = round(float(rng.uniform(recipe.min_dur, recipe.max_dur)), 3)
        out.append(Atom(atom_id=f"syn-{recipe.slug}-{k}", label=recipe.label,
                        path=f"synthetic:{recipe.family}/{recipe.slug}/{k}", sample_rate=SR,
                        duration=dur, source=SOURCE, license=LICENSE))
    return out


class SyntheticBank(AtomBank):
    """Built-in bank of :data:`RECIPES` (223 classes); ``synthetic:N`` keeps the first N."""

    kind = "synthetic"
    CACHE_SIZE = 64

    def __init__(self, n_classes: int | None = None) -> None:
        total = len(RECIPES)
        n = total if n_classes is None else n_classes
        if not 2 <= n <= total:
            raise DataError(f"synthetic atom bank: number of classes must be between 2 and {total}, got {n}")
        self.n_classes = n
        self.recipes = RECIPES[:n]
        atoms = [a for r in self.recipes for a in _atoms_for(r)]
        super().__init__(atoms)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = Lock()

    @classmethod
    def from_spec(cls, spec: str = "synthetic") -> "SyntheticBank":
        spec = spec.strip()
        if spec == "synthetic":
            return cls()
        head, _, tail = spec.partition(":")
        if head != "synthetic" or not tail.strip().isdigit():
            raise DataError(f"atom bank spec {spec!r}: expected 'synthetic' or 'synthetic:N' "
                            f"(N classes, 2..{len(RECIPES)})")
        return cls(int(tail))

    def load(self, atom_id: str) -> tuple[np.ndarray, int]:
        with self._lock:
            hit = self._cache.get(atom_id)
            if hit is not None:
                self._cache.move_to_end(atom_id)
                return hit, SR
        atom = self.by_id.get(atom_id)
        if atom is None:
            raise DataError(f"synthetic atom bank: unknown atom id {atom_id!r}")
        _, slug, k = atom.path.split(":", 1)[1].split("/")
        x = synthesize(RECIPE_BY_LABEL[atom.label], int(k), atom.duration)
        x.setflags(write=False)
        with self._lock:
            self._cache[atom_id] = x
            while len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
        return x, SR

    def describe(self) -> dict[str, Any]:
        spec = "synthetic" if self.n_classes == len(RECIPES) else f"synthetic:{self.n_classes}"
        return {"kind": self.kind, "spec": spec, "version": RECIPE_VERSION,
                "n_classes": self.n_classes, "n_atoms": len(self.atoms), "sample_rate": SR,
                "source": SOURCE, "license": LICENSE}
