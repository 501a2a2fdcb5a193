"""``dpol audit``: an empirical DP audit of a counter or learner configuration (layer L5).

The command-line face of :mod:`dpol.evaluation.audit`. ``noise_factor`` below 1 builds an
under-noised twin that still claims the original guarantee, to show that the audit can
fail.
"""

from __future__ import annotations

import warnings

from dpol._validation import check_int, check_real, fail
from dpol.accounting.closed_forms import check_epsilon
from dpol.adapters.registry import make_learner
from dpol.counters import WindowTreeCounter, make_counter, resolve_counter
from dpol.errors import NonPrivateWarning
from dpol.evaluation import AuditResult, audit_counter, audit_learner

__all__ = ["audit_configuration"]


def audit_configuration(*, counter: str | None = None, learner: str | None = None,
                        epsilon: float = 1.0, delta: float = 1e-5, horizon: int = 8,
                        dim: int = 1, runs: int = 20_000, noise_factor: float = 1.0,
                        window: int | None = None, seed: int = 0) -> AuditResult:
    """Audit ``counter`` (a registry name) or ``learner`` (a :mod:`dpol.adapters` name).

    ``runs`` per stream (half fit the test statistic, half are held out). ``noise_factor``
    multiplies a counter's calibrated noise multiplier while the audit tests the original
    claim (1 = the real counter). ``window``: W of the window counter (default T); under
    window DP only the releases that protect the differing element are audited.

    Examples
    --------
    >>> r = audit_configuration(counter="binary_tree", runs=4000, seed=0)
    >>> r.passed, r.claimed_epsilon
    (True, 1.0)
    """
    if (counter is None) == (learner is None):
        raise fail("counter / learner", "be given exactly one of the two", (counter, learner))
    epsilon = check_epsilon(epsilon, allow_inf=False)
    horizon = check_int("horizon", horizon, low=1)
    runs = check_int("runs", runs, low=20)
    noise_factor = check_real("noise_factor", noise_factor, low=0.0, low_open=True)
    if learner is not None:
        if noise_factor != 1.0:
            raise fail("noise_factor", "be 1 for a learner (under-noised twins are built for "
                       "counters)", noise_factor)
        return audit_learner(
            lambda s: make_learner(learner, dim, horizon=horizon, epsilon=epsilon,
                                   delta=delta, seed=s),
            n_runs=runs, seed=seed)
    options = {}
    if resolve_counter(counter) is WindowTreeCounter:
        options["window"] = horizon if window is None else window
    elif window is not None:
        raise fail("window", "be given only for the window counter", window)
    real = make_counter(counter, horizon, dim, epsilon=epsilon, delta=delta, **options)
    if noise_factor == 1.0:
        return audit_counter(real, n_runs=runs, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        z = real.noise_scale / real.sensitivity  # Gaussian: std = z * encoder sensitivity
        twin = make_counter(counter, horizon, dim, delta=delta,
                            noise_multiplier=z * noise_factor, **options)
    return audit_counter(twin, n_runs=runs, claimed=real.privacy, seed=seed)
