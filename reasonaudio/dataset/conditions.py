"""Acoustic conditions: one record per condition, and the one name grammar that keys everything.

A condition renders the *same* clips (same events, queries, qrels and choices) differently:

- ``clean``: today's audio, the events over digital silence (byte-identical to a build without
  conditions);
- ``snrNN`` (``snr20``, ``snr5``, ``snr0``, ``snr-5``): a background bed under the whole clip, its
  BS.1770 loudness ``NN`` dB below the loudness reference every atom is normalised to, so an event
  at the reference (``gain_db`` 0) is ``NN`` dB above the bed and every event ``NN + gain_db`` dB
  (Scaper's SNR: event loudness minus background loudness, both in LUFS);
- ``long``: each clip's events, at their relative times, placed at a seeded offset inside a
  recording of 60 to 300 s made of background stretches and silence.

Names (:func:`parse_condition`, :func:`collection_for`, :func:`results_subdir`): a condition is
named as above; a collection under a condition other than ``clean`` is
``<collection>.<condition>``; saved results live in ``results/conditions/<condition>/`` and are
addressed by a typed key (``dataset/keys.py``), never by a joined name. ``clean`` adds nothing
anywhere, so every existing collection, cache and result keeps its name. A benchmark read under
a condition is a :class:`~reasonaudio.dataset.view.BenchmarkView` holding the condition's record.

Each kind is a :class:`~reasonaudio.dataset.condition_kinds.ConditionKind` record
(:mod:`reasonaudio.dataset.condition_kinds`): its name grammar, parameters and the hooks the
renderer, export, training and the reports read. This module is data: it says what a condition
is. Rendering one is
:mod:`reasonaudio.render.clips` (:class:`~reasonaudio.render.clips.ConditionRenderer`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Iterable

from reasonaudio.dataset.condition_kinds import (  # noqa: F401  (KINDS, SNR_RANGE re-exported)
    CLEAN,
    CONDITION_KINDS,
    KINDS,
    SNR_RANGE,
    ConditionKind,
    condition_kind,
    grammar,
)
from reasonaudio.errors import DataError

SCHEMA = 1
LADDER = ("snr20", "snr10", "snr5", "snr0")
"""the SNR ladder ``--condition all`` and the report's plot read, loudest bed last"""
DEFAULT_BEDS = "generated"
"""the bed bank a condition draws from unless its record names another (``atoms/beds.py``)"""
BED_BANKS = (DEFAULT_BEDS, "packages")
"""bed banks named by a word (``atoms/beds.py``); any other is ``folder:PATH``"""


@dataclass(frozen=True)
class Condition:
    """One condition, as recorded in ``manifest.json`` (``conditions``) and in every collection
    and result made under it."""

    name: str
    kind: str
    snr_db: float | None = None
    """``snr``: the bed's loudness is the loudness reference minus this"""
    beds: str = DEFAULT_BEDS
    """the bed bank (``generated``, ``packages`` or ``folder:PATH``)"""
    long_min_s: float = 60.0
    long_max_s: float = 300.0
    """``long``: the recording's length is drawn per clip in this range (ms resolution)"""
    long_bed_snr_db: float = 20.0
    """``long``: the bed's level in its background stretches (dB below the reference)"""
    long_stretch_s: tuple[float, float] = (5.0, 40.0)
    """``long``: background and silence alternate in stretches of this many seconds"""
    schema: int = SCHEMA
    params: tuple[tuple[str, float], ...] = ()
    """a registered kind's own parameters (:attr:`ConditionKind.params`), written only when
    there are any, so a built-in kind's record keeps its bytes"""

    @property
    def record(self) -> ConditionKind:
        """The kind's record (:mod:`reasonaudio.dataset.condition_kinds`)."""
        return condition_kind(self.kind)

    @property
    def is_clean(self) -> bool:
        return self.kind == CLEAN

    @property
    def needs_beds(self) -> bool:
        return self.record.needs_beds

    @property
    def snr_axis(self) -> float | None:
        """Where the report's SNR axis puts this condition (dB); None when it is not on it."""
        hook = self.record.snr_axis
        return None if hook is None else hook(self)

    def param(self, name: str) -> float:
        """The kind's own parameter ``name`` (its value in this record)."""
        values = dict(self.params)
        if name not in values:
            raise KeyError(f"condition {self.name}: no parameter {name!r}")
        return values[name]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["long_stretch_s"] = list(self.long_stretch_s)
        del out["params"]
        if self.params:
            out["params"] = dict(self.params)
        return out

    @classmethod
    def from_json(cls, obj: object, where: str = "manifest.json conditions") -> "Condition":
        if not isinstance(obj, dict) or "name" not in obj:
            raise DataError(f"{where}: expected a condition record with a 'name'")
        base = parse_condition(str(obj["name"]), where)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise DataError(f"{where} ({base.name}): unknown field(s) {unknown}; known: {sorted(known)}")
        try:
            values = {k: v for k, v in obj.items() if k not in ("name", "kind")}
            if "long_stretch_s" in values:
                lo, hi = values["long_stretch_s"]
                values["long_stretch_s"] = (float(lo), float(hi))
            for key in ("long_min_s", "long_max_s", "long_bed_snr_db"):
                if key in values:
                    values[key] = float(values[key])
            if values.get("snr_db") is not None:
                values["snr_db"] = float(values["snr_db"])
            if "params" in values:
                values["params"] = _params(base, values["params"])
            cond = replace(base, **values)
        except (TypeError, ValueError, AttributeError) as exc:
            raise DataError(f"{where} ({base.name}): malformed field ({exc})") from None
        fixed = cond.record.fixed(base.name, where) or {}
        named = sorted(k for k in fixed
                       if k not in ("name", "params") and getattr(cond, k) != getattr(base, k))
        named += sorted(k for k in fixed.get("params", {}) if cond.param(k) != base.param(k))
        if cond.kind != obj.get("kind", cond.kind) or named:
            raise DataError(f"{where} ({base.name}): kind and {', '.join(named) or 'values'} must "
                            "agree with the name")
        if cond.schema != SCHEMA:
            raise DataError(f"{where} ({base.name}): schema {cond.schema} is not supported (this "
                            f"version reads {SCHEMA})")
        cond.validate(where)
        return cond

    def validate(self, where: str = "condition") -> None:
        lo, hi = self.long_stretch_s
        if not (0 < self.long_min_s <= self.long_max_s and 0 < lo <= hi):
            raise DataError(f"{where} ({self.name}): long_min_s <= long_max_s and the stretch "
                            "range must be positive")
        if not (self.beds in BED_BANKS or self.beds.startswith("folder:")):
            raise DataError(f"{where} ({self.name}): beds must be {DEFAULT_BEDS!r}, 'packages' or "
                            f"folder:PATH, got {self.beds!r}")


def parse_condition(name: str, where: str = "--condition") -> Condition:
    """The registry's record for a condition name (``clean``, ``snrNN``, ``long``, or a name of
    a registered kind): the first kind whose pattern reads it."""
    text = str(name).strip()
    for kind in CONDITION_KINDS.values():
        values = kind.values(text, where)
        if values is not None:
            return Condition(kind=kind.name, **values)
    raise DataError(f"{where}: unknown condition {text!r:.60}; known: {grammar()}")


def _params(base: Condition, raw: Any) -> tuple[tuple[str, float], ...]:
    """A record's ``params`` object, checked against its kind's parameters."""
    known = dict(base.params)
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} of kind {base.kind}")
    return tuple((k, float(raw.get(k, v))) for k, v in known.items())


def parse_condition_list(text: str, where: str = "--conditions") -> tuple[Condition, ...]:
    """``clean,snr20,snr5,long`` -> records, in the order given, each once; ``clean`` always first."""
    names = [t.strip() for t in str(text).split(",") if t.strip()]
    if not names:
        raise DataError(f"{where}: no condition named (e.g. clean,snr20,snr10,snr5,snr0,long)")
    seen: dict[str, Condition] = {}
    for n in names:
        cond = parse_condition(n, where)
        if cond.name in seen:
            raise DataError(f"{where}: {cond.name} named twice")
        seen[cond.name] = cond
    ordered = [seen.pop(CLEAN, Condition(CLEAN, "clean"))] + list(seen.values())
    return tuple(ordered)


def with_beds(conditions: Iterable[Condition], beds: str, where: str = "--beds") -> tuple[Condition, ...]:
    """``conditions`` with every bed-laying one (``snrNN``, ``long``) drawing from ``beds``
    (``generated``, ``packages`` or ``folder:PATH``)."""
    out = tuple(replace(c, beds=beds) if c.needs_beds else c for c in conditions)
    for c in out:
        c.validate(where)
    return out


def recorded_conditions(manifest: dict[str, Any], where: str = "manifest.json") -> dict[str, Condition]:
    """The conditions a build recorded (``bench build --conditions``), by name; {} when none."""
    raw = manifest.get("conditions")
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not isinstance(raw.get("records"), list):
        raise DataError(f"{where}: field 'conditions' must be an object with a 'records' list")
    out: dict[str, Condition] = {}
    for i, rec in enumerate(raw["records"]):
        cond = Condition.from_json(rec, f"{where} conditions.records[{i}]")
        out[cond.name] = cond
    return out


def condition_for(manifest: dict[str, Any], name: str, where: str = "--condition") -> Condition:
    """The record of ``name`` for a benchmark: the one its build recorded, else the registry's
    (a condition is fully determined by its name, the registry's defaults and the build's seed)."""
    cond = parse_condition(name, where)
    return recorded_conditions(manifest).get(cond.name, cond)


def manifest_record(conditions: Iterable[Condition], beds: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest's ``conditions`` field for a build's ``--conditions``."""
    out: dict[str, Any] = {"schema": SCHEMA, "records": [c.to_json() for c in conditions]}
    if beds is not None:
        out["beds"] = beds
    return out


# --- the name grammar --------------------------------------------------------------------------

def collection_for(collection: str, condition: str) -> str:
    """``reasonaudio-yamnet`` under ``snr5`` -> ``reasonaudio-yamnet.snr5``; clean keeps the name."""
    return collection if condition == CLEAN else f"{collection}.{condition}"


def results_subdir(condition: str) -> str:
    """Where results under ``condition`` live below ``DATA/results/`` ('' for clean)."""
    return "" if condition == CLEAN else f"conditions/{condition}"


def trained_model_name(digest: str, condition: str = CLEAN) -> str:
    """A trained model's name: ``trained-<digest>`` when it was trained on clean audio,
    ``trained-<condition>-<digest>`` under another condition, so its collection
    (``reasonaudio-trained-snr5-<digest>``, ingested under snr5 ``...-<digest>.snr5``) can never be
    read as a clean model's."""
    return f"trained-{digest}" if condition == CLEAN else f"trained-{condition}-{digest}"
