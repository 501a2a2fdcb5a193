"""dpol: differentially private online learning.

Layers (imports point downward only, no cycles): ``errors``, ``_validation``,
``_seeding``, ``clipping`` and ``noise`` (L0), ``accounting`` (L1), ``counters`` (L2),
``losses`` and ``sets`` (L3), ``learners`` and ``datasets`` (L4), ``evaluation``,
``adapters`` (learners by name, scikit-learn and river estimators) and ``experiments``
(L5), ``cli`` (L6). docs/architecture.md says what each holds.
"""

from dpol.errors import (
    BudgetExceededError,
    DpolError,
    HorizonExceededError,
    InvalidInputError,
    NonPrivateWarning,
    PaperCalibrationWarning,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetExceededError",
    "DpolError",
    "HorizonExceededError",
    "InvalidInputError",
    "NonPrivateWarning",
    "PaperCalibrationWarning",
    "__version__",
]
