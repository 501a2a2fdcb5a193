"""Private online learners (layer L4), one algorithm per file."""

from dpol.learners._api import Accepts
from dpol.learners._bandit import BanditTrace, LinearOracleDomain
from dpol.learners._base import OnlineLearner, Trace
from dpol.learners._kernels import Kernel
from dpol.learners.bandit_frank_wolfe import BanditFrankWolfe
from dpol.learners.noisy_proj_grad import noisy_proj_grad
from dpol.learners.output_perturbation import OutputPerturbation
from dpol.learners.private_bandit_frank_wolfe import PrivateBanditFrankWolfe
from dpol.learners.private_frank_wolfe import PrivateFrankWolfe
from dpol.learners.private_ftal import PrivateFTAL
from dpol.learners.private_ftrl import PrivateFTRL
from dpol.learners.private_giga import PrivateGIGA
from dpol.learners.private_igd import PrivateIGD
from dpol.learners.private_incremental_erm import PrivateIncrementalERM
from dpol.learners.private_incremental_regression import PrivateIncrementalRegression
from dpol.learners.private_kernel_regression import PrivateKernelRegression
from dpol.learners.private_offline_learner import PrivateOfflineLearner
from dpol.learners.private_online_frank_wolfe import PrivateOnlineFrankWolfe
from dpol.learners.private_projected_sgd import PrivateProjectedSGD
from dpol.learners.private_quadratic_ftl import PrivateQuadraticFTL
from dpol.learners.projected_incremental_regression import ProjectedIncrementalRegression

__all__ = [
    "Accepts",
    "BanditFrankWolfe",
    "BanditTrace",
    "Kernel",
    "LinearOracleDomain",
    "OnlineLearner",
    "OutputPerturbation",
    "PrivateBanditFrankWolfe",
    "PrivateFTAL",
    "PrivateFTRL",
    "PrivateFrankWolfe",
    "PrivateGIGA",
    "PrivateIGD",
    "PrivateIncrementalERM",
    "PrivateIncrementalRegression",
    "PrivateKernelRegression",
    "PrivateOfflineLearner",
    "PrivateOnlineFrankWolfe",
    "PrivateProjectedSGD",
    "PrivateQuadraticFTL",
    "ProjectedIncrementalRegression",
    "Trace",
    "noisy_proj_grad",
]
