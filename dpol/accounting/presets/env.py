"""ENV (Ene, Nguyen, Vladu): tree aggregation (Thm 2.3) and bandit presets (Lemmas 5.1, 5.4).

See :mod:`dpol.accounting.presets` for the conventions (log readings, zero noise).
"""

from __future__ import annotations

import math

from dpol._validation import check_int
from dpol.accounting.presets._common import (
    _delta,
    _eps,
    _ln_positive,
    _pos,
    _tree_log,
    exact_epsilon_of_tree_sigma,
    pure_epsilon_of_tree_scale,
)

__all__ = [
    "env_bandit_gaussian_exact_epsilon",
    "env_bandit_gaussian_sigma",
    "env_bandit_laplace_exact_epsilon",
    "env_bandit_laplace_scale",
    "env_bandit_tree_levels",
    "env_per_summand_sensitivity",
    "env_tree_gaussian_sigma",
    "env_tree_laplace_scale",
]


def env_tree_laplace_scale(
    epsilon: float, horizon: int, l1_bound: float, *, log: str = "log2"
) -> float:
    """ENV Theorem 2.3 (tree aggregation, after JKT), Laplace: ``lambda = Y_1 log T / eps``.

    ``l1_bound`` is the l1 norm promise Y_1 on each input; Lap(0, lambda) has scale lambda.
    ``log`` reads "log T" (a level count; default ``"log2"``).

    Erratum (docs/errata.md, ENV-2): a norm promise Y is not the replace-one sensitivity
    (2Y), and an input lies in d+1 nodes, not log T. T = 1 gives lambda = 0: refused.

    Examples
    --------
    >>> env_tree_laplace_scale(1.0, 1024, 1.0)  # Y_1 log2 T / eps
    10.0
    """
    epsilon, l1_bound = _eps(epsilon), _pos("l1_bound", l1_bound)
    lg = _tree_log(check_int("horizon", horizon, low=1), log)
    return l1_bound * lg / epsilon


def env_tree_gaussian_sigma(
    epsilon: float, delta: float, horizon: int, l2_bound: float, *, log: str = "log2"
) -> float:
    """ENV Theorem 2.3, Gaussian: ``sigma = (Y_2 / eps) * log T * ln(log T / delta)``.

    ``log`` reads both "log T" (default ``"log2"``); the outer log of the delta term is ``ln``
    (docs/errata.md, ENV-3). Same caveats as :func:`env_tree_laplace_scale` (ENV-2); Lemma 5.4
    prints another Gaussian factor, log T ln(T/delta_1), and neither is taken on trust.

    Examples
    --------
    >>> round(env_tree_gaussian_sigma(1.0, 1e-5, 1024, 1.0), 4)  # 10 * ln(10 / 1e-5)
    138.1551
    """
    epsilon, delta, l2_bound = _eps(epsilon), _delta(delta), _pos("l2_bound", l2_bound)
    lg = _tree_log(check_int("horizon", horizon, low=1), log)
    return l2_bound / epsilon * lg * _ln_positive("log T / delta", lg / delta)


def env_bandit_laplace_scale(
    epsilon: float, horizon: int, dim: int, lipschitz: float, *, log: str = "log2"
) -> float:
    """ENV PrivateBandit Laplace preset, Lemma 5.1: ``lambda = T^(1/2) n L log T / eps``.

    Theorem 2.3 with Y_1 = T^(1/2) n L and T the full horizon (as printed; docs/errata.md,
    ENV-3). Worked example (T = 1e4, n = 4, L = 1, eps = 1): 3684.1 with ``log="ln"``, 5315.1
    with ``"log2"``. Erratum (ENV-2): the printed l1 bound is T^(1/4) too small; under the
    per-summand argument the preset fails for small T; see
    :func:`env_bandit_laplace_exact_epsilon`.

    Examples
    --------
    >>> round(env_bandit_laplace_scale(1.0, 10**4, 4, 1.0, log="ln"), 1)  # worked example
    3684.1
    """
    dim, lipschitz = check_int("dim", dim, low=1), _pos("lipschitz", lipschitz)
    horizon = check_int("horizon", horizon, low=1)
    return env_tree_laplace_scale(epsilon, horizon, math.sqrt(horizon) * dim * lipschitz, log=log)


def env_bandit_gaussian_sigma(
    epsilon: float, delta: float, horizon: int, dim: int, lipschitz: float, *, log: str = "log2"
) -> float:
    """ENV PrivateBandit Gaussian preset, Lemma 5.4, as printed.

    ``sigma = T^(1/4) n^(1/2) L log T ln(T/delta) / eps
    * (ln((n+T)/delta) + sqrt((1 + T^(1/2)/n) ln((n+T)/delta)))``. ``log`` reads the level
    count "log T" (default ``"log2"``); the delta terms are ``ln``. Erratum (docs/errata.md,
    ENV-2): a proof gap, hugely over-noised (:func:`env_bandit_gaussian_exact_epsilon`).
    T = 1 (sigma = 0) is refused.

    Examples
    --------
    >>> f"{env_bandit_gaussian_sigma(1.0, 1e-6, 10**4, 4, 1.0, log='ln'):.3g}"  # worked example
    '2.01e+05'
    """
    epsilon, delta = _eps(epsilon), _delta(delta)
    dim, lipschitz = check_int("dim", dim, low=1), _pos("lipschitz", lipschitz)
    horizon = check_int("horizon", horizon, low=1)
    lg = _tree_log(horizon, log)
    ln_nt = math.log((dim + horizon) / delta)
    bracket = ln_nt + math.sqrt((1.0 + math.sqrt(horizon) / dim) * ln_nt)
    return (
        horizon**0.25 * math.sqrt(dim) * lipschitz * lg * math.log(horizon / delta) / epsilon
        * bracket
    )


def env_bandit_tree_levels(horizon: int) -> int:
    """Levels h = ceil(log2 m) + 1 of PrivateBandit's tree, K = ceil(sqrt T), m = ceil(T/K).

    Examples
    --------
    >>> [env_bandit_tree_levels(t) for t in (1, 4, 10, 10**4)]  # T = 1e4: K = m = 100, h = 8
    [1, 2, 3, 8]
    """
    horizon = check_int("horizon", horizon, low=1)
    k = math.isqrt(horizon - 1) + 1  # ceil(sqrt T)
    m = -(-horizon // k)
    return (m - 1).bit_length() + 1


def env_per_summand_sensitivity(
    horizon: int, dim: int, lipschitz: float, diameter: float, *, loss_bound: float | None = None
) -> tuple[float, float]:
    """Per-summand (l1, l2) sensitivity of one batch input of PrivateBandit (ENV-2).

    With zeta = D sqrt(n) / T^(1/4) (Alg. 1) and loss values clipped to B (default
    L (D + zeta), extended mode): ``Delta_2 = 2 (n/zeta) B`` and ``Delta_1 = sqrt(n) Delta_2``.
    The sound argument dpol uses where the paper's own has gaps (docs/errata.md, ENV-2): fix
    the sphere samples and the released history; neighbours then feed one differing summand.

    Examples
    --------
    >>> tuple(round(x, 4) for x in env_per_summand_sensitivity(10**4, 4, 1.0, 2.0))  # zeta = 0.4
    (96.0, 48.0)
    """
    horizon, dim = check_int("horizon", horizon, low=1), check_int("dim", dim, low=1)
    lipschitz, diameter = _pos("lipschitz", lipschitz), _pos("diameter", diameter)
    zeta = diameter * math.sqrt(dim) / horizon**0.25
    b = lipschitz * (diameter + zeta) if loss_bound is None else _pos("loss_bound", loss_bound)
    l2 = 2.0 * (dim / zeta) * b
    return math.sqrt(dim) * l2, l2


def env_bandit_laplace_exact_epsilon(
    scale: float, horizon: int, dim: int, lipschitz: float, diameter: float, *,
    loss_bound: float | None = None,
) -> float:
    """Epsilon of coordinate-wise Laplace(``scale``) tree noise: ``h Delta_1 / scale`` (2.7).

    Examples
    --------
    >>> scale = env_bandit_laplace_scale(1.0, 16, 2, 1.0, log="ln")  # Lemma 5.1, claimed epsilon 1
    >>> round(env_bandit_laplace_exact_epsilon(scale, 16, 2, 1.0, 1.0), 2)  # too little noise
    1.85
    """
    l1, _ = env_per_summand_sensitivity(horizon, dim, lipschitz, diameter, loss_bound=loss_bound)
    return pure_epsilon_of_tree_scale(scale, l1, env_bandit_tree_levels(horizon))


def env_bandit_gaussian_exact_epsilon(
    sigma: float, delta: float, horizon: int, dim: int, lipschitz: float, diameter: float, *,
    loss_bound: float | None = None,
) -> float:
    """Exact epsilon at ``delta`` of Gaussian(``sigma``) tree noise, per-summand ``Delta_2``.

    Examples
    --------
    >>> sigma = env_bandit_gaussian_sigma(1.0, 1e-6, 10**4, 10, 1.0, log="ln")  # claimed epsilon 1
    >>> f"{env_bandit_gaussian_exact_epsilon(sigma, 1e-6, 10**4, 10, 1.0, 1.0):.2g}"  # over-noised
    '0.0024'
    """
    _, l2 = env_per_summand_sensitivity(horizon, dim, lipschitz, diameter, loss_bound=loss_bound)
    return exact_epsilon_of_tree_sigma(sigma, l2, env_bandit_tree_levels(horizon), delta)
