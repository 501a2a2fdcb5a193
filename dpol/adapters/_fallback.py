"""The trivial fallback as the estimators and ``dpol run`` build it, in one place.

``fallback=True`` (:class:`~dpol.adapters.OnlineClassifier`,
:class:`~dpol.adapters.RiverClassifier`, ``dpol run --fallback``; the estimators'
default ``"auto"`` wherever the learner allows it) builds the learner on
its share of the budget and runs it inside
:class:`~dpol.learners.trivial_fallback.WithTrivialFallback`, whose prior and gate take
the rest (:func:`~dpol.learners.trivial_fallback.fallback_budget`): the guarantee each
of them reports is the whole's. Its Privacy section holds the derivation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpol._validation import fail
from dpol.accounting.closed_forms import resolve_delta
from dpol.learners._base import OnlineLearner
from dpol.learners._wrapper import LearnerWrapper
from dpol.learners.postprocess import label_bound
from dpol.learners.trivial_fallback import WithTrivialFallback, fallback_budget

__all__ = ["FALLBACK_TAG", "check_fallback", "fallback_seed", "tagged_seed", "with_fallback"]

#: mixed into an int seed's entropy for the fallback's noise: the learner seeded with
#: the int itself spawns its children (0,), (1,), ... of it, which a spawned child of
#: the int could repeat; another entropy gives an independent stream
FALLBACK_TAG = 0x66616C6C  # "fall"


def check_fallback(fallback: object) -> bool | str:
    """``fallback`` as a bool or ``"auto"``, or one clear error naming it."""
    if isinstance(fallback, str) and fallback == "auto":
        return "auto"
    if not isinstance(fallback, (bool, np.bool_)):
        raise fail("fallback", "be True, False or 'auto'", fallback)
    return bool(fallback)


def tagged_seed(seed: int | None, tag: int) -> np.random.SeedSequence | None:
    """A component's seed beside a learner seeded with the int ``seed`` itself, its
    stream told apart by ``tag`` (None: fresh OS entropy for both).

    >>> tagged_seed(None, FALLBACK_TAG) is None, tagged_seed(3, 7).entropy == (3, 7)
    (True, True)
    """
    return None if seed is None else np.random.SeedSequence((int(seed), tag))


def fallback_seed(seed: int | None) -> np.random.SeedSequence | None:
    """The fallback's seed beside a learner seeded with the int ``seed`` itself."""
    return tagged_seed(seed, FALLBACK_TAG)


def with_fallback(build: Callable[[float], OnlineLearner], *, fallback: bool | str,
                  epsilon: float, delta: float | None, horizon: int, seed: object,
                  link: str | None = None, offset: object = None,
                  shares: tuple[float, float] | None = None) -> OnlineLearner:
    """``build(epsilon)``; with ``fallback``, ``build`` of the learner's share inside
    :class:`WithTrivialFallback` (``seed``: its noise's) that states the whole's
    ``epsilon``. ``"auto"``: the fallback wherever it can wrap the learner (replace-one,
    Gaussian noise: ``WithTrivialFallback.refusal``), else the learner alone on the whole
    budget. ``link`` (default: ``"rate"`` for a least-squares learner, else
    ``"logit"``) is the prior's margin; ``offset`` the labels' public centre b, for a
    learner fitting y - b (its gate judges the classes of y and of m + b); ``shares``:
    the prior's and the gate's (default ``PRIOR_SHARE``, ``GATE_SHARE``).

    Examples
    --------
    >>> from dpol.adapters.registry import make_learner
    >>> build = lambda e: make_learner("ridge-classifier", 2, horizon=100, epsilon=e, seed=0)
    >>> m = with_fallback(build, fallback=True, epsilon=1.0, delta=None, horizon=100, seed=1)
    >>> type(m).__name__, m.link, round(m.privacy.epsilon, 6), round(m.learner.epsilon, 3)
    ('WithTrivialFallback', 'rate', 1.0, 0.822)
    """
    fallback = check_fallback(fallback)
    if not fallback:
        return build(epsilon)
    z_prior, z_gate, rest = fallback_budget(epsilon, resolve_delta(delta, horizon),
                                            *(shares or ()))
    learner = build(rest)
    if fallback == "auto" and WithTrivialFallback.refusal(learner) is not None:
        return build(epsilon)  # built again: the whole budget, the same seed
    if link is None:
        base = learner.base if isinstance(learner, LearnerWrapper) else learner
        link = "rate" if label_bound(base) is not None else "logit"
    # epsilon = inf: no noise anywhere, and the guarantee is the learner's (infinite)
    return WithTrivialFallback(learner, prior_multiplier=z_prior, gate_multiplier=z_gate,
                               link=link, seed=seed, offset=offset,
                               epsilon=None if math.isinf(epsilon) else epsilon)
