"""The trivial fallback's calibration: the multipliers of its blocks (the idle ones on
the whole budget) and the Gaussian mu it reads off the learner's events."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from fallback_cases import inner as _inner
from fallback_cases import stream as _stream

from dpol.accounting.closed_forms import mu_star
from dpol.accounting.events import MechanismEvent, gaussian_mu
from dpol.learners.trivial_fallback import WithTrivialFallback, fallback_budget


def test_the_idle_blocks_release_the_prior_alone_on_the_whole_budget():
    # 40 rows, learner_from 7: blocks of 1, 2, 4 rows end by row 7 and release the label
    # sum alone at z_idle, 1 / z_idle^2 = 1 / z_prior^2 + 1 / z_gate^2 + mu_learner^2,
    # the mu^2 a later row spends on the three mechanisms together: the stated events
    # bound every row. 400 wrappers give 1,200 idle residuals; their mean square over
    # the stated variance has std sqrt(2 / 1200) = 0.041 about 1, so the right scale lies
    # within 0.16 (4 of them) of 1 while 2/3 or 3/2 of it (ratios 2.25, 0.44) does not,
    # nor does the gate-skipping blocks' z_early (the learner's mu left out).
    z_prior, z_gate, rest = fallback_budget(1.0, 1e-5)
    X, y = _stream(n=40)
    idle = []
    for seed in range(400):
        m = WithTrivialFallback(_inner(horizon=40, epsilon=rest, seed=seed),
                                prior_multiplier=z_prior, gate_multiplier=z_gate,
                                seed=30_000 + seed, learner_from=7)
        m.run(X, y)
        start = 0
        for n, labels, errors in m.releases_:
            if start + n <= 7:
                idle.append(labels - y[start:start + n].sum())
                assert np.isnan(errors)
            start += n
    mu_learner = gaussian_mu(m.learner.privacy_events())
    z_idle = 1.0 / math.sqrt(z_prior ** -2 + z_gate ** -2 + mu_learner ** 2)
    assert m.idle_multiplier == pytest.approx(z_idle)
    # the whole budget: z_idle is 1 / mu*, the target's own Gaussian
    assert z_idle == pytest.approx(1.0 / mu_star(1.0, 1e-5), rel=1e-6)
    ratio = float(np.mean(np.square(idle))) / (2.0 * z_idle) ** 2
    assert abs(ratio - 1.0) < 0.16
    for wrong in (2 / 3, 3 / 2, m.early_multiplier / z_idle):
        assert abs(ratio / wrong**2 - 1.0) > 0.16
    # the stated events (learner, prior, gate) compose to the target the budget was split
    # from, which the idle blocks' z = 1 / mu* spends alone
    assert m.privacy.epsilon == pytest.approx(1.0, rel=1e-6)
    assert len(m.privacy_events()) == len(m.learner.privacy_events()) + 2


def test_without_a_gaussian_learner_the_idle_blocks_keep_the_early_scale():
    # a learner whose events are not all Gaussian gives no mu to add: the idle blocks
    # then spend the prior's and the gate's mu^2 alone (less than a row may spend)
    m = WithTrivialFallback(_inner(horizon=40, seed=0), prior_multiplier=2.0, gate_multiplier=3.0,
                            seed=0, learner_from=7)
    m.learner.privacy_events = lambda: (MechanismEvent(dp_accounting.ZCDpEvent(0.1)),)
    assert m.idle_multiplier == pytest.approx(m.early_multiplier)
    assert m.early_multiplier == pytest.approx(1.0 / math.sqrt(2.0 ** -2 + 3.0 ** -2))


def test_gaussian_mu_reads_only_gaussian_events():
    gauss = MechanismEvent(dp_accounting.GaussianDpEvent(2.0))
    assert gaussian_mu([gauss, gauss]) == pytest.approx(math.sqrt(0.5))
    assert gaussian_mu([gauss, MechanismEvent(dp_accounting.NonPrivateDpEvent())]) \
        == math.inf
    assert gaussian_mu([gauss, MechanismEvent(dp_accounting.ZCDpEvent(0.1))]) is None
    assert gaussian_mu([]) == 0.0
