"""The noise multiplier of a learner's counter, from the one calibrator.

A learner that runs one counter sizes it here and builds it with ``noise_multiplier=``:
the counter's event at multiplier z (relative to its own sensitivity, whatever its
structure) is what :func:`dpol.accounting.calibrate` sizes, so no counter is built, and
none calibrates itself, to learn its noise.
"""

from __future__ import annotations

import dp_accounting

from dpol.accounting.calibrate import calibrate
from dpol.accounting.events import MechanismEvent

__all__ = ["counter_multiplier"]

#: a counter's event at noise multiplier z, by noise kind (``Counter.privacy_events``):
#: (dp-accounting event, pure epsilon or None). Gaussian and Laplace as dp-accounting
#: states them; the l2 Gamma mechanism (WDP) is pure at 1/z and unsupported by the
#: accountants; the discrete Gaussian is 1/(2 z^2)-zCDP (CKS 2020, Theorem 14) and the
#: discrete Laplace pure at 1/z (its zCDP event is what RDP accountants read).
_EVENTS = {
    "gaussian": lambda z: (dp_accounting.GaussianDpEvent(z), None),
    "laplace": lambda z: (dp_accounting.LaplaceDpEvent(z), None),
    "gamma": lambda z: (dp_accounting.UnsupportedDpEvent(), 1.0 / z),
    "secure": lambda z: (dp_accounting.ZCDpEvent(0.5 / z**2), None),
    "secure_laplace": lambda z: (dp_accounting.ZCDpEvent(0.5 / z**2), 1.0 / z),
}


def counter_multiplier(noise: str, neighbouring: str, epsilon: float, delta: float) -> float:
    """Smallest noise multiplier of a counter with ``noise`` that is (epsilon, delta)-DP.

    The same multiplier as the counter's own tight calibration (the closed forms of
    :mod:`dpol.accounting.calibrate`: z*(epsilon, delta) for Gaussian noise, its zCDP
    twin for secure noise, 1/epsilon for pure noise); 0.0 at ``epsilon=inf``.

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> z = counter_multiplier("gaussian", "replace_one", 1.0, 1e-5)
    >>> z == BinaryTreeCounter(8, epsilon=1.0, delta=1e-5).dp_event().noise_multiplier
    True
    >>> counter_multiplier("laplace", "replace_one", 0.5, 0.0)
    2.0
    """
    def events_of(z: float) -> list[MechanismEvent]:
        event, pure = _EVENTS[noise](z)
        return [MechanismEvent(event, neighbouring, pure_epsilon=pure)]
    return calibrate(events_of, epsilon, delta)
