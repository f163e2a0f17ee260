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
import random
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol, Sequence

import numpy as np
import pyloudnorm
import soundfile as sf
import soxr

from reasonaudio.dataset.view import BenchmarkView
from reasonaudio.dataset.clip import Clip, Event
from reasonaudio.dataset.condition_kinds import BedSpan
from reasonaudio.atoms.beds import STEP_S, PreparedBeds, checked_beds, open_beds
from reasonaudio.dataset.conditions import Condition
from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_file
from reasonaudio.atoms.rules import check_samples
from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.registry import open_bank
from reasonaudio.progress import SILENT, Hooks
from reasonaudio.seeds import named_random

log = logging.getLogger("reasonaudio.render")

FORMATS = {"wav": "WAV", "flac": "FLAC"}
SUBTYPE = "PCM_16"
LOUDNESS_BLOCK_S = 0.4  # pyloudnorm's default BS.1770 gating block
PASS_BLOCK = 32_768
"""samples per block of the final pass (:meth:`Renderer.limited`): a block of the float64 mix
(256 KiB) and its float32 output stay in the L2 cache together"""


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
    def from_json(cls, obj: object, where: str = "manifest.json render") -> "RenderParams":
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


class ClipRenderer(Protocol):
    """What turns a clip into audio: :class:`Renderer` (clean), :class:`ConditionRenderer` (under
    an acoustic condition), or a stand-in that serves samples made elsewhere (Ray's render stage).
    ``bank`` and ``params`` key the rendered audio's hash (``ingest.audio_index``)."""

    @property
    def bank(self) -> AtomBank: ...

    @property
    def params(self) -> RenderParams: ...

    def render(self, clip: Clip) -> np.ndarray: ...


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
        """kind of automatic adjustment -> how many distinct atoms (or clips) it happened to"""
        self.noted: set[tuple[str, str]] = set()
        """every ``(kind, subject)`` adjusted so far: an atom id at a rate, or a clip id"""

    def _note(self, kind: str, subject: str, message: str) -> None:
        """Count and log an adjustment once per subject: an atom prepared again after the cache
        dropped it, or a clip rendered twice, is the same adjustment, so the counts do not
        depend on the cache size or on how an engine splits the clips among workers."""
        if self.merge_notes([(kind, subject)]):
            log.warning(message)

    def merge_notes(self, notes: Sequence[tuple[str, str]]) -> int:
        """Add ``(kind, subject)`` notes (another worker's); returns how many were new."""
        new = 0
        with self._lock:
            for kind, subject in notes:
                if (kind, subject) not in self.noted:
                    self.noted.add((kind, subject))
                    self.adjustments[kind] = self.adjustments.get(kind, 0) + 1
                    new += 1
        return new

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
            self._note("rms_loudness", f"{atom_id}@{sr}", f"atom {atom_id}: shorter than {LOUDNESS_BLOCK_S} s, "
                                       "loudness taken as RMS dBFS")
        else:
            self._note("rms_loudness", f"{atom_id}@{sr}", f"atom {atom_id}: below the BS.1770 gate, loudness taken as RMS dBFS")
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
            self._note("silent_atom", f"{atom_id}@{sr}", f"atom {atom_id}: silent, left unnormalised")
        else:
            x = x * 10 ** ((self.params.loudness_lufs - lufs) / 20)
            limit = 10 ** (-self.params.peak_headroom_db / 20)
            peak = float(np.max(np.abs(x)))
            if peak > limit:  # impulsive atoms: keep their peaks inside the headroom
                x = x * (limit / peak)
                self._note("atom_peak_limited", f"{atom_id}@{sr}", f"atom {atom_id}: peak {20 * math.log10(peak):+.1f} "
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
        return self.excerpt(self.prepared(event.atom_id, sr), length, sr) * 10 ** (event.gain_db / 20)

    def excerpt(self, atom: np.ndarray, length: int, sr: int) -> np.ndarray:
        """``length`` samples of a prepared atom, looped (crossfaded) or trimmed, with linear
        fades at both ends (float64): an event before its gain, or an audio example."""
        fade = int(round(self.params.fade_ms / 1000 * sr))
        seg = _loop(atom, length, fade).astype(np.float64)
        f = min(fade, length // 2)
        if f > 0:
            ramp = np.arange(1, f + 1) / (f + 1)
            seg[:f] *= ramp
            seg[length - f:] *= ramp[::-1]
        return seg

    def events_mix(self, clip: Clip, onto: np.ndarray | None = None) -> np.ndarray:
        """The events summed (float64, before the peak rule), each added in turn onto ``onto``
        (in place: an ``snrNN`` condition's gained bed), else onto zeros: the events alone."""
        sr = clip.sample_rate
        n = round(clip.duration * sr)
        if onto is not None and (onto.dtype != np.float64 or len(onto) != n):
            raise ValueError(f"{clip.id}: events go onto {n} float64 samples, got {len(onto)} "
                             f"{onto.dtype}")
        mix = np.zeros(n, dtype=np.float64) if onto is None else onto
        for event in clip.events:
            start = round(event.onset * sr)
            seg = self.event_samples(event, sr)
            end = min(n, start + len(seg))
            mix[start:end] += seg[: end - start]
        return mix

    def limited(self, mix: np.ndarray, clip_id: str) -> np.ndarray:
        """The peak rule (whole-mix scaling, noted; ``mix`` scaled in place), then float32.

        One pass over cache-sized blocks (:data:`PASS_BLOCK`): a block of the mix is written as
        float32 and that block's peak read while it is in cache, instead of a pass over the
        whole clip for each. The bytes are those of scaling by the exact float64 peak, then
        converting: rounding to float32 keeps order, so the float32 peak reaches the headroom's
        float32 whenever the float64 peak exceeds the headroom; only then is the float64 peak
        read (and the mix scaled and converted again if it is over)."""
        limit = 10 ** (-self.params.peak_headroom_db / 20)
        n = len(mix)
        out = np.empty(n, dtype=np.float32)
        highs, lows = [], []
        for i in range(0, n, PASS_BLOCK):
            j = min(n, i + PASS_BLOCK)
            block = out[i:j]
            np.copyto(block, mix[i:j])
            highs.append(block.max())
            lows.append(block.min())
        # a NaN peak compares False here, as the float64 peak did
        if n and np.maximum(np.max(highs), -np.min(lows)) >= np.float32(limit):
            peak = float(np.max(np.abs(mix)))
            if peak > limit:
                scale = limit / peak
                mix *= scale
                np.copyto(out, mix)
                self._note("peak_scaled", f"{clip_id}@{len(mix)}", f"{clip_id}: mix peak {20 * math.log10(peak):+.1f} dBFS exceeds "
                                          f"-{self.params.peak_headroom_db:g} dBFS; scaled by "
                                          f"{20 * math.log10(scale):.1f} dB")
        return out

    def render(self, clip: Clip) -> np.ndarray:
        """Float32 mono at ``clip.sample_rate``, ``round(duration * sr)`` samples."""
        return self.limited(self.events_mix(clip), clip.id)


NOISY_MIX = "snr: events added onto the gained bed; long: bed stretches added onto the events"
"""how a condition's bed and events are summed, recorded in every condition identity (so caches
keyed by it, such as the audio-hash index, never serve audio summed the other way). Until
December 2026 an ``snrNN`` bed was added onto the events: the float64 sums round differently,
so those noisy renders differ in their last bits."""


class ConditionRenderer:
    """A clip rendered under a condition (:mod:`reasonaudio.dataset.conditions`): the clean
    renderer's events, placed and laid over a bed as the condition's kind record says
    (:mod:`reasonaudio.dataset.condition_kinds`: ``long`` places, ``snrNN`` and ``long`` lay beds).

    Everything drawn per clip (bed, offset, the long recording's length, the events' offset and
    its stretches of background and silence) comes from a ``random.Random`` seeded by the build
    seed and the clip id only, so every rate and every SNR of the ladder get the same bed at the
    same place: the SNR alone changes between ``snr20`` and ``snr0``. The events keep their
    clean levels and the bed gets its own, and the peak rule is applied to the whole, so a peak
    scaling keeps the SNR. Under ``snrNN`` the events are added onto the gained bed (one pass
    reads the bed where a clean render zeroes its mix: the cost a noisy render adds,
    docs/conditions.md); under ``long`` the bed's stretches are added onto the events, one at a
    time. ``beds`` is None for a kind that lays none.
    """

    def __init__(self, base: Renderer, condition: Condition, beds: PreparedBeds | None,
                 accepted: Sequence[str], seed: int) -> None:
        if condition.is_clean:
            raise ValueError("ConditionRenderer is for conditions other than clean")
        if condition.needs_beds and not accepted:
            raise DataError(f"condition {condition.name}: no bed of {beds.bank.spec!r} may be used "
                            "(every one was refused by the tagger check for this bank)")
        self.base = base
        self.condition = condition
        self.kind = condition.record
        self.beds = beds
        self.accepted = tuple(sorted(accepted))
        self.seed = int(seed)
        self.condition_identity: dict[str, Any] = {"condition": condition.to_json()}
        if condition.needs_beds:
            self.condition_identity |= {"beds": beds.bank.describe(), "accepted": list(self.accepted)}
        self.condition_identity |= {"seed": self.seed, "mix": NOISY_MIX}

    # the attributes callers of a Renderer read
    @property
    def bank(self) -> AtomBank:
        return self.base.bank

    @property
    def params(self) -> RenderParams:
        return self.base.params

    @property
    def adjustments(self) -> dict[str, int]:
        return self.base.adjustments

    @property
    def noted(self) -> set[tuple[str, str]]:
        return self.base.noted

    def merge_notes(self, notes: Sequence[tuple[str, str]]) -> int:
        return self.base.merge_notes(notes)

    def _rng(self, clip: Clip, stream: str) -> random.Random:
        return named_random("condition", stream, self.seed, clip.id)

    def draw_key(self, clip: Clip) -> dict[str, Any]:
        """What the per-clip draws depend on beyond the clip's events (the seed is in
        ``condition_identity``): the clip id that seeds :meth:`_rng`. Two clips with the same
        events (the same spec in two builds of one seed) get other beds, so whatever keys a
        render by its spec (the audio index) must key it by this too."""
        return {"clip_id": clip.id}

    def _bed_draw(self, rng: random.Random, n_s: float) -> tuple[str, int]:
        bed_id = self.accepted[rng.randrange(len(self.accepted))]
        room = max(0, int((self.beds.seconds(bed_id) - n_s) / STEP_S))
        return bed_id, rng.randrange(room + 1)

    def place(self, clip: Clip) -> Clip:
        """The clip as this condition renders it: a kind that places (``long``) shifts its
        events into a longer recording (relative times kept); the others return it unchanged."""
        if self.kind.place is None:
            return clip
        return self.kind.place(self.condition, clip, lambda stream: self._rng(clip, stream))

    def bed_spans(self, clip: Clip) -> list[BedSpan]:
        """Where the bed lies under the placed clip, and at what level (none for a kind that
        lays no bed)."""
        if self.kind.bed_spans is None:
            return []
        return self.kind.bed_spans(self.condition, self.place(clip),
                                   lambda stream: self._rng(clip, stream), self._bed_draw)

    def bed_terms(self, clip: Clip, n: int) -> Iterator[tuple[int, np.ndarray, float]]:
        """The bed under the placed clip's ``n``-sample mix as terms ``(start, x, a)``, each
        ``a * x`` from sample ``start`` on: an unfaded span (``snrNN``'s bed) at its gain (one
        term, a view of the bed, which :meth:`bed_stem` multiplies out), or a faded stretch
        (``long``) gained and faded (``a`` 1.0, added by one exact BLAS daxpy in
        :meth:`add_bed`; made as it is reached, so a long recording holds one stretch at a
        time)."""
        sr = clip.sample_rate
        fade = int(round(self.params.fade_ms / 1000 * sr))
        for span in self.bed_spans(clip):
            start = round(span.start_s * sr)
            length = min(round(span.n_s * sr), n - start)
            if length <= 0:
                continue
            bed = self.beds.get(span.bed_id, sr)
            lufs = bed.segment_loudness(span.bed_step, length)
            gain = 10 ** ((self.params.loudness_lufs + span.level_db - lufs) / 20)
            seg = bed.segment(span.bed_step, length)
            if span.faded:  # stretches of background fade in and out
                seg = seg * gain
                f = min(fade, length // 2)
                if f > 0:
                    ramp = np.arange(1, f + 1) / (f + 1)
                    seg[:f] *= ramp
                    seg[length - f:] *= ramp[::-1]
                yield start, seg, 1.0
            else:
                yield start, seg, gain

    def add_bed(self, mix: np.ndarray, clip: Clip) -> np.ndarray:
        """Add the bed under the placed clip into ``mix`` (float64, in place); returns ``mix``."""
        for start, x, a in self.bed_terms(clip, len(mix)):
            _axpy(x, mix[start:start + len(x)], a)
        return mix

    def bed_stem(self, clip: Clip) -> np.ndarray:
        """The bed alone under the placed clip (float64): ``gain * bed`` in one pass for one
        unfaded span under the whole clip (``snrNN``), else the spans added onto zeros."""
        placed = self.place(clip)
        n = round(placed.duration * placed.sample_rate)
        spans = self.bed_spans(clip)
        if len(spans) == 1 and not spans[0].faded:
            terms = list(self.bed_terms(clip, n))
            if len(terms) == 1 and terms[0][0] == 0 and len(terms[0][1]) == n:
                return np.multiply(terms[0][1], terms[0][2])
        return self.add_bed(np.zeros(n), clip)

    def stems(self, clip: Clip) -> tuple[np.ndarray, np.ndarray]:
        """(events, bed) of the placed clip, before the peak rule (for measuring the SNR)."""
        return self.base.events_mix(self.place(clip)), self.bed_stem(clip)

    def render(self, clip: Clip) -> np.ndarray:
        """Float32 mono at ``clip.sample_rate``: the placed clip mixed as the kind says
        (:attr:`~reasonaudio.dataset.condition_kinds.ConditionKind.mix`; :data:`NOISY_MIX` says in
        which order bed and events are added), under the peak rule."""
        placed = self.place(clip)
        name = f"{clip.id} ({self.condition.name})"
        mix = self.kind.mix(self, clip, placed) if self.kind.mix is not None \
            else self.base.events_mix(placed)
        return self.base.limited(mix, name)


_daxpy = None


def _axpy(x: np.ndarray, y: np.ndarray, a: float) -> None:
    """``y += a * x`` in place (float64, contiguous): BLAS daxpy (a fused multiply-add for every
    element, whatever the slice), else numpy."""
    global _daxpy
    if _daxpy is None:
        from scipy.linalg.blas import daxpy as _daxpy
    if x.dtype == y.dtype == np.float64 and x.flags.c_contiguous and y.flags.c_contiguous:
        out = _daxpy(x, y, a=a)
        if out is y or np.shares_memory(out, y):
            return
    y += a * x


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


def render_clip_to_file(bench: BenchmarkView, clip_id: str, out: Path, bank_spec: str | None = None) -> float:
    """Render one clip of a loaded benchmark to ``out`` (.wav/.flac) under the benchmark's
    condition; returns the rendered duration (s: a ``long`` clip is its whole recording)."""
    out = Path(out)
    _format_for(out)
    clip = bench.clip_by_id.get(clip_id)
    if clip is None:
        close = difflib.get_close_matches(clip_id, list(bench.clip_by_id), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise DataError(f"{bench.root}: no clip with id {clip_id!r}{hint}")
    renderer = bench_renderer(bench, bank_spec)
    audio = renderer.render(clip)
    write_audio(out, audio, clip.sample_rate)
    return len(audio) / clip.sample_rate


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




def bench_renderer(bench: BenchmarkView, bank_spec: str | None = None) -> Renderer | ConditionRenderer:
    """The renderer of a benchmark's clips: its manifest's atom bank (or ``bank_spec``, e.g.
    ``--atoms``) with the render parameters it was built with, under the view's condition
    (:attr:`reasonaudio.dataset.view.BenchmarkView.condition`)."""
    spec = bank_spec or (bench.manifest.get("parameters") or {}).get("atoms")
    if not spec:
        raise DataError(f"{bench.root}/manifest.json: parameters.atoms does not name the atom bank; "
                        "pass --atoms")
    base = Renderer(open_bank(str(spec)), RenderParams.from_json(bench.manifest.get("render")))
    condition = bench.condition
    if condition.is_clean:
        return base
    if not condition.needs_beds:
        return ConditionRenderer(base, condition, None, (), bench.seed)
    return condition_renderer(base, condition, bench.seed, bench.manifest, str(spec))


def check_renders(bench: BenchmarkView) -> None:
    """A one-line DataError when ``bench`` is read under a condition its build cannot render (no
    bed of the condition's bank passes the tagger check for its atom bank): whatever listens,
    nothing may be evaluated or saved under such a condition. Clean always renders."""
    if not bench.condition.is_clean:
        bench_renderer(bench)


def condition_renderer(base: Renderer, condition: Condition, seed: int,
                       manifest: dict[str, Any] | None = None,
                       bank_spec: str | None = None, cache_dir: Path | None = None) -> ConditionRenderer:
    """``base`` under ``condition``: its bed bank, the beds the tagger check accepts for
    ``base.bank`` (recorded by the build when it ran the check, else run now and cached)."""
    beds = open_beds(condition.beds)
    recorded = (((manifest or {}).get("conditions") or {}).get("beds") or {}).get(beds.spec)
    if isinstance(recorded, dict) and isinstance(recorded.get("accepted"), list):
        accepted = [str(b) for b in recorded["accepted"]]
    else:
        root = Path(bank_spec) if bank_spec and Path(bank_spec).is_dir() else None
        accepted = list(checked_beds(beds, base.bank, root, cache_dir).accepted)
    return ConditionRenderer(base, condition, PreparedBeds(beds, base.params.loudness_lufs),
                             accepted, seed)
