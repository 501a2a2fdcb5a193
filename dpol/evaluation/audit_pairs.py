"""Neighbouring pairs that attain a learner's declared sensitivity, and under-noised twins.

An audit sees only what its pair shows: a pair attaining an eighth of the calibrated
sensitivity hides an under-noised learner. :func:`worst_case_learner_streams` builds the
pair attaining each learner's Privacy bound, :func:`sensitivity_attainment` measures on
noiseless runs what a pair attains (the counters' stacked element against their element
sensitivity; output perturbation's clean iterates against ``sensitivity(t)``; kernel
regression's transcript against its mu; a bandit's batch sums), and :func:`under_noised`
builds the twin with a fraction of the noise that an audit should flag.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpol._validation import check_real, fail
from dpol.counters import Counter
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning
from dpol.evaluation._kernel_pair import kernel_pair_points
from dpol.evaluation.audit import _check_position
from dpol.learners import (
    OutputPerturbation,
    PrivateFTAL,
    PrivateGIGA,
    PrivateIncrementalERM,
    PrivateIncrementalRegression,
    PrivateKernelRegression,
    PrivateOfflineLearner,
    PrivateQuadraticFTL,
    ProjectedIncrementalRegression,
)
from dpol.learners._bandit import BanditFrankWolfeBase
from dpol.learners._joint_counters import outer_product_sensitivity
from dpol.learners._kernel_sensitivity import transcript_mu

__all__ = [
    "Attainment",
    "first_data_position",
    "sensitivity_attainment",
    "under_noised",
    "worst_case_bandit_losses",
    "worst_case_learner_streams",
]


# ---------------------------------------------------------------------------- twins
def _counter_slots(learner: object) -> list[tuple[str, object]]:
    """(attribute, Counter or tuple of Counters) of every counter the learner holds."""
    out = []
    for name, value in getattr(learner, "__dict__", {}).items():
        if isinstance(value, Counter) or (isinstance(value, tuple) and value and all(
                isinstance(v, Counter) for v in value)):
            out.append((name, value))
    return out


def _scaled_counter(counter: Counter, factor: float) -> Counter:
    """A fresh copy of ``counter`` (same parameters) with ``factor`` times its noise."""
    params = {**counter.get_state()["params"], "epsilon": None, "calibration": "tight"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        warnings.simplefilter("ignore", PaperCalibrationWarning)
        # the noise scale is the noise multiplier times a reference fixed by the structure
        # and the sensitivity: read the reference off a multiplier of one (unseeded)
        unit = type(counter)(**{**params, "noise_multiplier": 1.0}).noise_scale
        params["seed"] = counter.seed
        z = factor * counter.noise_scale / unit
        twin = type(counter)(**{**params, "noise_multiplier": z})
    if not math.isclose(twin.noise_scale, factor * counter.noise_scale, rel_tol=1e-9,
                        abs_tol=1e-300):
        raise RuntimeError(f"could not scale the noise of {type(counter).__name__}")
    return twin


def under_noised(learner: object, factor: float) -> object:
    """Scale every noise of a fresh ``learner`` by ``factor`` in place; returns the learner.

    Every counter is rebuilt with ``factor`` times its noise multiplier (same seed), and
    learners adding their own noise scale their stds; ``factor=0`` is the noiseless run.
    The twin's ``privacy`` need not follow: audit it against the original's claim.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> real = PrivateQuadraticFTL(2, horizon=8, epsilon=1.0, delta=1e-5, seed=0)
    >>> twin = under_noised(PrivateQuadraticFTL(2, horizon=8, epsilon=1.0, delta=1e-5,
    ...                                         seed=0), 0.5)
    >>> [round(t.noise_scale / r.noise_scale, 12) for t, r in zip(twin._counters,
    ...                                                           real._counters)]
    [0.5, 0.5]
    """
    factor = check_real("factor", factor, low=0.0)
    if getattr(learner, "t", 0) != 0:
        raise fail("learner", "be fresh (no step taken) to be under-noised", learner)
    changed = False
    for name, value in _counter_slots(learner):
        if isinstance(value, Counter):
            setattr(learner, name, _scaled_counter(value, factor))
        else:
            setattr(learner, name, tuple(_scaled_counter(c, factor) for c in value))
        changed = True
    # learners that calibrate their own noise: the per-release stds (scales) they draw with
    if isinstance(learner, OutputPerturbation):
        learner._stds = learner._stds * factor
        changed = True
    elif isinstance(learner, PrivateOfflineLearner):
        learner.beta *= factor
        changed = True
    elif isinstance(learner, PrivateKernelRegression):
        learner._scales = learner._scales * factor
        changed = True
    elif isinstance(learner, PrivateIncrementalERM):
        learner._scales = [s * factor for s in learner._scales]
        changed = True
    if not changed:
        raise fail("learner", "be a dpol learner with a counter or its own noise", learner)
    return learner


# ---------------------------------------------------------------------------- pairs
def first_data_position(learner: object) -> int:
    """The first element the learner's releases depend on (GIGA skips its warm-up).

    Examples
    --------
    >>> from dpol.learners import PrivateGIGA
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> m = PrivateGIGA(2, loss=Regularized(SquaredLoss(), 1.0), domain=L2Ball(2),
    ...                 horizon=20, epsilon=1.0, delta=1e-5)
    >>> first_data_position(m)  # steps t < t_q = 9 ignore their element
    8
    """
    if isinstance(learner, PrivateGIGA):
        return min(learner.warmup, learner.horizon) - 1
    return 0


def _orthonormal_pair(dim: int, avoid: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Two orthonormal vectors orthogonal to ``avoid`` (when given and nonzero), by
    Gram-Schmidt on the coordinate axes; the second is 0 when none is left."""
    fixed = [] if avoid is None or not np.any(avoid) else [avoid / np.linalg.norm(avoid)]
    found: list[np.ndarray] = []
    for e in np.eye(dim):
        v = e - sum(((e @ b) * b for b in fixed + found), np.zeros(dim))
        if np.linalg.norm(v) > 1e-9:
            found.append(v / np.linalg.norm(v))
    found = found or [np.eye(dim)[0]]  # one dimension: nothing is orthogonal to avoid
    return found[0], found[1] if len(found) > 1 else np.zeros(dim)


def worst_case_learner_streams(learner: object, *, position: int | None = None
                               ) -> tuple[tuple, tuple]:
    """Neighbouring streams ``((X_a, y_a), (X_b, y_b))`` attaining the declared sensitivity.

    Every row but ``position`` (default :func:`first_data_position`) is the null element
    (x = 0, y = 0: nothing enters a counter), so the change there is all the pair shows.
    At ``position``, ||x|| = ``x_bound`` and the labels are ``+y_bound`` against
    ``-y_bound`` (add/remove: against the null element), with x orthogonal to the first
    iterate for FTAL and online Frank-Wolfe (a 2 L gradient change), x' with <x, x'> =
    Y^2 / 2 on the other side for learners summing x x^T and y x (attains
    :func:`outer_product_sensitivity`), the pair of :mod:`dpol.evaluation._kernel_pair`
    for kernel regression (Delta_t(0) exactly), and the same x elsewhere.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> m = PrivateQuadraticFTL(2, horizon=3, epsilon=1.0, delta=1e-5, seed=0)
    >>> (Xa, ya), (Xb, yb) = worst_case_learner_streams(m)
    >>> Xa[0], Xb[0].round(4), ya, yb
    (array([1., 0.]), array([0.5  , 0.866]), array([1., 0., 0.]), array([-1.,  0.,  0.]))
    """
    T, d = learner.horizon, learner.dim
    position = first_data_position(learner) if position is None else _check_position(
        position, T)
    X_bound, Y_bound = learner.x_bound, learner.y_bound
    Xa, Xb = np.zeros((T, d)), np.zeros((T, d))
    ya, yb = np.zeros(T), np.zeros(T)
    ya[position] = Y_bound
    replace = learner.neighbouring == "replace_one"
    if isinstance(learner, PrivateFTAL):
        u, _ = _orthonormal_pair(d, learner.weights)
        Xa[position] = X_bound * u
        Xb[position] = Xa[position]
    elif isinstance(learner, (PrivateQuadraticFTL, PrivateIncrementalRegression)):
        # labels +-Y_bound are +-element_bounds[1] in the counters' units
        Xa[position], Xb[position] = _outer_product_pair(learner, *learner.element_bounds)
    elif isinstance(learner, PrivateKernelRegression):
        p, q = kernel_pair_points(learner)
        Xa[:], Xa[position] = q, p
        Xb[:] = Xa
    else:
        Xa[position, 0] = X_bound
        Xb[position] = Xa[position]
    if replace:
        yb[position] = -Y_bound
    else:
        Xb[position] = 0.0
    return (Xa, ya), (Xb, yb)


def worst_case_bandit_losses(learner: object, *, position: int = 0) -> tuple[tuple, tuple]:
    """Neighbouring linear loss sequences ``((C_a, b_a), (C_b, b_b))`` for a bandit learner.

    For :meth:`run_linear` (f_t(x) = <C[t], x> + b[t]): zero losses but at ``position``,
    the constant ``+B`` against ``-B`` (add/remove: 0), B = ``learner.loss_bound``; the
    batch sums then differ by exactly the ``element_sensitivity`` 2 (n/zeta) B.

    Examples
    --------
    >>> from dpol.learners import BanditFrankWolfe
    >>> from dpol.sets import Box
    >>> m = BanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=5, loss_bound=2.0, seed=0)
    >>> (Ca, ba), (Cb, bb) = worst_case_bandit_losses(m, position=1)
    >>> Ca.shape, ba, bb, bool(np.all(Ca == Cb) and not Ca.any())
    ((5, 2), array([0., 2., 0., 0., 0.]), array([ 0., -2.,  0.,  0.,  0.]), True)
    """
    position = _check_position(position, learner.horizon)
    C = np.zeros((learner.horizon, learner.dim))
    b_a, b_b = np.zeros(learner.horizon), np.zeros(learner.horizon)
    b_a[position] = learner.loss_bound
    b_b[position] = -learner.loss_bound if learner.neighbouring == "replace_one" else 0.0
    return (C, b_a), (C.copy(), b_b)


def _outer_product_pair(learner: object, X: float, Y: float) -> tuple[np.ndarray, np.ndarray]:
    """x, x' of norm X whose (projected) features have <u, u'> = min(Y^2 / 2, X^2)."""
    cos = min(Y * Y / (2.0 * X * X), 1.0)  # outer_product_sensitivity's maximiser
    if isinstance(learner, ProjectedIncrementalRegression):
        # u = ||x|| Phi x / ||Phi x||: aim the features, then take preimages through Phi^+
        e1, e2 = _orthonormal_pair(learner.feature_dim, None)
        targets = [e1, cos * e1 + math.sqrt(1.0 - cos * cos) * e2]
        if not np.any(e2):
            targets[1] = e1
        pre = [learner._pinv @ t for t in targets]
        return tuple(X * p / np.linalg.norm(p) for p in pre)
    e1, e2 = _orthonormal_pair(learner.dim, None)
    other = cos * e1 + math.sqrt(1.0 - cos * cos) * e2 if np.any(e2) else e1
    return X * e1, X * other


# ---------------------------------------------------------------------------- attainment
@dataclass(frozen=True)
class Attainment:
    """How much of the declared sensitivity a neighbouring pair attains, output by output.

    ``declared[i]``, ``attained[i]``: bound and measured change of noise-free output i
    (``what`` names them); ``transcript``: the pair's share of a transcript-calibrated mu.

    Examples
    --------
    >>> a = Attainment(np.array([2.0, 1.0]), np.array([1.0, 1.0]), "release t")
    >>> a.ratio.tolist(), a.best
    ([0.5, 1.0], 1.0)
    """

    declared: np.ndarray
    attained: np.ndarray
    what: str
    transcript: float | None = None

    @property
    def ratio(self) -> np.ndarray:
        """attained / declared, output by output."""
        return self.attained / self.declared

    @property
    def best(self) -> float:
        """The largest ratio (1 when the pair attains the bound somewhere)."""
        return float(np.max(self.ratio))


def _stacked_sum(learner: object) -> np.ndarray:
    """Every counter's exact running sum, stacked (svec is an isometry: norms agree)."""
    counters = []
    for _, value in _counter_slots(learner):
        counters.extend([value] if isinstance(value, Counter) else value)
    return np.concatenate([c.get_state()["sum"] for c in counters])


def _declared_element(learner: object) -> float:
    if isinstance(learner, (PrivateQuadraticFTL, PrivateIncrementalRegression)):
        return outer_product_sensitivity(*learner.element_bounds, learner.neighbouring)
    return float(learner._counter.node_sensitivity)


def sensitivity_attainment(factory: Callable, *, streams: tuple | None = None,
                           position: int | None = None, seed: int = 0) -> Attainment:
    """Declared against attained sensitivity on noiseless runs of ``factory(seed)``.

    Both streams (default :func:`worst_case_learner_streams`) run through the noiseless
    twin (:func:`under_noised`, factor 0, same seed). Counter-based learners: the change
    of the counters' exact sums against the element sensitivity; learners adding their
    own noise: each release's change against its declared bound.

    Examples
    --------
    Implicit gradient descent attains its ``sensitivity(t)`` = lam / (t + 1):

    >>> from dpol.learners import PrivateIGD
    >>> from dpol.losses import HingeLoss, Regularized
    >>> make = lambda s: PrivateIGD(2, loss=Regularized(HingeLoss(0.5), 1.0), horizon=4,
    ...                             epsilon=1.0, delta=1e-5, seed=s)
    >>> sensitivity_attainment(make).ratio.round(6).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    template = factory(seed)
    if isinstance(template, BanditFrankWolfeBase):
        return _bandit_attainment(factory, template, streams, position or 0, seed)
    if isinstance(template, PrivateIncrementalERM):
        raise fail("factory", "build a learner whose noisy outputs are released "
                   "(PrivateIncrementalERM releases the last of its solver's noisy steps "
                   "only)", template)
    if streams is None:
        streams = worst_case_learner_streams(template, position=position)
    runs = []
    for X, y in streams:
        learner = under_noised(factory(seed), 0.0)
        trace = learner.run(X, y)
        runs.append((learner, np.vstack([trace.weights, trace.final_weights[None, :]])))
    (la, ra), (lb, rb) = runs
    if _counter_slots(la):
        change = np.linalg.norm(_stacked_sum(la) - _stacked_sum(lb))
        return Attainment(np.array([_declared_element(template)]), np.array([change]),
                          "counter element")
    change = np.linalg.norm(ra - rb, axis=1)[1:]  # release after step t = 1..T
    T = template.horizon
    if isinstance(template, OutputPerturbation):
        steps = template._noised_steps()
        declared = np.array([template.sensitivity(int(t)) for t in steps])
        return Attainment(declared, change[steps - 1], "release after step t")
    if isinstance(template, PrivateOfflineLearner):
        return Attainment(np.array([template.sensitivity]), change[-1:], "final release")
    if isinstance(template, PrivateKernelRegression):
        declared = np.array([template.sensitivity(t) for t in range(1, T + 1)])
        share, stds = None, template._scales  # its transcript's mu at these stds
        if template.is_private and template.mode != "published_scalar":
            share = float(np.linalg.norm(change / stds)) / transcript_mu(template._m,
                                                                         template._h, stds)
        return Attainment(declared, change, "release after step t", share)
    raise fail("factory", "build a dpol learner with a declared sensitivity", template)


def _bandit_attainment(factory: Callable, template: object, losses: tuple | None,
                       position: int, seed: int) -> Attainment:
    """The batch sums of noiseless runs (the same sphere directions on both sides)."""
    if losses is None:
        losses = worst_case_bandit_losses(template, position=position)
    sums = [under_noised(factory(seed), 0.0).run_linear(C, b).noisy_sums for C, b in losses]
    change = np.linalg.norm(sums[0] - sums[1], axis=1)
    return Attainment(np.full(len(change), template.element_sensitivity), change,
                      "counter release (batch sums)")
