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

    At step t the learner has released w_t, receives (x_t, y_t) and feeds the data
    gradient g_t = phi'(<w_t, x_t>, y_t) x_t to a continual counter, whose release is
    the noisy sum G_t + n_t. With the regulariser's part mu sum_{s <= t} w_s added back
    (public: a function of the releases), g_hat_t is the noisy gradient sum, and the next
    iterate minimises <g_hat_t, w> + ||w - w_0||^2 / (2 eta) over C: the lazy projection
    Proj_C(w_0 - eta g_hat_t) (Kairouz et al. 2021, Algorithm 1 without momentum; w_0 =
    Proj_C(0)). With zero noise it is non-private FTRL with a quadratic regulariser.

    **Several passes** (``epochs=E``): the stream is E passes over n = horizon / E records
    in a fixed order, record i at steps i, i + n, ..., so each record enters the gradient
    sum E times, n steps apart: the counter is calibrated for that participation (E, n)
    and the guarantee protects one record. :meth:`run_passes` runs the passes over the n
    records; ``run`` and ``learn_one`` take the stream as it comes, and the guarantee
    holds for any stream in which a record enters at most E steps, n apart.

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
        Step size. Default c R / sqrt(T L (L + s sqrt(d))), c = ``DEFAULT_ETA_SCALE`` = 4,
        R the radius of C (1 for R^d), L the data loss's Lipschitz constant on C and s the
        root mean per-coordinate noise std of the counter's releases (public). The form
        balances R^2 / (2 eta) against eta T L^2 / 2 and the cost of the noise's shift of
        the iterate, about T L eta s sqrt(d); c = 4 gave the best held-out loss of the
        last iterate, or within 0.1% of it, in all 12 cells (3 data sets, epsilon 1 and
        10, E = 1 and 4) of ``benchmarks/multi_pass.py --eta-sweep`` over c in {1/4, 1,
        4, 16, 64, 256}; from c = 16 on the iterate sits on the boundary of C and the
        losses stop changing (docs/benchmarks/multi_pass.md).
    mechanism, **privacy
        The privacy arguments: a :class:`~dpol.accounting.Mechanism`, or its fields as
        keywords (``epsilon=1.0, noise="secure"``); which values it takes is its
        ``accepts`` (:class:`~dpol.learners.Accepts`, tabled in the docs' privacy
        conventions). Float Gaussian noise and ``calibration="tight"`` only:
        no paper publishes a calibration of this counter-and-passes pairing.
        ``counter``: the continual counter of the gradient sums. Default "blt": O(b d)
        per step at any n, and within 0.0002 of square-root Toeplitz's held-out loss
        (the best at one pass, with the tree and banded far behind) in every cell of
        ``benchmarks/multi_pass.py``. For several passes the banded square root with n
        bands (``counter="banded"``, whose default band is then the separation n), whose
        sensitivity grows only like sqrt(E), did better: at epsilon = 1 and
        E = 8, held-out logistic loss 0.4424 against BLT's 0.4438 (optimum 0.4386) on the
        synthetic set and 0.5193 against 0.5215 (0.5108) on Shuttle, at O(n d) per
        ``learn_one`` step (docs/benchmarks/multi_pass.md). ``counter_options``: its
        keywords (``bands``, ``buffers``, ``objective``...).

    Privacy
    -------
    Relation: replace-one (or add/remove) of one record, i.e. of the E stream elements
    it is (E = 1: one stream element). Sensitivity: one record changes its E data
    gradients, each by at most Delta = the loss's ``gradient_sensitivity(C)`` (2 L under
    replace-one unless the loss proves less, L under add/remove), each evaluated at a
    released, hence public, iterate; the counter's encoder C' then moves by at most Delta
    sqrt(max_pi sum_{i,j in pi} |(C'^T C')_ij|) over the patterns pi of E steps n apart
    (the counter's ``sensitivity`` with ``participation=(E, n)``,
    :mod:`dpol.counters.strategies._participation`: for banded strategies with at most
    n bands it is sqrt(E) times the one-pass figure). Adaptivity costs nothing: the
    gradients depend on earlier releases, but the counter is a linear map of its inputs
    plus Gaussian noise, causal (a noised value depends only on inputs already given),
    and such a mechanism released step by step on adaptively chosen inputs has the
    privacy of the non-adaptive Gaussian mechanism of the same sensitivity (Denisov,
    McMahan, Rush, Smith, Thakurta 2022, Theorem 2.1; the multi-participation setting of
    Choquette-Choo et al. 2023). Calibration: the noise multiplier z*(epsilon, delta)
    of the one calibrator (:func:`dpol.accounting.calibrate` on the Gaussian's
    :func:`dpol.accounting.noise_events`), relative to that sensitivity.
    The iterates, their average and the regulariser's part mu sum w_s are
    post-processing of the releases. ``privacy`` is derived from the counter's event,
    its unit restated as one record when E > 1.

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
