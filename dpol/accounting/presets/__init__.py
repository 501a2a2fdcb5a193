"""Published ("paper") noise calibrations, verbatim, and the guarantee they really give.

Each ``<paper>_*`` function evaluates one printed formula as published, for
``calibration="paper"`` (not a recommendation: the default is ``"tight"``). Where
docs/errata.md lists an erratum, ``*_exact_epsilon`` gives the guarantee the printed noise
really gives (exact for Gaussian noise, basic composition for pure noise); callers warn
(:class:`~dpol.errors.PaperCalibrationWarning`) or refuse when it exceeds the claim.
Papers: JKT, WDP, KNJ, ENV, NW (docs/papers.md).

``log`` reads the papers' unqualified "log" that counts tree levels as ``"log2"``
(default, the larger) or ``"ln"``; terms in delta are natural logs (docs/errata.md, KNJ-4,
ENV-3). Formulas that vanish at T = 1 raise :class:`~dpol.errors.InvalidInputError`.

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
