"""Published ("paper") noise calibrations, verbatim, and the guarantee they really give.

Each ``<paper>_*`` function evaluates one printed formula exactly as published, for
``calibration="paper"`` reproduction; they are **not** recommendations (the default is
``calibration="tight"``, :mod:`dpol.accounting.closed_forms`). Where docs/errata.md lists an
erratum, a companion ``*_exact_epsilon`` function gives the *realised* guarantee of the printed
noise against the true sensitivity (replace-one unless stated): exact for Gaussian noise
(analytic Gaussian, GDP composition), basic composition for Laplace / l2-Gamma noise (tight for
pure DP).
Callers must warn (:class:`~dpol.errors.PaperCalibrationWarning`) with that figure when it
exceeds the claim, or refuse. Papers: JKT (Jain-Kothari-Thakurta), WDP (window-DP COCO), KNJ
(Kasiviswanathan-Nissim-Jin), ENV (Ene-Nguyen-Vladu), NW (Nie-Wang).

**Log readings.** The papers write "log" without a base. ``log`` selects the base of every
"log" that counts tree levels: ``"log2"`` (default: a binary tree over T leaves has log2 T
levels; also the larger, safer value) or ``"ln"``. Terms in delta (``log(x/delta)``) are always
natural logs; printed ``ln`` stays ``ln`` (docs/errata.md, KNJ-4 and ENV-3).

**Zero noise.** Several printed formulas vanish at T = 1 (``log 1 = 0``); those raise
:class:`~dpol.errors.InvalidInputError` rather than return a noiseless "private" release.

Examples
--------
>>> round(jkt_pocp_beta(1.0, 1e-5, 10**5, lam=1.0))  # JKT Alg. 1: beta/lambda (JKT-1)
5302
>>> sigma = jkt_private_sum_sigma(1.0, 1e-5, horizon=8, bound=1.0)  # log2 reading
>>> round(jkt_private_sum_exact_epsilon(sigma, 1.0, 8, 1e-5), 2)  # claimed 1 (JKT-4)
1.45
"""

from dpol.accounting.presets._common import (
    LOG_READINGS,
    exact_epsilon_of_tree_sigma,
    pure_epsilon_of_tree_scale,
    tree_levels,
)
from dpol.accounting.presets.env import (
    env_bandit_gaussian_exact_epsilon,
    env_bandit_gaussian_sigma,
    env_bandit_laplace_exact_epsilon,
    env_bandit_laplace_scale,
    env_bandit_tree_levels,
    env_per_summand_sensitivity,
    env_tree_gaussian_sigma,
    env_tree_laplace_scale,
)
from dpol.accounting.presets.jkt import (
    jkt_doubling_beta,
    jkt_doubling_exact_epsilon,
    jkt_pocp_beta,
    jkt_pocp_c,
    jkt_pocp_exact_epsilon,
    jkt_pol_beta,
    jkt_pol_exact_epsilon,
    jkt_pol_sensitivity,
    jkt_private_sum_exact_epsilon,
    jkt_private_sum_sigma,
)
from dpol.accounting.presets.knj import (
    knj_advanced_composition,
    knj_mechanism1_split,
    knj_tree_mech_exact_epsilon,
    knj_tree_mech_sigma,
    knj_tree_mech_sigma_patched,
)
from dpol.accounting.presets.nw import (
    nw_corrected_laplace_scale,
    nw_corrected_sensitivity,
    nw_printed_sensitivity,
)
from dpol.accounting.presets.wdp import (
    wdp_gamma_exact_epsilon,
    wdp_gamma_theta,
    wdp_gaussian_exact_epsilon,
    wdp_gaussian_sigma,
)

__all__ = [
    "LOG_READINGS",
    "env_bandit_gaussian_exact_epsilon",
    "env_bandit_gaussian_sigma",
    "env_bandit_laplace_exact_epsilon",
    "env_bandit_laplace_scale",
    "env_bandit_tree_levels",
    "env_per_summand_sensitivity",
    "env_tree_gaussian_sigma",
    "env_tree_laplace_scale",
    "exact_epsilon_of_tree_sigma",
    "jkt_doubling_beta",
    "jkt_doubling_exact_epsilon",
    "jkt_pocp_beta",
    "jkt_pocp_c",
    "jkt_pocp_exact_epsilon",
    "jkt_pol_beta",
    "jkt_pol_exact_epsilon",
    "jkt_pol_sensitivity",
    "jkt_private_sum_exact_epsilon",
    "jkt_private_sum_sigma",
    "knj_advanced_composition",
    "knj_mechanism1_split",
    "knj_tree_mech_exact_epsilon",
    "knj_tree_mech_sigma",
    "knj_tree_mech_sigma_patched",
    "nw_corrected_laplace_scale",
    "nw_corrected_sensitivity",
    "nw_printed_sensitivity",
    "pure_epsilon_of_tree_scale",
    "tree_levels",
    "wdp_gamma_exact_epsilon",
    "wdp_gamma_theta",
    "wdp_gaussian_exact_epsilon",
    "wdp_gaussian_sigma",
]
