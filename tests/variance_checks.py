"""F tests that secure and float noise have the variance each states (shared test helper).

At step t the secure outputs (n_s samples) and the float outputs (n_f samples), each
divided by its stated variance, have mean squares whose ratio is F(n_s, n_f) when both
statements are right: ``f_test_pvalue`` is its two-sided p-value. With ~1000 samples per
side F(R, R) has sd ~ sqrt(4 / R) = 6%, so a secure std off by x 3/2 (variance x 2.25) or
x 2/3 (x 0.44) lies far in the tails and is rejected at ALPHA, while the right one passes
at ALPHA / steps (Bonferroni over the steps).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: family-wise false-alarm rate of one ``check_same_variance``
ALPHA = 1e-4


def f_test_pvalue(secure: np.ndarray, s_var: float, flt: np.ndarray, f_var: float) -> float:
    """Two-sided F test of (sum x^2 / v) / n over two independent zero-mean samples."""
    ratio = (np.mean(secure**2) / s_var) / (np.mean(flt**2) / f_var)
    dist = stats.f(secure.size, flt.size)
    return 2.0 * min(dist.cdf(ratio), dist.sf(ratio))


def check_same_variance(secure: np.ndarray, s_var: np.ndarray, flt: np.ndarray,
                        f_var: np.ndarray) -> None:
    """Per step (rows), both have the variance stated; a secure std x 3/2 or x 2/3 is
    rejected."""
    for t in range(secure.shape[0]):
        assert f_test_pvalue(secure[t], s_var[t], flt[t], f_var[t]) > ALPHA / secure.shape[0]
        for factor in (1.5, 2.0 / 3.0):
            assert f_test_pvalue(secure[t], s_var[t] * factor**2, flt[t], f_var[t]) < ALPHA
