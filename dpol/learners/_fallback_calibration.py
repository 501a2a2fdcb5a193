"""The trivial fallback's calibration: the sensitivities of its two mechanisms, the
noise multipliers of its blocks and its privacy events
(:class:`~dpol.learners.trivial_fallback.WithTrivialFallback`, whose Privacy section
derives them; :mod:`dpol.learners._fallback_budget` splits the budget).
"""

from __future__ import annotations

import math

from dpol.accounting.events import MechanismEvent, gaussian_mu
from dpol.noise.kinds import noise_kind

__all__ = ["GAUSSIAN", "FallbackCalibration"]

#: the noise of both mechanisms (float Gaussian)
GAUSSIAN = noise_kind("gaussian")


class FallbackCalibration:
    """The public scales of :class:`~dpol.learners.trivial_fallback.WithTrivialFallback`
    (a mixin: it reads the wrapper's ``learner``, ``outputs``, ``offset``, the two
    multipliers, and for ``gate_open`` its ``threshold`` and the gate's sums).

    Privacy
    -------
    Replace-one. Sensitivities: a block's label sum 2 L (``prior_sensitivity``), its
    error count 1 (``gate_sensitivity``). Gaussian noise of std z times the sensitivity
    is 1/z-GDP (Dong, Roth and Su 2019, Thm 2.7); the blocks that skip a mechanism give
    its mu^2 to the prior (``early_multiplier``, ``idle_multiplier``), so each element
    spends at most the mu^2 of ``privacy_events`` (Cor. 3.3).
    """

    @property
    def prior_sensitivity(self) -> float:
        """l2 sensitivity of a block's label sum: 2 L for the -L / +L labels it sums
        (``_label_size``; not the learner's 2 y_bound, which a centre widens to 2 (1 + |b|)),
        or sqrt(2) for one-hot rows."""
        return math.sqrt(2.0) if self.outputs > 1 else 2.0 * self._label_size

    #: l2 sensitivity of a block's count of the model's errors
    gate_sensitivity = 1.0

    @property
    def _label_size(self) -> float:
        """|label| after clipping: two classes are -1 / +1 clipped to the labels' bound."""
        return min(1.0, self.base.y_bound - abs(self.offset))

    @property
    def early_multiplier(self) -> float:
        """z of the prior in a block the gate skips: 1 / z^2 = 1 / z_prior^2 + 1 / z_gate^2
        (0 where either is 0: no noise)."""
        both = math.hypot(self.prior_multiplier, self.gate_multiplier)
        return 0.0 if both == 0.0 else self.prior_multiplier * self.gate_multiplier / both

    @property
    def idle_multiplier(self) -> float:
        """z of the prior in a block ending by ``learner_from``, on the whole budget:
        1 / z^2 = 1 / z_prior^2 + 1 / z_gate^2 + mu_learner^2, mu_learner that of the
        learner's Gaussian events (0 if any is not Gaussian: then the gate's and the
        prior's alone, ``early_multiplier``)."""
        early = self.early_multiplier
        mu = gaussian_mu(self.learner.privacy_events()) or 0.0
        if early == 0.0 or math.isinf(mu):
            return 0.0
        return 1.0 / math.sqrt(early ** -2 + mu ** 2)

    def _prior_error_std(self) -> float:
        """Public noise std of a block's prior-error count T_j read off its label sum."""
        if self.outputs > 1:  # n_j - S_j[c]: one coordinate of std z sqrt(2)
            return self.prior_multiplier * self.prior_sensitivity
        return self.prior_multiplier * self.prior_sensitivity / (2.0 * self._label_size)

    @property
    def gate_open(self) -> bool:
        """Whether the gate's mean error difference d lies below ``-threshold`` times its
        public std (False before its first block): post-processing of its releases. The
        model also predicts where the prior is a coin flip (``uses_model``)."""
        if self._gate_weight == 0.0:
            return False
        sd = math.hypot(self.gate_multiplier * self.gate_sensitivity,
                        self._prior_error_std()) / math.sqrt(self._gate_weight)
        return bool(self._gate_num / self._gate_weight < -self.threshold * sd)

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The learner's events, then the prior's and the gate's Gaussian events (a zero
        multiplier's is non-private: its sums are released exactly)."""
        own = tuple(MechanismEvent(GAUSSIAN.dp_event(z), "replace_one", name=name)
                    for z, name in ((self.prior_multiplier, "trivial fallback: prior"),
                                    (self.gate_multiplier, "trivial fallback: gate")))
        return tuple(self.learner.privacy_events()) + own
