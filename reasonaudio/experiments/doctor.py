"""`bench doctor`: will this install reproduce the docs' figures?

Three things decide what the figures are, besides the code: the installed package versions (the
lock, ``reasonaudio/data/constraints.txt``), what the tagger hears (its self-check digest: the
input and output codes of a fixed signal, :func:`reasonaudio.models.yamnet.self_check`) and the
atom bank's recordings (its content fingerprint). ``reasonaudio/data/reference.json`` holds the
values the docs' figures were measured with (``scripts/doc_figures.py`` writes it from the demo
build it reads, and ``--check`` verifies it); this module compares an install against them and
returns the verdict, printing nothing.
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonaudio.atoms.bank import AtomBank
from reasonaudio.errors import DataError, ReasonAudioError
from reasonaudio.models import yamnet
from reasonaudio.provenance import installed_version, lock_digest, lock_pins

REFERENCE_FILE = Path(__file__).resolve().parents[1] / "data" / "reference.json"
LOCK_PYTHON = "3.11"
"""the Python the lock was made with (its wheels and so its versions are for this minor release)"""


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool | None
    """True: matches; False: differs (the figures may differ); None: not applicable here"""
    detail: str


@dataclass
class DoctorReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def reproduces(self) -> bool:
        return all(c.ok is not False for c in self.checks)

    @property
    def unchecked(self) -> list[Check]:
        """The checks that could not run here (``ok`` None): what the verdict cannot vouch for."""
        return [c for c in self.checks if c.ok is None]

    @property
    def verdict(self) -> str:
        if not self.reproduces:
            differ = ", ".join(c.name for c in self.checks if c.ok is False)
            return f"this install may not reproduce the docs' figures: {differ} differ (see above)"
        if self.unchecked:
            names = ", ".join(c.name for c in self.unchecked)
            return (f"partly checked: what could be checked matches the docs' figures; not checked "
                    f"here: {names} (see above)")
        return "this install reproduces the docs' figures"

    def to_json(self) -> dict[str, Any]:
        return {"reproduces": self.reproduces, "fully_checked": not self.unchecked,
                "verdict": self.verdict,
                "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in self.checks]}


def load_reference(path: Path | None = None) -> dict[str, Any]:
    path = path or REFERENCE_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def check_python(want: str = LOCK_PYTHON) -> Check:
    have = ".".join(platform.python_version_tuple()[:2])
    return Check("python", have == want, f"{platform.python_version()} (lock: {want})")


def check_packages() -> Check:
    pins = lock_pins()
    differ, missing = [], 0
    for name, want in sorted(pins.items()):
        have = installed_version(name)
        if have is None:
            missing += 1
        elif have.split("+")[0] != want:
            differ.append(f"{name} {have} (lock {want})")
    matched = len(pins) - len(differ) - missing
    detail = f"{matched} of {len(pins)} pinned packages at the lock's version, lock {lock_digest()}"
    if missing:
        detail += f"; {missing} not installed"
    if differ:
        detail += "; differ: " + ", ".join(differ)
    return Check("packages", not differ, detail)


def check_tagger(reference: dict[str, Any]) -> Check:
    ok, why = yamnet.is_available()
    if not ok:
        return Check("tagger", None, f"YAMNet cannot load here ({why})")
    try:
        digest = yamnet.self_check(yamnet.YamnetTagger())
    except (ReasonAudioError, ImportError) as exc:
        return Check("tagger", False, f"YAMNet failed its self-check: {exc}")
    want = str(reference.get("tagger", {}).get("self_check") or yamnet.SELF_CHECK_SHA256)
    return Check("tagger", digest == want, f"self-check {digest[:12]} (expected {want[:12]}), "
                                           f"revision {yamnet.REVISION}")


def check_bank(reference: dict[str, Any], spec: str | None = None) -> Check:
    """The bank's fingerprint against the reference's. A bank the user names (``spec``) must
    open: one that cannot (a missing folder, a bank not fetched) is refused in one line naming
    it, never a check that does not apply. The reference's own bank missing here is one (None)."""
    from reasonaudio.atoms.registry import open_bank

    want = reference.get("bank", {})
    if spec is not None:
        try:
            return _bank_check(want, spec, open_bank(spec))
        except ReasonAudioError as exc:
            raise DataError(f"--bank: {exc}") from None
    spec = str(want.get("spec") or "fetched:packages")
    try:
        bank = open_bank(spec)
    except ReasonAudioError as exc:
        return Check("bank", None, f"{spec}: {exc}")
    return _bank_check(want, spec, bank)


def _bank_check(want: dict[str, Any], spec: str, bank: AtomBank) -> Check:
    record = bank.describe()
    got, expected = str(record.get("fingerprint")), str(want.get("fingerprint") or "")
    detail = (f"{spec}: {record.get('n_classes')} classes, fingerprint {got[:12]}"
              + (f" (expected {expected[:12]})" if expected else " (no reference recorded)"))
    return Check("bank", (got == expected) if expected else None, detail)


def run_doctor(bank: str | None = None, reference_file: Path | None = None) -> DoctorReport:
    """Every check, in the order they are printed."""
    reference = load_reference(reference_file)
    bank_check = check_bank(reference, bank)  # first: a bank named that cannot open stops here
    return DoctorReport([check_python(str(reference.get("python") or LOCK_PYTHON)), check_packages(),
                         check_tagger(reference), bank_check])
