"""One registry of learner configurations shared by every learner contract test."""

from __future__ import annotations

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from scipy import special

from dpol.errors import NonPrivateWarning
from dpol.learners import (
    BanditFrankWolfe,
    Kernel,
    PrivateBanditFrankWolfe,
    PrivateFTAL,
    PrivateFTRL,
    PrivateGIGA,
    PrivateIGD,
    PrivateIncrementalERM,
    PrivateIncrementalRegression,
    PrivateKernelRegression,
    PrivateOfflineLearner,
    PrivateOnlineFrankWolfe,
    PrivateQuadraticFTL,
    ProjectedIncrementalRegression,
)
from dpol.learners.intercept import WithIntercept
from dpol.learners.random_features import WithRandomFeatures
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L1Ball, L2Ball, Simplex

DIM = 3


def _logistic(**kw):
    return {"loss": Regularized(LogisticLoss(), 0.1), **kw}


#: name -> (factory(horizon, epsilon, seed, **extra), label kind)
LEARNERS = {
    "igd": (lambda T, **kw: PrivateIGD(DIM, domain=L2Ball(DIM, 3.0), horizon=T,
                                       **_logistic(**kw)), "sign"),
    "igd-doubling": (lambda T, **kw: PrivateIGD(DIM, domain=L2Ball(DIM, 3.0), horizon=T,
                                                schedule="doubling", calibration="paper",
                                                **_logistic(**kw)), "sign"),
    "igd-anytime": (lambda T, **kw: PrivateIGD(DIM, domain=None, horizon=T,
                                               schedule="anytime", **_logistic(**kw)), "sign"),
    "giga": (lambda T, **kw: PrivateGIGA(DIM, domain=L2Ball(DIM, 1.0), horizon=T,
                                         loss=Regularized(SquaredLoss(), 1.0), **kw), "real"),
    "pqftl": (lambda T, **kw: PrivateQuadraticFTL(DIM, horizon=T, **kw), "real"),
    # rows and labels on different scales (|y| <= Y = 2.5 R: the 2 R Y regime of the
    # stacked sensitivity)
    "pqftl-ybound": (lambda T, **kw: PrivateQuadraticFTL(DIM, horizon=T, bound=0.8,
                                                         y_bound=2.0, **kw), "real"),
    "pqftl-honaker": (lambda T, **kw: PrivateQuadraticFTL(DIM, horizon=T, counter="honaker",
                                                          **kw), "real"),
    "pqftl-toeplitz-ridge": (lambda T, **kw: PrivateQuadraticFTL(
        DIM, horizon=T, counter="toeplitz", noise_ridge=True, **kw), "real"),
    # a public solve schedule (B = 4: strides 2 to 8 over the 60 steps of the contract)
    "pqftl-schedule": (lambda T, **kw: PrivateQuadraticFTL(
        DIM, horizon=T, counter="blt", noise_ridge=True, solves_per_doubling=4, **kw), "real"),
    "pqftl-window": (lambda T, **kw: PrivateQuadraticFTL(DIM, horizon=T, counter="window",
                                                         counter_options={"window": 8}, **kw),
                     "real"),
    "pol": (lambda T, **kw: PrivateOfflineLearner(DIM, loss=LogisticLoss(), x_star_norm=2.0,
                                                  excess=0.5, horizon=T, **kw), "sign"),
    "ftal": (lambda T, **kw: PrivateFTAL(DIM, domain=L2Ball(DIM), horizon=T,
                                         loss=Regularized(SquaredLoss(), 0.5), **kw), "real"),
    "ftal-window-gamma": (lambda T, **kw: PrivateFTAL(
        DIM, domain=L2Ball(DIM), horizon=T, loss=Regularized(SquaredLoss(), 0.5), window=8,
        noise="gamma", **kw), "real"),
    "ftal-tree": (lambda T, **kw: PrivateFTAL(DIM, domain=L2Ball(DIM), horizon=T,
                                              counter="tree", **_logistic(**kw)), "sign"),
    "ftal-blt-ridge": (lambda T, **kw: PrivateFTAL(DIM, domain=L2Ball(DIM), horizon=T,
                                                   counter="blt", noise_ridge=True,
                                                   **_logistic(**kw)), "sign"),
    "ftrl": (lambda T, **kw: PrivateFTRL(DIM, domain=L2Ball(DIM), horizon=T,
                                         loss=LogisticLoss(), **kw), "sign"),
    "ftrl-tree-ridge": (lambda T, **kw: PrivateFTRL(DIM, domain=L2Ball(DIM), horizon=T,
                                                    counter="tree",
                                                    loss=Regularized(SquaredLoss(), 0.5),
                                                    **kw), "real"),
    "frank-wolfe": (lambda T, **kw: PrivateOnlineFrankWolfe(
        DIM, domain=Simplex(DIM), horizon=T, loss=Regularized(SquaredLoss(), 1.0), window=8,
        **kw), "real"),
    "kernel": (lambda T, **kw: PrivateKernelRegression(DIM, horizon=T, n_features=16, **kw),
               "real"),
    # a linear learner behind both feature wrappers (random features, then an intercept)
    "pqftl-rff-intercept": (lambda T, **kw: WithRandomFeatures(WithIntercept(
        PrivateQuadraticFTL(17, horizon=T, alpha=0.01, noise_ridge=True, counter="blt",
                            **kw)), DIM, bandwidth=0.5), "real"),
    "kernel-query": (lambda T, **kw: PrivateKernelRegression(
        DIM, horizon=T, mode="query_points", query_points=np.eye(DIM) * 0.5, **kw), "real"),
    "kernel-poly": (lambda T, **kw: PrivateKernelRegression(DIM, horizon=T,
                                                           kernel="polynomial", **kw), "real"),
    "incremental-regression": (lambda T, **kw: PrivateIncrementalRegression(
        DIM, domain=L2Ball(DIM), horizon=T, **kw), "real"),
    "incremental-regression-l1": (lambda T, **kw: PrivateIncrementalRegression(
        DIM, domain=L1Ball(DIM), horizon=T, solver="surrogate", max_iter=10, **kw), "real"),
    "projected-incremental-regression": (lambda T, **kw: ProjectedIncrementalRegression(
        DIM, domain=L1Ball(DIM), horizon=T, projection_dim=2, projection_seed=1, max_iter=5,
        inner_iter=5, **kw), "real"),
    "incremental-erm": (lambda T, **kw: PrivateIncrementalERM(
        DIM, loss=SquaredLoss(), domain=L2Ball(DIM), horizon=T, tau=5,
        solver_options={"steps": 10}, **kw), "real"),
}


def with_kernel(kw: dict) -> dict:
    """Kernel-regression keywords with ``bandwidth``, ``degree`` and ``coef0`` gathered into
    the ``kernel`` they parametrise (a :class:`dpol.learners.Kernel`)."""
    kw = dict(kw)
    params = {k: kw.pop(k) for k in ("bandwidth", "degree", "coef0") if k in kw}
    if params:
        kw["kernel"] = Kernel(kw.pop("kernel", "gaussian"), **params)
    return kw


def make(name: str, horizon: int, epsilon: float = 1.0, seed: int = 0, **kw):
    factory, _ = LEARNERS[name]
    delta = 0.0 if "gamma" in name else 1e-5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        return factory(horizon, epsilon=epsilon, delta=delta, seed=seed, **kw)


def stream(name: str, horizon: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A bounded stream of the right label kind (some rows over the bound, to be clipped)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(horizon, DIM)) * 0.6
    if name == "frank-wolfe":
        X = np.abs(X)
    target = X @ np.array([0.5, -0.3, 0.2])
    if LEARNERS[name][1] == "sign":
        y = np.where(target + 0.1 * rng.normal(size=horizon) > 0, 1.0, -1.0)
    else:
        y = target + 0.05 * rng.normal(size=horizon)
    return X, y


def loop(learner, X, y):
    """The released weights of a learn_one loop: weights[t] is used at step t + 1."""
    import numpy as np

    out = []
    for x, v in zip(X, y, strict=True):
        out.append(learner.weights)
        learner.learn_one(x, v)
    return np.array(out)


# ------------------------------------------------- an independent Euclidean ball projection
def ball_projection(v: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Projection onto the centred l2 ball, written apart from ``L2Ball`` for the tests'
    reference learners (the same float formula: v scaled by radius / ||v||)."""
    norm = float(np.sqrt(v @ v))
    return v if norm <= radius else v * (radius / norm)


# ---------------------------------- an independent stream and logistic gradient (d = 3)
def reference_stream(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of norm <= 0.9 < x_bound = 1 (no clipping, so a reference sees the same
    data) and labels +-1 from a fixed direction plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, DIM))
    X *= 0.9 * rng.uniform(0.2, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.array([1.0, -0.5, 0.25]) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def logistic_grad(w: np.ndarray, x: np.ndarray, y: float) -> np.ndarray:
    """d/dw log(1 + exp(-y <x, w>)) = -y sigmoid(-y <x, w>) x, written apart from dpol."""
    return -y * special.expit(-y * float(x @ w)) * x


# -------------------------------------------------- an independent svec (PQFTL's V element)
def svec(A: np.ndarray) -> np.ndarray:
    """svec of a symmetric matrix: the upper triangle row by row, off-diagonals times
    sqrt(2); written apart from the library's ``_psd_solve`` so that tests check it."""
    i, j = np.triu_indices(A.shape[0])
    return A[i, j] * np.where(i == j, 1.0, np.sqrt(2.0))


def svec_rows(Z: np.ndarray) -> np.ndarray:
    """svec(z z^T) of every row z of Z."""
    return np.array([svec(np.outer(z, z)) for z in Z])


def svec_unpack(v: np.ndarray, d: int) -> np.ndarray:
    """The symmetric matrix whose svec is v."""
    i, j = np.triu_indices(d)
    out = np.zeros((d, d))
    out[i, j] = v / np.where(i == j, 1.0, np.sqrt(2.0))
    out[j, i] = out[i, j]
    return out


def psd_reference(S: np.ndarray, u: np.ndarray, ridge: float) -> np.ndarray:
    """(P(S) + ridge I)^-1 u by numpy's eigendecomposition (P: onto the PSD cone)."""
    lam, Q = np.linalg.eigh(S)
    return Q @ ((Q.T @ u) / (np.maximum(lam, 0.0) + ridge))

# ------------------------------------------------------------- ENV's bandit learners
def bandit_private(domain, T, **kw):
    """PrivateBanditFrankWolfe at (1, 1e-6) unless told otherwise."""
    kw.setdefault("epsilon", 1.0)
    kw.setdefault("delta", 1e-6)
    return PrivateBanditFrankWolfe(domain, horizon=T, **kw)


def bandit_twin(domain, T, **kw):
    """The non-private BanditFrankWolfe."""
    return BanditFrankWolfe(domain, horizon=T, **kw)


def distance_loss(X, steps):  # convex, 1-Lipschitz, defined everywhere
    return np.linalg.norm(X - 0.3, axis=1) - 0.2 + 0.01 * np.sin(steps)

# ------------------------- noise-scale references (dp-accounting's analytic Gaussian)
#: hinge with y_bound = 0.5: L = X Y = 0.5 on any ball (HingeLoss.lipschitz, h small), so
#: the replace-one node sensitivity is 2L = 1 (its gradient_sensitivity is the default 2L)
HALF_HINGE = HingeLoss(h=0.25, y_bound=0.5)
NODE_SENS = 1.0


def analytic_z(eps: float = 1.0, delta: float = 1e-5) -> float:
    """1/mu*(eps, delta): std over l2 sensitivity of one exact Gaussian mechanism."""
    return float(dp_accounting.get_sigma_gaussian(eps, delta))


def nonprivate(cls, *args, **kwargs):
    """``cls`` at epsilon = inf, its NonPrivateWarning expected."""
    with pytest.warns(NonPrivateWarning):
        return cls(*args, epsilon=math.inf, **kwargs)


def unit_stream(rng, n, d, labels="sign"):
    """Rows of norm in [0.3, 1], labels +-1 (``"sign"``) or uniform in [-1, 1]."""
    X = rng.normal(size=(n, d))
    X *= rng.uniform(0.3, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.choice([-1.0, 1.0], size=n) if labels == "sign" else rng.uniform(-1, 1, size=n)
    return X, y


def released_path(learner, X, y):
    """Every weight a run released, the final one included: (T + 1, d)."""
    trace = learner.run(X, y)
    return np.vstack([trace.weights, trace.final_weights])


def data_grad(kind, w, x, y):
    """Data gradient of phi(<w, x>, y) x: squared 0.5 (z - y)^2, logistic log(1 + e^(-y z))."""
    z = float(w @ x)
    return (z - y) * x if kind == "squared" else -y * x / (1.0 + math.exp(y * z))


def window_node_sigma(T: int, block: int) -> float:
    """Per-node std of the window tree: z Delta sqrt(m), m = min(log2 W', floor log2 T) + 1
    the nodes one element lies in (Privacy sections of PrivateFTAL / WindowTreeCounter)."""
    m = min(block.bit_length() - 1, T.bit_length() - 1) + 1
    return analytic_z() * NODE_SENS * math.sqrt(m)
