"""The paired randomization test: exact cases by hand and against scipy, determinism, power."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reasonaudio.evaluation.significance import paired_randomization_test


def scipy_exact(a, b):
    res = stats.permutation_test((np.asarray(a, float), np.asarray(b, float)),
                                 lambda x, y: np.mean(x - y), permutation_type="samples",
                                 n_resamples=np.inf, alternative="two-sided")
    return res.pvalue


def test_hand_exact_case():
    # differences (1, 1, 1): 8 sign vectors, |sum| >= 3 only for all + and all -
    t = paired_randomization_test([1, 1, 1], [0, 0, 0])
    assert t.exact and t.p_value == pytest.approx(2 / 8) and t.diff == 1 and not t.significant


def test_identical_systems_p_is_one():
    t = paired_randomization_test([0.5, 1, 0], [0.5, 1, 0])
    assert t.p_value == 1.0 and t.diff == 0


def test_empty_input():
    assert paired_randomization_test([], []).p_value == 1.0


@pytest.mark.parametrize("seed", range(6))
def test_exact_p_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, 11).astype(float)
    b = rng.random(11).round(1)
    t = paired_randomization_test(a, b)
    assert t.exact
    assert t.p_value == pytest.approx(scipy_exact(a, b), abs=1e-9)


def test_sampled_p_close_to_exact_and_deterministic():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 60).astype(float)
    flip = rng.random(60) < 0.4
    b = np.where(flip & (a == 1), 0.0, a)   # a beats b on ~24 queries, never the reverse
    b[:3] = 1 - a[:3]                         # and a few the other way
    t1 = paired_randomization_test(a, b)
    t2 = paired_randomization_test(a, b)
    assert not t1.exact and t1.p_value == t2.p_value          # fixed seed: same p
    # the sign-flip distribution of a sum of m equal +-1 terms is binomial: exact p known
    m = int(np.count_nonzero(a != b))
    k = int(abs((a - b).sum()))
    exact = sum(stats.binom.pmf(j, m, 0.5) for j in range(m + 1) if abs(2 * j - m) >= k)
    assert t1.p_value == pytest.approx(exact, abs=0.01)


def test_large_clear_difference_is_significant():
    a = np.ones(200)
    b = np.r_[np.zeros(120), np.ones(80)]
    t = paired_randomization_test(a, b)
    assert t.significant and t.p_value == pytest.approx(1 / 10_001)


def test_length_mismatch_is_a_bug():
    with pytest.raises(ValueError):
        paired_randomization_test([1, 2], [1])
