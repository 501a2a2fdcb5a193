"""WDP-COCOL: private online conditional gradient with a local linear oracle (WDP Alg. 2)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import check_real, fail
from dpol.accounting.mechanism import Mechanism
from dpol.learners.private_ftal import PrivateFTAL

__all__ = ["PrivateOnlineFrankWolfe"]


class PrivateOnlineFrankWolfe(PrivateFTAL):
    """Projection-free private FTAL: one local-linear-oracle call per step, never a projection.

    WDP-COCOL (WDP Algorithm 2) with constants re-derived from the proof (docs/errata.md,
    WDP-6): rho from the set's LLOO, step a = 1/(2 rho^2), C0 = 16 rho^2, E a public
    high-probability bound on the counter error, G_u = L + 2E (L bounds the whole loss's
    gradient: ``gradient_bound``), K = 74 rho^4 G_u^2 and, with sigma_t = mu (t + C0),

        c_t = g_hat_t + mu ((t + C0) w_t - S_t - C0 w_1)      (grad of J_t at w_t, WDP-6)
        p_t = LLOO(w_t, sqrt(2K) / sigma_t, c_t)
        w_{t+1} = w_t + a (p_t - w_t)                         (a convex combination: feasible)

    Parameters
    ----------
    dim, loss, horizon, window, mechanism, **privacy
        As :class:`PrivateFTAL` (no ``noise_ridge``: there is no leader to regularise).
    domain : ConvexSet
        A set with ``local_linear_oracle``, ``linear_oracle`` and ``rho`` (Simplex, Box,
        L1Ball, L2Ball, ConvexHull). ``project`` is never called.
    failure_prob : float
        beta of the public noise bound E (the regret guarantee holds on that event).

    Privacy
    -------
    As :class:`PrivateFTAL`: replace-one (or add/remove), the counter's sensitivity,
    calibration and guarantee (window DP with window W, or DP). rho, a, C0, K and r_t are
    data-independent and E comes from the noise scale and horizon only (docs/errata.md,
    WDP-5: never from the realised noise), so every iterate is post-processing of the
    releases (WDP Theorem 5). Secure noise keeps the Gaussian E plus the rounding, T g
    sqrt(d)/2 (derivation: docs/derivations/ftal.md).

    Examples
    --------
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import Simplex
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(128, 4)) / 2; y = X @ [0.7, 0.1, 0.1, 0.1]
    >>> m = PrivateOnlineFrankWolfe(4, loss=Regularized(SquaredLoss(), 1.0),
    ...                             domain=Simplex(4), horizon=128, epsilon=1.0,
    ...                             delta=1e-5, seed=0)
    >>> w = m.run(X, y).weights
    >>> bool(np.all(w >= -1e-12) and np.allclose(w.sum(axis=1), 1.0))
    True
    """

    def __init__(self, dim: int, *, loss: object, domain: object, horizon: int,
                 window: int | None = None, failure_prob: float = 0.05,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        for attr in ("local_linear_oracle", "linear_oracle"):
            if not hasattr(domain, attr):
                raise fail("domain", f"provide {attr} (a polytope-like set)", domain)
        self.failure_prob = check_real("failure_prob", failure_prob, low=0.0, high=1.0,
                                       low_open=True, high_open=True)
        self._hull_weights = None
        super().__init__(dim, loss=loss, domain=domain, horizon=horizon, window=window,
                         **privacy)
        self.rho = float(domain.rho)
        self.step_size = 1.0 / (2.0 * self.rho**2)
        self.c0 = 16.0 * self.rho**2
        self.noise_bound = self._noise_bound()
        # G_u bounds the whole gradient u of WDP-6's proof, regulariser included (mu ||w||
        # <= mu R); self.lipschitz is the data part only, what the counter's sensitivity needs
        self.gradient_bound = float(loss.lipschitz(domain))
        self.k_const = 74.0 * self.rho**4 * (self.gradient_bound + 2.0 * self.noise_bound) ** 2
        self._w1 = self._w.copy()

    def _initial_point(self) -> np.ndarray:
        # a vertex (docs/errata.md, WDP-7), chosen without data: LO of a fixed direction
        vertex = self.domain.linear_oracle(np.ones(self.dim))
        if hasattr(self.domain, "lloo_weights"):  # ConvexHull: keep the decomposition
            self._hull_weights = (np.linalg.norm(self.domain.vertices - vertex, axis=1)
                                  == 0).astype(float)
            self._hull_weights /= self._hull_weights.sum()
        return np.asarray(vertex, dtype=float)

    def _noise_bound(self) -> float:
        """E with P(max_t ||g_hat_t - g_t|| <= E) >= 1 - failure_prob (WDP-5)."""
        c = self._counter
        if c.noise_scale == 0.0:
            return 0.0
        beta, horizon, d = self.failure_prob, self.horizon, self.dim
        if c.noise_kind.approximate:  # Gaussian, or the discrete Gaussian
            # e_t ~ N(0, v_t I): ||e_t|| <= sqrt(v_t) (sqrt(d) + sqrt(2 ln(T/beta))) for all
            # t with prob. 1 - beta (Lipschitz concentration + union bound; WDP-5);
            # secure: the same for subgaussian noise, plus the grid rounding (Privacy)
            rounding = 0.0 if c.grid is None else horizon * c.grid * math.sqrt(d) / 2.0
            # max over the learner's steps (an endless counter has no horizon of its own)
            worst = float(np.max(c.variance(np.arange(1, horizon + 1, dtype=np.int64))))
            return math.sqrt(worst) * (math.sqrt(d) + math.sqrt(
                2.0 * math.log(horizon / beta))) + rounding
        m = c.levels
        q = c.noise_kind.unit_radius_quantile(d, 1.0 - beta / (m * horizon))
        if q is not None:  # the Gamma mechanism: e_t sums <= m nodes, ||n|| ~ Gamma(d, theta)
            return m * c.noise_scale * q
        raise fail("noise", "be 'gaussian' or 'gamma' for the Frank-Wolfe radius bound",
                   c.noise)

    def radius(self, t: int) -> float:
        """r_t = sqrt(2K) / (mu (t + C0)), the LLOO radius of step t."""
        return math.sqrt(2.0 * self.k_const) / (self.mu * (t + self.c0))

    def _learn(self, x: np.ndarray, y: float) -> None:
        g_hat = self._private_gradient_sum(x, y)
        t = self.t_
        grad = g_hat + self.mu * ((t + self.c0) * self._w - self._sum_w - self.c0 * self._w1)
        r = self.radius(t)
        if self._hull_weights is not None:
            lam_p = self.domain.lloo_weights(self._hull_weights, r, grad)
            self._hull_weights = (1 - self.step_size) * self._hull_weights \
                + self.step_size * lam_p
            self._hull_weights[self._hull_weights < 1e-15] = 0.0
            self._hull_weights /= self._hull_weights.sum()
            self._w = self._hull_weights @ self.domain.vertices
            return
        p = self.domain.local_linear_oracle(self._w, r, grad)
        self._w = self._w + self.step_size * (p - self._w)
