"""The noise multiplier of a learner's counter, from the one calibrator.

A learner that runs one counter sizes it here and builds it with ``noise_multiplier=``:
the counter's event at multiplier z (relative to its own sensitivity, whatever its
structure) is what :func:`dpol.accounting.calibrate` sizes, so no counter is built, and
none calibrates itself, to learn its noise.
"""

from __future__ import annotations

from dpol.accounting.calibrate import calibrate
from dpol.accounting.events import MechanismEvent
from dpol.noise.kinds import KINDS

__all__ = ["counter_multiplier", "gradient_element_sensitivity"]

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
        kind = KINDS[noise]  # the table of noise kinds: their events and pure epsilons
        return [MechanismEvent(kind.dp_event(z), neighbouring,
                               pure_epsilon=kind.pure_epsilon(z))]
    return calibrate(events_of, epsilon, delta)


def gradient_element_sensitivity(data: object, domain: object, neighbouring: str,
                                 lipschitz: float) -> float | None:
    """A counter's ``element_sensitivity`` for data gradients at a public iterate.

    The loss's exact change of one data gradient (``gradient_sensitivity``: 1.100 instead
    of 2 L = 1.462 for the logistic loss on the unit ball) when it is below the counter's
    default (2 L under replace-one, L under add/remove, ``bound=L``); else None, the default.

    Examples
    --------
    >>> from dpol.losses import LogisticLoss
    >>> from dpol.sets import L2Ball
    >>> loss, ball = LogisticLoss(), L2Ball(3)
    >>> round(gradient_element_sensitivity(loss, ball, "replace_one", loss.lipschitz(ball)), 3)
    1.1
    """
    exact = data.gradient_sensitivity(domain, neighbouring)
    default = (2.0 if neighbouring == "replace_one" else 1.0) * lipschitz
    return exact if 0.0 < exact < default else None
