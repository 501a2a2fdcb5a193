"""WDP-COCOP: private follow-the-approximate-leader with projection (WDP Alg. 1, Thms 1-4)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.events import MechanismEvent
from dpol.accounting.mechanism import Mechanism
from dpol.counters import WindowTreeCounter, make_counter, resolve_counter
from dpol.errors import NonPrivateWarning
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner
from dpol.learners._counter_calibration import gradient_element_sensitivity
from dpol.learners._linear import pointwise_loss, split_loss
from dpol.losses import domain_radius
from dpol.noise.kinds import KINDS

__all__ = ["PrivateFTAL"]


class PrivateFTAL(OnlineLearner):
    """FTAL on strongly convex losses with a private gradient sum (window or full DP).

    With g_t = sum_{tau <= t} grad f_tau(w_tau) released privately as g_hat_t, the
    next iterate is the exact minimiser over C of the lower approximation
    <g_hat_t, w> + mu/2 sum_tau ||w - w_tau||^2, i.e. Proj_C(S_t / t - g_hat_t / (mu t)),
    S_t = sum_{tau <= t} w_tau (WDP Section II.C and Algorithm 1).

    Parameters
    ----------
    dim : int
    loss : Regularized(LinearLoss, mu)
        f_t(w) = phi(<w, x_t>, y_t) + mu/2 ||w||^2, mu-strongly convex.
    domain : ConvexSet
        C, with a projection.
    horizon : int
    window : int or None
        W of window DP; None protects every element over the whole stream.
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md). ``noise``: Gaussian (Option II), l2 Gamma for pure
        epsilon-DP (Option I), or secure. With a window, only ``window_tree`` applies.
    noise_ridge : bool
        Beyond the papers: shrink the leader towards the mean of the released iterates by
        a public bound on the noise's norm; post-processing, 1.6-1.7x less excess regret
        (docs/derivations/ftal.md).

    Privacy
    -------
    Replace-one (or add/remove), one stream element. Sensitivity: only the data gradient
    enters the counter (mu w_t is added back from releases); one element changes one
    input by at most 2L (docs/errata.md, WDP-1; add/remove: L), or under tight
    calibration by the loss's ``gradient_sensitivity(C)`` at the public iterate (1.100
    instead of 1.462 for the logistic loss on the unit ball). Calibration, tight or paper
    (WDP Lemmas 1 and 3), is the counter's, adaptive inputs included (WDP Section III).
    ``privacy`` is the counter's event: window DP with window W, or DP when window is
    None. Derivation: docs/derivations/ftal.md.

    Examples
    --------
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(256, 3)) / 2; y = X @ [0.5, 0.0, -0.5]
    >>> m = PrivateFTAL(3, loss=Regularized(SquaredLoss(), 0.5), domain=L2Ball(3),
    ...                 horizon=256, epsilon=1.0, delta=1e-5, window=32, seed=0)
    >>> m.run(X, y).weights.shape, m.privacy.window
    ((256, 3), 32)
    """

    #: capabilities (:data:`dpol.learners._api.TAGS`)
    #: what of a Mechanism it takes (:class:`~dpol.learners.Accepts`): every noise kind
    accepts = Accepts(noises=tuple(KINDS), counter="window_tree", window=True)

    def __init__(self, dim: int, *, loss: object, domain: object, horizon: int,
                 window: int | None = None, noise_ridge: bool = False,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        data, mu = split_loss(loss)
        super().__init__(dim, horizon=horizon, x_bound=data.x_bound, y_bound=data.y_bound,
                         **privacy)
        if domain is None or not hasattr(domain, "project"):
            raise fail("domain", "be a convex set with a projection", domain)
        self.loss, self.domain, self.window = loss, domain, window
        self._data, self.mu = data, mu
        self.noise_ridge = bool(noise_ridge)
        self._ridge_radius = domain_radius(domain) if self.noise_ridge else math.nan
        if self.noise_ridge and not 0.0 < self._ridge_radius < math.inf:
            raise fail("noise_ridge", "be False unless the domain has a finite radius > 0",
                       noise_ridge)
        self.lipschitz = data.lipschitz(domain)
        self._counter = self._build_counter(self.counter, dict(self.counter_options))
        self._w = self._initial_point()
        self._sum_w = np.zeros(dim)

    def _initial_point(self) -> np.ndarray:
        return self.domain.project(np.zeros(self.dim))

    def _build_counter(self, counter: object, options: dict):
        cls = resolve_counter(counter)
        if self.window is not None:
            if cls is not WindowTreeCounter:
                raise fail("counter", "be 'window_tree' when a window is given", counter)
            if options.get("window", self.window) != self.window:
                raise fail("counter_options", f"not give a window other than window="
                           f"{self.window}", options)
            options["window"] = self.window
        elif cls is WindowTreeCounter:
            # W = T: the full-stream guarantee, unless the options ask for a window (then
            # the counter's events carry it into ``privacy``)
            options.setdefault("window", self.horizon)
        if not self.is_private:
            kwargs = {"noise_multiplier": 0.0}
        elif self.calibration == "tight":  # sized once, by the one calibrator
            kwargs = {"noise_multiplier": calibrate(
                noise_events(self.noise_kind, self.neighbouring), self.epsilon,
                self.delta if self.noise_kind.approximate else 0.0)}
        else:  # the counter's published formula
            kwargs = {"epsilon": self.epsilon, "calibration": "paper"}
        if self.calibration == "tight" and "element_sensitivity" not in options:
            # the exact change of one data gradient at the public iterate (Privacy)
            exact = gradient_element_sensitivity(self._data, self.domain, self.neighbouring,
                                                 self.lipschitz)
            if exact is not None:
                options["element_sensitivity"] = exact
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)  # the learner warned already
            return make_counter(cls, self.horizon, self.dim, bound=self.lipschitz,
                                delta=self.delta if self.noise_kind.approximate else 0.0,
                                neighbouring=self.neighbouring, noise=self.noise,
                                seed=spawn_seeds(self.seed, 1)[0],
                                **kwargs, **options)

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The gradient-sum counter's event: the only mechanism (Privacy)."""
        return self._counter.privacy_events()

    @property
    def weights(self) -> np.ndarray:
        return self._w.copy()

    def _data_gradient(self, x: np.ndarray, y: float) -> np.ndarray:
        # scalars through the vectorized phi' (same float ops, ~2 us less than 1-element arrays)
        return float(self._data._dphi(float(x @ self._w), y)) * x

    def _private_gradient_sum(self, x: np.ndarray, y: float) -> np.ndarray:
        """g_hat_t: private sum of the data gradients plus the public mu * sum of iterates."""
        self._sum_w += self._w
        return self._counter.add(self._data_gradient(x, y)) + self.mu * self._sum_w

    def _learn(self, x: np.ndarray, y: float) -> None:
        g_hat = self._private_gradient_sum(x, y)
        t = self.t_
        if not self.noise_ridge:
            self._w = self.domain.project(self._sum_w / t - g_hat / (self.mu * t))
            return
        lam = self._ridge(t)  # the mu S_t of g_hat cancels mu S_t of the leader
        self._w = self.domain.project(
            (lam / t * self._sum_w - (g_hat - self.mu * self._sum_w)) / (self.mu * t + lam))

    #: failure probability of the noise-norm bound behind ``noise_ridge``
    _RIDGE_BETA = 0.05

    def _ridge(self, t: int) -> float:
        """lambda_t of ``noise_ridge``: a (1 - beta)-bound on the noise norm over R."""
        sd = math.sqrt(self._counter.variance(t))
        return sd * (math.sqrt(self.dim) + math.sqrt(2.0 * math.log(1.0 / self._RIDGE_BETA))) \
            / self._ridge_radius

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self.mu, np.broadcast_to(w, X.shape), X, y)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self.mu, W, X, y)
