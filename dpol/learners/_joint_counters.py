"""Several counters released together, calibrated as one Gaussian mechanism.

The learners that feed one element to several counters (PQFTL, KNJ's regressions) state
no guarantee of their own: their ``privacy_events`` are :func:`joint_events` of the
counters they run, and ``privacy`` is derived from those events
(:func:`dpol.accounting.compose_guarantee`), window, relation and unit included.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

from dpol._seeding import spawn_seeds
from dpol._validation import fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.closed_forms import gaussian_epsilon
from dpol.accounting.events import MechanismEvent
from dpol.accounting.presets import tree_levels
from dpol.counters import BinaryTreeCounter, make_counter
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning
from dpol.noise._dp_accounting import dp_accounting
from dpol.noise.kinds import NoiseKind, noise_kind

__all__ = ["joint_counters", "joint_events", "joint_zcdp", "outer_product_sensitivity",
           "secure_joint_sensitivity"]

#: noise kinds a jointly calibrated pair of counters accepts
JOINT_NOISES = ("gaussian", "secure")
#: counter keywords the joint calibration sets itself: ``counter_options`` may not
#: override them (a counter told another relation than the learner's would be calibrated
#: for other neighbours, and its events would then protect those)
_RESERVED = ("neighbouring", "bound", "element_sensitivity", "noise_multiplier", "epsilon",
             "delta", "calibration", "noise", "seed")


def outer_product_sensitivity(x_bound: float, y_bound: float, neighbouring: str) -> float:
    """Largest l2 change of the stacked element (vec(x x^T), y x) when one element changes.

    The same for (svec(x x^T), y x) (svec is an isometry). Replace-one, ||x|| <= X, |y| <=
    Y: sqrt(2 X^4 + 2 X^2 Y^2 + Y^4 / 2) when Y^2 <= 2 X^2, else 2 X Y, attained, so
    exact; add/remove: sqrt(X^4 + X^2 Y^2). Derivation: docs/derivations/joint_counters.md.

    Examples
    --------
    >>> round(outer_product_sensitivity(1.0, 1.0, "replace_one"), 4)
    2.1213
    """
    x2, y2 = x_bound**2, y_bound**2
    if neighbouring != "replace_one":
        return math.sqrt(x2 * x2 + x2 * y2)
    if y2 <= 2.0 * x2:
        return math.sqrt(2.0 * x2 * x2 + 2.0 * x2 * y2 + 0.5 * y2 * y2)
    return 2.0 * x_bound * y_bound


def joint_zcdp(counters: tuple, element_sensitivity: float | None) -> tuple[float, float]:
    """(rho, xi): the zCDP of secure counters released together (``joint_counters``).

    Counter k's discrete Gaussian noise of std sigma_k on its grid makes its node vector
    (||D_k||^2 / (2 sigma_k^2))-zCDP (CKS Theorem 14); independent releases add up, so
    rho <= S^2 / (2 min_k sigma_k^2), S the stacked change rounding included
    (:func:`secure_joint_sensitivity`); xi is the sum of the counters' CKS Theorem 15
    slacks. Derivation: docs/derivations/joint_counters.md.

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> counters, stacked = joint_counters(
    ...     BinaryTreeCounter, 64, [(4, {}), (2, {})], epsilon=1.0, delta=1e-5,
    ...     neighbouring="replace_one", calibration="tight", options={}, seed=None,
    ...     noise="secure", element_sensitivity=outer_product_sensitivity(1, 1, "replace_one"))
    >>> rho, xi = joint_zcdp(counters, stacked)
    >>> round(rho, 6), xi  # 1/(2 z^2) for the z that certifies (1, 1e-5) through zCDP
    (0.030553, 0.0)
    """
    low = min(c.noise_scale for c in counters)
    joint = secure_joint_sensitivity(counters, element_sensitivity)
    return joint**2 / (2.0 * low**2), sum(c.dp_event().xi for c in counters)


def secure_joint_sensitivity(counters: tuple, element_sensitivity: float | None) -> float:
    """l2 change of the stacked node vectors of secure counters, rounding included.

    The smaller of the quadrature sum of the counters' own (rounding-inflated)
    sensitivities and (s + h sqrt(sum_k g_k^2 d_k)) times the encoder's column norm, s =
    ``element_sensitivity``, g_k and d_k counter k's grid and dimension, h = 1 under
    replace-one and 1/2 under add/remove (docs/derivations/joint_counters.md).

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(64, 4, noise_multiplier=4.0, delta=1e-5, noise="secure")
    >>> secure_joint_sensitivity((c,), None) == c.sensitivity  # one part: its own bound
    True
    """
    joint = math.sqrt(sum(c.sensitivity**2 for c in counters))
    if element_sensitivity is not None:
        first = counters[0]
        # matrix counters (Toeplitz, BLT) add the l2 bound of their encoder rounding,
        # sqrt(T d_k) (g_k + 2 e_k), to the column term; stacked, those add in quadrature
        extra = [getattr(c, "_extra_sensitivity", 0.0) for c in counters]
        column = (first.sensitivity - extra[0]) / first.node_sensitivity
        half = 1.0 if first.neighbouring == "replace_one" else 0.5
        rounding = half * math.sqrt(sum(c.grid**2 * c.dim for c in counters))
        joint = min(joint, (element_sensitivity + rounding) * column
                    + math.sqrt(sum(e * e for e in extra)))
    return joint


def joint_events(counters: tuple, element_sensitivity: float | None
                 ) -> tuple[MechanismEvent, ...]:
    """The privacy events of counters fed by one element: what a learner running them has.

    Parameters
    ----------
    counters : tuple of Counter
        Built by :func:`joint_counters` (one class, horizon, relation and options).
    element_sensitivity : float or None
        The stacked-element bound the tight calibration used (``joint_counters``'s second
        return value); None: the counters' own events.

    Returns
    -------
    tuple of MechanismEvent
        The counters' own events (each with its relation, window and horizon), or, when
        the stacked element's bound proves less, one event of the stacked release with
        the counters' common relation, window and horizon.

    Privacy
    -------
    The counters' own events always hold (independent mechanisms compose, adaptively
    too). With a proven bound s on the stacked element's change, the stacked node vectors
    are one mechanism of sensitivity S = s times the column norm (secure: rounding
    included), every std >= min_k sigma_k: mu = S / min_k sigma_k (secure:
    :func:`joint_zcdp`), used when smaller (docs/derivations/joint_counters.md).

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> from dpol.accounting import compose_guarantee
    >>> kw = dict(epsilon=1.0, delta=1e-5, neighbouring="replace_one", calibration="tight",
    ...           options={}, seed=0)
    >>> bound = outer_product_sensitivity(1.0, 1.0, "replace_one")
    >>> counters, stacked = joint_counters(BinaryTreeCounter, 64, [(4, {}), (2, {})], **kw,
    ...                                    element_sensitivity=bound)
    >>> [e.name for e in joint_events(counters, stacked)]
    ['BinaryTreeCounter x2, stacked']
    >>> round(compose_guarantee(joint_events(counters, None), 1e-5).epsilon, 3)  # own: looser
    1.373
    """
    own = tuple(e for c in counters for e in c.privacy_events())
    if element_sensitivity is None or any(c.noise_scale == 0.0 for c in counters):
        return own
    whom = {(e.neighbouring, e.window, e.horizon, e.unit) for e in own}
    if len(whom) != 1:  # joint_counters builds them alike; a stacked bound needs that
        raise fail("counters", "share one relation, window, horizon and unit", sorted(whom))
    low = min(c.noise_scale for c in counters)
    kind = counters[0].noise_kind
    if not kind.secure:  # float Gaussian: compare mu^2
        column = counters[0].sensitivity / counters[0].node_sensitivity
        stacked = (element_sensitivity * column / low) ** 2
        if stacked >= sum(e.event.noise_multiplier ** -2 for e in own):
            return own
        event = kind.event(element_sensitivity * column, low)
    else:  # secure: compare rho
        rho, xi = joint_zcdp(counters, element_sensitivity)
        if rho >= sum(e.event.rho for e in own):
            return own
        event = dp_accounting.ZCDpEvent(rho, xi)
    neighbouring, window, horizon, unit = whom.pop()
    return (MechanismEvent(event, neighbouring, window=window, horizon=horizon, unit=unit,
                           name=f"{type(counters[0]).__name__} x{len(counters)}, stacked"),)


def joint_counters(cls: type, horizon: int, specs: list[tuple[int, dict]], *,
                   epsilon: float, delta: float, neighbouring: str, calibration: str,
                   options: dict, seed: object,
                   paper: tuple[list[float], str] | None = None,
                   element_sensitivity: float | None = None,
                   noise: str = "gaussian") -> tuple[tuple, float | None]:
    """Build one counter per ``(dim, keywords)`` spec, all fed by the same element.

    Tight: the stacked node vectors are one mechanism, and every counter gets the noise
    it needs; ``element_sensitivity``, when given, is a proven bound on the stacked
    element's l2 change (e.g. :func:`outer_product_sensitivity`). Paper: ``paper`` holds
    the published per-counter sigmas and the formula's name (binary tree only).
    ``epsilon=inf`` builds noiseless counters. ``options`` may not override what the
    calibration sets (``neighbouring`` included).

    Returns
    -------
    counters : tuple of Counter
    element_sensitivity : float or None
        What to pass to :func:`joint_events`: the stacked bound under tight calibration,
        None under paper calibration or without noise.

    Privacy
    -------
    No guarantee is made here: the learner's comes from :func:`joint_events`, under its
    relation. Sensitivity: the stacked node vectors move by J c, J = min(sqrt(sum_k
    Delta_k^2), element_sensitivity), c the common encoder column norm. Tight: every
    counter gets std z J c, z from :func:`dpol.accounting.calibrate` (Gaussian DP;
    docs/errata.md, JKT-4); secure noise adds the rounding
    (:func:`secure_joint_sensitivity`) and sizes z on the zCDP events
    (:func:`joint_zcdp`). Paper: the published sigmas, with a ``PaperCalibrationWarning``
    when their composition exceeds ``epsilon``. Derivation:
    docs/derivations/joint_counters.md.

    Examples
    --------
    Two trees fed vec(x x^T) (4 entries) and y x (2): each gets sqrt(2) times its std
    alone (less with a stacked bound: 3/sqrt(2) against 2 sqrt(2)).

    >>> from dpol.counters import BinaryTreeCounter
    >>> kw = dict(epsilon=1.0, delta=1e-5, neighbouring="replace_one", calibration="tight",
    ...           options={}, seed=0)
    >>> counters, stacked = joint_counters(BinaryTreeCounter, 64, [(4, {}), (2, {})], **kw)
    >>> alone = BinaryTreeCounter(64, 4, epsilon=1.0, delta=1e-5).noise_scale
    >>> [c.dim for c in counters], stacked, round(counters[0].noise_scale / alone, 4)
    ([4, 2], None, 1.4142)
    """
    kind = noise_kind(noise, among=JOINT_NOISES)
    kind.check_calibration(calibration)
    clash = sorted(set(options) & set(_RESERVED))
    if clash:
        raise fail("counter_options", "not set what the joint calibration sets ("
                   f"{', '.join(_RESERVED)})", clash)
    common = {"neighbouring": neighbouring, **options}
    nodes = [_node_sensitivity(kw, neighbouring) for _, kw in specs]
    joint = math.sqrt(sum(n * n for n in nodes))  # J of the Privacy section, per unit column
    if element_sensitivity is not None:
        joint = min(joint, element_sensitivity)
    build = functools.partial(_build, cls, horizon, specs, common, seed=seed, noise=kind.name)
    if not math.isfinite(epsilon):
        return build([0.0] * len(specs)), None
    if calibration != "tight":
        return build(_paper_multipliers(cls, horizon, nodes, paper, epsilon, delta)), None
    return _tight_counters(build, nodes, joint, element_sensitivity, kind, neighbouring,
                           epsilon, delta), element_sensitivity


def _tight_counters(build: Callable[[list[float]], tuple], nodes: list[float], joint: float,
                    element_sensitivity: float | None, kind: NoiseKind, neighbouring: str,
                    epsilon: float, delta: float) -> tuple:
    """The counters of the smallest multiplier z of J whose stacked release is (epsilon,
    delta)-DP: counter k at z J / Delta_k (``nodes``), the column norm cancelling.

    Float Gaussian noise: one Gaussian of sensitivity J at z. Secure noise: the grids
    move with the stds, so z is calibrated on the events the counters will report.
    """
    def counters_at(z: float) -> tuple:
        return build([z * joint / n for n in nodes])

    if kind.secure:
        def events_of(z: float) -> tuple[MechanismEvent, ...]:
            return joint_events(counters_at(z), element_sensitivity)
    else:
        events_of = noise_events(kind, neighbouring)
    return counters_at(calibrate(events_of, epsilon, delta))


def _paper_multipliers(cls: type, horizon: int, nodes: list[float],
                       paper: tuple[list[float], str] | None, epsilon: float,
                       delta: float) -> list[float]:
    """Each counter's multiplier for its published sigma (binary tree only), with a
    ``PaperCalibrationWarning`` when their composition exceeds ``epsilon``.

    >>> _paper_multipliers(BinaryTreeCounter, 64, [2.0, 2.0], ([140.0, 140.0], "Eq. 1"),
    ...                    1.0, 1e-5)  # sigma / (node sensitivity * sqrt(7 levels))
    [26.457513110645905, 26.457513110645905]
    """
    if cls is not BinaryTreeCounter or paper is None:
        raise fail("calibration", "be 'tight' unless counter='binary_tree' (the published "
                   "formulas are for the binary tree)", "paper")
    sigmas, formula = paper
    column = math.sqrt(float(tree_levels(horizon)))  # the tree's encoder column norm
    zs = [sig / (n * column) for sig, n in zip(sigmas, nodes, strict=True)]
    # the counters' own events compose into this (mu^2 adds): what privacy reports
    eps = gaussian_epsilon(1.0 / math.sqrt(sum((1.0 / z) ** 2 for z in zs)), delta)
    if eps > epsilon * (1 + 1e-9):
        warnings.warn(f"{formula} gives only ({eps:.4g}, {delta:g})-DP at horizon={horizon},"
                      f" not epsilon={epsilon:g}", PaperCalibrationWarning, stacklevel=5)
    return zs


def _node_sensitivity(keywords: dict, neighbouring: str) -> float:
    """A counter's node sensitivity from its keywords (``Counter.node_sensitivity``)."""
    if keywords.get("element_sensitivity") is not None:
        return float(keywords["element_sensitivity"])
    return (2.0 if neighbouring == "replace_one" else 1.0) * keywords.get("bound", 1.0)


def _build(cls: type, horizon: int, specs: list, common: dict, zs: list[float],
           seed: object, noise: str) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)  # the learner warned already
        return tuple(make_counter(cls, horizon, dim, noise_multiplier=z, seed=s, noise=noise,
                                  **kw, **common)
                     for (dim, kw), z, s in zip(specs, zs, spawn_seeds(seed, len(specs)),
                                                strict=True))
