"""What a learner's counter is told besides its noise: the element sensitivity of a
data gradient.

A learner that runs one counter sizes its noise by the one route, before any counter is
built: ``calibrate(noise_events(kind, neighbouring), epsilon, delta)``
(:func:`dpol.accounting.calibrate`, :func:`dpol.accounting.noise_events`), the counter's
event at multiplier z relative to its own sensitivity, whatever its structure; the
counter is then built with ``noise_multiplier=z``.
"""

from __future__ import annotations

__all__ = ["gradient_element_sensitivity"]

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
