"""DP-FTRL: private follow-the-regularized-leader over one or several passes of a data set.

Kairouz, McMahan, Song, Thakkar, Thakurta, Xu 2021, "Practical and private (deep) learning
without sampling or shuffling" (Algorithm 1, without momentum): the gradients of the
losses at the released iterates are summed by a continual counter and the next iterate
is the minimiser of the noisy linearised losses plus a quadratic regulariser.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import as_matrix, as_vector, check_int, check_real, fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.events import MechanismEvent
from dpol.accounting.mechanism import Mechanism
from dpol.counters import Participation, WindowTreeCounter, make_counter, resolve_counter
from dpol.errors import NonPrivateWarning
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner, Trace
from dpol.learners._counter_calibration import gradient_element_sensitivity
from dpol.learners._linear import pointwise_loss, split_loss
from dpol.losses import domain_radius

__all__ = ["DEFAULT_ETA_SCALE", "PrivateFTRL"]

#: c of the default step eta = c R / sqrt(T L (L + s sqrt(d))) (``PrivateFTRL``)
DEFAULT_ETA_SCALE = 4.0


class PrivateFTRL(OnlineLearner):
    """DP-FTRL: w_{t+1} = Proj_C(w_0 - eta g_hat_t), g_hat_t a private gradient sum.

    The data gradient g_t = phi'(<w_t, x_t>, y_t) x_t at the released w_t goes to a
    continual counter; g_hat_t is its release plus the public regulariser part
    mu sum_{s <= t} w_s, and the next iterate is the lazy projection minimising
    <g_hat_t, w> + ||w - w_0||^2 / (2 eta) over C (Kairouz et al. 2021, Algorithm 1
    without momentum; w_0 = Proj_C(0)). With zero noise: non-private FTRL.

    **Several passes** (``epochs=E``): E passes over n = horizon / E records in a fixed
    order, record i at steps i, i + n, ...; the counter is calibrated for that
    participation (E, n) and the guarantee protects one record. :meth:`run_passes` runs
    the passes; ``run`` and ``learn_one`` hold for any stream in which a record enters at
    most E steps, n apart.

    Parameters
    ----------
    dim : int
    loss : LinearLoss or Regularized(LinearLoss, mu)
        Squared, logistic or hinge (optionally with mu/2 ||w||^2, mu >= 0).
    domain : ConvexSet or None
        C with a projection; None: R^d (a data loss Lipschitz on R^d: logistic, hinge).
    horizon : int
        T = E n steps.
    epochs : int
        E >= 1 passes; E must divide the horizon.
    eta : float, optional
        Default c R / sqrt(T L (L + s sqrt(d))), c = ``DEFAULT_ETA_SCALE``, R the radius of
        C (1 for R^d), L the data loss's Lipschitz constant, s the public noise std per
        coordinate: it balances the regulariser, the gradients and the noise's shift (c = 4
        measured best: docs/benchmarks/multi_pass.md).
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`, docs/privacy_conventions.md).
        Float Gaussian noise, tight calibration only. Default counter ``blt`` (O(b d) per
        step); for several passes ``banded_toeplitz`` with n bands does a little better at
        O(n d) (docs/benchmarks/multi_pass.md).

    Privacy
    -------
    Relation: replace-one (or add/remove) of one record, i.e. of its E stream elements.
    Sensitivity: each of the record's E gradients, taken at a released (public) iterate,
    moves by at most Delta = the loss's ``gradient_sensitivity(C)`` (2 L under
    replace-one unless the loss proves less, L under add/remove); the counter's
    ``sensitivity`` with ``participation=(E, n)`` then bounds the encoder's change
    (:mod:`dpol.counters.strategies._participation`). Adaptivity costs nothing: a causal
    linear Gaussian mechanism on adaptive inputs has the privacy of the non-adaptive one
    (Denisov et al. 2022, Theorem 2.1; Choquette-Choo et al. 2023 for participations).
    Calibration: z*(epsilon, delta) of :func:`dpol.accounting.calibrate` relative to that
    sensitivity. Iterates and averages are post-processing; ``privacy`` is the counter's
    event, its unit restated as one record when E > 1.

    Examples
    --------
    >>> from dpol.losses import LogisticLoss
    >>> from dpol.sets import L2Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = np.sign(X[:, 0] + 0.1)
    >>> m = PrivateFTRL(3, loss=LogisticLoss(), domain=L2Ball(3, 2.0), horizon=200,
    ...                 epochs=2, epsilon=1.0, delta=1e-5, seed=0)
    >>> m.run_passes(X, y).weights.shape, m.participation
    ((200, 3), Participation(max_participations=2, min_separation=100))
    >>> str(m.privacy).split(";")[0]  # seed=0: "; seeded noise: ..." follows
    '(1, 1e-05)-DP, replace_one, unit: one record (2 passes over 100 records)'
    """

    #: capabilities (:data:`dpol.learners._api.TAGS`)
    #: what of a Mechanism it takes (:class:`~dpol.learners.Accepts`): float Gaussian
    #: noise, tight calibration only (no published calibration of DP-FTRL's counters)
    accepts = Accepts(noises=("gaussian",), calibrations=("tight",), counter="blt")

    def __init__(self, dim: int, *, loss: object, domain: object = None, horizon: int,
                 epochs: int = 1, eta: float | None = None,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        data, mu = split_loss(loss, need_alpha=False)
        super().__init__(dim, horizon=horizon, x_bound=data.x_bound, y_bound=data.y_bound,
                         **privacy)
        if domain is not None and not hasattr(domain, "project"):
            raise fail("domain", "be None or a convex set with a projection", domain)
        self.loss, self.domain = loss, domain
        self._data, self.mu = data, mu
        self.epochs = check_int("epochs", epochs, low=1)
        if self.horizon % self.epochs:
            raise fail("epochs", f"divide horizon={self.horizon} (E passes over horizon / E "
                       "records)", epochs)
        self.n_records = self.horizon // self.epochs
        #: each record enters E steps, n apart (one participation per element when E = 1)
        self.participation = Participation(self.epochs, self.n_records)
        self.lipschitz = data.lipschitz(domain)
        if not math.isfinite(self.lipschitz):
            raise fail("domain", f"be bounded for {type(data).__name__} (its gradients are "
                       "unbounded on R^d)", domain)
        self._counter = self._build_counter(self.counter, dict(self.counter_options))
        self.eta = self.default_eta() if eta is None else check_real(
            "eta", eta, low=0.0, low_open=True)
        self._w0 = np.zeros(dim) if domain is None else domain.project(np.zeros(dim))
        self._w = self._w0.copy()
        self._sum_w = np.zeros(dim)

    def _build_counter(self, counter: object, options: dict):
        cls = resolve_counter(counter)
        for key in ("participation", "noise_multiplier", "epsilon", "neighbouring"):
            if key in options:
                raise fail("counter_options", f"not set {key} (the learner sets it)", options)
        z = calibrate(noise_events(self.noise_kind, self.neighbouring), self.epsilon,
                      self.delta) if self.is_private else 0.0
        if "element_sensitivity" not in options:
            # the exact change of one data gradient at a public iterate (Privacy)
            exact = gradient_element_sensitivity(self._data, self.domain, self.neighbouring,
                                                 self.lipschitz)
            if exact is not None:
                options["element_sensitivity"] = exact
        if cls is WindowTreeCounter:  # W = T: full DP, unless the options ask for a window
            options.setdefault("window", self.horizon)
        participation = "single" if self.participation.single else self.participation
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)  # the learner warned already
            return make_counter(cls, self.horizon, self.dim, bound=self.lipschitz,
                                noise_multiplier=z, delta=self.delta,
                                neighbouring=self.neighbouring, noise=self.noise,
                                participation=participation,
                                seed=spawn_seeds(self.seed, 1)[0], **options)

    def default_eta(self) -> float:
        """c R / sqrt(T L (L + s sqrt(d))) (``eta`` above): public constants only."""
        radius = domain_radius(self.domain)
        radius = 1.0 if not 0.0 < radius < math.inf else radius
        steps = np.arange(1, self.horizon + 1, dtype=np.int64)
        s = math.sqrt(float(np.mean(self._counter.variance(steps))))
        L = self.lipschitz
        return DEFAULT_ETA_SCALE * radius / math.sqrt(
            self.horizon * L * (L + s * math.sqrt(self.dim)))

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The gradient-sum counter's event, its unit one record (Privacy)."""
        events = self._counter.privacy_events()
        if self.participation.single:
            return events
        unit = f"one record ({self.epochs} passes over {self.n_records} records)"
        return tuple(dataclasses.replace(e, unit=unit) for e in events)

    @property
    def weights(self) -> np.ndarray:
        return self._w.copy()

    # ------------------------------------------------------------------ steps
    def _gradient(self, x: np.ndarray, y: float) -> np.ndarray:
        return float(self._data._dphi(float(x @ self._w), y)) * x

    def _next(self, released: np.ndarray) -> None:
        """w_{t+1} from the counter's release G_t + n_t (after ``_sum_w`` holds w_t)."""
        point = self._w0 - self.eta * (released + self.mu * self._sum_w)
        self._w = point if self.domain is None else self.domain.project(point)

    def _learn(self, x: np.ndarray, y: float) -> None:
        self._sum_w += self._w
        self._next(self._counter.add(self._gradient(x, y)))

    def _run(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The ``learn_one`` loop with the counter's release noise of the whole block drawn
        at once (``Counter.prefetch``: the same draws as the counter's ``run``): what stays
        sequential is the gradient at each released iterate, which needs the release
        before it. Same releases as the loop, to the counter's rounding (bit for bit for
        the trees)."""
        n = X.shape[0]
        self._counter.prefetch(n)
        out = np.empty_like(X)
        for i in range(n):
            out[i] = self._w
            self._learn(X[i], float(y[i]))
        self.t_ += n
        return out

    def run_passes(self, X: object, y: object, *, comparator: object = None) -> Trace:
        """Run the E passes over the n records (X, y) in their order: ``run`` on the
        stream of X stacked E times (a fresh learner, n = horizon / epochs rows).

        The trace covers all E n steps (regret against ``comparator`` on that stream).
        """
        X = as_matrix("X", X, self.dim)
        y = as_vector("y", y, X.shape[0])
        if X.shape[0] != self.n_records:
            raise fail("X", f"have horizon / epochs = {self.n_records} rows", X.shape[0])
        if self.t_ != 0:
            raise fail("learner", "be fresh (no step taken) to run its passes", self.t_)
        return self.run(np.tile(X, (self.epochs, 1)), np.tile(y, self.epochs),
                        comparator=comparator)

    # ------------------------------------------------------------------ losses
    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self.mu, np.broadcast_to(w, X.shape), X, y)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self.mu, W, X, y)
