"""The event figures the audio side adds to its vector (slot_features): each says what its
docstring claims on planted frame probabilities, and padding never changes it."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from reasonaudio.train.model import slot_features  # noqa: E402

K = 4


def _probs(spans: dict[int, tuple[int, int]], frames: int = 20) -> torch.Tensor:
    """(1, frames, K) probabilities: sound k is 1 on frames [start, stop)."""
    p = torch.zeros(1, frames, K)
    for k, (a, b) in spans.items():
        p[0, a:b, k] = 1.0
    return p


def _figures(p: torch.Tensor) -> dict[str, np.ndarray]:
    out = slot_features(p, torch.ones(p.shape[:2], dtype=torch.bool))[0].numpy()
    return dict(zip(("peak", "together", "centre", "extent"), out.reshape(4, K)))


def test_overlap_order_and_extent_are_readable():
    together = _figures(_probs({0: (2, 8), 1: (5, 12)}))
    apart = _figures(_probs({0: (2, 6), 1: (10, 16)}))
    assert together["together"][0] == together["together"][1] == 1.0
    assert apart["together"][0] == apart["together"][1] == 0.0
    assert (apart["peak"][:2] == 1.0).all() and apart["peak"][2] == 0.0
    assert apart["centre"][0] < 0 < apart["centre"][1]  # sound 0 first
    assert np.isclose(apart["extent"][0], 4 * 0.48 / 10)
    assert together["centre"][3] == together["extent"][3] == 0.0  # absent: no figures


def test_padding_changes_nothing():
    p = torch.rand(1, 9, K)
    padded = torch.cat([p, torch.rand(1, 5, K)], 1)
    mask = torch.zeros(1, 14, dtype=torch.bool)
    mask[0, :9] = True
    plain = slot_features(p, torch.ones(1, 9, dtype=torch.bool))
    assert torch.allclose(slot_features(padded, mask), plain, atol=1e-6)
