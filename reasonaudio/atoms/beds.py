"""Background beds: recordings laid under a clip by a noisy or long condition, holding no
benchmark sound.

Two kinds of bed bank (:func:`open_beds`):

- ``generated``: coloured noise and room tone made here from a seeded generator (white noise,
  white noise rolled off above 8 kHz, pink and brown noise, and a room tone: brown-weighted noise
  rolled off above 1 kHz over a faint pink floor), 60 s at 48 kHz each; no file, no fetch, the
  same samples on every machine;
- ``folder:PATH``: real ambience recordings, ``PATH/beds.jsonl`` with one
  ``{"bed_id", "path", "source", "license"}`` per line (WAV/FLAC files under ``PATH``), the layout
  a recipe fetch writes; a bed without its source or licence is refused;
- ``packages``: the folder ``bench atoms fetch beds`` writes (``$REASONAUDIO_CACHE/beds/packages``,
  real ambience from Debian packages, :mod:`reasonaudio.atoms.fetch.bed_recipes`), recorded
  by that name so a record holds no machine path.

A recording shorter than ``MIN_RECORDING_S`` is repeated whole (an ambience loop is made to
repeat) before anything else reads it, so the check hears, and a clip gets, the loop as laid.

The check (:func:`check_beds`): YAMNet tags every bed (frames pooled by max, as ``bench atoms
check --tagger`` does) and a bed is refused when any label of the bank in use has an expected
AudioSet tag among its top ``k`` (5) classes: the strict tag matcher and the threshold the bank
check confirms a label's own atoms with, so a bed that check would call "sounds like rain" is
never laid under a clip of a bank that has ``rain``. :func:`checked_beds` runs it once per bank
and bed bank and keeps the verdict in the cache (``$REASONAUDIO_CACHE/beds``).

Levels: a bed is normalised to the loudness reference like an atom; the loudness of the exact
segment a clip uses is then measured from precomputed BS.1770 block powers (K-weighted, 400 ms
blocks every 100 ms, absolute and relative gates) so a condition's SNR holds per clip at the cost
of a slice, not of a loudness meter run.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pyloudnorm
import soundfile as sf
import soxr

from reasonaudio.atoms.bank import AtomBank
from reasonaudio.atoms.tagger_check import expected_tags, match_rank
from reasonaudio.errors import DataError
from reasonaudio.fileio import atomic_file, read_json, read_jsonl
from reasonaudio.seeds import hashed_rng
from reasonaudio.models.cache_dir import cache_root
from reasonaudio.models.yamnet import YamnetTagger, pool_frames

GENERATED = "generated"
PACKAGES = "packages"
MIN_RECORDING_S = 30.0
GEN_RATE = 48_000
GEN_SECONDS = 60.0
BLOCK_S = 0.4
STEP_S = 0.1
"""BS.1770 gating blocks (400 ms, 75% overlap): bed offsets are whole steps"""
ABS_GATE = -70.0
REL_GATE = -10.0
CHECK_TOP_K = 5
CHECK_SCHEMA = 1


@dataclass(frozen=True)
class Bed:
    bed_id: str
    kind: str
    source: str
    license: str
    path: str | None = None
    recipe: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {"bed_id": self.bed_id, "kind": self.kind, "source": self.source,
               "license": self.license}
        if self.path is not None:
            out["path"] = self.path
        if self.recipe:
            out["recipe"] = self.recipe
        return out


GENERATED_BEDS = (
    Bed("white-noise", "generated", "reasonaudio: seeded Gaussian white noise", "CC0-1.0",
        recipe={"slope_db_per_octave": 0.0}),
    Bed("pink-noise", "generated", "reasonaudio: seeded noise, -3 dB/octave", "CC0-1.0",
        recipe={"slope_db_per_octave": -3.0}),
    Bed("brown-noise", "generated", "reasonaudio: seeded noise, -6 dB/octave", "CC0-1.0",
        recipe={"slope_db_per_octave": -6.0}),
    Bed("white-noise-8k", "generated", "reasonaudio: seeded white noise rolled off above 8 kHz",
        "CC0-1.0", recipe={"slope_db_per_octave": 0.0, "lowpass_hz": 8000.0}),
    Bed("room-tone", "generated", "reasonaudio: seeded brown noise rolled off above 1 kHz over a "
        "pink floor 30 dB down", "CC0-1.0",
        recipe={"slope_db_per_octave": -6.0, "lowpass_hz": 1000.0, "floor_db": -30.0}),
)


def _shaped_noise(bed: Bed, n: int, sr: int) -> np.ndarray:
    """Noise with the recipe's spectral slope (and roll-off and floor), seeded by the bed id."""
    rng = hashed_rng("bed", bed.bed_id)
    spec = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / sr)
    f = np.maximum(freqs, 20.0)  # no DC drift: flat below 20 Hz
    slope = float(bed.recipe.get("slope_db_per_octave", 0.0))
    gain = (f / 1000.0) ** (slope / (20 * math.log10(2)))
    if "lowpass_hz" in bed.recipe:
        gain = gain / np.sqrt(1 + (f / float(bed.recipe["lowpass_hz"])) ** 4)
    if "floor_db" in bed.recipe:
        pink = (f / 1000.0) ** (-3.0 / (20 * math.log10(2)))
        gain = gain + pink * 10 ** (float(bed.recipe["floor_db"]) / 20)
    gain[freqs < 10.0] = 0.0
    x = np.fft.irfft(spec * gain, n)
    return x / max(float(np.max(np.abs(x))), 1e-12) * 0.5


class BedBank:
    """Beds by id, each loadable as (samples, rate)."""

    def __init__(self, spec: str, beds: Sequence[Bed], root: Path | None = None) -> None:
        if not beds:
            raise DataError(f"bed bank {spec!r} has no beds")
        self.spec = spec
        self.root = root
        self.beds: tuple[Bed, ...] = tuple(sorted(beds, key=lambda b: b.bed_id))
        self.by_id = {b.bed_id: b for b in self.beds}

    def load(self, bed_id: str) -> tuple[np.ndarray, int]:
        bed = self.by_id[bed_id]
        if bed.kind == "generated":
            return _shaped_noise(bed, int(GEN_SECONDS * GEN_RATE), GEN_RATE), GEN_RATE
        assert self.root is not None and bed.path is not None
        path = self.root / bed.path
        try:
            x, sr = sf.read(str(path), dtype="float64", always_2d=True)
        except (OSError, RuntimeError) as exc:
            raise DataError(f"{path}: cannot read bed {bed_id!r} ({exc})") from None
        x = x.mean(axis=1)
        if len(x) < int(math.ceil(BLOCK_S * sr)) + 1 or not np.any(x):
            raise DataError(f"{path}: bed {bed_id!r} is silent or shorter than {BLOCK_S} s")
        if len(x) < MIN_RECORDING_S * sr:
            x = np.tile(x, int(math.ceil(MIN_RECORDING_S * sr / len(x))))
        return x, int(sr)

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "beds": [b.to_json() for b in self.beds]}


def packaged_beds_dir() -> Path:
    """Where ``bench atoms fetch beds`` writes the ``packages`` bed bank."""
    return cache_root() / "beds" / PACKAGES


def open_beds(spec: str = GENERATED) -> BedBank:
    """``generated``, ``packages`` or ``folder:PATH`` (see the module docstring)."""
    if spec == GENERATED:
        return BedBank(GENERATED, GENERATED_BEDS)
    if spec == PACKAGES:
        root = packaged_beds_dir()
        if not (root / "beds.jsonl").is_file():
            raise DataError(f"bed bank {PACKAGES!r}: no fetched beds (run `bench atoms fetch beds` "
                            "first)")
        return _folder_beds(root, PACKAGES)
    if not spec.startswith("folder:"):
        raise DataError(f"bed bank {spec!r}: expected {GENERATED!r}, {PACKAGES!r} or folder:PATH")
    root = Path(spec[len("folder:"):]).expanduser()
    return _folder_beds(root, f"folder:{root.absolute()}")


def _folder_beds(root: Path, spec: str) -> BedBank:
    manifest = root / "beds.jsonl"
    if not manifest.is_file():
        raise DataError(f"{manifest}: file not found (a bed folder lists its beds there)")
    beds = []
    for i, row in enumerate(read_jsonl(manifest), 1):
        where = f"{manifest}:{i}"
        if not isinstance(row, dict):
            raise DataError(f"{where}: expected a JSON object")
        for key in ("bed_id", "path", "source", "license"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise DataError(f"{where}: field {key!r} is missing or empty (every bed names its "
                                "file, source and licence)")
        rel = Path(row["path"])
        if rel.is_absolute() or ".." in rel.parts:
            raise DataError(f"{where}: path {row['path']!r} must stay inside {root}")
        pin = {"sha256": row["sha256"]} if isinstance(row.get("sha256"), str) else {}
        beds.append(Bed(row["bed_id"], "recording", row["source"], row["license"], row["path"], pin))
    if len({b.bed_id for b in beds}) != len(beds):
        raise DataError(f"{manifest}: duplicate bed ids")
    return BedBank(spec, beds, root)


# --- levels ------------------------------------------------------------------------------------

class PreparedBed:
    """A bed at one rate, normalised to ``reference_lufs``, with its BS.1770 block powers."""

    def __init__(self, bed_id: str, samples: np.ndarray, sr: int, reference_lufs: float) -> None:
        meter = pyloudnorm.Meter(sr, block_size=BLOCK_S)
        x = np.asarray(samples, dtype=np.float64)
        with np.errstate(divide="ignore"):
            whole = float(meter.integrated_loudness(x))
        if not math.isfinite(whole):
            raise DataError(f"bed {bed_id}: silent at {sr} Hz")
        x = x * 10 ** ((reference_lufs - whole) / 20)
        weighted = x.copy()
        for stage in meter._filters.values():  # the meter's own K-weighting stages
            weighted = stage.apply_filter(weighted)
        csum = np.concatenate([[0.0], np.cumsum(np.square(weighted))])
        self.step = int(round(STEP_S * sr))
        self.block = int(round(BLOCK_S * sr))
        starts = np.arange(0, len(x) - self.block + 1, self.step)
        self.block_power = (csum[starts + self.block] - csum[starts]) / self.block
        with np.errstate(divide="ignore"):  # each block's loudness, once per bed, not per clip
            self.block_lufs = -0.691 + 10 * np.log10(self.block_power)
        # whether any block is under the absolute gate (else no segment's gate drops one)
        self._gated = not bool(np.all(self.block_lufs >= ABS_GATE))
        self.bed_id = bed_id
        self.sr = sr
        self.samples = x  # float64: added into the float64 mix by BLAS axpy, no temporary
        self.samples.setflags(write=False)
        self.reference_lufs = reference_lufs

    @property
    def steps(self) -> int:
        """Whole steps the bed holds."""
        return len(self.samples) // self.step

    def segment_loudness(self, start_step: int, n: int) -> float:
        """Integrated loudness (LUFS) of ``n`` samples from step ``start_step`` (no wrap)."""
        blocks = max(1, int(round((n / self.sr - BLOCK_S) / STEP_S)) + 1)
        z = self.block_power[start_step:start_step + blocks]
        if len(z) == 0:
            return self.reference_lufs
        lj = self.block_lufs[start_step:start_step + blocks]
        if self._gated:  # some block of the bed is under the absolute gate: drop those
            kept = lj >= ABS_GATE
            z, lj = z[kept], lj[kept]
            if len(z) == 0:
                return self.reference_lufs
        # the means as ndarray.mean takes them (the pairwise sum over the count), without its
        # per-call overhead: this runs once per clip rendered under a bed
        rel = -0.691 + 10 * np.log10(np.add.reduce(z) / len(z)) + REL_GATE
        z = z[lj > rel]
        return float(-0.691 + 10 * np.log10(np.add.reduce(z) / len(z)))

    def segment(self, start_step: int, n: int) -> np.ndarray:
        """``n`` samples from step ``start_step``, wrapping round the end of the bed."""
        start = (start_step * self.step) % len(self.samples)
        if start + n <= len(self.samples):
            return self.samples[start:start + n]
        reps = (start + n) // len(self.samples) + 1
        return np.tile(self.samples, reps)[start:start + n]


class PreparedBeds:
    """Prepared beds per (bed, rate), made once and shared across threads."""

    def __init__(self, bank: BedBank, reference_lufs: float) -> None:
        self.bank = bank
        self.reference_lufs = reference_lufs
        self._cache: dict[tuple[str, int], PreparedBed] = {}
        self._lengths: dict[tuple[str, int], float] = {}
        self._lock = threading.Lock()

    def seconds(self, bed_id: str) -> float:
        """The bed's length in seconds (read once for a recording)."""
        key = (bed_id, 0)
        with self._lock:
            hit = self._lengths.get(key)
        if hit is None:
            if self.bank.by_id[bed_id].kind == "generated":
                hit = GEN_SECONDS
            else:
                x, sr = self.bank.load(bed_id)
                hit = len(x) / sr
            with self._lock:
                self._lengths[key] = hit
        return hit

    def get(self, bed_id: str, sr: int) -> PreparedBed:
        key = (bed_id, sr)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        x, in_sr = self.bank.load(bed_id)
        if in_sr != sr:
            x = soxr.resample(x, in_sr, sr, quality="HQ")
        prepared = PreparedBed(bed_id, x, sr, self.reference_lufs)
        with self._lock:
            return self._cache.setdefault(key, prepared)


# --- the check ---------------------------------------------------------------------------------

@dataclass
class BedVerdict:
    bed_id: str
    top: tuple[tuple[str, float], ...]
    heard: tuple[str, ...]
    """labels of the bank whose expected tags are among the bed's top classes"""

    @property
    def ok(self) -> bool:
        return not self.heard

    def to_json(self) -> dict[str, Any]:
        return {"bed_id": self.bed_id, "ok": self.ok, "heard": list(self.heard),
                "top": [[n, round(s, 4)] for n, s in self.top]}


@dataclass
class BedCheck:
    beds: str
    tagger: str
    revision: str
    k: int
    verdicts: list[BedVerdict]

    @property
    def accepted(self) -> tuple[str, ...]:
        return tuple(v.bed_id for v in self.verdicts if v.ok)

    def to_json(self) -> dict[str, Any]:
        return {"schema": CHECK_SCHEMA, "beds": self.beds, "tagger": self.tagger,
                "revision": self.revision, "k": self.k, "pool": "max",
                "accepted": list(self.accepted), "verdicts": [v.to_json() for v in self.verdicts]}


def check_beds(beds: BedBank, expected: dict[str, Sequence[str]], tagger: YamnetTagger,
               k: int = CHECK_TOP_K, reference_lufs: float = -28.0) -> BedCheck:
    """Tag every bed (at the loudness reference, the level atoms are heard at); refuse those in
    which any label's expected tag is among the top ``k``.

    ``expected``: label -> expected AudioSet tags (``tagger_check.expected_tags`` of the bank)."""
    names = tagger.class_names
    verdicts = []
    for bed in beds.beds:
        x, sr = beds.load(bed.bed_id)
        x = PreparedBed(bed.bed_id, x, sr, reference_lufs).samples
        scores = pool_frames(tagger.frame_scores(np.asarray(x, dtype=np.float32), sr), "max")
        order = sorted(range(len(names)), key=lambda i: (-float(scores[i]), names[i]))[:k]
        top = tuple((names[i], float(scores[i])) for i in order)
        heard = tuple(sorted(lab for lab, tags in expected.items() if match_rank(tuple(tags), top)))
        verdicts.append(BedVerdict(bed.bed_id, top, heard))
    return BedCheck(beds.spec, "yamnet", str(getattr(tagger, "revision", "")), k, verdicts)


def _check_key(beds: BedBank, expected: dict[str, Sequence[str]], revision: str, k: int) -> str:
    text = json.dumps({"beds": beds.describe(), "expected": {a: list(b) for a, b in sorted(expected.items())},
                       "tagger": revision, "k": k, "schema": CHECK_SCHEMA}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def checked_beds(beds: BedBank, atom_bank: AtomBank, root: Path | None = None,
                 cache_dir: Path | None = None, tagger: YamnetTagger | None = None) -> BedCheck:
    """:func:`check_beds` against ``atom_bank``'s labels, computed once and kept in the cache."""
    expected = {lab: tags for lab, (tags, _src) in expected_tags(atom_bank, root).items()}
    tagger = tagger or YamnetTagger()
    revision = str(getattr(tagger, "revision", ""))
    folder = Path(cache_dir) if cache_dir is not None else cache_root() / "beds"
    path = folder / f"check-{_check_key(beds, expected, revision, CHECK_TOP_K)}.json"
    if path.is_file():
        try:
            obj = read_json(path)
            return BedCheck(obj["beds"], obj["tagger"], obj["revision"], int(obj["k"]),
                            [BedVerdict(v["bed_id"], tuple((n, float(s)) for n, s in v["top"]),
                                        tuple(v["heard"])) for v in obj["verdicts"]])
        except (DataError, KeyError, TypeError, ValueError):
            pass  # a damaged cache entry is simply computed again
    result = check_beds(beds, expected, tagger)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(result.to_json(), indent=1) + "\n")
    return result
