"""Several counters released together, calibrated as one Gaussian mechanism.

The learners that feed one element to several counters (PQFTL, KNJ's regressions) state
no guarantee of their own: their ``privacy_events`` are :func:`joint_events` of the
counters they run, and ``privacy`` is derived from those events
(:func:`dpol.accounting.compose_guarantee`), window, relation and unit included.
"""

from __future__ import annotations

import math
import warnings

from dpol._seeding import spawn_seeds
from dpol._validation import fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.closed_forms import gaussian_epsilon
from dpol.accounting.events import MechanismEvent
from dpol.accounting.presets import tree_levels
from dpol.counters import BinaryTreeCounter, make_counter
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning
from dpol.noise._dp_accounting import dp_accounting
from dpol.noise.kinds import noise_kind

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

    The same for (svec(x x^T), y x) (PQFTL with ``fixes``): svec, the upper triangle with
    off-diagonals times sqrt(2), is an isometry from symmetric matrices with the Frobenius
    norm, so ||svec(x x^T) - svec(x' x'^T)|| = ||x x^T - x' x'^T||_F.

    Replace-one, ||x||, ||x'|| <= X, |y|, |y'| <= Y, a = ||x||^2, b = ||x'||^2, c = <x, x'>:
    ||x x^T - x' x'^T||_F^2 + ||y x - y' x'||^2 <= (a^2 + b^2 - 2 c^2) + Y^2 (a + b + 2|c|),
    increasing in a and b (which also relaxes |c| <= sqrt(ab)), so a = b = X^2; in c the
    maximum is at |c| = Y^2/2 when Y^2 <= 2 X^2, giving 2 X^4 + 2 X^2 Y^2 + Y^4/2, else at
    |c| = X^2, giving 4 X^2 Y^2. Attained (unit x, x' at <x, x'> = Y^2/2, y = Y = -y'), so
    it is exact: 3/sqrt(2) = 2.12 at X = Y = 1, where adding the two parts' own bounds in
    quadrature (sqrt(2) X^2 and 2 X Y) gives sqrt(6) = 2.45. Add/remove: the element
    itself, ||x||^4 + y^2 ||x||^2 <= X^4 + X^2 Y^2.

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

    Each counter k rounds its part of the element to its grid g_k Z^{d_k}, moving it by at
    most g_k sqrt(d_k)/2 in l2; stacked, the rounded element moves by at most
    sqrt(sum_k g_k^2 d_k)/2, so two neighbouring rounded elements differ by at most
    s + h sqrt(sum_k g_k^2 d_k), s the proven bound on the unrounded stacked element and
    h = 1 under replace-one (both rounded), 1/2 under add/remove (zero lies on every
    grid). Counter k adds i.i.d. discrete Gaussian noise of std parameter sigma_k to
    node values on g_k Z, so its node vector is (||D_k||^2 / (2 sigma_k^2))-zCDP for a
    change D_k on the lattice (CKS Theorem 14), and independent releases add up: rho =
    sum_k ||D_k||^2 / (2 sigma_k^2) <= ||D||^2 / (2 min_k sigma_k^2), where the stacked
    change ||D|| is at most :func:`secure_joint_sensitivity`. xi is the sum of the
    counters' CKS Theorem 15 slacks (0.0 at the grid's 2^10 steps per noise scale).

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> counters, stacked = joint_counters(
    ...     BinaryTreeCounter, 64, [(4, {}), (2, {})], epsilon=1.0, delta=1e-5,
    ...     neighbouring="replace_one", calibration="tight", options={}, seed=None,
    ...     noise="secure")
    >>> rho, xi = joint_zcdp(counters, stacked)
    >>> round(rho, 6), xi  # rho <= 1/(2 z^2) = 0.030553
    (0.030553, 0.0)
    """
    low = min(c.noise_scale for c in counters)
    joint = secure_joint_sensitivity(counters, element_sensitivity)
    return joint**2 / (2.0 * low**2), sum(c.dp_event().xi for c in counters)


def secure_joint_sensitivity(counters: tuple, element_sensitivity: float | None) -> float:
    """l2 change of the stacked node vectors of secure counters, rounding included.

    The smaller of the quadrature sum of the counters' own (rounding-inflated)
    sensitivities and (s + h sqrt(sum_k g_k^2 d_k)) times the encoder's column norm (the
    same structure in every counter), s = ``element_sensitivity`` (see :func:`joint_zcdp`).

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
    The counters' own events always hold: each counter is a mechanism of its own
    sensitivity s_k, and independent Gaussian mechanisms compose into mu^2 = sum_k
    (s_k / sigma_k)^2 (zCDP: rho = sum_k rho_k), adaptively chosen elements included.
    With a proven bound s on the change of the stacked element (all counters' parts
    together, e.g. :func:`outer_product_sensitivity`), the stacked node vectors are one
    mechanism: the same encoder in every counter moves them by at most s times its column
    norm (S, :func:`secure_joint_sensitivity` with the rounding for secure noise), and
    every node coordinate has std >= min_k sigma_k, so its privacy loss is mu = S / min_k
    sigma_k (secure: rho = S^2 / (2 min_k sigma_k^2), :func:`joint_zcdp`, xi the sum of
    the counters' slacks). That one event replaces the counters' when it is smaller: this
    is what the tight calibration certified (all sigma_k equal to S / mu*(epsilon,
    delta)). A window counter protects an element in the W releases after its arrival in
    every counter, so the stacked release has the same window.

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
    >>> compose_guarantee(joint_events(counters, stacked), 1e-5, target=1.0).epsilon
    1.0
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

    Tight: the node vectors form one Gaussian mechanism of sensitivity
    sqrt(sum s_k^2) (each s_k from the counter's own structure and element sensitivity),
    so every counter gets the same std sigma = sqrt(sum s_k^2) / mu*(epsilon, delta) — exact
    by Gaussian DP (docs/errata.md, JKT-4). ``element_sensitivity``, when given, is a proven bound
    on the l2 change of the stacked element (all counters' inputs together, e.g.
    :func:`outer_product_sensitivity`); as every counter has the same structure, one
    element then moves the stacked node vectors by it times the encoder's column norm,
    which replaces the quadrature sum when smaller. The column norm c is common to all
    counters (one class, horizon and options), so s_k = Delta_k c with Delta_k the node
    sensitivity (``element_sensitivity`` of the spec, else 2 bound under replace-one and
    bound under add/remove) and c cancels from each counter's multiplier z_k = sigma /
    s_k = z J / Delta_k, J = min(sqrt(sum Delta_k^2), element_sensitivity), z the one
    multiplier :func:`dpol.accounting.calibrate` gives the stacked release: no counter is
    built before its noise is known. Paper: ``paper`` holds the published per-counter
    sigmas and the name of the formula (binary tree only, whose column norm is
    sqrt(floor(log2 T) + 1), :func:`dpol.accounting.presets.tree_levels`), and a
    ``PaperCalibrationWarning`` says when the real epsilon of their Gaussian-DP
    composition exceeds ``epsilon``. ``epsilon=inf`` builds noiseless counters. The
    counters are built under ``neighbouring`` (the learner's relation: ``options`` may not
    override it, nor anything else the calibration sets).

    Returns
    -------
    counters : tuple of Counter
    element_sensitivity : float or None
        What to pass to :func:`joint_events` for the events the calibration certified:
        the stacked bound under tight calibration, None under paper calibration (the
        published per-tree noise, composed as the warning states) or without noise.

    Privacy
    -------
    No guarantee is made here: the learner's is derived from :func:`joint_events` (tight:
    epsilon; paper: the real epsilon the warning names). ``noise="secure"`` (tight only;
    every counter, see :class:`dpol.counters.Counter`
    and, for real weights, the counters' Privacy sections): every counter rounds its
    part of the element to its grid and adds exact discrete Gaussian noise. The joint
    sensitivity then includes the rounding, s + h sqrt(sum_k g_k^2 d_k) for the stacked
    element, times the column norm, plus sqrt(sum_k r_k^2) for matrix counters whose
    encoder rounding adds r_k (:func:`secure_joint_sensitivity`), and the calibration
    goes through zCDP: with z the smallest multiplier whose 1/(2 z^2)-zCDP
    dp-accounting's RDP accountant certifies (epsilon, delta), every counter's std is
    raised until min_k sigma_k >= z times the joint (inflated) sensitivity, i.e. rho <=
    1/(2 z^2); the grids depend on the stds (a few fixed-point rounds settle them). The
    events then carry (xi, rho)-zCDP, which the RDP accountant certifies at most
    ``epsilon``: 4-11% more std than the analytic Gaussian of the float path.

    Examples
    --------
    Two trees fed the parts vec(x x^T) (4 entries) and y x (2) of one element: each gets
    sqrt(2) times the std it would get alone at the same epsilon, or less with a proven
    stacked bound (3/sqrt(2), against 2 sqrt(2) for the parts' own bounds in quadrature).

    >>> from dpol.counters import BinaryTreeCounter
    >>> kw = dict(epsilon=1.0, delta=1e-5, neighbouring="replace_one", calibration="tight",
    ...           options={}, seed=0)
    >>> counters, stacked = joint_counters(BinaryTreeCounter, 64, [(4, {}), (2, {})], **kw)
    >>> [c.dim for c in counters], stacked
    ([4, 2], None)
    >>> alone = BinaryTreeCounter(64, 4, epsilon=1.0, delta=1e-5).noise_scale
    >>> [round(c.noise_scale / alone, 4) for c in counters]
    [1.4142, 1.4142]
    >>> bound = outer_product_sensitivity(1.0, 1.0, "replace_one")
    >>> counters, _ = joint_counters(BinaryTreeCounter, 64, [(4, {}), (2, {})], **kw,
    ...                              element_sensitivity=bound)
    >>> round(counters[0].noise_scale / alone, 4)
    1.0607
    """
    kind = noise_kind(noise, among=JOINT_NOISES)
    kind.check_calibration(calibration)
    clash = sorted(set(options) & set(_RESERVED))
    if clash:
        raise fail("counter_options", "not set what the joint calibration sets ("
                   f"{', '.join(_RESERVED)})", clash)
    common = {"neighbouring": neighbouring, **options}
    nodes = [_node_sensitivity(kw, neighbouring) for _, kw in specs]
    joint = math.sqrt(sum(n * n for n in nodes))  # J of the docstring, per unit column
    if element_sensitivity is not None:
        joint = min(joint, element_sensitivity)
    stacked = None
    if not math.isfinite(epsilon):
        zs = [0.0] * len(specs)
    elif calibration == "tight":  # the stacked release: one mechanism of the kind at z
        z = calibrate(noise_events(kind, neighbouring), epsilon, delta)
        zs, stacked = [z * joint / n for n in nodes], element_sensitivity
        if kind.secure:  # the counters' grids inflate the joint sensitivity (Privacy)
            return _secure_counters(cls, horizon, specs, common, zs, z, seed,
                                    element_sensitivity), stacked
    else:
        if cls is not BinaryTreeCounter or paper is None:
            raise fail("calibration", "be 'tight' unless counter='tree' (the published "
                       "formulas are for the binary tree)", "paper")
        sigmas, formula = paper
        column = math.sqrt(float(tree_levels(horizon)))  # the tree's encoder column norm
        zs = [sig / (n * column) for sig, n in zip(sigmas, nodes, strict=True)]
        # the counters' own events compose into this (mu^2 adds): what privacy reports
        eps = gaussian_epsilon(1.0 / math.sqrt(sum((1.0 / z) ** 2 for z in zs)), delta)
        if eps > epsilon * (1 + 1e-9):
            warnings.warn(f"{formula} gives only ({eps:.4g}, {delta:g})-DP at horizon={horizon},"
                          f" not epsilon={epsilon:g}", PaperCalibrationWarning, stacklevel=4)
    return _build(cls, horizon, specs, common, zs, seed, kind.name), stacked


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


def _secure_counters(cls: type, horizon: int, specs: list, common: dict, zs: list[float],
                     z: float, seed: object, element_sensitivity: float | None) -> tuple:
    """Secure counters with min_k sigma_k >= z * (joint inflated sensitivity) (Privacy)."""
    for _ in range(64):  # grids only grow with sigma, up to their caps: a few rounds
        counters = _build(cls, horizon, specs, common, zs, seed, "secure")
        low = min(c.noise_scale for c in counters)
        need = z * secure_joint_sensitivity(counters, element_sensitivity)
        if low >= need:
            return counters
        zs = [v * need / low * (1.0 + 1e-12) for v in zs]
    # the grids are capped, so this cannot happen
    raise RuntimeError("secure joint calibration did not settle")  # pragma: no cover
