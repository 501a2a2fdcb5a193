"""The one-step gap of PrivateKernelRegression's releases: diameter_factor(r) is the
limacon's diameter, never exceeded by a random or numerical search, and attained.

The whole release sensitivity and transcript mu: test_private_kernel_regression.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from dpol.learners._kernel_sensitivity import diameter_factor


@pytest.mark.parametrize("r", [0.0, 0.3, 1.0, 2.0, 8.0])
def test_one_step_gap_is_the_limacon_diameter(r):
    # Step 2 of the derivation (kappa = M = 1): over ||u||, ||v|| <= 1, |y|, |y'| <= 1 and
    # ||w|| = r, ||(y - u.w) u - (y' - v.w) v|| <= g(r), attained by u, v symmetric about
    # -w at cos = c*; 20000 random configurations in 3-d and Nelder-Mead from 5 starts
    # (general norms, labels) never exceed it, and the search reaches it.
    g = float(diameter_factor(r))
    w = np.array([r, 0.0, 0.0])
    c = (math.sqrt(1 + 8 * r * r) - 1) / (4 * r) if r else 0.0
    u, v = np.array([-c, math.sqrt(1 - c * c), 0]), np.array([-c, -math.sqrt(1 - c * c), 0])
    assert np.linalg.norm((1 - u @ w) * u - (1 - v @ w) * v) == pytest.approx(g, rel=1e-12)

    def gap(p):
        u, v = p[:3] / max(1.0, np.linalg.norm(p[:3])), p[3:6] / max(1.0, np.linalg.norm(p[3:6]))
        return np.linalg.norm((math.tanh(p[6]) - u @ w) * u - (math.tanh(p[7]) - v @ w) * v)

    rng = np.random.default_rng(int(10 * r))
    P = rng.normal(size=(20000, 8))
    assert max(gap(p) for p in P) <= g * (1 + 1e-12)
    best = max(-minimize(lambda p: -gap(p), rng.normal(size=8) * 2, method="Nelder-Mead",
                         options={"maxiter": 4000, "xatol": 1e-10, "fatol": 1e-13}).fun
               for _ in range(5))
    assert g * 0.9999 <= best <= g * (1 + 1e-9)
    assert g <= 2 + r and (r == 0 or g > math.sqrt(2) + r)  # below NW's (16): 2 + 2 r
