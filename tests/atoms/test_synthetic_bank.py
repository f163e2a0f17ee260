"""The built-in synthetic bank: enough classes, parser-safe labels, deterministic, distinct."""

from __future__ import annotations

import numpy as np
import pytest

from reasonaudio.errors import DataError
from reasonaudio.atoms.registry import open_bank
from reasonaudio.querylang.labels import UNSAFE_WORDS, label_problems
from reasonaudio.atoms.synthetic import RECIPES, SAMPLE_RATE, SyntheticBank, synthesize


@pytest.fixture(scope="module")
def bank() -> SyntheticBank:
    return SyntheticBank()


def test_at_least_200_classes_with_a_few_atoms_each(bank):
    assert len(bank.labels) >= 200
    assert len(set(bank.labels)) == len(bank.labels)
    for label, atoms in bank.by_label.items():
        assert 1 <= len(atoms) <= 3, label
        for a in atoms:
            assert 0.5 <= a.duration <= 4.0
            assert a.sample_rate == SAMPLE_RATE == 48_000
            assert a.path.startswith("synthetic:")
            assert a.license == "CC0-1.0" and a.source == "reasonaudio synthetic"
    durations = [a.duration for a in bank.atoms]
    assert max(durations) - min(durations) > 2.0  # natural lengths vary


def test_labels_are_safe_for_the_query_parser(bank):
    for label in bank.labels:
        assert label_problems(label, bank.labels) == [], label
    for word in ("then", "before", "after", "while", "without", "no", "not", "and", "or", "for",
                 "seconds", "overlap", "first", "followed"):
        assert word in UNSAFE_WORDS
    assert label_problems("dog barking", ("loud dog barking",))  # word run inside another
    assert label_problems("siren then dog")
    assert label_problems("beep 2")


def test_samples_are_deterministic_across_banks_and_cache(bank):
    fresh = SyntheticBank()
    for atom in bank.atoms[::23]:
        x, sr = bank.load(atom.atom_id)
        y, _ = fresh.load(atom.atom_id)
        assert sr == SAMPLE_RATE
        assert x.dtype == np.float32 and x.ndim == 1
        assert len(x) == round(atom.duration * sr)
        assert x.tobytes() == y.tobytes()
        recipe = next(r for r in RECIPES if r.label == atom.label)
        k = int(atom.path.rsplit("/", 1)[1])
        assert synthesize(recipe, k, atom.duration).tobytes() == x.tobytes()
        assert 0.49 < float(np.max(np.abs(x))) <= 0.5


def _features(x: np.ndarray) -> np.ndarray:
    """Spectral band shape plus envelope statistics and modulation bands."""
    n = len(x)
    spec = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
    edges = np.geomspace(40, 20000, 25)
    band = np.array([spec[(f >= lo) & (f < hi)].sum() for lo, hi in zip(edges, edges[1:])])
    band = 10 * np.log10(band / band.sum() + 1e-6)
    hop = 480
    env = np.sqrt((x[: n // hop * hop].reshape(-1, hop) ** 2).mean(1)) + 1e-5
    le = np.maximum(20 * np.log10(env / env.max()), -60)
    m = np.abs(np.fft.rfft(le - le.mean())) ** 2
    mf = np.fft.rfftfreq(len(le), hop / SAMPLE_RATE)
    medges = [0.3, 1, 2, 4, 8, 16, 32, 50]
    mod = np.array([m[(mf >= a) & (mf < b)].sum() for a, b in zip(medges, medges[1:])])
    mod = 10 * np.log10(mod / (m.sum() + 1e-9) + 1e-6)
    return np.concatenate([band / 6, [le.std() / 3, (le < -30).mean() * 5], mod / 10])


def test_distinct_classes_sound_different(bank):
    """Every pair of classes differs clearly in spectrum, envelope or their change over time."""
    feats = []
    for label in bank.labels:
        x = bank.load(bank.by_label[label][0].atom_id)[0].astype(np.float64)
        h = len(x) // 2
        feats.append(np.concatenate([_features(x), _features(x[:h]), _features(x[h:])]))
    m = np.array(feats)
    d = np.sqrt(((m[:, None] - m[None]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    i, j = np.unravel_index(np.argmin(d), d.shape)
    assert d[i, j] > 1.0, (bank.labels[i], bank.labels[j], d[i, j])


def test_spec_forms_and_describe():
    small = open_bank("synthetic:12")
    assert isinstance(small, SyntheticBank) and len(small.labels) == 12
    families = {r.family for r in RECIPES[:12]}
    assert len(families) >= 10  # the first classes are spread over families
    d = small.describe()
    assert d["kind"] == "synthetic" and d["spec"] == "synthetic:12" and d["version"]
    assert open_bank("synthetic").describe()["spec"] == "synthetic"
    for bad in ("synthetic:0", "synthetic:1", "synthetic:9999", "synthetic:many", "synthetic:-3"):
        with pytest.raises(DataError):
            open_bank(bad)


def test_unknown_atom_id(bank):
    with pytest.raises(DataError, match="unknown atom id"):
        bank.load("syn-no-such-thing-1")
