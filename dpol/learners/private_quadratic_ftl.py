"""PQFTL: private follow-the-leader for quadratic losses (JKT Section 4, Alg. 4, Thm 3)."""

from __future__ import annotations

import math
from contextlib import nullcontext

import numpy as np

from dpol._validation import check_bound, check_int, check_real, fail
from dpol.accounting.events import MechanismEvent
from dpol.accounting.mechanism import Mechanism
from dpol.accounting.presets import jkt_private_sum_sigma
from dpol.counters import BinaryTreeCounter, resolve_counter
from dpol.learners import _solve_schedule as schedule
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner
from dpol.learners._joint_counters import (
    joint_counters,
    joint_events,
    outer_product_sensitivity,
)
from dpol.learners._multi_output import QuadraticOutputs, check_outputs, u_element, u_elements
from dpol.learners._psd_solve import (
    _CHUNK,
    _blas_controller,
    _Helper,
    _helper_possible,
    _psd_solver,
    _solve_printed,
    _svec_layout,
    _svec_outer,
)
from dpol.learners._shared_sums import shared_sums

__all__ = ["PrivateQuadraticFTL"]

#: rows per vectorized block without ``fixes``: bounds the (block, d, d) arrays to ~32 MB
_BLOCK_FLOATS = 1 << 22
#: rows per block with ``fixes`` (svec elements): (block, d(d+1)/2) arrays of ~4 MB, 128
#: rows at d = 90, where elements and counters took 95-110 us a row against 110-130 us
#: with blocks of 32 or 512 rows (measured)
_SVEC_BLOCK_FLOATS = 1 << 19
#: a forked helper process solves steps too (_Helper) from this dimension and this many
#: rows (measured at d = 10: T = 40,000 in 0.53 s against 0.90 s, T = 4096 0.11 against
#: 0.17 s; at d = 90, T = 20,000 9.7 s against 18.8 s)
_HELPER_DIM = 8
_HELPER_ROWS = 4096


class PrivateQuadraticFTL(QuadraticOutputs, OnlineLearner):
    """Follow the leader on f_t(w) = 1/2 (y_t - <x_t, w>)^2 + alpha/2 ||w||^2 over R^d.

    w_{t+1} = (t alpha I + V_t)^(-1) u_t with V_t = sum x x^T and u_t = sum y x, both
    released by private counters; the solve is post-processing.

    Parameters
    ----------
    dim : int
    alpha : float
        Regularisation (alpha > 0); JKT's experiments use 1.
    bound : float
        R: ||x_t|| <= R, and |y_t| <= R unless ``y_bound`` is given (clipped, counted).
    y_bound : float, optional
        Y: |y_t| <= Y. Labels are learnt times R / Y and ``weights`` given back in their
        units, so the noise and the fit are the same at every label scale.
    horizon : int
    fixes : bool
        Free post-processing (docs/errata.md, JKT-5): a symmetric V (svec), projected on
        the PSD cone, and w clipped to a ball holding every exact FTL iterate. Without
        them (JKT as printed) the solve can be indefinite and the regret explodes.
    noise_ridge : bool
        Beyond the papers (needs fixes): add a public high-probability bound on the
        noise's operator norm to the ridge (AdaSSP's idea, Wang 2018); post-processing.
        It cuts the excess regret 3-5x (``benchmarks/excess_regret.py``).
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md). Counter of both sums: JKT's ``binary_tree`` by
        default, with ``counter_options`` (e.g. ``{"window": 64}``).
    n_jobs : {1, 2}
        2: ``run`` solves on a forked second core (Linux, d >= 8), with the same bits.
    solves_per_doubling : int, optional
        B: solve ~B (1 + log2(T/B)) times on a public schedule (None: every step).
    outputs : int
        K: labels are rows y_t, ||y_t|| <= Y (one-hot: K classes); ``weights`` (d, K)
        solve for U_t = sum x y^T (Frobenius-clipped). Needs fixes, tight calibration.

    Options beyond the paper, in full: docs/derivations/pqftl.md.

    Privacy
    -------
    Replace-one (or add/remove), one stream element. Labels enter times the public R / Y,
    so both counters' elements, svec(x x^T) (vec without ``fixes``) and (R / Y) y x, are
    bounded by R. Sensitivity of the stacked element: s = 3 R^2 / sqrt(2) under
    replace-one, sqrt(2) R^2 under add/remove (``outer_product_sensitivity``), in m =
    floor(log2 T) + 1 tree nodes. Tight: one Gaussian mechanism of std s sqrt(m) /
    mu*(epsilon, delta) on both counters (JKT Theorem 3; docs/errata.md, JKT-4); secure
    noise adds the grids' rounding to s and sizes the stds by zCDP. Paper: JKT's
    PrivateSum sigma at (epsilon/2, delta/2) per tree, with a ``PaperCalibrationWarning``.
    The solve, clipping, ``noise_ridge`` and the schedule are post-processing; ``privacy``
    is the counters' joint events (a window W < horizon gives window DP). Derivation:
    docs/derivations/pqftl.md.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) / 2; y = X @ [0.3, -0.2, 0.1]
    >>> m = PrivateQuadraticFTL(3, horizon=500, epsilon=1.0, delta=1e-5, seed=0)
    >>> m.run(X, y).weights.shape, m.privacy.epsilon
    ((500, 3), 1.0)
    """

    #: capabilities (:data:`dpol.learners._api.TAGS`)
    _tags = frozenset({"least_squares"})
    #: what of a Mechanism it takes (:class:`~dpol.learners.Accepts`)
    accepts = Accepts(noises=("gaussian", "secure"), counter="binary_tree", window=True)

    bound_names = ("bound", "y_bound")  # its parameters (OnlineLearner.bound_names)
    #: a least-squares learner: its post-processed predictions are clipped to y_bound
    #: (:func:`dpol.learners.postprocess.label_bound`)
    least_squares = True
    #: every step: what states saved before ``solves_per_doubling`` existed restore to
    solves_per_doubling = None

    def __init__(self, dim: int, *, horizon: int, alpha: float = 1.0, bound: float = 1.0,
                 y_bound: float | None = None, fixes: bool = True, noise_ridge: bool = False,
                 outputs: int = 1, n_jobs: int = 1, solves_per_doubling: int | None = None,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        bound = check_bound("bound", bound)
        y_bound = bound if y_bound is None else y_bound  # checked by the base
        super().__init__(dim, horizon=horizon, x_bound=bound, y_bound=y_bound, **privacy)
        self.alpha = check_real("alpha", alpha, low=0.0, low_open=True)
        self.bound = bound
        self.fixes = bool(fixes)
        self.noise_ridge = bool(noise_ridge)
        self.n_jobs = check_int("n_jobs", n_jobs, low=1)
        if self.n_jobs > 2:
            raise fail("n_jobs", "be 1 or 2 (one helper process at most)", n_jobs)
        self.solves_per_doubling = schedule.check_solves_per_doubling(solves_per_doubling)
        self.outputs = check_outputs(self, outputs)
        if self.is_private and self.delta == 0.0:
            raise fail("delta", "be > 0 (Gaussian tree noise)", self.delta)
        self.radius = min(self.y_bound / math.sqrt(self.alpha),
                          bound * self.y_bound / self.alpha)
        # labels enter the u counter times R / Y (Privacy): w in these units, radius too
        self._label_scale = bound / self.y_bound
        self._radius = self.radius * self._label_scale
        # _stacked: the stacked-element bound the tight calibration used (joint_events)
        self._counters, self._stacked = self._build_counters(resolve_counter(self.counter))
        self._w = self._zero_weights()  # (d,), or (d, K) with outputs

    def _build_counters(self, cls: type) -> tuple[tuple, float | None]:
        d, r2, du = self.dim, self.bound**2, self.dim * self.outputs  # du: vec(x y^T)
        ry = r2  # the u counter's element (R / Y) y x has norm <= R^2
        sens_v = math.sqrt(2.0) * r2 if self.neighbouring == "replace_one" else r2
        dim_v = d * (d + 1) // 2 if self.fixes else d * d  # svec or vec (class Privacy)
        specs = [(dim_v, {"bound": r2, "element_sensitivity": sens_v}), (du, {"bound": ry})]

        paper = None
        if self.calibration == "paper" and self.is_private and cls is BinaryTreeCounter:
            # JKT Alg. 4: each tree at (eps/2, delta/2); it passes R for the u tree (JKT's
            # one R bounds both ||x|| and |y|, as it does the rescaled labels)
            r = self.bound
            paper = ([jkt_private_sum_sigma(self.epsilon / 2, self.delta / 2, self.horizon, b)
                      for b in (r * r, r)], "JKT's PQFTL noise (PrivateSum)")
        return joint_counters(cls, self.horizon, specs, epsilon=self.epsilon,
                              delta=self.delta, neighbouring=self.neighbouring,
                              calibration=self.calibration, options=self.counter_options,
                              seed=self.seed, paper=paper, noise=self.noise,
                              element_sensitivity=outer_product_sensitivity(
                                  *self.element_bounds, self.neighbouring))

    @property
    def element_bounds(self) -> tuple[float, float]:
        """(R, R): the bounds on ||x|| and on the rescaled labels (R / Y) |y| that the
        counters' elements svec(x x^T), (R / Y) y x are calibrated for (Privacy)."""
        return self.bound, self.bound

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The V and u counters' release (Privacy): their events, or one event of the
        stacked release when the joint bound is smaller (``joint_events``)."""
        return joint_events(self._counters, self._stacked)

    @property
    def weights(self) -> np.ndarray:
        return self._w / self._label_scale  # in the labels' units (a fresh array)

    #: failure probability of the operator-norm bound behind ``noise_ridge``
    _RIDGE_BETA = 0.05

    def _ridge(self, steps: np.ndarray) -> np.ndarray | float:
        """lambda_t of ``noise_ridge`` (0 without it or without noise)."""
        if not self.noise_ridge:
            return 0.0
        # the off-diagonal entries of the released V_t carry half the variance of an
        # svec coordinate (or of a symmetrised full-matrix entry)
        s = np.sqrt(0.5 * self._counters[0].variance(steps.astype(np.int64)))
        return s * (2.0 * math.sqrt(self.dim) + 2.0 * math.sqrt(math.log(1.0 / self._RIDGE_BETA)))

    def _ridges(self, steps: np.ndarray) -> np.ndarray:
        """The ridge t alpha + lambda_t of the solve at each step t (float array)."""
        return steps * self.alpha + self._ridge(steps)

    def _learn(self, x: np.ndarray, y: float) -> None:
        # the counters' add, not a one-row run (whose setup cost ~250 us per step); the
        # elements, unscaling and solve are _run's on the same numbers: the same releases
        d, layout = self.dim, _svec_layout(self.dim)
        v_hat = self._counters[0].add(_svec_outer(x[None, :], layout)[0] if self.fixes
                                      else np.outer(x, x).ravel())  # svec, or vec as printed
        u_hat = self._counters[1].add(u_element(x, y * self._label_scale)).reshape(self._w.shape)
        if not schedule.solved_steps(self.t_, self.solves_per_doubling, self.horizon):
            return  # the counters ran; the last solved w is released again
        if not self.fixes:
            self._w = _solve_printed(v_hat.reshape(1, d, d), u_hat[None, :],
                                     np.array([self.t_ * self.alpha]))[0]
            return
        v_hat /= layout.scale  # add returns a fresh array
        # _run's ridge: t alpha + 0.0 without noise_ridge, the same float either way
        ridge = (float(self._ridges(np.array([float(self.t_)]))[0]) if self.noise_ridge
                 else float(self.t_) * self.alpha)
        # see _run: below d = 16 the BLAS limit costs ~9 us, more than the solve
        with _blas_controller().limit(limits=1, user_api="blas") if d >= 16 else nullcontext():
            self._w = _psd_solver(d).solve_clipped(v_hat, u_hat, ridge, self._radius)

    def _run(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Blockwise replay: the released weights before each step.

        Small matrices: multi-threaded BLAS only adds contention (measured on the 2-core
        machine: eigh of one 90x90 matrix 25.9 ms with 2 threads, 0.9 ms with one), so BLAS
        runs single-threaded, and with n_jobs=2 on long streams (_HELPER_DIM, _HELPER_ROWS)
        a forked helper process solves chunks of steps on the second core (_Helper) while this one
        draws the noise and solves the chunks the helper has no room for. A schedule's
        rows are gathered and solved, then spread over the skipped ones (release_arrays).
        """
        if self._label_scale != 1.0:
            y = y * self._label_scale  # a fresh array: the u counter's labels (Privacy)
        if not self.fixes:
            return self._run_full(X, y)
        n, d = X.shape
        start = self.t_
        layout, solver = _svec_layout(d), _psd_solver(d)
        steps = np.arange(start + 1, start + n + 1)
        # the rows whose step recomputes w
        rows = np.flatnonzero(schedule.solved_steps(steps, self.solves_per_doubling, self.horizon))
        every = len(rows) == n
        helped = self.n_jobs > 1 and d >= _HELPER_DIM and len(rows) >= _HELPER_ROWS \
            and self.outputs == 1 and _helper_possible()
        weights, solved, helped = schedule.release_arrays(n, self._w.shape, rows, helped)
        weights[0] = self._w
        block = max(_CHUNK, _SVEC_BLOCK_FLOATS // len(layout.scale) // _CHUNK * _CHUNK)
        # one elements array for every block: the V counter clips and sums in it and
        # returns it, and it is consumed (unscaled or copied to the helper) before the
        # next block. A fresh 4 MB array a block cost ~16 us a row more at d = 90 in
        # the elements, clip and running sum (measured in the replay, where the noise's
        # arrays come and go beside it; a lone svec loop shows no difference and no
        # page faults, so it is the cache, not the allocator)
        # a twin whose private learner's counters ran these rows takes their exact sums
        # (:func:`dpol.learners._shared_sums.share_exact_sums`)
        shared = shared_sums(self, start, n)
        elements = None if shared is not None else np.empty((min(n, block), len(layout.scale)))
        helper = None
        with _blas_controller().limit(limits=1, user_api="blas"):  # the child inherits it
            if helped:
                try:
                    helper = _Helper(solver, self._radius, solved, layout.scale)
                except OSError:  # no process or memory to spare: one core it is
                    helper = None
            try:
                for lo in range(0, n, block):
                    hi = min(n, lo + block)
                    a, b = np.searchsorted(rows, (lo, hi))  # this block's: rows[a:b]
                    if shared is not None:  # the sums at rows[a:b], fresh arrays
                        v_hat, u_hat = shared.take(steps[rows[a:b]])
                        u_hat = u_hat.reshape(b - a, *self._w.shape)
                    else:
                        v_hat, u_hat = self._sums(X[lo:hi], y[lo:hi], layout,
                                                  elements[:hi - lo])
                        if not every:  # gathered copies, unscaled in place below
                            v_hat, u_hat = v_hat[rows[a:b] - lo], u_hat[rows[a:b] - lo]
                    ridge = self._ridges(steps[rows[a:b]].astype(float))
                    # in place: run returned our own array
                    schedule.solve_chunks(solver, helper, v_hat, layout.scale, u_hat, ridge,
                                 self._radius, solved, a)
            except BaseException:
                if helper is not None:
                    helper.kill()
                raise
            if helper is not None:
                helper.close()
        if not every:
            schedule.fill_skipped(weights[1:], solved, rows, weights[0])
        self.t_ += n
        self._w = weights[-1].copy()
        if self._label_scale != 1.0:
            weights /= self._label_scale  # in place: the released w in the labels' units
        return weights[:-1]

    def _sums(self, X: np.ndarray, y: np.ndarray, layout, elements: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """The counters' releases (V, u) of a block, u as (rows, d, K) right-hand sides."""
        # elements built here from validated data: the counters take them as they are
        # (no second copy and finiteness pass)
        v_hat = self._counters[0]._run_owned(_svec_outer(X, layout, elements))
        u_hat = self._counters[1]._run_owned(u_elements(X, y))
        return v_hat, u_hat.reshape(len(X), *self._w.shape)

    def _run_full(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``_run`` without fixes: vec(x x^T) elements, batched solves."""
        n, d = X.shape
        start = self.t_
        before = np.empty((n, d))
        block = max(1, _BLOCK_FLOATS // (d * d))
        for lo in range(0, n, block):
            Xb, yb = X[lo:lo + block], y[lo:lo + block]
            v_hat = self._counters[0].run(np.einsum("ni,nj->nij", Xb, Xb).reshape(len(Xb), -1))
            u_hat = self._counters[1].run(yb[:, None] * Xb)
            steps = np.arange(start + lo + 1, start + lo + len(Xb) + 1)
            rows = np.flatnonzero(schedule.solved_steps(steps, self.solves_per_doubling,
                                                        self.horizon))
            v_hat, after = v_hat.reshape(-1, d, d), np.empty((len(Xb), d))
            if len(rows) < len(Xb):  # a schedule: the solved rows alone
                v_hat, u_hat = v_hat[rows], u_hat[rows]
            schedule.fill_skipped(after, _solve_printed(v_hat, u_hat, steps[rows] * self.alpha),
                                  rows, self._w)
            before[lo] = self._w
            before[lo + 1:lo + len(Xb)] = after[:-1]
            self._w = after[-1].copy()
        self.t_ += n
        return before / self._label_scale
