"""Privacy guarantees, the one calibrator (from mechanism events, through dp-accounting),
the shared mechanism arguments (``Mechanism``), paper presets, window DP,
and the PrivacyBudget odometer (L1)."""

from dpol.accounting import presets
from dpol.accounting.budget import PrivacyBudget
from dpol.accounting.calibrate import calibrate, composed_epsilon, noise_events
from dpol.accounting.closed_forms import (
    CALIBRATIONS,
    DEFAULT_DELTA,
    certified_epsilon,
    default_delta,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_noise_multiplier,
    mu_star,
    pure_noise_multiplier,
    resolve_delta,
)
from dpol.accounting.events import (
    MechanismEvent,
    compose_dp_event,
    compose_guarantee,
    derived_guarantee,
)
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS, PrivacyGuarantee
from dpol.accounting.mechanism import Mechanism
from dpol.accounting.window import (
    effective_window,
    protected_releases,
    window_guarantee,
    window_levels,
)

__all__ = [
    "CALIBRATIONS",
    "DEFAULT_DELTA",
    "NEIGHBOURING_RELATIONS",
    "Mechanism",
    "MechanismEvent",
    "PrivacyBudget",
    "PrivacyGuarantee",
    "calibrate",
    "certified_epsilon",
    "compose_dp_event",
    "compose_guarantee",
    "composed_epsilon",
    "default_delta",
    "derived_guarantee",
    "effective_window",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_noise_multiplier",
    "mu_star",
    "noise_events",
    "presets",
    "protected_releases",
    "pure_noise_multiplier",
    "resolve_delta",
    "window_guarantee",
    "window_levels",
]
