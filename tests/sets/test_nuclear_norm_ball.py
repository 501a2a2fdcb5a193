"""NuclearNormBall: its oracle in closed form, its LLOO against the Lagrangian dual, its shape.

What every set must satisfy (projection, oracles, geometry): test_sets.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from set_cases import DIMS, check_lloo, lloo_instances, make_set

from dpol.errors import InvalidInputError
from dpol.sets import NuclearNormBall


def test_closed_form_oracle_is_minus_radius_times_the_top_singular_value():
    rng = np.random.default_rng(9)
    for _ in range(20):
        c = rng.normal(size=6)
        N = NuclearNormBall((2, 3), 1.5)
        s1 = np.linalg.svd(c.reshape(2, 3), compute_uv=False)[0]
        np.testing.assert_allclose(N.linear_oracle(c) @ c, -1.5 * s1, rtol=1e-12)


@pytest.mark.parametrize("d", DIMS)
def test_nuclear_lloo_against_the_lagrangian_dual(d):
    # OPT = min ⟨c, y⟩ over ball ∩ B(x, r) >= g(λ) = ⟨c, P_λ⟩ + λ/2 (‖P_λ − x‖² − r²), with
    # P_λ the projection of x − c/λ, for every λ > 0; (i) passes only if ⟨c, p⟩ <= max g
    S, rng = make_set("nuclear", d), np.random.default_rng(80 + d)
    for x, r, c in lloo_instances(S, rng, 12):
        def neg_dual(log_lam, x=x, r=r, c=c):
            lam = math.exp(log_lam)
            P = S.project(x - c / lam)
            return -(c @ P + lam / 2 * (np.sum((P - x) ** 2) - r * r))

        best = min(minimize_scalar(neg_dual, bounds=(lo, lo + 8), method="bounded",
                                   options={"xatol": 1e-10}).fun for lo in range(-20, 20, 8))
        check_lloo(S, x, r, c, S.local_linear_oracle(x, r, c), -best)




@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: NuclearNormBall((2,)), "shape must be a pair"),
        (lambda: NuclearNormBall((2, 0)), r"shape\[1\] must be an integer >= 1"),
    ],
)
def test_bad_shape(build, match):
    with pytest.raises(InvalidInputError, match=match):
        build()
