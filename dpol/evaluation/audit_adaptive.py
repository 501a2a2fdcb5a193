"""Empirical DP audits against an adaptive adversary (layer L5).

The learners' proofs run through counters whose inputs are chosen *after* the earlier
releases (x_t may depend on w_1 .. w_t); the oblivious audits
(:mod:`dpol.evaluation.audit_learners`) never test that. Here a fixed, public,
deterministic adversary plays the learner step by step: both worlds run the same rule and
differ only at position p (a worst-case pair at the current iterate); other rounds get
elements aligned with the released iterate, so the worlds' streams diverge after p.

``release="residual"`` (default) reads the releases back into the mechanism's noisy sums,
subtracts the adversary's own contributions and turns the challenge direction to e_1:
for a counter private under adaptive inputs what remains is a Gaussian of ratio mu*, on
which Fisher's discriminant is the likelihood-ratio test, so the audit is nearly tight.
``release="raw"`` audits what a user sees (weaker). Under window DP only releases p+1 ..
p+W are audited. Each learner's adversary, and why: docs/derivations/adaptive_audit.md.
"""

from __future__ import annotations

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import check_choice, check_int, fail
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.evaluation.audit import AuditResult, audit_releases
from dpol.learners import (
    BanditFrankWolfe,
    PrivateBanditFrankWolfe,
    PrivateFTAL,
    PrivateQuadraticFTL,
)
from dpol.learners._linear import split_loss
from dpol.sets import L2Ball

__all__ = ["ADAPTIVE_RELEASES", "adaptive_releases", "audit_adaptive"]

#: what :func:`adaptive_releases` records of a run (see the module docstring)
ADAPTIVE_RELEASES = ("residual", "raw")
_BANDITS = (BanditFrankWolfe, PrivateBanditFrankWolfe)


def _unit(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit l2 norm; a zero row becomes e_1 (the adversary's default)."""
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    out = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0.0)
    out[..., 0] += norms[..., 0] == 0.0
    return out


def _orthogonal(rows: np.ndarray) -> np.ndarray:
    """A unit vector orthogonal to each row: the least aligned axis minus its projection."""
    w = _unit(rows)
    n = np.arange(len(w))
    axis = np.argmin(np.abs(w), axis=1)  # |w_j| <= 1/sqrt(d) < 1: never parallel
    v = -w * w[n, axis][:, None]
    v[n, axis] += 1.0
    return _unit(v)


def _turn(rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """rows (n, k, d) of run i times the reflection H_i = H_i^T that swaps u_i and e_1."""
    v = u.copy()
    v[:, 0] -= 1.0
    vv = np.einsum("ij,ij->i", v, v)  # 2 (1 - u_1): zero only at u = e_1, where H = I
    scale = np.divide(2.0, vv, out=np.zeros_like(vv), where=vv > 1e-24)
    return rows - np.einsum("nk,nd->nkd", np.einsum("nkd,nd->nk", rows, v) * scale[:, None], v)


class _FTALGame:
    """The adversary of PrivateFTAL (docs/derivations/adaptive_audit.md) and its read-back."""

    def __init__(self, learner: PrivateFTAL, release: str) -> None:
        if learner.dim < 2:
            raise fail("factory", "build a learner of dim >= 2 (the challenge is orthogonal "
                       "to the iterate)", learner)
        if release == "residual" and (learner.noise_ridge
                                      or not isinstance(learner.domain, L2Ball)):
            raise fail("factory", "build PrivateFTAL on an L2Ball without noise_ridge for "
                       "release='residual' (or audit release='raw')", learner)
        self.data, self.mu = split_loss(learner.loss)
        self.x, self.y, self.domain = learner.x_bound, learner.y_bound, learner.domain

    def element(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.x * _unit(w), np.full(len(w), -self.y)

    def challenge(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        v = _orthogonal(w)
        return self.x * v, np.full(len(w), self.y), v

    def contributions(self, W: np.ndarray, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """The data gradients phi'(<w, x>, y) x the learner fed its counter."""
        margin = np.einsum("ntd,ntd->nt", W, X).ravel()
        # phi' through the public grad: at w = e_1 the row (m, 1) has gradient phi'(m, y) (m, 1)
        rows = np.column_stack([margin, np.ones_like(margin)])
        dphi = self.data.grad(np.array([1.0, 0.0]), rows, Y.ravel())[:, 1]
        return dphi.reshape(Y.shape)[..., None] * X

    def read_back(self, W: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Counter release t = -mu t w_(t+1): w_(t+1) = Proj(-release / (mu t)), unprojected."""
        if np.any(np.linalg.norm(W, axis=2) >= self.domain.radius * (1.0 - 1e-9)):
            raise fail("factory", "build a ball the iterates stay inside (a projected "
                       "iterate cannot be read back)", self.domain)
        t = np.arange(1, W.shape[1])
        return -self.mu * t[None, :, None] * W[:, 1:]


class _QuadraticGame:
    """The adversary of PrivateQuadraticFTL (docs/derivations/adaptive_audit.md), u read back."""

    def __init__(self, learner: PrivateQuadraticFTL, release: str) -> None:
        if release == "residual" and learner.noise_ridge:
            raise fail("factory", "build PrivateQuadraticFTL without noise_ridge for "
                       "release='residual' (or audit release='raw')", learner)
        self.r, self.y, self.alpha = learner.x_bound, learner.y_bound, learner.alpha

    def element(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.r * _unit(w), np.full(len(w), self.y)

    def challenge(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        v = _unit(w)
        return self.r * v, np.full(len(w), self.y), v

    def contributions(self, W: np.ndarray, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        return Y[..., None] * X  # what the u counter is fed

    def read_back(self, W: np.ndarray, X: np.ndarray) -> np.ndarray:
        """u~_t ~ (t alpha I + V_t) w_(t+1), V_t = sum x x^T the adversary's own Gram."""
        t = np.arange(1, W.shape[1])
        gram = np.cumsum(np.einsum("nti,ntj->ntij", X, X), axis=1)
        after = W[:, 1:]
        return self.alpha * t[None, :, None] * after + np.einsum("ntij,ntj->nti", gram, after)


def _full_information(learners: list, world: str, position: int,
                      release: str) -> tuple[np.ndarray, np.ndarray]:
    """Lockstep runs: rows (n, T, d), row t the release after element t, and turns (n, d)."""
    first = learners[0]
    game = (_FTALGame if isinstance(first, PrivateFTAL) else _QuadraticGame)(first, release)
    n, T, d = len(learners), first.horizon, first.dim
    W, X, Y = np.empty((n, T + 1, d)), np.empty((n, T, d)), np.empty((n, T))
    turn = None
    for t in range(T + 1):
        W[:, t] = [m.weights for m in learners]
        if t == T:
            break
        if t == position:
            X[:, t], Y[:, t], turn = game.challenge(W[:, t])
            if world == "b" and first.neighbouring == "replace_one":
                Y[:, t] = -Y[:, t]
            elif world == "b":  # add/remove: the null element
                X[:, t], Y[:, t] = 0.0, 0.0
        else:
            X[:, t], Y[:, t] = game.element(W[:, t])
        for m, x, y in zip(learners, X[:, t], Y[:, t], strict=True):
            m.learn_one(x, y)
    if release == "raw":
        return W[:, 1:], turn
    G = game.contributions(W[:, :T], X, Y)
    G[:, position] = 0.0  # the challenge is what the audit looks for
    return game.read_back(W, X) - np.cumsum(G, axis=1), turn


def _adaptive_losses(m: object, position: int, value: float):
    """loss_fn for ``run``: L <v_t, x - c>, v_t from the previous played point; value at p."""
    last = [m.center + np.eye(m.dim)[0]]

    def loss_fn(X: np.ndarray, steps: np.ndarray) -> np.ndarray:
        previous = np.vstack([last[0], X[:-1]])
        last[0] = X[-1].copy()
        out = m.lipschitz * np.einsum("ij,ij->i", _unit(previous - m.center), X - m.center)
        out[steps == position] = value
        return out

    return loss_fn


def _bandit(learners: list, world: str, position: int,
            release: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows (n, k, d): residual sums (k = m - 1) or played points minus c (k = T); turns."""
    rows, turns = [], []
    for m in learners:
        bound = m.loss_bound
        value = bound if world == "a" else -bound if m.neighbouring == "replace_one" else 0.0
        trace = m.run(_adaptive_losses(m, position, value))
        x = trace.points
        if m.mode == "shrink":  # x = c' + s (x~ + zeta u - c'): undo the map
            x = m.ball_center + (x - m.ball_center) / m.shrink
        u = _unit(x - trace.iterates)
        turns.append(u[position])
        if release == "raw":
            rows.append(trace.points - m.center)
            continue
        g = (m.dim / m.zeta) * np.clip(trace.losses, -bound, bound)[:, None] * u
        g[position] = 0.0
        batches = np.add.reduceat(g, np.arange(0, m.horizon, m.batch_size), axis=0)
        rows.append(trace.noisy_sums - np.cumsum(batches[:m.n_releases], axis=0))
    return np.array(rows), np.array(turns)


def _protected(learner: object, position: int, release: str, window: int | None) -> slice:
    """Rows that hold the challenge and that window DP (window W) protects."""
    if isinstance(learner, _BANDITS):
        first, K = position // learner.batch_size, learner.batch_size
        end = learner.n_releases if window is None else min(learner.n_releases,
                                                            first + window)
        # s~_R (R = first + 1, 1-based) is used in batch R + 1, whose result is played in R + 2
        rows = slice(first, end) if release == "residual" else slice(
            (first + 2) * K, min(learner.horizon, (end + 2) * K))
    else:
        rows = slice(position, learner.horizon if window is None
                     else min(learner.horizon, position + window))
    if rows.stop <= rows.start:
        raise fail("position", f"leave a release after it to audit ({release})", position)
    return rows


def adaptive_releases(factory: object, n_runs: int, *, world: str = "a", position: int = 0,
                      release: str = "residual", window: int | None = None,
                      seed: object = None) -> np.ndarray:
    """``n_runs`` runs of ``factory(seed)`` against the adaptive adversary, turned.

    Parameters
    ----------
    factory : callable
        ``factory(seed)`` builds a fresh PrivateFTAL, PrivateQuadraticFTL or bandit
        (:class:`~dpol.learners.PrivateBanditFrankWolfe`, its non-private twin).
    n_runs : int
    world : {"a", "b"}
        Which element of the challenge pair round ``position`` gets.
    position : int
        p, the 0-based round of the challenge.
    release : {"residual", "raw"}
        See the module docstring.
    window : int, optional
        W of a window-DP claim: only the releases p+1 .. p+W are kept.
    seed : optional
        Seeds of the runs (one ``factory`` call each).

    Returns
    -------
    array (n_runs, k * d)
        The protected rows of each run, turned so the challenge direction is e_1.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> make = lambda s: PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-2,
    ...                                      alpha=10.0, seed=s)
    >>> adaptive_releases(make, 3, seed=0).shape  # 4 releases of u~ in R^2
    (3, 8)
    """
    n_runs = check_int("n_runs", n_runs, low=1)
    world = check_choice("world", world, ("a", "b"))
    release = check_choice("release", release, ADAPTIVE_RELEASES)
    rng = np.random.default_rng(spawn_seeds(seed, 1)[0])
    learners = [factory(int(s)) for s in rng.integers(2**63, size=n_runs)]
    first = learners[0]
    if not isinstance(first, (PrivateFTAL, PrivateQuadraticFTL, *_BANDITS)):
        raise fail("factory", "build PrivateFTAL, PrivateQuadraticFTL or a bandit "
                   "Frank-Wolfe learner", first)
    position = check_int("position", position, low=0)
    if position >= first.horizon:
        raise fail("position", f"be < horizon={first.horizon}", position)
    rows = _protected(first, position, release, window)
    run = _bandit if isinstance(first, _BANDITS) else _full_information
    out, turn = run(learners, world, position, release)
    return _turn(out[:, rows], turn).reshape(n_runs, -1)


def audit_adaptive(factory: object, *, n_runs: int, claimed: PrivacyGuarantee | None = None,
                   position: int = 0, release: str = "residual", seed: object = None,
                   **options) -> AuditResult:
    """Audit a learner against the adaptive adversary of this module.

    Parameters
    ----------
    factory : callable
        ``factory(seed)`` builds a fresh learner (see :func:`adaptive_releases`).
    n_runs : int
        Runs per world (half fit the statistic, half are held out; see
        :func:`~dpol.evaluation.audit.expected_gaussian_audit` to choose it).
    claimed : PrivacyGuarantee, optional
        The guarantee to test (default the learner's ``privacy``; give the original's to
        audit an under-noised twin against it). Its window limits the audited releases.
    position, release, seed
        As :func:`adaptive_releases`; the worlds get independent seeds.
    **options
        ``statistic``, ``confidence``, ``train_fraction`` for
        :func:`~dpol.evaluation.audit.audit_releases`.

    Examples
    --------
    >>> from dpol.learners import PrivateFTAL
    >>> from dpol.losses import HingeLoss, Regularized
    >>> from dpol.sets import L2Ball
    >>> make = lambda s: PrivateFTAL(2, loss=Regularized(HingeLoss(0.5), 1.0),
    ...                              domain=L2Ball(2, 1e6), horizon=4, epsilon=1.0,
    ...                              delta=1e-2, counter="binary_tree", seed=s)
    >>> print(audit_adaptive(make, n_runs=300, seed=0).summary())  # doctest: +ELLIPSIS
    DP audit of PrivateFTAL (adaptive, residual): epsilon >= ... at delta=0.01 ...
      PASSED: no violation found (an audit cannot prove privacy)
    """
    template = factory(0)
    claimed = template.privacy if claimed is None else claimed
    seed_a, seed_b = spawn_seeds(seed, 2)
    a, b = (adaptive_releases(factory, n_runs, world=w, position=position, release=release,
                              window=claimed.window, seed=s)
            for w, s in (("a", seed_a), ("b", seed_b)))
    return audit_releases(a, b, epsilon=claimed.epsilon, delta=claimed.delta,
                          name=f"{type(template).__name__} (adaptive, {release})", **options)
