"""The window tree mechanism of WDP (Section III): window DP with two block trees."""

from __future__ import annotations

import numpy as np

from dpol._validation import check_int
from dpol.counters._base import Counter
from dpol.counters._bits import lowbit, popcount, set_bits_high_to_low, trailing_zeros

__all__ = ["WindowTreeCounter"]


class WindowTreeCounter(Counter):
    """Private prefix sums under window DP: only the last W elements are protected.

    The stream is cut into aligned blocks of W' = 2^ceil(log2 W) elements, each a complete
    binary tree of depth log2 W' + 1 (WDP Section III; the layout the paper leaves implicit:
    docs/errata.md, WDP-8). With t = (k-1)W' + j, the
    release is

        S_t  +  noise of the suffix nodes of block k-1 covering offsets [j, W')
             +  noise of the prefix nodes of block k covering offsets [0, j),

    i.e. the exact sum of the elements up to t - W' plus the noisy dyadic decomposition of
    the window (t - W', t]: at most log2 W' + 1 noisy nodes. Node noise is drawn once and
    reused; prefix nodes when they close, the suffix nodes of a block when the next block
    starts (the law of drawing every node at completion; WDP-8). With W' >= T the
    draws and releases are exactly those of :class:`BinaryTreeCounter`. Memory O(W d).

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, noise, seed
        See :class:`dpol.counters.Counter`.
    window : int
        W, the number of most recent elements protected (rounded up to a power of two,
        which protects more: docs/errata.md, WDP-4).

    Privacy
    -------
    Window DP (WDP Definition 6, off-by-one fixed: docs/errata.md, WDP-4): element i is
    protected at (epsilon, delta) in the releases at times i .. i+W-1; later releases
    contain it exactly, so **expired elements are not protected**. Neighbouring:
    replace-one (Δ = 2*bound; the paper's L + μD: WDP-1). Element i lies in
    m = min(log2 W', floor(log2 T)) + 1 block-internal nodes (its leaf and ancestors), the
    only ones that carry it noisily, so the noisy-node vector has l2 sensitivity Δ sqrt(m) (WDP-8).
    Gaussian, tight: std z Δ sqrt(m), z = 1/mu*(epsilon, delta) (dp-accounting analytic
    Gaussian; exactly window (epsilon, delta)-DP: docs/errata.md, WDP-2). Gamma (window
    epsilon-DP, Lemma 1): density exp(-||n||/theta) per node, theta = m Δ / epsilon by
    basic composition, tight for pure DP. ``calibration="paper"``: WDP Lemma 1 theta
    (c1 = 4, WDP-8) or Lemma 3 sigma, verbatim; sound but 5-20x more noise (WDP-2).

    Examples
    --------
    >>> c = WindowTreeCounter(16, window=4, epsilon=1.0, delta=1e-5, seed=0)
    >>> out = c.run(np.ones(16))
    >>> c.privacy.window, round(c.sensitivity**2, 9)  # (2 bound)^2 * (log2 4 + 1)
    (4, 12.0)
    """

    _paper_noises = ("gaussian", "gamma")  # WDP Lemmas 3 and 1
    # releases add node noises with integer weights (secure noise is exact)
    tags = frozenset({"bit_identical_run", "secure_exact"})
    _strategy = "window_tree"

    def __init__(self, horizon: int, dim: int = 1, *, window: int, **kwargs) -> None:
        self.window = check_int("window", window, low=1)
        super().__init__(horizon, dim, **kwargs)

    def _setup_structure(self) -> None:
        self._h = (self.window - 1).bit_length()  # W' = 2^h >= W
        self._block = 1 << self._h

    def _window(self) -> int | None:
        return self.window

    @property
    def _levels(self) -> int:
        return min(self._h, self.horizon.bit_length() - 1) + 1

    def _reset_structure(self) -> None:
        self._level_noise = np.zeros((self._h + 1, self.dim))  # prefix nodes, current block
        self._prev_suffix: np.ndarray | None = None  # (W'+1, d) suffix noise, previous block

    def _node_counts(self, t: np.ndarray) -> np.ndarray:
        j = (t - 1) % self._block + 1
        suffix = np.where(t > self._block, popcount(self._block - j), 0)
        return (popcount(j) + suffix).astype(np.float64)

    def _paper_scale(self, eps: float) -> tuple[float, str]:
        from dpol.accounting import presets

        delta_2 = self.node_sensitivity
        if self.noise_kind.approximate:  # gaussian (paper noises: gaussian, gamma)
            sigma = presets.wdp_gaussian_sigma(eps, self.delta, delta_2, self.window)
            return sigma, "WDP Lemma 3 sigma"
        return presets.wdp_gamma_theta(eps, delta_2, self.window), "WDP Lemma 1 theta"

    def _suffix_noise(self, nodes: np.ndarray) -> np.ndarray:
        """Suffix sums over a block's right-child nodes; ``nodes[a-1]`` covers [a, a + lowbit(a)).

        snoise[a] = node(a) + snoise[a + lowbit(a)], snoise[W'] = 0, for a = W'-1 .. 1; the
        same right-to-left order of additions in the streaming and the vectorized path.
        Works on a leading batch axis: ``nodes`` of shape (..., W'-1, d).
        """
        size = self._block
        out = np.zeros((*nodes.shape[:-2], size + 1, nodes.shape[-1]))
        offsets = np.arange(1, size, dtype=np.int64)
        steps_left = popcount(size - offsets)  # nodes in the decomposition of [a, W')
        for k in range(1, int(steps_left.max(initial=0)) + 1):
            a = offsets[steps_left == k]
            out[..., a, :] = nodes[..., a - 1, :] + out[..., a + lowbit(a), :]
        return out

    def _step_noise(self) -> np.ndarray:
        block, off = divmod(self.t - 1, self._block)
        if off == 0 and block >= 1:
            self._prev_suffix = self._suffix_noise(self._source.draw(self._block - 1))
            self._level_noise[:] = 0.0
        j = off + 1
        self._level_noise[int(trailing_zeros(j))] = self._source.draw(1)[0]
        acc = np.zeros(self.dim)
        for b in set_bits_high_to_low(j):
            acc = acc + self._level_noise[b]
        return acc if block == 0 else self._prev_suffix[j] + acc

    def _fresh_run_noise(self, n: int) -> np.ndarray:
        size = self._block
        n_blocks = -(-n // size)
        # draw layout: block 0's prefix rows; then per block b >= 1 the W'-1 suffix rows of
        # block b-1 followed by block b's prefix rows, exactly the add loop's order
        rows = self._source.draw(n + (n_blocks - 1) * (size - 1))
        steps = np.arange(1, n + 1, dtype=np.int64)
        block, off = np.divmod(steps - 1, size)
        row_of_step = np.where(block == 0, off, size + (block - 1) * (2 * size - 1)
                               + (size - 1) + off)
        prefix_nodes = rows[row_of_step]
        # prefix noise restarts every block: run the recurrence on the in-block index j
        j = off + 1
        noise = np.empty((n, self.dim))
        counts = popcount(j)
        single = counts == 1
        noise[single] = prefix_nodes[single]
        for k in range(2, int(counts.max()) + 1):
            idx = np.flatnonzero(counts == k)
            noise[idx] = noise[idx - lowbit(j[idx])] + prefix_nodes[idx]
        if n_blocks > 1:
            first = size + np.arange(n_blocks - 1) * (2 * size - 1)  # suffix rows per block
            suffix_rows = rows[first[:, None] + np.arange(size - 1)[None, :]]
            suffix = self._suffix_noise(suffix_rows)  # (n_blocks-1, W'+1, d)
            later = block >= 1
            noise[later] = suffix[block[later] - 1, j[later]] + noise[later]
            self._prev_suffix = suffix[-1].copy()
        # the add loop's state: prefix nodes of the current (last) block
        last = block == block[-1]
        tz_last = trailing_zeros(j[last])
        for k in range(self._h + 1):
            closed = np.flatnonzero(tz_last == k)
            self._level_noise[k] = prefix_nodes[last][closed[-1]] if closed.size else 0.0
        return noise

    def node_values(self, values: np.ndarray) -> np.ndarray:
        """Clean values of every noised node: each step's prefix node, then the right-child
        nodes of every block that has a successor within the stream."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        n, size = len(values), self._block
        sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        steps = np.arange(1, n + 1)
        j = (steps - 1) % size + 1
        prefix = sums[steps] - sums[steps - lowbit(j)]
        a = np.arange(1, size)
        starts = np.arange(0, n - size, size)  # blocks followed by another block
        lo = (starts[:, None] + a[None, :]).ravel()
        suffix = sums[lo + np.tile(lowbit(a), len(starts))] - sums[lo]
        return np.vstack([prefix, suffix])

    def _state_arrays(self) -> dict:
        return {"level_noise": self._level_noise, "prev_suffix": self._prev_suffix}

    def _set_state_arrays(self, state: dict) -> None:
        self._level_noise = np.array(state["level_noise"], dtype=np.float64)
        prev = state["prev_suffix"]
        self._prev_suffix = None if prev is None else np.array(prev, dtype=np.float64)

    def _params(self) -> dict:
        return {**super()._params(), "window": self.window}

