"""The private trivial model, the baseline of ``benchmarks/utility.py``'s T1.

No private learner knows a stream's majority class (or its mean label) before it has paid
to learn it: predicting it from the first row, without noise, is a target no private
method meets on small streams at small epsilon (docs/benchmarks/trivial_fallback.md: the
class prior alone, on the whole budget, misses it). T1 therefore compares the default
learner with the trivial model *learned privately on the whole budget* at the same
epsilon and delta:

* classification (two or K classes): the class prior released once per block of the
  doubling schedule, as the trivial fallback releases it
  (:class:`~dpol.learners.trivial_fallback.WithTrivialFallback` with a gate that never
  opens, on the learner's placeholder that never predicts): each stream row is predicted
  by the prior released before it, the held-out rows by the final prior;
* regression: the labels' mean released once on the whole budget
  (:func:`~dpol.datasets.private_label_mean.private_label_mean`, the mechanism of
  ``OnlineRegressor``'s centre), predicting every row.

The non-private trivial model (the majority class, or the mean) stays in the tables beside
it. Both are seeded like the learners (``seed``).

It is cheap (no learner), so it runs on ``BASELINE_SEEDS`` seeds, and T1 reads two fixed
figures off them: its mean, and its **expected worst of k seeds** (k: the learner's seeds;
:func:`expected_worst`). The bar before, its own worst of the same k seeds 0..k-1, moved
with that model's luck (on a small stream its sign is wrong in some seeds, not in
others); the expected worst is the same bar in expectation, without that draw.
``CHECK_GROUPS`` further groups of k seeds are judged as if they were a learner, against
both bars: how often T1 fails a method exactly as good as its baseline (the report
prints both counts).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from _utility_data import DataSet
from _utility_dpol import delta_for

from dpol.accounting.closed_forms import mu_star
from dpol.datasets.private_label_mean import private_label_mean
from dpol.errors import NonPrivateWarning
from dpol.learners import PrivateQuadraticFTL
from dpol.learners.trivial_fallback import WithTrivialFallback

__all__ = ["BASELINE_SEEDS", "CHECK_GROUPS", "chance_as_bad", "chance_passes", "expected_worst",
           "run_private_trivial", "t1_holds"]

#: seeds of the private trivial model behind T1's baseline (its mean, its expected worst)
BASELINE_SEEDS = 100
#: groups of k seeds after ``BASELINE_SEEDS`` on which the private trivial model is judged
#: by T1 against its own baseline: T1's false alarms on a method as good as the baseline
CHECK_GROUPS = 4


def expected_worst(losses: object, k: int) -> float:
    """The expected largest of ``k`` losses drawn with replacement from ``losses`` (the
    seeds' losses of one method): a method's expected worst of k seeds.

    >>> expected_worst([0.0, 1.0], 1), expected_worst([0.0, 1.0], 2)
    (0.5, 0.75)
    """
    v = np.sort(np.asarray(losses, dtype=float))
    share = np.arange(1, v.size + 1) / v.size
    # P(the largest of k draws is the i-th smallest) = (i/n)^k - ((i-1)/n)^k
    return float(np.dot(share ** k - (share - 1.0 / v.size) ** k, v))


def chance_as_bad(losses: object, k: int, worst: float) -> float:
    """How often the largest of ``k`` losses drawn with replacement from ``losses`` is at
    least ``worst``: how often a method exactly as good as the one that drew ``losses``
    looks this bad in its worst of k seeds.

    >>> chance_as_bad([0.0, 1.0], 2, 1.0), chance_as_bad([0.0, 1.0], 2, 2.0)
    (0.75, 0.0)
    """
    v = np.asarray(losses, dtype=float)
    return float(1.0 - np.mean(v < worst) ** k)


def chance_passes(losses: object, k: int, base_mean: float, base_worst: float,
                  tolerance: float, draws: int = 20_000) -> float:
    """How often ``k`` losses drawn with replacement from ``losses`` (one method's seeds)
    pass T1 (:func:`t1_holds`): the method's chance to pass with k seeds, read off more
    seeds than k. Monte Carlo over ``draws`` fixed draws (std at most 0.5 / sqrt(draws),
    0.0035).

    >>> round(chance_passes([0.0, 1.0], 2, 0.5, 0.5, 0.0), 2)  # both draws must be 0.0
    0.25
    """
    v = np.asarray(losses, dtype=float)
    picks = v[np.random.default_rng(0).integers(0, v.size, size=(draws, k))]
    return float(np.mean(_held(picks.mean(axis=1), picks.max(axis=1), base_mean,
                               base_worst, tolerance)))


def t1_holds(mean: float, worst: float, base_mean: float, base_worst: float,
             tolerance: float) -> bool:
    """T1 on losses: the mean over seeds and the worst seed at most the baseline's mean and
    worst (for the private trivial model: its expected worst) plus the tolerance."""
    return bool(_held(mean, worst, base_mean, base_worst, tolerance))


def _held(mean: object, worst: object, base_mean: float, base_worst: float,
          tolerance: float) -> np.ndarray:
    """T1's rule, element-wise over arrays of (mean, worst) losses."""
    return (np.asarray(mean) <= base_mean + tolerance) & (
        np.asarray(worst) <= base_worst + tolerance)


def _prior_alone(dim: int, horizon: int, outputs: int, z: float,
                 seed: int) -> WithTrivialFallback:
    """The block prior of multiplier ``z``, whose gate never opens and whose coin-flip
    rule is off: the learner inside never predicts (a noiseless placeholder)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        # its model is never used: solve it rarely (one solve per doubling of t)
        placeholder = PrivateQuadraticFTL(dim, horizon=horizon, epsilon=math.inf,
                                          outputs=outputs, solves_per_doubling=1)
    # gate_from=0: every block releases the prior at z (the gate's placeholder multiplier
    # must not lend the first blocks its budget)
    return WithTrivialFallback(placeholder, prior_multiplier=z, gate_multiplier=1.0,
                               threshold=1e300, significance=0.0, seed=seed, gate_from=0)


def run_private_trivial(ds: DataSet, epsilon: float, seed: int,
                        share: float = 1.0) -> dict[str, np.ndarray]:
    """Prequential and held-out predictions of the private trivial model at ``epsilon``
    (delta as the learners'; ``share``: on that share of the Gaussian budget's mu^2), in
    the units ``_utility_baselines.score`` reads."""
    n = len(ds.y_train)
    # one Gaussian mechanism, the whole budget (or its share)
    z = 1.0 / (mu_star(epsilon, delta_for(n)) * math.sqrt(share))
    if ds.task == "regression":
        mean = private_label_mean(ds.y_train, bound=1.0, noise_multiplier=z, seed=seed).value
        return {"prequential": np.full(n, mean), "held_out": np.full(len(ds.y_test), mean)}
    k = ds.n_classes if ds.task == "multiclass" else 1
    y = np.eye(k)[ds.y_train.astype(int)] if k > 1 else ds.y_train
    prior = _prior_alone(1, n, k, z, seed)  # the prior never reads x: one zero column
    stream = np.asarray(prior.run(np.zeros((n, 1)), y).model_predictions, dtype=float)
    held = prior.predict_rows(np.zeros((len(ds.y_test), 1)))
    if k > 1:  # class indices
        return {"prequential": np.argmax(stream, axis=1).astype(float),
                "held_out": np.argmax(held, axis=1).astype(float)}
    return {"prequential": stream, "held_out": held}
