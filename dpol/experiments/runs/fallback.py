"""``dpol run --fallback``: the learner stage's trivial fallback, and how a run says it (L5).

A classification run with ``fallback`` builds its learner on the learner's share of the
budget inside :class:`~dpol.learners.trivial_fallback.WithTrivialFallback` (as
``OnlineClassifier(fallback=True)`` does, :mod:`dpol.adapters._fallback`): a private
class prior and a private gate on the prequential errors take 20% + 10% of the
Gaussian budget (of mu^2; 50% + 10% on a short two-class stream, 90% + 5% with a gate
that never opens on a very short one: :func:`~dpol.learners.trivial_fallback.fallback_plan`;
the learner starts after the first blocks, whose rows feed the prior alone on the whole
budget), and the final model predicts the prior unless the gate found the model's errors
privately below the prior's, or the prior's margin lies within a public std of the class
boundary (a coin flip); the ``predicts`` line names which rule chose. The run's
guarantee is the whole's (the wrapper's events are the learner's and its two Gaussian
mechanisms'); a checkpoint holds the wrapper whole (its open block's sums, its releases
and its noise generator), so a resumed run continues its blocks as an uninterrupted one
does. The non-private twin runs inside a noise-free fallback of its own: the same
predictor, without noise.
"""

from __future__ import annotations

from math import inf

from dpol.accounting.closed_forms import mu_star
from dpol.adapters._fallback import fallback_seed, with_fallback
from dpol.adapters.registry import make_learner
from dpol.learners._base import OnlineLearner
from dpol.learners.trivial_fallback import WithTrivialFallback

__all__ = ["fallback_rows", "inner_learner", "make_run_learner"]


def make_run_learner(request, dim: int, epsilon: float, calibration: str,
                     **build) -> OnlineLearner:
    """The run's learner (``make_learner`` of ``request.learner`` with ``build``'s
    keywords and the seed ``request.seed``) on ``epsilon``; with ``request.fallback``,
    on its share inside the fallback, whose noise has its own seed.

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request
    >>> request = run_request("ridge-classifier", "synthetic-classification",
    ...                       tempfile.mkdtemp(), fallback=True, seed=0)
    >>> m = make_run_learner(request, 3, 1.0, "tight", horizon=100, delta=None)
    >>> type(m).__name__, round(m.privacy.epsilon, 6), type(inner_learner(m)).__name__
    ('WithTrivialFallback', 1.0, 'PrivateQuadraticFTL')
    """
    return with_fallback(
        lambda share, seed: make_learner(request.learner, dim, seed=seed, epsilon=share,
                                         calibration=calibration, **build),
        fallback=request.fallback, epsilon=epsilon, delta=build.get("delta"),
        horizon=build["horizon"], seed=fallback_seed(request.seed), learner_seed=request.seed)


def inner_learner(model: OnlineLearner) -> OnlineLearner:
    """The learner a fallback runs (its comparator and "predict 0" are the learner's)."""
    return model.learner if isinstance(model, WithTrivialFallback) else model


def fallback_rows(model: OnlineLearner) -> dict:
    """The result row's ``fallback_split`` (the fallback's share of the budget, for the
    privacy line) and ``predicts`` (which model predicts after the stream); ``{}``
    without a fallback."""
    if not isinstance(model, WithTrivialFallback):
        return {}
    if model.prior_multiplier == 0.0:  # epsilon = inf
        split = "trivial fallback: class prior and gate without noise (epsilon = inf)"
    else:  # the shares of mu*^2 its multipliers hold (fallback_plan chose them)
        whole = model.privacy
        prior, gate = (1.0 / (z * mu_star(whole.epsilon, whole.delta)) ** 2
                       for z in (model.prior_multiplier, model.gate_multiplier))
        split = (f"trivial fallback: class prior and gate, Gaussian, {prior:.0%} + "
                 f"{gate:.0%} of the budget (of mu^2; noise multipliers "
                 f"{model.prior_multiplier:.4g} and {model.gate_multiplier:.4g}); learner "
                 f"epsilon = {model.learner.privacy.epsilon:.4g}; composed exactly")
        if model.learner_from:  # rows the learner never saw: said where the user looks
            split += (f"; the learner learns from row {model.learner_from + 1:,}, rows "
                      f"1-{model.learner_from:,} feed the class prior alone on the whole "
                      "budget")
    return {"fallback_split": split, "predicts": _predicts(model)}


def _predicts(model: WithTrivialFallback) -> str:
    """Which model predicts after the stream, and the public rule that chose it."""
    below = "privately below the class prior's" + (
        f" by {model.threshold:g} public std of the gate" if model.threshold else "")
    if model.gate_open:
        return f"the model (its prequential errors {below})"
    gate = "the gate never opens" if model.threshold == inf else \
        f"its prequential errors were not {below}"
    if model.uses_model:  # the coin-flip rule: the gate is closed
        return (f"the model (the class prior's margin lies within {model.significance:g} "
                f"public std of the class boundary; {gate})")
    if model.threshold == inf:
        return ("the class prior alone (the stream is too short for the gate to judge a "
                "model: fallback_plan)")
    return f"the class prior (the model's prequential errors were not {below})"
