"""POL's released noise: beta is the Privacy section's formula, and the noise has scale beta.

beta is recomputed from POL's Privacy section with dp-accounting's analytic Gaussian
(``get_sigma_gaussian`` = 1/mu*), never read from the object alone; POL's sensitivity:
test_learner_sensitivity.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from learner_cases import analytic_z, unit_stream
from test_learner_sensitivity import _chi2_accepts

from dpol.errors import NonPrivateWarning
from dpol.learners import PrivateOfflineLearner
from dpol.losses import LogisticLoss

INF = float("inf")
EPS, DELTA = 1.0, 1e-5


def _pol_beta(T, r, L, excess, eps, delta, factor=2.0):
    """Privacy section: beta = Delta / mu*, Delta = (1/T) sum_{s=2}^{T+1} min(2r, 2L/(alpha s))
    (factor 1 instead of 2 under add/remove), alpha = excess / r^2."""
    alpha = excess / r**2
    s = np.arange(2, T + 2, dtype=float)
    return math.fsum(np.minimum(2 * r, factor * L / (alpha * s))) / T * analytic_z(eps, delta)


@pytest.mark.parametrize(("r", "excess", "nb"), [(1.0, 1.0, "replace_one"),
                                                 (1.0, 0.05, "replace_one"),
                                                 (2.0, 0.1, "add_remove")])
def test_pol_beta_is_the_privacy_formula(r, excess, nb):
    # Catches a beta whose Delta drops the min with 2r (active for s < 15 resp. s < 8 in
    # the last two cases), the 1/alpha, the replace-one factor, or uses another mu*.
    L = 1 / (1 + math.exp(-r))  # logistic, X = Y = 1: sup |phi'(<w, x>, y)| ||x|| = sigma(r)
    m = PrivateOfflineLearner(4, loss=LogisticLoss(), x_star_norm=r, excess=excess,
                              horizon=300, epsilon=EPS, delta=DELTA, neighbouring=nb, seed=0)
    factor = 2.0 if nb == "replace_one" else 1.0
    assert m.beta == pytest.approx(_pol_beta(300, r, L, excess, EPS, DELTA, factor), rel=1e-9)


def test_pol_released_noise_has_scale_beta():
    # Final weights minus the noise-free twin's over N seeds are the release noise
    # N(0, beta^2 I) exactly (the clean IGD never sees the noise) as long as the
    # projection onto the r-ball is inactive, asserted below. n = N d = 200 x 40 = 8000
    # entries: _chi2_accepts (level 1e-4 per tail) accepts sigma within about +-3.1%
    # (3.9 standard errors of 1/sqrt(2n) = 0.8%), and a 2/3 or 3/2 scale moves
    # sum(E^2)/sigma^2 by a factor 2.25 or 1/2.25, about 140 standard deviations.
    # eps = 4 and alpha = 1 keep beta sqrt(d) ~ 0.24, plus ||mean|| <= L/alpha = 0.73, in r = 1.
    d, T, N, eps, r, excess = 40, 128, 200, 4.0, 1.0, 1.0
    X, y = unit_stream(np.random.default_rng(11), T, d)
    beta = _pol_beta(T, r, 1 / (1 + math.exp(-r)), excess, eps, DELTA)

    def make(**kw):
        return PrivateOfflineLearner(d, loss=LogisticLoss(), x_star_norm=r, excess=excess,
                                     horizon=T, delta=DELTA, **kw)

    with pytest.warns(NonPrivateWarning):
        clean = make(epsilon=INF).run(X, y).final_weights
    released = np.stack([make(epsilon=eps, seed=s).run(X, y).final_weights for s in range(N)])
    assert np.linalg.norm(released, axis=1).max() < r * (1 - 1e-6)  # projection inactive
    E = released - clean
    ratio = float(np.mean(E**2)) / beta**2
    assert _chi2_accepts(E, beta), ("POL noise", ratio)
    assert not _chi2_accepts(E, 1.5 * beta) and not _chi2_accepts(E, beta / 1.5), ratio
    assert make(epsilon=eps, seed=0).beta == pytest.approx(beta, rel=1e-9)
