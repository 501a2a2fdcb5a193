"""Bandit regret growth of ENV's PrivateBandit on polytopes known only by a linear oracle.

ENV (Ene, Nguyen, Vladu) has no experiments; Lemma 3.1 claims E[R_T] = O(T^(3/4) n^(1/2) L D)
without noise. This measures the regret of :class:`BanditFrankWolfe` and of
:class:`PrivateBanditFrankWolfe` (tight Gaussian calibration, several epsilons) at
T = 2^10 .. 2^16 on linear losses f_t(x) = <theta_t, x - c>, theta_t = theta + 0.1 N(0, I)
rescaled to norm <= 1, over two polytopes the learner sees only through their linear
oracle: the unit box [0, 1]^5 and the rank-2
uniform-matroid polytope {x in [0, 1]^6 : sum x <= 2} (greedy oracle). It fits the log-log
slope of the mean regret against T and compares it with the derived bound below.

**Derived prediction (box).** Without estimation noise the lazy projection point is
x_i(t) = clip(1/2 - eta theta_i t, 0, 1): coordinate i costs |theta_i| sum_t
max(0, 1/2 - eta |theta_i| t) = 1/(8 eta), so R(T) = a T^(3/4) with
a = n / (8 eta T^(3/4)) = n^(3/2) L / (8 D) (= n/8 = 0.625 on [0, 1]^5 with L = 1). The
learner adds non-negative terms of lower order: the one-to-two batch lag of the played centre
(at most K ||theta||_1 ~ T^(1/2)), the inexact Frank-Wolfe solve, the gradient-estimate
noise and the privacy noise (T^(1/2) polylog T under the per-summand calibration of
docs/errata.md, ENV-2). With R = a T^(3/4) + sum_k c_k
T^(e_k), c_k >= 0 and 1/2 <= e_k < 3/4, the local log-log slope is 3/4 - sum_k (3/4 - e_k)
c_k T^(e_k) / R, i.e. between 3/4 - s/4 and 3/4, where s = 1 - a T^(3/4) / R is the share
of the lower-order terms (measured). The slope tends to 3/4 as s -> 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpol._validation import fail
from dpol.experiments.plots import plot_curves
from dpol.experiments.report import ExperimentResult, markdown_table, write_csv, write_markdown
from dpol.experiments.reproductions.wdp_regret import fit_growth
from dpol.experiments.sweeps.runner import run_sweep
from dpol.learners._bandit import LinearOracleDomain
from dpol.learners.bandit_frank_wolfe import BanditFrankWolfe
from dpol.learners.private_bandit_frank_wolfe import PrivateBanditFrankWolfe

__all__ = [
    "POLYTOPES",
    "UniformMatroidOracle",
    "box_leading_constant",
    "env_bandit_regret",
    "linear_instance",
    "make_polytope",
    "slope_bounds",
    "unit_box_oracle",
]

#: the constraint polytopes of the ENV bandit experiment
POLYTOPES = ("box", "matroid")
_THETA = {"box": np.array([0.3, -0.2, 0.25, -0.1, 0.15]),  # fixed, public directions
          "matroid": np.array([0.3, -0.25, 0.2, -0.15, 0.1, -0.05])}


def unit_box_oracle(c: np.ndarray) -> np.ndarray:
    """argmin over [0, 1]^n of <c, x>: 1 where c < 0, else 0.

    Examples
    --------
    >>> unit_box_oracle(np.array([0.5, -1.0, 0.0]))
    array([0., 1., 0.])
    """
    return np.where(c < 0, 1.0, 0.0)


class UniformMatroidOracle:
    """Greedy linear oracle of {x in [0, 1]^n : sum x <= rank} (uniform-matroid polytope).

    Examples
    --------
    >>> UniformMatroidOracle(2)(np.array([0.5, -1.0, -3.0, -0.2]))
    array([0., 1., 1., 0.])
    """

    def __init__(self, rank: int) -> None:
        self.rank = rank

    def __call__(self, c: np.ndarray) -> np.ndarray:
        order = np.argsort(c, kind="stable")[: self.rank]
        x = np.zeros(len(c))
        x[order[c[order] < 0]] = 1.0
        return x


def make_polytope(name: str) -> tuple[LinearOracleDomain, np.ndarray]:
    """(domain known only by its oracle, loss centre c in it) for ``"box"`` or ``"matroid"``.

    Examples
    --------
    >>> domain, center = make_polytope("matroid")
    >>> domain.dim, center
    (6, array([0.25, 0.25, 0.25, 0.25, 0.25, 0.25]))
    """
    if name == "box":
        return LinearOracleDomain(unit_box_oracle, 5, math.sqrt(5)), np.full(5, 0.5)
    if name == "matroid":  # vertices 1_I, |I| <= 2: diameter ||1_{12} - 1_{34}|| = 2
        return LinearOracleDomain(UniformMatroidOracle(2), 6, 2.0), np.full(6, 0.25)
    raise fail("name", f"be one of {', '.join(map(repr, POLYTOPES))}", name)


def linear_instance(name: str, horizon: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Loss vectors C (T, n) and offsets b with f_t(x) = <C_t, x> + b_t = <theta_t, x - c>.

    Each f_t has a zero at c in D and is 1-Lipschitz, the paper's convention, so the default
    loss bound L (D + zeta) never clips. The environment's stream is independent of the
    learner's (one seed for both correlates them and gives regret outliers).

    Examples
    --------
    >>> C, b = linear_instance("box", 10, seed=0)
    >>> C.shape, bool(np.all(np.linalg.norm(C, axis=1) <= 1)), bool(np.allclose(b, -C.sum(1) / 2))
    ((10, 5), True, True)
    """
    _, center = make_polytope(name)
    theta = _THETA[name]
    rng = np.random.default_rng([seed, 2021, len(theta)])
    C = theta + 0.1 * rng.standard_normal((horizon, len(theta)))
    C /= np.maximum(np.linalg.norm(C, axis=1), 1.0)[:, None]
    return C, -C @ center


def box_leading_constant(dim: int = 5, lipschitz: float = 1.0) -> float:
    """a = n^(3/2) L / (8 D) = n L / 8 for [0, 1]^n (module docstring derivation).

    Examples
    --------
    >>> box_leading_constant(), box_leading_constant(4, 2.0)
    (0.625, 1.0)
    """
    return dim ** 1.5 * lipschitz / (8.0 * math.sqrt(dim))


def slope_bounds(horizons: np.ndarray, regret: np.ndarray, a: float | None) -> tuple[float, float]:
    """[3/4 - s/4, 3/4] with s the largest share of lower-order terms (1/2 without a).

    Examples
    --------
    >>> low, high = slope_bounds(np.array([16.0]), np.array([10.0]), 0.5)  # s = 1 - 4/10
    >>> round(low, 4), high, slope_bounds(np.array([16.0]), np.array([10.0]), None)
    (0.6, 0.75, (0.5, 0.75))
    """
    if a is None:
        return 0.5, 0.75
    share = float(np.max(1.0 - a * np.asarray(horizons, float) ** 0.75 / regret))
    return 0.75 - max(share, 0.0) / 4.0, 0.75


def _task(polytope: str, horizon: int, epsilon: float, delta: float, seed: int) -> dict:
    domain, center = make_polytope(polytope)
    C, b = linear_instance(polytope, horizon, seed)
    if math.isinf(epsilon):
        learner = BanditFrankWolfe(domain, horizon=horizon, center=center, seed=seed)
    else:
        learner = PrivateBanditFrankWolfe(domain, horizon=horizon, epsilon=epsilon,
                                          delta=delta, center=center, seed=seed)
    trace = learner.run_linear(C, b)
    return {"polytope": polytope, "T": horizon, "epsilon": epsilon, "seed": seed,
            "regret": float(trace.regret[-1]), "n_clipped": trace.n_clipped}


def env_bandit_regret(out_dir: str | Path, *, exponents=(10, 12, 14, 16),
                      polytopes=POLYTOPES, epsilons=(math.inf, 100.0, 10.0, 1.0),
                      delta: float = 1e-6, seeds: int = 3, workers: int = 1,
                      progress: Callable | None = None) -> ExperimentResult:
    """Regret against T for each polytope and epsilon; PNG, CSV and a markdown report.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = env_bandit_regret(tmp, exponents=(4, 6), polytopes=("box",),
    ...                             epsilons=(math.inf, 10.0), seeds=2)
    ...     print(*sorted(os.listdir(tmp)))
    env_bandit_regret.csv env_bandit_regret.md env_bandit_regret.png
    >>> [(r["polytope"], r["epsilon"]) for r in res.rows]
    [('box', inf), ('box', 10.0)]
    >>> row = res.rows[0]  # R(T) / T^(3/4) at T = 2^4, 2^6, the fitted slope, the bound
    >>> [round(row[k], 2) for k in ("R/T^0.75 (2^4)", "R/T^0.75 (2^6)", "loglog_slope")]
    [0.8, 0.98, 0.89]
    >>> row["a_derived"], round(row["bound_low"], 2), row["bound_high"], row["within_bound"]
    (0.625, 0.66, 0.75, True)
    """
    out_dir = Path(out_dir)
    horizons = np.array([2**k for k in exponents], dtype=float)
    tasks = [dict(polytope=p, horizon=int(T), epsilon=e, delta=delta, seed=s)
             for p in polytopes for e in epsilons for T in horizons for s in range(seeds)]
    # run_sweep records each task's warnings (epsilon = inf: NonPrivateWarning) in its row
    results = run_sweep(_task, tasks, workers=workers, progress=progress)
    rows, curves = [], {}
    for p in polytopes:
        a = box_leading_constant() if p == "box" else None
        for e in epsilons:
            per = np.array([[r["regret"] for r in results if r["polytope"] == p
                             and r["epsilon"] == e and r["T"] == T] for T in horizons])
            mean = per.mean(axis=1)
            seed_slopes = [np.polyfit(np.log(horizons), np.log(np.maximum(per[:, s], 1e-12)),
                                      1)[0] for s in range(per.shape[1])]
            se = float(np.std(seed_slopes, ddof=1) / math.sqrt(len(seed_slopes))) \
                if len(seed_slopes) > 1 else math.nan
            margin = 3.0 * se if math.isfinite(se) else 0.0
            slope = fit_growth(horizons, mean)["loglog_slope"]
            low, high = slope_bounds(horizons, mean, a)
            rows.append({"polytope": p, "epsilon": e, **{
                f"R/T^0.75 (2^{k})": float(v) for k, v in zip(
                    exponents, mean / horizons**0.75, strict=True)},
                "R/T (last)": float(mean[-1] / horizons[-1]), "loglog_slope": slope,
                "slope_se": se, "bound_low": low, "bound_high": high,
                # one seed has no standard error: then the slope itself must lie inside
                "within_bound": bool(low - margin <= slope <= high + margin),
                "a_derived": a if a is not None else "n/a"})
            curves[f"{p} eps={e:g}"] = (horizons, mean)
    curves["box: a T^(3/4), derived"] = (horizons, box_leading_constant() * horizons**0.75)
    csv_path = write_csv(rows, out_dir / "env_bandit_regret.csv")
    fig = plot_curves(curves, out_dir / "env_bandit_regret.png", ylabel="regret R(T)",
                      title=f"ENV bandit regret vs T (mean of {seeds} seeds, delta={delta:g})")
    lines = [
        "# Bandit regret of ENV's PrivateBandit (projection-free, linear oracle only)", "",
        "Linear losses <theta_t, x - c>, theta_t = theta + 0.1 N(0, I) rescaled to norm <= 1; "
        "the learner sees the polytope only through its linear oracle (box [0,1]^5, and the "
        "rank-2 uniform-matroid polytope in R^6 with its greedy oracle). Paper parameters "
        "K = ceil(sqrt T), zeta = D sqrt(n) / T^(1/4), eta = D / (T^(3/4) sqrt(n) L), extended "
        "mode, regulariser centred at c, one Frank-Wolfe step per round. Private runs: tight "
        "Gaussian calibration (per-summand sensitivity, docs/errata.md, ENV-2), replace-one, "
        f"delta = {delta:g}. Regret is against the best vertex in hindsight.", "",
        markdown_table(rows), "",
        "loglog_slope fits ln R against ln T over the T grid; slope_se is the standard error "
        "of the per-seed slopes. Derived bound (module docstring): R = a T^(3/4) plus "
        "non-negative terms of exponent in [1/2, 3/4), so the slope lies in "
        "[3/4 - s/4, 3/4] with s = max_T (1 - a T^(3/4) / R) (box, a = n/8 = 0.625), or in "
        "[1/2, 3/4] where a is not derived (matroid); within_bound allows 3 standard errors "
        "(none with one seed). "
        "The model describes the regime where the privacy noise is a lower-order term "
        "(epsilon >= 10 here). At epsilon = 1 the noise dominates over this T range "
        "(regret/T far above the non-private run, as in an independent prototype of this "
        "instance, which reached the non-private level only near T = 1e6); its slope is "
        "reported, not predicted.",
        "", f"![regret]({fig.name})", ""]
    report = out_dir / "env_bandit_regret.md"
    write_markdown(report, lines)
    return ExperimentResult("env_bandit_regret", rows, report, csv_path, [fig])
