"""Paired randomization (permutation) test for the difference of two systems' mean scores.

For queries i = 1..n with per-query scores a_i and b_i, the statistic is the mean difference
``d = mean(a_i - b_i)``. Under the null hypothesis the two systems are exchangeable on each
query, so each difference's sign is equally likely to flip. We draw ``n_permutations`` (10,000)
random sign vectors with a fixed seed and report the two-sided p-value

    p = (1 + #{permutations with |mean(s_i * d_i)| >= |d|}) / (1 + n_permutations)

(the +1 counts the observed assignment, so p is never 0; Smucker, Allan & Carterette 2007 use
this test for IR). When the number of non-zero differences m is small enough that all ``2**m``
sign vectors are at most ``n_permutations``, the p-value is exact instead (every assignment
enumerated, no +1). Same inputs and seed, same p.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from reasonaudio.seeds import seeded_rng

N_PERMUTATIONS = 10_000
SEED = 0
ALPHA = 0.05
_EPS = 1e-12


@dataclass(frozen=True)
class PairedTest:
    n: int
    mean_a: float
    mean_b: float
    diff: float
    """mean(a) - mean(b)"""
    p_value: float
    exact: bool

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA


def paired_randomization_test(a: Sequence[float], b: Sequence[float],
                              n_permutations: int = N_PERMUTATIONS, seed: int = SEED,
                              chunk: int = 1000) -> PairedTest:
    """Two-sided paired sign-flip randomization test on per-query scores ``a`` and ``b``."""
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise ValueError("a and b must be 1-D and of equal length (paired by query)")
    n = int(a_arr.size)
    if n == 0:
        return PairedTest(0, 0.0, 0.0, 0.0, 1.0, True)
    d = a_arr - b_arr
    observed = abs(d.sum())  # compare sums: same test as means, fewer divisions
    nz = d[d != 0.0]
    m = int(nz.size)
    mean_a, mean_b = float(a_arr.mean()), float(b_arr.mean())
    diff = float(d.mean())
    if m == 0:
        return PairedTest(n, mean_a, mean_b, diff, 1.0, True)
    if 2 ** m <= n_permutations:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=m)))
        stats = np.abs(signs @ nz)
        p = float(np.count_nonzero(stats >= observed - _EPS)) / len(stats)
        return PairedTest(n, mean_a, mean_b, diff, p, True)
    rng = seeded_rng(seed)
    hits = 0
    done = 0
    while done < n_permutations:
        size = min(chunk, n_permutations - done)
        signs = rng.integers(0, 2, size=(size, m), dtype=np.int8) * 2 - 1
        stats = np.abs(signs @ nz)
        hits += int(np.count_nonzero(stats >= observed - _EPS))
        done += size
    p = (hits + 1) / (n_permutations + 1)
    return PairedTest(n, mean_a, mean_b, diff, float(p), False)


CORRECTION = "holm"
"""The multiple-comparison correction of a comparison's per-task tests (docs/evaluation.md)."""


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order: sort ascending, multiply the i-th
    smallest (from 0) by ``m - i``, carry the running maximum upward, cap at 1. A hypothesis is
    rejected at family-wise level alpha when its adjusted p is below alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        adjusted[i] = running
    return adjusted
