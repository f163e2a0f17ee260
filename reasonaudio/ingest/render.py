"""The renderer: a clip spec plus an atom bank -> audio, sample-identical on every call.

For each event (Scaper's convention): take the atom's samples, resample to the clip rate (soxr),
normalise to the loudness reference (pyloudnorm, ITU-R BS.1770; an atom whose peak would then
exceed the headroom is lowered to it), loop or trim to exactly the
event's length, fade both ends, apply the event's ``gain_db`` and add it at the onset. If the mix
would exceed the peak headroom it is scaled down as a whole, and a warning says so: every
automatic adjustment is logged (logger ``reasonaudio.render``) and counted in
:attr:`Renderer.adjustments`.

Atoms shorter than pyloudnorm's 400 ms gating block cannot be measured by BS.1770; their loudness
is taken as their RMS level in dBFS (close to LUFS for mid-frequency content) and a warning says
so. Silent atoms are left unnormalised (warned).

Sample positions: an event covers samples ``round(onset*sr)`` up to ``round(offset*sr)``; a clip
has ``round(duration*sr)`` samples. Loops crossfade over the fade length so they do not click.
"""

from __future__ import annotations

import difflib
import io
import logging
import math
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pyloudnorm
import soundfile as sf
import soxr

from reasonaudio.dataset.benchmark import Benchmark
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_file
from reasonaudio.ingest.atom_rules import check_samples
from reasonaudio.ingest.atoms.bank import AtomBank
from reasonaudio.ingest.atoms.registry import open_bank
from reasonaudio.progress import SILENT, Hooks

log = logging.getLogger("reasonaudio.render")

FORMATS = {"wav": "WAV", "flac": "FLAC"}
SUBTYPE = "PCM_16"
LOUDNESS_BLOCK_S = 0.4  # pyloudnorm's default BS.1770 gating block


@dataclass(frozen=True)
class RenderParams:
    """How events are levelled and mixed; the builder records these in manifest.json ("render")."""

    loudness_lufs: float = -28.0
    """every atom is normalised to this integrated loudness before its event's gain_db"""
    fade_ms: float = 10.0
    """linear fade at both ends of every event, and crossfade length where an atom loops"""
    peak_headroom_db: float = 1.0
    """the mix peak is kept at or below -peak_headroom_db dBFS (whole-clip scaling, warned)"""
    resample_quality: str = "HQ"
    """soxr quality: QQ, LQ, MQ, HQ or VHQ"""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: Any, where: str = "manifest.json render") -> "RenderParams":
        if obj is None:
            return cls()
        if not isinstance(obj, dict):
            raise DataError(f"{where}: expected an object of render parameters")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise DataError(f"{where}: unknown render parameter(s) {unknown}; known: {sorted(known)}")
        try:
            params = cls(**{k: (str(v) if k == "resample_quality" else float(v)) for k, v in obj.items()})
        except (TypeError, ValueError) as exc:
            raise DataError(f"{where}: malformed render parameter ({exc})") from None
        params.validate(where)
        return params

    def validate(self, where: str = "render parameters") -> None:
        if self.resample_quality not in ("QQ", "LQ", "MQ", "HQ", "VHQ"):
            raise DataError(f"{where}: resample_quality must be QQ, LQ, MQ, HQ or VHQ, "
                            f"got {self.resample_quality!r}")
        if not (self.fade_ms >= 0 and self.peak_headroom_db >= 0 and math.isfinite(self.loudness_lufs)):
            raise DataError(f"{where}: fade_ms and peak_headroom_db must be >= 0 and loudness finite")


class Renderer:
    """Renders clips from one bank. Prepared atoms (resampled, levelled) are cached per rate."""

    def __init__(self, bank: AtomBank, params: RenderParams = RenderParams(),
                 cache_samples: int = 64_000_000) -> None:
        params.validate()
        self.bank = bank
        self.params = params
        self.cache_samples = cache_samples
        self._cache: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()
        self._cached = 0
        self._lock = threading.Lock()
        self._meters: dict[int, pyloudnorm.Meter] = {}
        self.adjustments: dict[str, int] = {}
        """kind of automatic adjustment -> how many times it happened"""

    def _note(self, kind: str, message: str) -> None:
        self.adjustments[kind] = self.adjustments.get(kind, 0) + 1
        log.warning(message)

    # -- atoms ------------------------------------------------------------------------------

    def loudness(self, x: np.ndarray, sr: int, atom_id: str = "") -> float | None:
        """Integrated loudness (LUFS); RMS dBFS for atoms under one gating block; None if silent."""
        if len(x) >= int(math.ceil(LOUDNESS_BLOCK_S * sr)) + 1:
            meter = self._meters.get(sr)
            if meter is None:
                meter = self._meters[sr] = pyloudnorm.Meter(sr, block_size=LOUDNESS_BLOCK_S)
            with np.errstate(divide="ignore"):
                value = float(meter.integrated_loudness(x.astype(np.float64)))
            if math.isfinite(value):
                return value
        rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0
        if rms <= 1e-9:
            return None
        if len(x) < LOUDNESS_BLOCK_S * sr:
            self._note("rms_loudness", f"atom {atom_id}: shorter than {LOUDNESS_BLOCK_S} s, "
                                       "loudness taken as RMS dBFS")
        else:
            self._note("rms_loudness", f"atom {atom_id}: below the BS.1770 gate, loudness taken as RMS dBFS")
        return 20 * math.log10(rms)

    def prepared(self, atom_id: str, sr: int) -> np.ndarray:
        """The atom at rate ``sr``, normalised to the loudness reference (float32, read-only)."""
        key = (atom_id, sr)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        if atom_id not in self.bank.by_id:
            raise DataError(f"atom id {atom_id!r} is not in the {self.bank.kind} atom bank "
                            f"({self.bank.describe().get('spec', self.bank.kind)}); render with the bank "
                            "the benchmark was built from (--atoms)")
        x, in_sr = self.bank.load(atom_id)
        check_samples(x, in_sr, f"atom {atom_id} ({self.bank.kind} bank)")  # the bank check's rule
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 1:
            raise DataError(f"atom {atom_id}: bank returned {x.ndim}-D samples, expected mono")
        if in_sr != sr:
            x = soxr.resample(x, in_sr, sr, quality=self.params.resample_quality)
        lufs = self.loudness(x, sr, atom_id)
        if lufs is None:
            self._note("silent_atom", f"atom {atom_id}: silent, left unnormalised")
        else:
            x = x * 10 ** ((self.params.loudness_lufs - lufs) / 20)
            limit = 10 ** (-self.params.peak_headroom_db / 20)
            peak = float(np.max(np.abs(x)))
            if peak > limit:  # impulsive atoms: keep their peaks inside the headroom
                x = x * (limit / peak)
                self._note("atom_peak_limited", f"atom {atom_id}: peak {20 * math.log10(peak):+.1f} "
                                                f"dBFS at the loudness reference; lowered by "
                                                f"{20 * math.log10(peak / limit):.1f} dB")
        out = x.astype(np.float32)
        out.setflags(write=False)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = out
                self._cached += len(out)
            while self._cached > self.cache_samples and len(self._cache) > 1:
                _, old = self._cache.popitem(last=False)
                self._cached -= len(old)
        return out

    # -- events and clips -------------------------------------------------------------------

    def event_samples(self, event: Event, sr: int) -> np.ndarray:
        """The event's samples: levelled atom looped or trimmed to the event length, faded, gained."""
        start, end = round(event.onset * sr), round(event.offset * sr)
        length = end - start
        atom = self.prepared(event.atom_id, sr)
        fade = int(round(self.params.fade_ms / 1000 * sr))
        seg = _loop(atom, length, fade).astype(np.float64)
        f = min(fade, length // 2)
        if f > 0:
            ramp = np.arange(1, f + 1) / (f + 1)
            seg[:f] *= ramp
            seg[length - f:] *= ramp[::-1]
        return seg * 10 ** (event.gain_db / 20)

    def render(self, clip: Clip) -> np.ndarray:
        """Float32 mono at ``clip.sample_rate``, ``round(duration * sr)`` samples."""
        sr = clip.sample_rate
        n = round(clip.duration * sr)
        mix = np.zeros(n, dtype=np.float64)
        for event in clip.events:
            start = round(event.onset * sr)
            seg = self.event_samples(event, sr)
            end = min(n, start + len(seg))
            mix[start:end] += seg[: end - start]
        limit = 10 ** (-self.params.peak_headroom_db / 20)
        peak = float(np.max(np.abs(mix))) if n else 0.0
        if peak > limit:
            scale = limit / peak
            mix *= scale
            self._note("peak_scaled", f"{clip.id}: mix peak {20 * math.log10(peak):+.1f} dBFS exceeds "
                                      f"-{self.params.peak_headroom_db:g} dBFS; scaled by "
                                      f"{20 * math.log10(scale):.1f} dB")
        return mix.astype(np.float32)


def _loop(atom: np.ndarray, length: int, xfade: int) -> np.ndarray:
    """Exactly ``length`` samples: the atom's start, or the atom repeated with linear crossfades."""
    if length <= len(atom):
        return atom[:length].copy()
    m = len(atom)
    xf = min(xfade, m // 4)
    hop = m - xf
    out = np.zeros(length + m, dtype=np.float64)
    rep = atom.astype(np.float64)
    if xf > 0:
        ramp = np.arange(1, xf + 1) / (xf + 1)
        rep = rep.copy()
        rep[:xf] *= ramp
        rep[m - xf:] *= ramp[::-1]
        first = atom.astype(np.float64).copy()
        first[m - xf:] *= ramp[::-1]  # the first copy starts at full level
    else:
        first = rep
    out[:m] += first
    for s in range(hop, length, hop):
        out[s:s + m] += rep
    return out[:length]


# --- files ------------------------------------------------------------------------------------

def _format_for(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower().lstrip("."))
    if fmt is None:
        raise DataError(f"{path}: output format must be .wav or .flac, got {path.suffix or 'no suffix'!r}")
    return fmt


def encode_audio(audio: np.ndarray, sr: int, fmt: str) -> bytes:
    """16-bit PCM bytes in ``fmt`` (``wav`` | ``flac``).

    Quantised here (round half to even of x * 32767, clipped) rather than by libsndfile, whose
    WAV and FLAC writers round differently: the same clip gives the same samples in both formats.
    Encoded in memory: libsndfile hides a failed write's errno (an AssertionError on a full disk).
    """
    pcm = np.clip(np.rint(np.asarray(audio, dtype=np.float64) * 32767.0), -32768, 32767).astype(np.int16)
    buf = io.BytesIO()
    sf.write(buf, pcm, sr, format=FORMATS[fmt], subtype=SUBTYPE)
    return buf.getvalue()


def write_audio(path: Path, audio: np.ndarray, sr: int) -> None:
    """16-bit PCM WAV or FLAC by suffix (:func:`encode_audio`), written atomically."""
    _format_for(path)
    data = encode_audio(audio, sr, path.suffix.lower().lstrip("."))
    with atomic_file(path, "wb") as fh:
        fh.write(data)


def render_clip_to_file(bench: Any, clip_id: str, out: Path, bank_spec: str | None = None) -> float:
    """Render one clip of a loaded benchmark to ``out`` (.wav/.flac); returns its duration (s)."""
    out = Path(out)
    _format_for(out)
    clip = bench.clip_by_id.get(clip_id)
    if clip is None:
        close = difflib.get_close_matches(clip_id, list(bench.clip_by_id), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise DataError(f"{bench.root}: no clip with id {clip_id!r}{hint}")
    spec = bank_spec or bench.manifest.get("parameters", {}).get("atoms")
    if not spec:
        raise DataError(f"{bench.root}/manifest.json: parameters.atoms does not name the atom bank; "
                        "pass --atoms")
    params = RenderParams.from_json(bench.manifest.get("render"))
    renderer = Renderer(open_bank(str(spec)), params)
    write_audio(out, renderer.render(clip), clip.sample_rate)
    return clip.duration


def write_clip_audio(dest_dir: Path, clips: Iterable[Clip], bank: AtomBank, fmt: str,
                     params: RenderParams = RenderParams(), hooks: Hooks = SILENT) -> dict[str, Any]:
    """Write ``<clip_id>.<fmt>`` (16-bit PCM) for every clip; returns counts and timing."""
    if fmt not in FORMATS:
        raise DataError(f"audio format must be one of {sorted(FORMATS)}, got {fmt!r}")
    clips = list(clips)
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    renderer = Renderer(bank, params)
    t0 = time.perf_counter()
    seconds = 0.0
    report = hooks.progress
    report("rendering audio", 0, len(clips))
    for n, clip in enumerate(clips, 1):
        write_audio(dest_dir / f"{clip.id}.{fmt}", renderer.render(clip), clip.sample_rate)
        seconds += clip.duration
        report("rendering audio", n, len(clips))
    wall = time.perf_counter() - t0
    return {"files": len(clips), "audio_seconds": round(seconds, 3), "wall_seconds": round(wall, 3),
            "adjustments": dict(sorted(renderer.adjustments.items()))}


def bench_renderer(bench: Benchmark, bank_spec: str | None = None) -> Renderer:
    """The renderer of a benchmark's clips: its manifest's atom bank (or ``bank_spec``, e.g.
    ``--atoms``) with the render parameters it was built with."""
    spec = bank_spec or (bench.manifest.get("parameters") or {}).get("atoms")
    if not spec:
        raise DataError(f"{bench.root}/manifest.json: parameters.atoms does not name the atom bank; "
                        "pass --atoms")
    return Renderer(open_bank(str(spec)), RenderParams.from_json(bench.manifest.get("render")))
