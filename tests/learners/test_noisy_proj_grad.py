"""NoisyProjGrad (KNJ Appendix A): the printed bound's counterexample (KNJ-3) and the
corrected bound on random quadratics, with every iterate in the set.

Errata decided: docs/errata.md, KNJ-3.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.evaluation.excess_risk import excess_empirical_risk
from dpol.learners.noisy_proj_grad import noisy_proj_grad, npg_bound, npg_step_size
from dpol.sets import L1Ball, L2Ball


def test_npg_a6_counterexample_breaks_the_printed_bound_not_the_corrected_one():
    # KNJ-3: C = [-1, 1], f = |theta - 1|, theta_1 = -1, alpha = 0, paper step, r = 100
    ball = L2Ball(1)
    grad = lambda th: np.sign(th - 1.0)  # noqa: E731 (a subgradient, 0 at the kink)
    step = npg_step_size(1.0, 100, 1.0, 0.0, constant="paper")
    avg, _ = noisy_proj_grad(grad, ball.project, np.array([-1.0]), 100, step)
    gap = abs(float(avg[0]) - 1.0)
    assert gap == pytest.approx(0.21, abs=0.005)
    assert gap > npg_bound(1.0, 100, 1.0, 0.0, constant="printed")  # 0.10: the erratum
    assert gap <= npg_bound(1.0, 100, 1.0, 0.0, constant="paper")  # 0.25
    avg2, _ = noisy_proj_grad(grad, ball.project, np.array([-1.0]), 100,
                              npg_step_size(1.0, 100, 1.0, 0.0))
    assert abs(float(avg2[0]) - 1.0) <= npg_bound(1.0, 100, 1.0, 0.0)  # corrected: 0.2


@pytest.mark.parametrize("domain", [L2Ball(5, 1.5), L1Ball(5, 1.5)])
@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_npg_corrected_bound_holds_on_random_quadratics(domain, alpha):
    rng = np.random.default_rng(11)
    for _ in range(20):
        B = rng.normal(size=(5, 5))
        A, b = B.T @ B / 5, rng.normal(size=5) * 2
        err = rng.normal(size=5)
        err *= alpha / np.linalg.norm(err)  # adversarial constant error of norm alpha
        theta_star = _qp_min(A, b, domain)
        R = domain.radius
        L = 2 * (np.linalg.norm(A, 2) * R + np.linalg.norm(b))  # sup_C ||grad f||
        start = domain.project(rng.normal(size=5) * 3)
        r, iterates = 50, []

        def project(v, iterates=iterates):
            out = domain.project(v)
            iterates.append(out)
            return out

        def grad(th, A=A, b=b, err=err):
            return 2 * (A @ th - b) + err

        avg, _ = noisy_proj_grad(grad, project, start, r, npg_step_size(R, r, L, alpha))
        gap = float(avg @ A @ avg - 2 * b @ avg) - float(theta_star @ A @ theta_star
                                                          - 2 * b @ theta_star)
        assert gap <= npg_bound(R, r, L, alpha) + 1e-9
        assert all(domain.contains(p, tol=1e-9) for p in iterates)


def _qp_min(A, b, domain):
    X = np.linalg.cholesky(A + 1e-12 * np.eye(len(b))).T  # A = X^T X
    y = np.linalg.solve(X.T, b)  # ||y - X th||^2 = th^T A th - 2 b.th + const
    return excess_empirical_risk(np.zeros((len(b), len(b))), X, y, domain,
                                 tol=1e-12).minimizers[-1]
