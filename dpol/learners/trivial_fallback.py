"""The trivial model as a floor: predict the private prior until the model privately beats it.

A private model on a small or imbalanced stream can predict worse than the majority class
for a long time. :class:`WithTrivialFallback` runs a learner beside two small Gaussian
mechanisms, released once per block of a public doubling schedule (blocks of 1, 2, 4, ...
rows, the last cut at the horizon):

* the **prior**: the block's sum S_j of the labels, +-L for two classes (one-hot rows for
  K classes), and
* the **gate**: the block's count E_j of the model's 0-1 errors on the predictions it
  made *before* each row.

The prior's own errors on the block, T_j = (n_j - c S_j / L) / 2 for the prior's class
c = +-1 (n_j - S_j[c] for K classes), are read off the released S_j: post-processing, so
the gate needs no second look at the labels. The inverse-variance means of the released
block rates, sum_j n_j S_j / W and sum_j n_j (E_j - T_j) / W with W = sum_j n_j^2, are the
prior and the gate's mean error difference d, each of public std (its block noise std
over sqrt(W)). The first blocks release the prior alone, on more of the budget: the
model's errors there could barely move d (a block weighs n_j^2), while the prior's sign
decides each of their rows. Those ending by row ``learner_from`` (public) spend the whole
budget on it: the learner learns from the next row on; those ending by ``gate_from``
(blocks of 1, 2, ..., 64 rows by default; a quarter of the horizon if less) spend the
gate's too. Their sums enter with inverse-variance weights, n_j (z_prior / z)^2 in the
mean and n_j^2 (z_prior / z)^2 in W (the gate's W sums its own blocks). The model
predicts where d < -``threshold`` s (1: a one-sided test that keeps the trivial model where the
model is not clearly better; the estimators take 0 where the stream is long enough for a small s),
and from the gate's first block wherever the prior is within ``significance`` of its own stds of
the class boundary (a coin flip, no better a guess than the model's; before it, an unjudged model
of a few dozen rows is the worse guess). The estimators' default;
docs/benchmarks/trivial_fallback.md.

Privacy
-------
Replace-one (add/remove is refused: an added row shifts later rows into other blocks).
Three mechanisms run in sequence, each seeing the earlier outputs: the learner
(``learner.privacy_events()``), the prior's block sums, the gate's block counts; each
element falls in one block, and given the earlier releases only its block's depend on
it. Sensitivity: prior 2 L for the -L / +L labels it sums, L =
min(1, y_bound - |offset|) (one-hot rows: sqrt(2)); gate 1, since given the earlier
releases the model's prediction of row t is fixed and every error count but row t's
depends on its own row alone. Calibration: N(0, (z sens)^2) per
coordinate is 1/z-GDP (Dong, Roth and Su 2019, Thm 2.7),
composed adaptively as mu^2 = sum mu_i^2 (Dong, Roth and Su 2019, Cor. 3.3);
:func:`fallback_budget` splits a Gaussian budget so that the whole composes exactly to
the target, in the shares :func:`fallback_plan` picks from public quantities (epsilon,
delta, the horizon, the classes). Every element costs at most the mu^2 the stated
events compose to (parallel composition over the blocks): a block ending by row
``learner_from`` releases its label sum alone at z with 1 / z^2 = 1 / z_prior^2 + 1 /
z_gate^2 + mu_learner^2 (the learner never sees its rows; mu_learner from its Gaussian
events), a later one ending by min(``gate_from``, T // 4) at 1 / z^2 = 1 / z_prior^2 +
1 / z_gate^2 (the learner's share is spent on its rows), the rest at z_prior beside the
gate's count and the learner. The choice and the predictions are post-processing.

Examples
--------
>>> from dpol.learners import PrivateQuadraticFTL
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(2000, 3)) / 3; y = np.where(rng.random(2000) < 0.9, -1.0, 1.0)
>>> z_prior, z_gate, rest = fallback_budget(1.0, 1e-5)
>>> inner = PrivateQuadraticFTL(3, horizon=2000, epsilon=rest, alpha=0.01, seed=1)
>>> m = WithTrivialFallback(inner, prior_multiplier=z_prior, gate_multiplier=z_gate,
...                         seed=2, epsilon=1.0)
>>> trace = m.run(X, y)  # labels carry no signal in X: the prior stays
>>> m.uses_model, m.predict_one([0.1, 0.2, 0.3]) < 0, round(m.privacy.epsilon, 6)
(False, True, 1.0)
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpol._seeding import resolve_rng
from dpol._validation import as_matrix, as_vector, check_choice, check_int, check_real, fail
from dpol.errors import HorizonExceededError
from dpol.learners._base import OnlineLearner, Trace
from dpol.learners._fallback_budget import (
    GATE_FROM,
    GATE_SHARE,
    PRIOR_SHARE,
    fallback_budget,
    fallback_plan,
    gate_start,
)
from dpol.learners._fallback_calibration import GAUSSIAN, FallbackCalibration
from dpol.learners._fallback_encoders import block_sums, check_offset, prior_labels
from dpol.learners._fallback_trace import idle_trace, joined, linear_trace
from dpol.learners._wrapper import LearnerWrapper, innermost, predict_rows
from dpol.noise.kinds import noise_kind

__all__ = ["GATE_FROM", "GATE_SHARE", "LINKS", "PRIOR_SHARE", "SIGNIFICANCE", "THRESHOLD",
           "WithTrivialFallback", "block_sums", "fallback_budget", "fallback_plan"]

#: the gate opens where the model's mean error is below the prior's by this many stds
#: (docs/benchmarks/trivial_fallback.md: 1 against 2 on the tuning sets)
THRESHOLD = 1.0
#: after the first blocks the model also predicts where the prior's margin is within this
#: many of its stds of the class boundary: a coin flip (docs/benchmarks/trivial_fallback.md)
SIGNIFICANCE = 1.0
#: the prior's links (``link=``): the mean label, or its logit
LINKS = ("rate", "logit")


class WithTrivialFallback(FallbackCalibration, LearnerWrapper):
    """A learner that predicts the private prior until its model privately beats it.

    Parameters
    ----------
    learner : OnlineLearner
        A fresh full-information learner (or wrapper) with scalar labels, or with K
        outputs read as one-hot classes; replace-one neighbouring.
    prior_multiplier, gate_multiplier : float
        z of the prior's and the gate's block sums (:func:`fallback_budget`).
    threshold : float
        The gate opens where the gate's mean error difference is below ``-threshold``
        times its public standard deviation (inf: never, the prior alone; the
        estimators' plan takes 0 where the stream is not short: ``LONG_THRESHOLD``).
    significance : float
        The model also predicts where the prior's margin lies within ``significance``
        of its public standard deviations of the class boundary (0: never), from the
        gate's first block on (before it, the prior predicts).
    link : str
        One of :data:`LINKS`: the prior's margin is the mean label (least squares) or
        its logit (logistic).
    seed : None, int, SeedSequence or Generator
        The two mechanisms' noise (None: fresh OS entropy).
    epsilon : float, optional
        The whole's target epsilon (:func:`fallback_budget`), as ``privacy`` states it;
        default: the composition as computed.
    offset : float or array (K,), optional
        A public centre b the learner's labels and margins are measured from (a
        least-squares learner fitting y - b, ``link="rate"``): the prior sums the labels
        y and the gate judges the classes of y and m + b; the wrapper's predictions are
        centred likewise (the prior's margin minus b).
    gate_from : int
        The gate releases from the first block ending after this row (or after a quarter
        of the horizon, if less); the blocks before release the prior alone on both
        mechanisms' budget (0: the gate in every block).
    learner_from : int
        The learner learns from the row after this one (0: from the first); the blocks
        ending by it release the prior alone on the whole budget (``idle_multiplier``),
        and the trace holds the learner's first iterate there
        (:func:`~dpol.learners._fallback_budget.learner_start` picks it).

    Attributes
    ----------
    uses_model : bool
        Whether predictions come from the learner's model (else from the prior).
    gate_open : bool
        Whether the gate's test holds (``uses_model`` also holds by the coin-flip rule).
    prior : float or array (K,)
        The prior's margin (0 before its first release).
    releases_ : list of (int, float or array (K,), float)
        Per block: its rows, noisy label sum and noisy count of the model's errors (nan
        in a block the gate skips).

    Privacy
    -------
    Replace-one; sensitivities 2 L (prior) and 1 (gate), Gaussian mechanisms of
    multipliers ``prior_multiplier`` and ``gate_multiplier`` composed with the learner's
    events: the module's Privacy section derives them.
    """

    def __init__(self, learner: OnlineLearner, *, prior_multiplier: float,
                 gate_multiplier: float, threshold: float = THRESHOLD,
                 significance: float = SIGNIFICANCE, link: str = "rate",
                 seed: object = None, epsilon: float | None = None,
                 offset: object = None, gate_from: int = GATE_FROM,
                 learner_from: int = 0) -> None:
        refused = self.refusal(learner)
        if refused is not None:
            raise fail(*refused)
        self.learner = learner
        self.dim = learner.dim
        self.prior_multiplier = check_real("prior_multiplier", prior_multiplier, low=0.0)
        self.gate_multiplier = check_real("gate_multiplier", gate_multiplier, low=0.0)
        self.threshold = check_real("threshold", threshold, low=0.0, allow_inf=True)
        self.significance = check_real("significance", significance, low=0.0)
        self.link = check_choice("link", link, LINKS)
        self.gate_from = check_int("gate_from", gate_from, low=0)
        self.learner_from = check_int("learner_from", learner_from, low=0)
        if self.learner_from >= learner.horizon:
            raise fail("learner_from", f"be below the learner's horizon {learner.horizon} "
                       "(the learner must learn some rows)", learner_from)
        if self.learner_from and not linear_trace(learner):
            raise fail("learner_from", "be 0 for a learner without a linear model (its "
                       "trace could not state the rows it did not learn)", learner_from)
        self._share(clips=False)  # it clips nothing itself: the learner's warning stands
        if epsilon is not None:
            self.epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
        self.seed = seed if seed is not None else learner.seed  # seeded if either is
        self._rng = resolve_rng(seed)
        self.outputs = int(getattr(self.base, "outputs", 1))
        shape = (self.outputs,) if self.outputs > 1 else ()
        self.offset = check_offset(offset, shape, self.link)
        self._label_sum, self._error_sum = np.zeros(shape), 0.0  # the open block's
        self._prior_num, self._gate_num, self._weight = np.zeros(shape), 0.0, 0.0
        self._gate_weight = 0.0  # W of the blocks the gate released
        self._block_start = 0  # where the open block began
        self._idle = 0  # rows before learner_from, seen by the prior alone
        self.releases_: list[tuple[int, object, float]] = []  # (rows, noisy sums) per block
        self.uses_model = False

    @staticmethod
    def refusal(learner: object) -> tuple[str, str, object] | None:
        """(argument, rule, value) if the fallback cannot wrap ``learner``, else None.

        >>> from dpol.learners import PrivateQuadraticFTL as Q
        >>> learner = Q(2, horizon=8, epsilon=1.0, neighbouring="add_remove")
        >>> WithTrivialFallback.refusal(learner)[0]
        'learner.neighbouring'
        """
        if not isinstance(learner, OnlineLearner) or isinstance(learner, WithTrivialFallback):
            return "learner", "be a full-information learner (an OnlineLearner)", learner
        if learner.t_ != 0:
            return "learner", "be fresh (t = 0)", learner
        if learner.neighbouring != "replace_one":
            return ("learner.neighbouring", "be 'replace_one' (an added row would shift "
                    "every later row into another block)", learner.neighbouring)
        noise = getattr(innermost(learner), "noise", "gaussian")
        if noise_kind(noise) is not GAUSSIAN:  # no float link beside secure noise
            return ("learner.noise", "be 'gaussian' (the fallback adds float Gaussian "
                    "noise)", noise)
        return None

    #: the coin-flip rule in the first blocks too (the rule before 2026-11-29, kept for
    #: ``benchmarks/trivial_fallback.py``'s comparison; post-processing either way)
    _coin_flips_early = False

    @property
    def t_(self) -> int:
        """Rows seen: those before ``learner_from`` and the learner's own."""
        return self._idle + self.learner.t_

    @property
    def prior(self) -> float | np.ndarray:
        """The prior's margin from the released block sums (0 before the first)."""
        if self._weight == 0.0:
            return np.zeros(self.outputs) if self.outputs > 1 else 0.0
        rate = self._prior_num / self._weight
        if self.outputs > 1:
            return rate
        size = self._label_size  # the summed labels' +-L
        rate = float(np.clip(rate, -size, size))
        if self.link == "logit":
            p = min(max((1.0 + rate / size) / 2.0, 1e-6), 1.0 - 1e-6)
            return math.log(p / (1.0 - p))
        return rate

    def _block_end(self) -> int:
        """End (exclusive) of the open block: blocks of 1, 2, 4, ... rows, cut at T."""
        return min(2 * self._block_start + 1, self.horizon)

    def prior_errors(self, n: int, labels: object, prior_class: int) -> float:
        """The prior's 0-1 errors on a block of ``n`` rows with released label sum
        ``labels``, its class ``prior_class`` (+-1, or the index of K) held over the block:
        post-processing of the release."""
        if self.outputs > 1:
            return float(n - labels[prior_class])
        return (n - prior_class * float(labels) / self._label_size) / 2.0

    def _prior_is_a_coin_flip(self) -> bool:
        """Whether the prior's margin lies within ``significance`` public stds of the
        class boundary (the top rate's lead over the runner-up, for K classes)."""
        rate = self._prior_num / self._weight
        sd = self.prior_multiplier * self.prior_sensitivity / math.sqrt(self._weight)
        if self.outputs > 1:
            second, top = np.sort(rate)[-2:]
            return bool(top - second <= self.significance * sd * math.sqrt(2.0))
        return bool(abs(rate) <= self.significance * sd)

    def _release(self, end: int) -> None:
        """Release the block's noisy label sum and error count (it ends at row ``end``),
        update the prior and the gate."""
        n = end - self._block_start
        idle = end <= self.learner_from  # the prior alone, on the whole budget
        gated = not idle and end > max(gate_start(self.horizon, self.gate_from),
                                       self.learner_from)
        z = self.prior_multiplier if gated else \
            self.idle_multiplier if idle else self.early_multiplier
        labels = GAUSSIAN.noisy(np.atleast_1d(self._label_sum), z * self.prior_sensitivity,
                                self._rng)
        errors = math.nan if not gated else GAUSSIAN.noisy(
            np.array([self._error_sum]), self.gate_multiplier * self.gate_sensitivity,
            self._rng)[0]
        labels = labels if self.outputs > 1 else labels[0]
        self.releases_.append((n, labels, float(errors)))
        # the prior predicted the open block from the releases before it: still self.prior
        prior = self.prior
        prior_class = int(np.argmax(prior)) if self.outputs > 1 else (1 if prior > 0 else -1)
        if gated:
            self._gate_num += n * (errors - self.prior_errors(n, labels, prior_class))
            self._gate_weight += float(n) ** 2
        # inverse-variance weights: a skipped block's sum is (z_prior / z)^2 more precise
        # (a noiseless gate leaves z = 0: no noise to weigh, equal weights)
        w = 1.0 if z in (0.0, self.prior_multiplier) else (self.prior_multiplier / z) ** 2
        self._prior_num = self._prior_num + w * n * labels
        self._weight += w * float(n) ** 2
        coin_flips = gated or self._coin_flips_early  # before the gate: an unjudged model
        self.uses_model = self.gate_open or (coin_flips and self._prior_is_a_coin_flip())
        self._label_sum, self._error_sum = np.zeros_like(self._label_sum), 0.0
        self._block_start = end

    def _labels(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the labels the prior sums, clipped; their classes), checked one-hot for K."""
        size = self._label_size if self.outputs == 1 else 1.0  # one-hot rows: 0 / 1
        return prior_labels(y, self.offset, self.outputs, size)

    def _absorb(self, model: np.ndarray, labels: np.ndarray, classes: np.ndarray
                ) -> np.ndarray:
        """Account rows (their model predictions before each step, their ``_labels``)
        that the learner has learnt; release at block ends; return the wrapper's
        predictions of the rows."""
        out = np.empty_like(model)
        n = len(classes)
        start, t0 = 0, self.t_ - n
        while start < n:
            stop = min(n, self._block_end() - t0)
            rows = slice(start, stop)
            prior = self.prior
            out[rows] = model[rows] if self.uses_model else prior - self.offset
            label_sum, error_sum = block_sums(model[rows] + self.offset, labels[rows],
                                              classes[rows])
            self._label_sum = self._label_sum + label_sum
            self._error_sum += error_sum
            if t0 + stop == self._block_end():
                self._release(t0 + stop)
            start = stop
        return out

    # ------------------------------------------------------------------ stepping
    def rows(self, X: np.ndarray) -> np.ndarray:
        """The rows as given (the learner's own map, if any, follows)."""
        return np.atleast_2d(X)

    def learn_one(self, x: object, y: object) -> None:
        """Observe one element; the gate and the prior release at a block's end."""
        xv = as_vector("x", x, self.dim)
        yv = np.asarray(self.base._check_label(y), dtype=np.float64)
        labels, classes = self._labels(yv[None, ...])  # refused before anything changes
        self._check_room(1)
        model = np.asarray(self.learner.predict_one(xv), dtype=np.float64)
        if self._idle < self.learner_from:
            self._idle += 1  # the prior's row alone
        else:
            self.learner.learn_one(xv, y)  # may refuse: then nothing changed
        self._absorb(model[None, ...], labels, classes)

    def _check_room(self, n: int) -> None:
        """Refuse rows beyond the horizon (the learner, fed fewer, would not)."""
        if self.t_ + n > self.horizon:
            raise HorizonExceededError(f"{type(self).__name__}: {n} elements after "
                                       f"{self.t_} exceed horizon={self.horizon}")

    def run(self, X: object, y: object, *, comparator: object = None) -> Trace:
        """The learner's ``run``, then the two mechanisms block by block (the same draws
        in the same order as the ``learn_one`` loop); the trace's ``model_predictions``
        are the wrapper's prequential predictions."""
        X = as_matrix("X", X, self.dim)
        Y = self.base._check_labels(y, X.shape[0])
        labels, classes = self._labels(Y)  # refused before anything changes
        self._check_room(X.shape[0])
        idle = max(0, min(self.learner_from - self._idle, X.shape[0]))  # the prior's alone
        if idle:  # the untrained model's predictions: the gate counts none of them
            first, early = (idle_trace(self.learner, X[:idle], Y[:idle], comparator),
                            predict_rows(self.learner, X[:idle]))
        trace = self.learner.run(X[idle:], Y[idle:], comparator=comparator) \
            if idle < X.shape[0] else None
        model = np.empty((0,)) if trace is None else np.asarray(
            trace.prequential_predictions, dtype=np.float64)
        if idle:  # as learn_one predicts them: the model's own predictions, unlearnt
            self._idle += idle
            early = np.asarray(early, dtype=np.float64).reshape((idle, *first.weights.shape[2:]))
            model = early if trace is None else np.concatenate([early, model])
            trace = first if trace is None else joined(first, trace)
        gated = self._absorb(model, labels, classes)
        return dataclasses.replace(trace, model_predictions=gated, privacy=self.privacy)

    def predict_one(self, x: object, *, raw: bool = False) -> float | np.ndarray:
        """The model's prediction while the gate is open, else the prior's margin."""
        xv = as_vector("x", x, self.dim)
        if self.uses_model:
            return self.learner.predict_one(xv, raw=raw)
        return self.prior - self.offset  # a new array for K classes

    def predict_rows(self, X: np.ndarray) -> np.ndarray:
        """``predict_one`` of every row of X (n, dim) in one pass."""
        if self.uses_model:
            return predict_rows(self.learner, X)
        n = np.atleast_2d(X).shape[0]
        margin = self.prior - self.offset
        return np.tile(margin, (n, 1)) if self.outputs > 1 else np.full(n, margin)

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.learner._loss_value(w, X, y)
