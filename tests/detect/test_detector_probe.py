"""scripts/detector_probe.py's measures: average precision and the event kinds it splits by."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from reasonaudio.dataset.clip import Event


def _probe():
    return SimpleNamespace(**runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts"
                                                / "detector_probe.py")))


def test_average_precision_ranks_and_tagging_skips_absent_labels():
    mod = _probe()
    assert mod.average_precision(np.array([1, 0, 1, 0]), np.array([0.9, 0.1, 0.8, 0.2])) == 1.0
    assert mod.average_precision(np.array([0, 1]), np.array([0.9, 0.1])) == 0.5
    truth = np.array([[1, 0, 0], [0, 1, 0]])
    micro, macro = mod.tagging_ap(truth, np.array([[0.9, 0.1, 0.5], [0.2, 0.8, 0.7]]))
    assert micro == macro == 1.0  # the third label, never present, is left out


def test_event_kinds_alone_louder_quieter():
    mod = _probe()
    a = Event("a", 0.0, 4.0, "a.wav", -1.0)
    b = Event("b", 2.0, 6.0, "b.wav", -8.0)
    c = Event("c", 7.0, 9.0, "c.wav", -20.0)
    events = [a, b, c]
    assert [mod.event_kind(e, events) for e in events] == ["louder", "quieter", "alone"]
