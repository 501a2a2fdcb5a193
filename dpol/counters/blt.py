"""The buffered linear Toeplitz (BLT) factorization of the prefix-sum matrix.

The noise-correlation matrix G = C^{-1} is lower-triangular Toeplitz with g_0 = 1 and
g_k = sum_i omega_i theta_i^(k-1) (k >= 1): b geometric "buffers" (Dvijotham, McMahan,
Pillutla, Steinke, Thakurta 2024, "Efficient and near-optimal noise generation for
streaming differential privacy"). Writing omega_i = -(1 - theta_i) s_i, the release
matrix B = A G has the coefficients h_k = (1 - S) + sum_i s_i theta_i^k (S = sum_i s_i),
and C = G^{-1} is the impulse response c_0 = 1, c_k = |omega|^T M^(k-1) 1 of the
nonnegative state matrix M = diag(theta) + 1 |omega|^T. Every figure below is a sum of
positive terms: no cancellation, so they stay exact to rounding even when several
theta_i crowd near 1. (Expanding G = P/Q into polynomial coefficients and running
``lfilter(Q, P, impulse)`` does not: clustered roots near 1 are ill-conditioned in the
coefficients: for the default five buffers optimized at T = 2^16 that path is off by up
to 1.8% in c_k, and at T = 2^20 it diverges (sum c_k^2 of 3.3e7 instead of 5.45).)
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import minimize
from scipy.signal import fftconvolve, lfilter

from dpol._validation import _as_float_array, check_int, fail
from dpol.counters._base import Counter
from dpol.counters._secure_release import SecureReleaseMixin, setup_encoder_grid

__all__ = ["BltCounter", "blt_loss", "optimal_blt_parameters"]

#: default number of buffers: the smallest b whose optimized loss is within 1.02x of the
#: square-root factorization at T = 2^10, 2^16 and 2^20 (b = 4 reaches only 1.031x at 2^20)
DEFAULT_BUFFERS = 5
#: from this dimension ``run`` steps through time row by row instead of lfilter along time
#: (measured, 5 buffers, us per row: d = 300 lfilter 11 against 23; d = 1000 43-64
#: against 28; d = 4095, PQFTL's svec at d = 90, 240-307 against 42)
_ROW_LOOP_DIM = 512


def _check_parameters(thetas: object, omegas: object) -> tuple[np.ndarray, np.ndarray]:
    """Validated float copies of (thetas, omegas); nothing is stored before they pass."""
    th = _as_float_array("thetas", thetas)
    om = _as_float_array("omegas", omegas)
    if th.ndim != 1 or th.size == 0:
        raise fail("thetas", "be a non-empty 1-d array (one decay per buffer)", thetas)
    if om.shape != th.shape:
        raise fail("omegas", f"have the shape of thetas {th.shape}", omegas)
    if np.any(th <= 0.0) or np.any(th >= 1.0):
        raise fail("thetas", "lie in the open interval (0, 1)", thetas)
    if np.any(om >= 0.0):
        raise fail("omegas", "be < 0 (omega_i = -(1 - theta_i) s_i with s_i > 0)", omegas)
    if float(np.sum(-om / (1.0 - th))) >= 1.0:
        raise fail("omegas", "satisfy sum(-omegas / (1 - thetas)) < 1 (the stability rule: "
                   "then |G(x) - 1| < 1 on the unit disk and C = G^-1 is stable)", omegas)
    return th, om


def _geometric(log_ratio: np.ndarray, n: int) -> np.ndarray:
    """sum_{k<n} q^k for q = exp(log_ratio) < 1, without cancellation for q near 1."""
    return np.expm1(n * log_ratio) / np.expm1(log_ratio)


def _gram(m: np.ndarray, n: int) -> np.ndarray:
    """sum_{j<n} M^j 1 1^T (M^j)^T by binary doubling (O(b^3 log n), positive terms)."""
    b = m.shape[0]
    total, power = np.zeros((b, b)), np.eye(b)  # sum over the prefix done, M^prefix
    block, block_power = np.ones((b, b)), m.copy()  # the same for a block of 2^level
    while n:
        if n & 1:
            total = total + power @ block @ power.T
            power = power @ block_power
        n >>= 1
        if n:
            block = block + block_power @ block @ block_power.T
            block_power = block_power @ block_power
    return total


def _state_matrix(thetas: np.ndarray, omegas: np.ndarray) -> np.ndarray:
    """M = diag(theta) - 1 omega^T (entrywise >= 0): the state recursion of C = G^{-1}."""
    return np.diag(thetas) - np.ones((thetas.size, 1)) * omegas[None, :]


def _loss_factors(thetas: np.ndarray, omegas: np.ndarray, n: int) -> tuple[float, float]:
    """(sum_{k<n} h_k^2, sum_{k<n} c_k^2) in closed form, O(b^3 log n)."""
    s = -omegas / (1.0 - thetas)
    rest = 1.0 - float(np.sum(s))
    logs = np.log(thetas)
    rows = (n * rest * rest + 2.0 * rest * float(s @ _geometric(logs, n))
            + float(s @ _geometric(logs[:, None] + logs[None, :], n) @ s))
    cols = 1.0 + float(omegas @ _gram(_state_matrix(thetas, omegas), n - 1) @ omegas)
    return rows, cols


def blt_loss(thetas: object, omegas: object, horizon: int) -> float:
    """The counter's ``loss()`` for BLT parameters, in closed form: sum h_k^2 * sum c_k^2.

    Examples
    --------
    >>> round(blt_loss([0.9], [-0.05], 2**10), 2)
    269.04
    """
    th, om = _check_parameters(thetas, omegas)
    rows, cols = _loss_factors(th, om, check_int("horizon", horizon, low=1))
    return rows * cols


def _unpack(p: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """theta = exp(-exp(p_i)); s = softmax(p_b.., 0) without the slack, so sum s < 1."""
    thetas = np.exp(-np.exp(p[:b]))
    z = np.concatenate([p[b:], [0.0]])
    e = np.exp(z - z.max())
    s = (e / e.sum())[:b]
    return thetas, -(1.0 - thetas) * s


def _arcsine_start(b: int, horizon: int) -> np.ndarray:
    """Quadrature of G(x) = (1 - x)^(1/2) = 1 - int (1 - t) x / (1 - t x) dmu(t).

    mu is the arcsine law on [0, 1] (its moments are the square-root coefficients), so a
    BLT is a quadrature of mu: cells in 1 - t geometric from 1 to 1/(T + 1), theta at
    each cell's geometric centre, s the cell's mass under mu.
    """
    edges = np.geomspace(1.0, 1.0 / (horizon + 1.0), b + 1)
    mass_above = 1.0 - (2.0 / np.pi) * np.arcsin(np.sqrt(1.0 - edges))  # mu([1 - e, 1])
    mass = mass_above[:-1] - mass_above[1:]
    r = -np.log1p(-np.sqrt(edges[:-1] * edges[1:]))
    return np.concatenate([np.log(r), np.log(mass) - np.log1p(-mass.sum())])


@functools.lru_cache(maxsize=64)
def _optimized(horizon: int, buffers: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    def objective(p: np.ndarray) -> float:
        rows, cols = _loss_factors(*_unpack(p, buffers), horizon)
        return math.log(rows) + math.log(cols)

    x0 = _arcsine_start(buffers, horizon)
    bounds = [(math.log(1e-3 / horizon), math.log(50.0))] * buffers + [(-30.0, 30.0)] * buffers
    x0 = np.clip(x0, [lo for lo, _ in bounds], [hi for _, hi in bounds])
    res = minimize(objective, x0, method="L-BFGS-B", bounds=bounds)
    best = res.x if res.fun <= objective(x0) else x0
    thetas, omegas = _unpack(best, buffers)
    return tuple(thetas.tolist()), tuple(omegas.tolist())


def optimal_blt_parameters(horizon: int, buffers: int = DEFAULT_BUFFERS
                           ) -> tuple[np.ndarray, np.ndarray]:
    """(thetas, omegas) minimizing ``blt_loss`` at this horizon (cached per (T, b)).

    L-BFGS-B on theta = exp(-e^p), s = softmax with a slack (so 0 < theta < 1 and
    sum s < 1 hold by construction), from the arcsine quadrature start; deterministic.

    Examples
    --------
    >>> thetas, omegas = optimal_blt_parameters(2**10, buffers=3)
    >>> round(blt_loss(thetas, omegas, 2**10), 2)
    10.74
    """
    horizon = check_int("horizon", horizon, low=1)
    thetas, omegas = _optimized(horizon, check_int("buffers", buffers, low=1))
    return np.array(thetas), np.array(omegas)


def _inverse_coefficients(thetas: np.ndarray, omegas: np.ndarray, n: int) -> np.ndarray:
    """c_0..c_{n-1} of C = G^{-1}: c_k = -omega^T M^(k-1) 1, blocked in O(n b + sqrt(n) b^2)."""
    m = _state_matrix(thetas, omegas)
    width = max(1, math.isqrt(max(n - 1, 1)))
    cols = np.empty((thetas.size, width))  # M^j 1, j < width
    vec = np.ones(thetas.size)
    for j in range(width):
        cols[:, j] = vec
        vec = m @ vec
    step = np.linalg.matrix_power(m, width)
    rows = np.empty((-(-(n - 1) // width), thetas.size))  # -omega^T M^(q width)
    row = -omegas
    for q in range(rows.shape[0]):
        rows[q] = row
        row = row @ step
    return np.concatenate([[1.0], (rows @ cols).ravel()[: n - 1]])


class BltCounter(SecureReleaseMixin, Counter):
    """Private prefix sums by a buffered linear Toeplitz factorization A = B C.

    The encoder is C x (C = G^{-1}, lower-triangular Toeplitz); the release is
    B (C x + z) = A x + A G z, i.e. S_t + n_t with n_t = n_{t-1} + (G z)_t. G z streams
    in O(b d) per step from b buffers: (G z)_t = z_t + sum_i omega_i u_i, then
    u_i <- theta_i u_i + z_t. Memory O(b d) against the square-root
    :class:`~dpol.counters.ToeplitzCounter`'s O(T d), for the same error: with the
    default b = 5 buffers optimized for the horizon, ``loss()`` is within 1.0085x of the
    square-root figure up to T = 2^20 (10.71, 21.16, 30.27 against 10.71, 21.13, 30.02
    at T = 2^10, 2^16, 2^20). Per-coordinate noise variance at t is
    sigma^2 sum_{k < t} h_k^2 with h = cumsum(g) (the squared row t of B = A G).

    ``run`` filters each buffer along time with ``scipy.signal.lfilter`` started from the
    current buffers, so it continues vectorized from any state; it draws the same noise
    as the ``add`` loop and agrees with it to rounding (bit for bit from ``dim`` 512,
    where it steps through time on whole rows, faster there).

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, seed,
    element_sensitivity
        See :class:`dpol.counters.Counter`. Gaussian noise: ``"gaussian"`` or its exact
        discrete twin ``"secure"``.
    buffers : int, optional
        Number b of buffers to optimize for ``horizon`` (default 5; see
        :func:`optimal_blt_parameters`). Leave unset when giving ``thetas``.
    thetas, omegas : array-like of shape (b,), optional
        Explicit BLT parameters instead of the optimized ones: 0 < theta_i < 1,
        omega_i < 0 and sum_i -omega_i / (1 - theta_i) < 1.

    Attributes
    ----------
    thetas_, omegas_ : np.ndarray
        The parameters in use (optimized or given); read-only.

    Privacy
    -------
    Neighbouring relation: replace-one (Delta = 2 bound; add/remove: bound). Changing
    element i by delta (||delta|| <= Delta) changes the encoder C x by the outer product
    of column i of C and delta; that column holds c_0..c_{T-i}, so its norm is
    sqrt(sum_{k <= T - i} c_k^2), a prefix of the same sum and largest for i = 1:
    sensitivity Delta sqrt(sum_{k < T} c_k^2) (``_encoder_norm_sq``; tested by brute force
    and against the column norms of the dense inverse). C x + z is one Gaussian
    mechanism; the release B (C x + z) is post-processing, and for adaptively chosen
    elements a lower-triangular factorization keeps the guarantee (Denisov, McMahan,
    Rush, Smith, Thakurta 2022, Theorem 2.1). Tight: std z Delta ||C e_1|| with
    z = 1/mu*(epsilon, delta) from dp-accounting (the base class). No paper of ours
    publishes this counter, so ``calibration="paper"`` is refused.

    Secure noise (``noise="secure"``): C x is real, so C x + z on a grid would give
    neighbours disjoint supports. The noisy encoder is w_t = round_g(E_t) + z_t instead,
    E_t = sum_k c_k x_{t-k} computed in float64 from the grid-rounded elements (a direct
    dot product over the kept history: O(t d) time and O(T d) memory in this mode), z_t
    discrete Gaussian on g Z^d: an exact grid value. The release is cumsum(G w), streamed
    by the buffers from the noisy encoder alone (post-processing). Sensitivity of
    round_g(E): (Delta + half g sqrt(d)) ||C e_1|| + sqrt(T d) (g + 2 e) (every coordinate
    may round differently, e the float error bound of one coordinate; derivation in
    :func:`~dpol.counters._secure_release.setup_encoder_grid`), within (1 + 2^-10) of the
    float sensitivity by the choice of the (much finer) grid. Calibration: zCDP of the
    discrete Gaussian (CKS 2020 Theorem 14) through the base class's RDP route; under
    adaptive inputs the per-step shifts, conditioned on the past releases, have squared
    norms summing to at most that sensitivity squared, so Renyi composition (Feldman and
    Zrnic 2021, Theorem 3.1) gives the same zCDP. ``run`` is the ``add`` loop here.

    Examples
    --------
    >>> c = BltCounter(2**10, epsilon=1.0, delta=1e-5, seed=0)
    >>> round(c.loss(), 2), c.thetas_.shape
    (10.71, (5,))
    >>> c.run(np.ones(2**10)).shape
    (1024, 1)
    """

    # secure mode rounds the encoder itself (Privacy); FFT / lfilter: run agrees to rounding
    tags = frozenset({"secure_exact", "continues_vectorized"})
    _strategy = "blt"
    _refusal = "a matrix-factorization counter (its l1 column norm grows like sqrt(T))"

    def __init__(self, horizon: int, dim: int = 1, *, buffers: int | None = None,
                 thetas: object = None, omegas: object = None, **kwargs) -> None:
        if (thetas is None) != (omegas is None):
            raise fail("thetas / omegas", "be given both or neither", (thetas, omegas))
        if buffers is not None:
            check_int("buffers", buffers, low=1)
        given = None if thetas is None else _check_parameters(thetas, omegas)
        if given is not None and buffers is not None and buffers != given[0].size:
            raise fail("buffers", f"equal len(thetas) = {given[0].size} or be left unset",
                       buffers)
        self.buffers, self.thetas, self.omegas = buffers, thetas, omegas
        self._given = given
        super().__init__(horizon, dim, **kwargs)

    def _setup_structure(self) -> None:
        if self._given is None:
            b = DEFAULT_BUFFERS if self.buffers is None else self.buffers
            self._given = _check_parameters(*_optimized(self.horizon, b))
        self.thetas_, self.omegas_ = (a.copy() for a in self._given)
        self.thetas_.flags.writeable = self.omegas_.flags.writeable = False
        s = -self.omegas_ / (1.0 - self.thetas_)
        k = np.arange(self.horizon, dtype=np.float64)
        h = (1.0 - s.sum()) + s @ np.exp(np.log(self.thetas_)[:, None] * k[None, :])
        self._cum_sq = np.cumsum(h**2)
        self._c = _inverse_coefficients(self.thetas_, self.omegas_, self.horizon)
        self._norm_sq = float(np.sum(self._c**2))

    def _setup_grid(self) -> None:
        setup_encoder_grid(self, float(np.sum(np.abs(self._c))))

    @property
    def _levels(self) -> int:
        return self.horizon  # the first element enters every encoder value

    @property
    def _encoder_norm_sq(self) -> float:
        return self._norm_sq

    def _reset_structure(self) -> None:
        self._u = np.zeros((self.thetas_.size, self.dim))
        self._n = np.zeros(self.dim)
        self._reset_rounded_encoder()

    def _node_counts(self, t: np.ndarray) -> np.ndarray:
        return self._cum_sq[t - 1]

    def _step_noise(self) -> np.ndarray:
        z = self._source.draw(1)[0]
        if self.grid is not None:  # z becomes the noisy encoder w_t = round_g(E_t) + z_t
            z = self._rounded_encoder(self._c) + z  # exact grid values
        y = z + (self.omegas_[:, None] * self._u).sum(axis=0)
        self._u = self.thetas_[:, None] * self._u + z
        self._n = self._n + y
        self._release = self._n  # secure: cumsum(G w), from the noisy encoder alone
        return self._n

    def _fresh_run_noise(self, n: int) -> np.ndarray:
        z = self._source.draw(n)
        if self.dim >= _ROW_LOOP_DIM:
            return self._row_loop_noise(z)
        acc = np.zeros((n, self.dim))  # sum_i omega_i u_i(before step t), in add()'s order
        for i, (theta, omega) in enumerate(zip(self.thetas_, self.omegas_, strict=True)):
            after, _ = lfilter([1.0], [1.0, -theta], z, axis=0,
                               zi=theta * self._u[i][None, :])
            acc[0] += omega * self._u[i]
            acc[1:] += omega * after[:-1]
            self._u[i] = after[-1]
        y = z + acc
        noise = np.cumsum(np.vstack([self._n[None, :], y]), axis=0)[1:]
        self._n = noise[-1].copy()
        return noise

    def _row_loop_noise(self, z: np.ndarray) -> np.ndarray:
        """``_fresh_run_noise`` for wide vectors: ``add``'s arithmetic, one row at a time.

        lfilter walks each coordinate along time with a stride of ``dim`` floats, which
        misses the cache on wide rows; whole-row numpy operations do the same additions
        in the same order as :meth:`_step_noise` (bit-identical releases).
        """
        u, total = self._u.copy(), self._n.copy()
        thetas = self.thetas_[:, None]
        noise, term = np.empty_like(z), np.empty(self.dim)
        for t, zt in enumerate(z):
            y = noise[t]
            np.multiply(self.omegas_[0], u[0], out=y)  # sum_i omega_i u_i, as add's sum
            for i in range(1, len(u)):
                np.multiply(self.omegas_[i], u[i], out=term)
                y += term
            y += zt  # z + sum: the same float (addition commutes)
            u *= thetas
            u += zt
            y += total  # n_t = n_{t-1} + y_t
            total = y
        self._u, self._n = u, total.copy()
        return noise

    def node_values(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        return fftconvolve(values, self._c[: len(values), None], axes=0)[: len(values)]

    def _state_arrays(self) -> dict:
        return {"u": self._u, "n": self._n, "x": self._x, "last_sum": self._last_sum}

    def _set_state_arrays(self, state: dict) -> None:
        self._u = np.array(state["u"], dtype=np.float64).reshape(self.thetas_.size, self.dim)
        self._n = np.array(state["n"], dtype=np.float64).reshape(self.dim)
        if self.grid is not None:
            self._x = np.array(state["x"], dtype=np.float64).reshape(-1, self.dim)
            self._last_sum = np.array(state["last_sum"], dtype=np.float64).reshape(self.dim)

    def _params(self) -> dict:
        # the parameters in use, not re-optimized: a checkpoint continues identically
        # even where another scipy would stop the optimizer elsewhere
        return {**super()._params(), "buffers": None, "thetas": self.thetas_.tolist(),
                "omegas": self.omegas_.tolist()}
