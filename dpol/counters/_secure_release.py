"""Secure noise for the counters: the grid, the inflated sensitivity, exact releases (L2).

The binary and window trees release ``S_t + noise_t`` with integer node weights, so with
grid-rounded elements that sum *is* an exact function of the noisy nodes
(:func:`setup_node_grid`). The Honaker tree (real inverse-variance weights) and the
matrix-factorization counters (real encoder C) are not: there, in secure mode, every
release is computed from the noisy released values alone (post-processing,
:class:`SecureReleaseMixin`), never as ``S_t + weighted noise``, and the matrix
counters round the encoder itself to the grid (:func:`setup_encoder_grid`).
"""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import fail
from dpol.errors import HorizonExceededError
from dpol.noise.discrete import discrete_gaussian_tau, grid_spacing

__all__ = ["SecureReleaseMixin", "float_dot_error", "largest_abs_row_sum", "setup_encoder_grid",
           "setup_node_grid"]

#: unit roundoff of float64
UNIT_ROUNDOFF = 2.0**-53


def float_dot_error(n: int, abs_sum: float) -> float:
    """Bound on |fl(sum_k a_k b_k) - sum_k a_k b_k| for n products, sum |a_k b_k| <= abs_sum.

    Higham, Accuracy and Stability of Numerical Algorithms (2002), eq. (3.5): gamma_n
    sum |a_k||b_k| with gamma_n = n u / (1 - n u), u = 2^-53, for any summation order
    (pairwise, blocked BLAS; a fused multiply-add only removes roundings).

    Examples
    --------
    >>> float_dot_error(2**16, 100.0) < 1e-9
    True
    """
    gamma = n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)
    return gamma * abs_sum


def largest_abs_row_sum(rows: np.ndarray) -> float:
    """max_t sum_j |C_tj| over the rows of an encoder (dense C, or a band's rows): the
    ``abs_row_sum`` of :func:`setup_encoder_grid` for encoders whose rows differ.

    Examples
    --------
    >>> largest_abs_row_sum(np.array([[1.0, 0.0], [-0.5, 0.75]]))
    1.25
    """
    return float(np.max(np.sum(np.abs(rows), axis=1)))


def setup_node_grid(counter: object) -> None:
    """Secure noise of a tree counter: pick the grid, inflate the sensitivity, re-certify.

    Privacy
    -------
    Discrete Gaussian (``"secure"``) or Laplace (``"secure_laplace"``) noise from exact
    samplers on OS randomness (CKS 2020, Algorithms 1-3) on a grid g Z, g the largest
    power of two <= min(s, Delta / sqrt(d)) / 2^10. Elements are rounded to g Z^d first
    (else neighbours' supports are disjoint: Mironov 2012), so nodes are exact grid sums.
    Sensitivity: Delta' = Delta + g sqrt(d) under replace-one, Delta + g sqrt(d)/2 under
    add/remove, within 1 + 2^-10 of Delta (l1: sqrt(d) Delta'). Calibration: the
    discrete Gaussian is (Delta'^2 m / (2 s^2))-zCDP over an element's m nodes (CKS
    Theorem 14), z the smallest dp-accounting's RDP accountant certifies (4-11% above the
    analytic Gaussian's; Theorem 15's slack carried as xi); the discrete Laplace gives
    z = 1 / epsilon. Derivation: docs/derivations/tree_counters.md.

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(16, 2, noise="secure", epsilon=1.0, delta=1e-5)
    >>> ref = BinaryTreeCounter(16, 2, epsilon=1.0, delta=1e-5)
    >>> bool(ref.node_sensitivity < c.node_sensitivity <= (1 + 2**-10) * ref.node_sensitivity)
    True
    """
    delta_node = counter._node_sensitivity
    dim, levels = counter.dim, counter.levels
    g = counter.noise_kind.grid(counter.noise_scale, delta_node, dim)
    # add/remove: the neighbour's element is 0, on the grid, so only one side is rounded.
    # A caller whose neighbours differ in two nonzero elements (the bandit's batch sums
    # with and without one loss) must say replace_one here, with its element_sensitivity
    half = 1.0 if counter.neighbouring == "replace_one" else 0.5
    inflated = delta_node + half * g * math.sqrt(dim)
    scale = counter.noise_scale * inflated / delta_node
    largest = counter.horizon * counter.bound + 2.0**20 * scale * levels
    if largest >= 2.0**52 * g:
        raise fail("noise", f"not be {counter.noise!r} at this noise level: sums up to "
                   f"{largest:.3g} exceed 2^52 grid steps of {g:g}, where float64 sums "
                   "stop being exact (use more noise or float noise)", counter.noise)
    counter.grid, counter._node_sensitivity = g, inflated
    if counter.noise_kind.approximate and counter.delta > 0.0:  # the discrete Gaussian
        coords = counter.horizon * levels * dim  # >= the noised values
        counter._tau = discrete_gaussian_tau(counter.noise_scale / g, coords)


class SecureReleaseMixin:
    """Releases computed from noisy values alone in secure mode (mix in before Counter).

    The strategy correlates the noisy values (``_noisy_values``) instead of the draws, so
    its output is the release itself; ``run`` is the ``add`` loop (the exact sampler
    dominates). Float noise is unchanged.

    Privacy
    -------
    Every release is a deterministic function of exact grid values that a discrete
    Gaussian (or Laplace) mechanism released, so it has their guarantee (post-processing);
    the counters document the mechanism and its sensitivity.

    Examples
    --------
    >>> from dpol.counters import HonakerTreeCounter
    >>> c = HonakerTreeCounter(4, noise="secure", noise_multiplier=1.0, delta=1e-5)
    >>> c.run(np.zeros((4, 1))).shape, c.grid
    ((4, 1), 0.001953125)
    """

    #: secure matrix counters: the encoder rounding's sqrt(T d) (g + 2 e) (setup_encoder_grid)
    _extra_sensitivity = 0.0

    @property
    def sensitivity(self) -> float:
        """l2 sensitivity of the (secure: grid-rounded) encoder (see Privacy)."""
        return super().sensitivity + self._extra_sensitivity

    def _reset_secure(self) -> None:
        """Secure matrix counters keep the grid-rounded elements and S_{t-1} (else None)."""
        secure = self.grid is not None
        self._x = np.zeros((0, self.dim)) if secure else None
        self._last_sum = np.zeros(self.dim) if secure else None

    def _noisy_values(self, rows: np.ndarray) -> np.ndarray:
        """Secure matrix counters: the noisy encoder w_t = round_g(E_t) + z_t."""
        if self.grid is None:
            return rows
        return self._rounded_encoder() + rows  # exact grid values

    def _noise(self, start: int, n: int) -> np.ndarray:
        noise = super()._noise(start, n)
        if self.grid is not None:  # the release, computed from the noisy values alone
            self._release = noise[0]
        return noise

    #: secure-mode state checkpointed beside the strategy's (attributes ``_<key>``)
    _secure_keys: tuple[str, ...] = ("x", "last_sum")

    def _state_arrays(self) -> dict:
        return {**super()._state_arrays(),
                **{key: getattr(self, "_" + key) for key in self._secure_keys}}

    def _set_state_arrays(self, state: dict) -> None:
        super()._set_state_arrays({k: v for k, v in state.items()
                                   if k not in self._secure_keys})
        if self.grid is not None:
            for key in self._secure_keys:
                shape = getattr(self, "_" + key).shape
                setattr(self, "_" + key, np.array(state[key], dtype=np.float64).reshape(
                    -1, *shape[1:]))

    def _encoder_weights(self) -> np.ndarray:
        """Row t of C over the last len(weights) elements, oldest first (Toeplitz C:
        c_{t-1}, ..., c_0; a subclass with another encoder overrides it)."""
        return self.strategy.coefficients[: self.t][::-1]

    #: secure matrix counters keep this many rounded elements (None: all; a banded
    #: encoder needs only the last b)
    _kept_elements: int | None = None

    def _rounded_encoder(self) -> np.ndarray:
        """Secure matrix counters: record x_t, return round_g((C x)_t) from the rounded x.

        x_t = S_t - S_{t-1} is exact (both are grid sums below 2^52 g)."""
        self._x = np.vstack([self._x, self._sum - self._last_sum])
        if self._kept_elements is not None:
            self._x = self._x[-self._kept_elements:]
        self._last_sum = self._sum.copy()
        weights = self._encoder_weights()
        encoded = weights @ self._x[len(self._x) - len(weights):]
        return np.rint(encoded / self.grid) * self.grid

    def add(self, v: object) -> np.ndarray:
        """:meth:`Counter.add`; in secure mode the release from the noisy values alone."""
        out = super().add(v)
        return out if self.grid is None else self._release.copy()  # never a view of state

    def _run_owned(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`Counter._run_owned`; in secure mode the ``add`` loop (checked before any
        step)."""
        if self.grid is None:
            return super()._run_owned(rows)
        if self.t + rows.shape[0] > self.horizon:
            raise HorizonExceededError(f"{type(self).__name__}: adding {rows.shape[0]} "
                                       f"elements after {self.t} exceeds horizon="
                                       f"{self.horizon}")
        out = np.empty(rows.shape)
        for i, row in enumerate(rows):
            out[i] = self.add(row)
        return out


def setup_encoder_grid(counter: object, abs_row_sum: float) -> None:
    """Secure noise of a matrix counter: grid g, inflated sensitivity, magnitude check.

    The noisy encoder is w = round_g(E(x)) + g Y, E(x) the float64 C x of the rounded
    elements, Y discrete Gaussian. Rounding an element moves it by at most half g sqrt(d)
    (half = 1 replace-one, 1/2 add/remove), and each of the T d coordinates of E by at
    most g/2 + e (e: :func:`float_dot_error`, from ``abs_row_sum`` = max_t sum_j |C_tj|).
    g is the largest power of two <= min(s, Delta ||C|| / (4 sqrt(T d))) / 2^10, halved
    until Delta'' <= (1 + 2^-10) Delta ||C||.

    Privacy
    -------
    Relation: the counter's. Sensitivity: Delta'' = (Delta + half g sqrt(d)) ||C|| +
    sqrt(T d) (g + 2 e), ||C|| = max_i ||C e_i||, on the lattice g Z^(T d). Calibration:
    the discrete Gaussian of std s is (Delta''^2 / (2 s^2))-zCDP (CKS 2020 Theorem 14),
    s = z Delta'', the slack tau (Theorem 15) recomputed. Refused if the float error
    would exceed 2^-11 of the sensitivity or values could reach 2^52 g.

    Examples
    --------
    >>> from dpol.counters import ToeplitzCounter
    >>> c = ToeplitzCounter(16, 3, epsilon=1.0, delta=1e-5, noise="secure")
    >>> ref = ToeplitzCounter(16, 3, epsilon=1.0, delta=1e-5)
    >>> c.grid, bool(ref.sensitivity < c.sensitivity <= (1 + 2**-10) * ref.sensitivity)
    (6.103515625e-05, True)
    """
    delta = counter._node_sensitivity
    norm = math.sqrt(counter.strategy.column_norm_sq(counter.participation))
    sens = delta * norm
    dim = counter.dim
    coords = math.sqrt(counter.horizon * dim)
    half = 1.0 if counter.neighbouring == "replace_one" else 0.5
    err = float_dot_error(counter.horizon, abs_row_sum * 2.0 * counter.bound)
    if 2.0 * coords * err > 2.0**-11 * sens:
        raise fail("noise", f"not be 'secure' for {type(counter).__name__} at horizon="
                   f"{counter.horizon}, dim={dim}: float64 errors of the encoder would "
                   "inflate the sensitivity by more than 2^-11", counter.noise)
    g = grid_spacing(min(counter.noise_scale, sens / (4.0 * coords)))

    def inflated(g: float) -> float:
        return (delta + half * g * math.sqrt(dim)) * norm + coords * (g + 2.0 * err)

    while inflated(g) > (1.0 + 2.0**-10) * sens:
        g /= 2.0
    scale = counter.noise_scale * inflated(g) / sens
    largest = abs_row_sum * 2.0 * counter.bound + 2.0**20 * scale
    if largest >= 2.0**52 * g:
        raise fail("noise", f"not be 'secure' at this noise level: encoder values up to "
                   f"{largest:.3g} exceed 2^52 grid steps of {g:g}, where float64 stops "
                   "holding grid values exactly (use more noise or float noise)",
                   counter.noise)
    counter.grid = g
    counter._node_sensitivity = delta + half * g * math.sqrt(dim)
    counter._extra_sensitivity = coords * (g + 2.0 * err)
    if counter.delta > 0.0:
        counter._tau = discrete_gaussian_tau(counter.noise_scale / g, counter.horizon * dim)
