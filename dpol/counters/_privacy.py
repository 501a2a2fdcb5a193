"""Privacy of a counter: sensitivity, calibration, noise scale, events (layer L2).

Mixed into :class:`~dpol.counters.Counter`, which holds the strategy (``strategy``), the
noise kind (``noise_kind``) and the constructor's arguments. Calibration is one method,
:meth:`CounterPrivacy._calibrate`: the noise kind's event at z
(:func:`dpol.accounting.noise_events`) sized by :func:`dpol.accounting.calibrate`, the
route every learner takes too, or the published presets (``_calibrate_paper``).
"""

from __future__ import annotations

import math
import warnings

from dpol._validation import check_real, fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.closed_forms import check_epsilon, gaussian_epsilon
from dpol.accounting.events import MechanismEvent
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["CounterPrivacy"]


class CounterPrivacy:
    """Sensitivity, calibration and the privacy events of a counter (see ``Counter``)."""

    #: noise kinds for which ``calibration="paper"`` has a published formula
    _paper_noises: tuple[str, ...] = ()

    @property
    def node_sensitivity(self) -> float:
        """l2 change of one node value when one element changes.

        2*bound under replace-one and bound under add/remove (clipping guarantees both),
        or ``element_sensitivity`` when the caller proves a smaller one: for instance
        PQFTL's V elements svec(v v^T) with ||v|| <= R differ by at most sqrt(2) R^2, not
        2 R^2, and a logistic gradient at a public iterate by 1.100, not 2 L = 1.462, on the
        unit ball (``LogisticLoss.gradient_sensitivity``). Secure noise
        adds the grid rounding, g sqrt(d) (replace-one) or g sqrt(d)/2 (add/remove: the
        neighbour of an element is 0, already on the grid).
        """
        return self._node_sensitivity

    @property
    def sensitivity(self) -> float:
        """l2 sensitivity of the encoder: node_sensitivity * sqrt(the strategy's squared
        column norm for the counter's ``participation``).

        For the trees and one participation: one element lies in at most ``levels`` noised
        nodes and changes each by at most ``node_sensitivity``, so the stacked node vector
        moves by at most node_sensitivity * sqrt(levels) (attained by the first element,
        which lies in a node at every level). A participant entering k steps b apart
        changes them all: the strategy's bound on max_pi sum_{i,j in pi} |(C^T C)_ij|
        (:mod:`dpol.counters.strategies._participation`).
        """
        return self.node_sensitivity * math.sqrt(
            self.strategy.column_norm_sq(self.participation))

    @property
    def _pure_sensitivity(self) -> float:
        """What one pure-DP noise multiplier is relative to: sum of per-node sensitivities.

        Laplace: l1 norm over all nodes, levels * sqrt(dim) * node_sensitivity (an l2 ball
        of radius r lies in the l1 ball of radius sqrt(dim) r). Gamma: the privacy loss of
        each node is at most ||change||_2 / theta, summed over levels nodes.
        """
        # k participations: each enters at most ``levels`` nodes (triangle inequality)
        steps = 1 if self.participation.single else self.participation.within(self.horizon)
        return steps * self.levels * self.node_sensitivity * self.noise_kind.l1_factor(self.dim)

    def _calibrate(
        self, epsilon: float | None, noise_multiplier: float | None
    ) -> tuple[float, float | None]:
        """(noise multiplier, the epsilon it was calibrated for or None)."""
        if (epsilon is None) == (noise_multiplier is None):
            raise fail("epsilon / noise_multiplier", "be given exactly one of the two",
                        (epsilon, noise_multiplier))
        gaussian = self.noise_kind.approximate
        if noise_multiplier is not None:
            if self.calibration == "paper":
                raise fail("calibration", "be 'tight' when noise_multiplier is given", "paper")
            z = check_real("noise_multiplier", noise_multiplier, low=0.0)
            if z == 0.0:
                warnings.warn(f"{type(self).__name__} with noise_multiplier=0 adds no noise: "
                              "its releases are not private", NonPrivateWarning, stacklevel=3)
                return 0.0, None
            return z, None
        eps = check_epsilon(epsilon)
        if math.isinf(eps):
            warnings.warn(f"{type(self).__name__} with epsilon=inf adds no noise: its releases "
                          "are not private", NonPrivateWarning, stacklevel=3)
            return 0.0, None
        if gaussian and self.delta == 0.0:
            raise fail("delta", "be > 0 for Gaussian noise (use noise='laplace', 'gamma' or "
                       "'secure_laplace' for pure epsilon-DP)", self.delta)
        if self.calibration == "tight":
            # the one calibrator, on this counter's event at z (relative to its
            # sensitivity). The discrete Gaussian's slack tau depends on the grid, set
            # after the scale: it is calibrated without it, and ``privacy`` states it
            events_of = noise_events(self.noise_kind, self.neighbouring,
                                     unit=self.participation.unit)
            return calibrate(events_of, eps, self.delta), eps
        return self._calibrate_paper(eps)

    def _calibrate_paper(self, eps: float) -> tuple[float, float]:
        """The published scale for this counter and noise; the real guarantee is recomputed."""
        if not self.participation.single:
            raise fail("calibration", "be 'tight' with several participations: the "
                       "published calibrations are for one participation per element", "paper")
        if self.noise not in self._paper_noises:
            raise fail("calibration", f"be 'tight': {type(self).__name__} has no published "
                       f"calibration for noise={self.noise!r}", "paper")
        scale, citation = self._paper_scale(eps)
        if scale <= 0.0:
            raise fail("calibration", f"not be 'paper' here: {citation} adds no noise at "
                       f"horizon={self.horizon}", "paper")
        gaussian = self.noise_kind.approximate  # paper noises: gaussian, laplace, gamma
        z = scale / (self.sensitivity if gaussian else self._pure_sensitivity)
        real = gaussian_epsilon(z, self.delta) if gaussian else 1.0 / z
        if real > eps * (1.0 + 1e-9):
            warnings.warn(
                f"{citation} gives only ({real:.4g}, {self.delta:g})-DP under {self.neighbouring}"
                f" at horizon={self.horizon}, not the requested epsilon={eps:g}; "
                "privacy reports the real guarantee", PaperCalibrationWarning, stacklevel=4)
        return z, eps

    def _paper_scale(self, eps: float) -> tuple[float, str]:
        """(noise scale, citation) of the published calibration (subclasses with presets)."""
        raise NotImplementedError

    def _window(self) -> int | None:
        return None

    @property
    def privacy(self) -> PrivacyGuarantee:
        """The guarantee of the whole sequence of releases, derived from
        :meth:`privacy_events` (exact for the noise added)."""
        return self._privacy

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The one mechanism this counter runs, with its relation, window and horizon.

        The l2 Gamma mechanism and the discrete Laplace are pure DP at ``1 /
        noise_multiplier`` (class Privacy); ``pure_epsilon`` carries it.
        """
        return (MechanismEvent(self.dp_event(), self.neighbouring, window=self._window(),
                               horizon=self.horizon, unit=self.participation.unit,
                               pure_epsilon=self.noise_kind.pure_epsilon(self._noise_multiplier),
                               name=type(self).__name__),)

    @property
    def noise_scale(self) -> float:
        """Per-node scale: Gaussian std, Laplace scale, or theta of the Gamma mechanism."""
        ref = self.sensitivity if self.noise_kind.approximate else self._pure_sensitivity
        return self._noise_multiplier * ref

    def dp_event(self) -> dp_accounting.DpEvent:
        """The dp-accounting event of the whole release sequence.

        Noise multipliers are relative to this counter's encoder sensitivity under its
        own neighbouring relation, so account the event with sensitivity one
        (dp-accounting's ADD_OR_REMOVE_ONE convention). The Gamma mechanism has no
        dp-accounting event (UnsupportedDpEvent); its guarantee is pure DP, see ``privacy``.
        Secure noise gives a ``ZCDpEvent`` that the RDP accountant accounts and the PLD
        accountant refuses: (tau, 1/(2 z^2))-zCDP for the discrete Gaussian (CKS Theorem
        14), and epsilon^2/2 = 1/(2 z^2) for the pure epsilon-DP discrete Laplace (Bun &
        Steinke 2016, Proposition 1.4).
        """
        return self.noise_kind.dp_event(self._noise_multiplier, self._tau)

    @property
    def noise_multiplier(self) -> float:
        """The noise multiplier in use: as given, or calibrated from ``epsilon`` (0.0 for
        ``epsilon=inf``); never None. The per-node scale is this times the sensitivity
        (Gaussian kinds) or the summed per-node sensitivity (pure kinds)."""
        return self._noise_multiplier

