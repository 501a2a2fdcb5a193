"""The learners on jointly calibrated counters (PQFTL, KNJ's regressions): their guarantee
is derived from the events of the counters they run.

* tight calibration: the events compose to exactly the epsilon the joint calibration
  certified, through one event of the stacked release (the counters' own events, composed,
  would claim more: they do not know the stacked element's bound);
* paper calibration: the counters' own events, i.e. the real epsilon of the printed noise;
* the window of a window counter reaches the claim (and the budget refuses it); a window
  covering the horizon is full DP;
* the counters run under the learner's relation, which ``counter_options`` cannot change.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from dpol.accounting import PrivacyBudget, compose_guarantee
from dpol.accounting.closed_forms import gaussian_epsilon, mu_star
from dpol.accounting.presets import jkt_private_sum_sigma
from dpol.errors import InvalidInputError
from dpol.learners import (
    PrivateIncrementalRegression,
    PrivateQuadraticFTL,
    ProjectedIncrementalRegression,
)
from dpol.learners._joint_counters import outer_product_sensitivity
from dpol.sets import L1Ball, L2Ball

T, EPS, DELTA = 16, 1.0, 1e-5

LEARNERS = {
    "pqftl": lambda **kw: PrivateQuadraticFTL(2, horizon=T, epsilon=EPS, delta=DELTA, seed=0,
                                              **kw),
    "reg1": lambda **kw: PrivateIncrementalRegression(2, domain=L2Ball(2), horizon=T,
                                                      epsilon=EPS, delta=DELTA, seed=0, **kw),
    "reg2": lambda **kw: ProjectedIncrementalRegression(
        3, domain=L1Ball(3), horizon=T, epsilon=EPS, delta=DELTA, projection_dim=2,
        max_iter=3, inner_iter=3, seed=0, **kw),
}


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("noise", ["gaussian", "secure"])
def test_window_counter_shorter_than_the_horizon_gives_window_dp_the_budget_refuses(name,
                                                                                    noise):
    m = LEARNERS[name](counter="window", counter_options={"window": 4}, noise=noise)
    assert m.privacy.window == 4
    assert all(e.window == 4 and e.horizon == T for e in m.privacy_events())
    budget = PrivacyBudget(10.0, 1e-5, accountant="rdp" if noise == "secure" else "pld")
    with pytest.raises(InvalidInputError, match="window DP with window W=4"):
        budget.spend(m)
    assert budget.n_releases == 0 and budget.spent == 0.0


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("window", [T, 2 * T])
def test_window_counter_covering_the_horizon_gives_full_dp(name, window):
    m = LEARNERS[name](counter="window", counter_options={"window": window})
    assert m.privacy.window is None and m.privacy.epsilon == EPS
    spent = PrivacyBudget(10.0, 1e-5).spend(m)
    # PLD is pessimistic by its discretisation (1e-4 per unit of privacy loss)
    assert EPS <= spent <= EPS + 1e-2


@pytest.mark.parametrize("name", list(LEARNERS))
def test_tight_events_reproduce_the_joint_calibration(name):
    m = LEARNERS[name]()
    (event,) = m.privacy_events()  # one event: the stacked release of both counters
    assert event.neighbouring == "replace_one" and event.window is None
    cq, cu = m._counters
    assert cq.noise_scale == pytest.approx(cu.noise_scale, rel=1e-15)  # one sigma on both
    # the stacked element moves by s = 3/sqrt(2) R^2 in sqrt(levels) nodes of each tree
    s = outer_product_sensitivity(1.0, 1.0, "replace_one") * math.sqrt(cq.levels)
    z = event.event.noise_multiplier
    assert z == pytest.approx(cq.noise_scale / s, rel=1e-15)
    assert z == pytest.approx(1.0 / mu_star(EPS, DELTA), rel=1e-12)
    assert m.privacy.epsilon == EPS and m.privacy == compose_guarantee(
        [event], DELTA, target=EPS, seeded=m.seed is not None)
    # the counters' own events know only their own sensitivities, sqrt(2) R^2 and 2 R^2
    # in quadrature (sqrt(6) against 3/sqrt(2)): composed, they would claim more
    own = [e for c in m._counters for e in c.privacy_events()]
    assert compose_guarantee(own, DELTA).epsilon > 1.1 * EPS


@pytest.mark.parametrize("name", list(LEARNERS))
def test_add_remove_events_are_the_counters_own_under_the_learners_relation(name):
    m = LEARNERS[name](neighbouring="add_remove")
    events = m.privacy_events()
    # the stacked bound sqrt(X^4 + X^2 Y^2) is the parts' quadrature sum: no joint event
    assert events == tuple(e for c in m._counters for e in c.privacy_events())
    assert all(c.neighbouring == "add_remove" for c in m._counters)
    assert m.privacy.neighbouring == "add_remove" and m.privacy.epsilon == EPS
    with pytest.raises(InvalidInputError, match="release must be private under replace_one"):
        PrivacyBudget(10.0, 1e-5).spend(m)


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("key", ["neighbouring", "bound", "noise_multiplier"])
def test_counter_options_cannot_override_what_the_calibration_sets(name, key):
    value = {"neighbouring": "add_remove", "bound": 0.5, "noise_multiplier": 0.1}[key]
    with pytest.raises(InvalidInputError, match="counter_options must not set"):
        LEARNERS[name](counter_options={key: value})


def test_paper_events_are_the_trees_own_and_give_the_real_epsilon():
    T_paper = 1024
    m = PrivateQuadraticFTL(3, horizon=T_paper, epsilon=EPS, delta=DELTA,
                            calibration="paper", seed=0)
    events = m.privacy_events()
    assert [e.name for e in events] == ["BinaryTreeCounter"] * 2
    # JKT's PrivateSum sigma at (eps/2, delta/2) for bounds R^2 and R (R = 1), against the
    # real sensitivities sqrt(2) and 2 in K = 11 nodes: mu^2 adds over the two trees
    sigma = [jkt_private_sum_sigma(EPS / 2, DELTA / 2, T_paper, 1.0)] * 2
    assert [c.noise_scale for c in m._counters] == pytest.approx(sigma, rel=1e-12)
    mu2 = 11 * (2.0 / sigma[0] ** 2 + 4.0 / sigma[1] ** 2)
    assert m.privacy.epsilon == pytest.approx(gaussian_epsilon(1 / math.sqrt(mu2), DELTA),
                                              rel=1e-9)
    assert all(isinstance(e.event, dp_accounting.GaussianDpEvent) for e in events)


@pytest.mark.parametrize("x_bound, y_bound", [(0.8, 2.0), (1.0, 0.5), (0.05, 300.0)])
def test_pqftl_rescales_labels_to_the_row_bound(x_bound, y_bound):
    # |y| <= Y apart from ||x|| <= R: the labels enter the u counter times R / Y, so its
    # elements (R / Y) y x have norm R^2 and one sigma of both counters is
    # s(R, R) sqrt(levels) / mu*, whatever Y; the released w is in the labels' units.
    # s(R, Y) on the raw labels charged V's entries with noise of the labels' scale (2 R Y
    # at Y^2 > 2 R^2: 0.05 and 300 gave V noise 30 where 0.0053 now does)
    m = LEARNERS["pqftl"](bound=x_bound, y_bound=y_bound)
    cq, cu = m._counters
    assert cq.bound == pytest.approx(x_bound**2) and cu.bound == pytest.approx(x_bound**2)
    s = outer_product_sensitivity(x_bound, x_bound, "replace_one") * math.sqrt(cq.levels)
    assert cq.noise_scale == pytest.approx(s / mu_star(EPS, DELTA), rel=1e-12)
    assert cu.noise_scale == pytest.approx(cq.noise_scale, rel=1e-15)
    assert m.privacy.epsilon == EPS and m.element_bounds == (x_bound, x_bound)
    # the printed noise: JKT's one R bounds ||x|| and the rescaled labels alike
    paper = LEARNERS["pqftl"](bound=x_bound, y_bound=y_bound, calibration="paper")
    assert [c.noise_scale for c in paper._counters] == pytest.approx(
        [jkt_private_sum_sigma(EPS / 2, DELTA / 2, T, b) for b in (x_bound**2, x_bound)],
        rel=1e-12)


@pytest.mark.parametrize("y_bound", [0.5, 1.0, 300.0])
def test_pqftl_is_equivariant_in_the_label_scale(y_bound):
    # ridge, noise ridge and ball scale with the labels: labels times c (and y_bound times
    # c) give weights times c, from the same noise draws
    rng = np.random.default_rng(5)
    X = rng.normal(size=(T, 2)) / 3.0
    y = np.clip(X @ [0.5, -0.4] + 0.1 * rng.normal(size=T), -1.0, 1.0)
    base = LEARNERS["pqftl"](bound=1.0, y_bound=1.0, noise_ridge=True)
    scaled = LEARNERS["pqftl"](bound=1.0, y_bound=y_bound, noise_ridge=True)
    np.testing.assert_allclose(scaled.run(X, y * y_bound).weights,
                               base.run(X, y).weights * y_bound, rtol=1e-9, atol=1e-12)
