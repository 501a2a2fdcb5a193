"""The trivial fallback's calibration: its budget split (:class:`~dpol.learners.
trivial_fallback.WithTrivialFallback` is the mechanism; its Privacy section the
derivation), and the plan that picks the split from public quantities.

Privacy
-------
The prior and the gate take shares of mu*(epsilon, delta)^2, the learner the rest's
epsilon (``gaussian_share``): Gaussian mechanisms compose as mu^2 = sum mu_i^2 (Dong,
Roth and Su 2019, Cor. 3.3), so the whole is exactly (epsilon, delta)-DP for a Gaussian
learner. :func:`fallback_plan` reads only epsilon, delta, the horizon and the number of
classes, all public before the first row: choosing the split from them costs nothing.
"""

from __future__ import annotations

import dataclasses
import math

from dpol._validation import check_int, check_real, fail
from dpol.accounting.closed_forms import gaussian_share, mu_star

__all__ = ["GATE_FROM", "GATE_SHARE", "LEARNER_FROM_ROWS", "LEARNER_FROM_STD",
           "LONG_THRESHOLD", "PRIOR_ONLY_RESOLUTION", "PRIOR_ONLY_SHARES", "PRIOR_SHARE",
           "SHORT_PRIOR_SHARE", "SHORT_RESOLUTION", "FallbackPlan", "fallback_budget",
           "fallback_plan", "gate_resolution", "gate_start", "learner_start", "schedule_weight"]

#: shares of a Gaussian budget (of mu^2) spent on the prior and on the gate. Chosen on the
#: utility benchmark's tuning sets (docs/benchmarks/trivial_fallback.md): 0.2 / 0.1 misses
#: T1 in fewer cells than 0.1 / 0.1 and far less below the trivial model, at 0.2 points of
#: held-out accuracy at epsilon 1; a larger prior share fails T2 on Bananas' stream
PRIOR_SHARE = 0.2
#: share of a Gaussian budget (of mu^2) spent on the gate (chosen with ``PRIOR_SHARE``)
GATE_SHARE = 0.1
#: a two-class stream is *short* where the gate, on the split above, could not tell the
#: model's error rate from the prior's to within this (one public std at the horizon):
#: below about 365 rows at epsilon 1, 2,955 at 0.1. There the model rarely earns its
#: share and the prior's noise decides T1 (docs/benchmarks/trivial_fallback.md, "Short
#: streams": chosen on the tuning sets, between their 0.058 and 0.104)
SHORT_RESOLUTION = 0.08
#: the gate releases from the first block ending after this row (or after a quarter of
#: the horizon, if less: ``gate_start``); the blocks before it (1, 2, ..., 64 rows) weigh
#: 5,461 of the gate's W, under 2% of it on 1,000 rows, and give the prior the gate's
#: budget (docs/benchmarks/trivial_fallback.md, "The first blocks")
GATE_FROM = 127
#: the prior's share on a short two-class stream (the gate keeps ``GATE_SHARE``; the model
#: predicts only where the gate opens: significance 0)
SHORT_PRIOR_SHARE = 0.5
#: the gate's threshold (in its stds) on a stream that is not short: it opens wherever the
#: model's mean error is privately below the prior's at all. There the gate's std is small
#: beside the differences that matter, and the one-sided test's 1 std (the mechanism's
#: default, kept on a short stream) only kept the prior over a better model: 30 seeds on
#: the tuning sets, prequential accuracy at epsilon 1 81.4 -> 81.8 (Phishing's stream
#: 75.4 -> 76.8), held out 87.3 -> 87.4, expected T1 misses unchanged at both epsilons;
#: on a short stream 0 cost them (3.70 -> 4.12 at 0.1). docs/benchmarks/trivial_fallback.md,
#: "The gate's threshold on long streams"
LONG_THRESHOLD = 0.0
#: a stream so short that its gate (on the default split) could not tell two classes'
#: error rates apart to within this is left to the prior alone: the gate never opens, the
#: prior takes ``PRIOR_ONLY_SHARES`` (docs/benchmarks/trivial_fallback.md, "The prior
#: alone": chosen on the two-class tuning sets, between Phishing's 0.21 and rare-noise's
#: 0.29 at epsilon 0.1; K > 2 classes too, whose prior is noisier: wine at 0.1, 1.63)
PRIOR_ONLY_RESOLUTION = 0.25
#: the prior's and the gate's shares there (the learner's 5% is spent, never predicts)
PRIOR_ONLY_SHARES = (0.9, 0.05)
#: where the gate's silent first blocks (``gate_start``) are too few for the prior, on
#: the whole budget, to learn the mean of the +-1 labels to within this public std, the
#: learner starts only after the blocks that do (``learner_start``): the prior predicts
#: those rows anyway, and its sign there decides them (docs/benchmarks/trivial_fallback.md,
#: "The learner's first rows": chosen among seven rules on the tuning sets, the fewest
#: expected T1 misses at epsilon 0.1 and none more at 1)
LEARNER_FROM_STD = 0.15
#: ... but it gives up at most this share of the horizon
LEARNER_FROM_ROWS = 1 / 4


def fallback_budget(epsilon: float, delta: float, prior_share: float = PRIOR_SHARE,
                    gate_share: float = GATE_SHARE) -> tuple[float, float, float]:
    """(z of the prior, z of the gate, epsilon left for the learner) at (epsilon, delta).

    Shares of mu*^2 for the prior and the gate (``gaussian_share``), the rest's epsilon for
    the learner: exactly (epsilon, delta) for a Gaussian learner (inf: no noise).

    Examples
    --------
    >>> z_p, z_g, rest = fallback_budget(1.0, 1e-5)
    >>> round(z_p, 2), round(z_g, 2), round(rest, 3)
    (8.34, 11.8, 0.822)
    """
    prior_share = check_real("prior_share", prior_share, low=0.0, high=1.0, low_open=True)
    gate_share = check_real("gate_share", gate_share, low=0.0, high=1.0, low_open=True)
    both = prior_share + gate_share
    if both >= 1.0:
        raise fail("prior_share + gate_share", "be below 1 (the learner needs a share)", both)
    if math.isinf(epsilon):
        return 0.0, 0.0, math.inf
    z_both, rest = gaussian_share(epsilon, delta, both)
    return (z_both * math.sqrt(both / prior_share), z_both * math.sqrt(both / gate_share),
            rest)


def gate_start(horizon: int, gate_from: int = GATE_FROM) -> int:
    """The row after which the gate's blocks begin: ``gate_from``, or a quarter of the
    horizon on a shorter stream (its gate still sees the later blocks).

    >>> gate_start(10_000), gate_start(100)
    (127, 25)
    """
    return min(gate_from, horizon // 4)


def schedule_weight(horizon: int, after: int = 0) -> float:
    """W = sum_j n_j^2 over the fallback's blocks of 1, 2, 4, ... rows cut at ``horizon``
    that end after row ``after``: its inverse-variance means have std (a block's noise
    std) / sqrt(W) at the horizon.

    >>> schedule_weight(7), schedule_weight(8), schedule_weight(8, after=3)
    (21.0, 22.0, 17.0)
    """
    horizon = check_int("horizon", horizon, low=1)
    weight, start = 0.0, 0
    while start < horizon:
        end = min(2 * start + 1, horizon)
        weight += float(end - start) ** 2 if end > after else 0.0
        start = end
    return weight


def learner_start(epsilon: float, delta: float, horizon: int,
                  std: float = LEARNER_FROM_STD, rows: float = LEARNER_FROM_ROWS) -> int:
    """The row after which the learner learns: 0 where the prior, on the whole budget,
    reaches the public std ``std`` on the mean of the +-1 labels within the gate's silent
    first blocks (``gate_start``), or without noise; else the end of the first block (1, 3,
    7, ..., 2^k - 1 rows) by which it does, at most ``rows`` of the horizon (then the
    last block end within it). Its std after n rows is 2 sqrt(3) z* / n (z* = 1 / mu*, a
    block's std 2 z* over sqrt(W), W = n^2 / 3 on the doubling blocks).

    >>> learner_start(0.1, 1e-5, 10_000), learner_start(1.0, 1e-5, 10_000)  # 710, 86 rows
    (1023, 0)
    >>> learner_start(0.1, 1e-5, 2_000), learner_start(1.0, 1e-5, 300), learner_start(
    ...     math.inf, 1e-5, 10_000)
    (255, 63, 0)
    """
    if math.isinf(epsilon):
        return 0
    needed = 2.0 * math.sqrt(3.0) / (mu_star(epsilon, delta) * std)
    if needed <= gate_start(horizon):
        return 0
    end = 1
    while end < needed:
        end = 2 * end + 1
    while end > horizon * rows:
        end = (end - 1) // 2
    return end


def gate_resolution(epsilon: float, delta: float, horizon: int) -> float:
    """The gate's public std at the horizon on the default split, in error rate: how
    small a difference between the model's and the prior's error rates it can see
    (two classes, over its own blocks: ``gate_start``; 0 without noise).

    >>> round(gate_resolution(1.0, 1e-5, 1000), 4), round(gate_resolution(0.1, 1e-5, 1000), 3)
    (0.0255, 0.21)
    """
    z_prior, z_gate, _ = fallback_budget(epsilon, delta)
    # a block's prior-error count (n - c S / L) / 2 has std z_prior: its sum's 2 L z / (2 L)
    weight = schedule_weight(horizon, after=gate_start(horizon))
    return math.hypot(z_prior, z_gate) / math.sqrt(weight)


@dataclasses.dataclass(frozen=True)
class FallbackPlan:
    """The fallback's split and rule: shares of mu*^2 for the prior and the gate, and its
    ``significance`` (0: the model predicts only where the gate opens; None: the
    mechanism's default); ``short``: the short-stream split; ``prior_only``: the gate
    never opens (a stream too short for it to judge a model); ``learner_from``: the
    row after which the learner learns (``learner_start``; 0 where the prior is alone);
    ``threshold``: the gate's (``LONG_THRESHOLD``, inf where the prior is alone; None:
    the mechanism's default, on a short stream)."""

    prior_share: float
    gate_share: float
    significance: float | None
    short: bool
    prior_only: bool = False
    learner_from: int = 0
    threshold: float | None = None


def fallback_plan(epsilon: float, delta: float, horizon: int,
                  classes: int = 2) -> FallbackPlan:
    """The default split for a stream of ``horizon`` rows: on a short two-class stream
    (:func:`gate_resolution` above ``SHORT_RESOLUTION``) the prior takes
    ``SHORT_PRIOR_SHARE`` and the model predicts only where the gate opens, and above
    ``PRIOR_ONLY_RESOLUTION`` the prior alone predicts (``prior_only``: the gate never
    opens; ``PRIOR_ONLY_SHARES``); otherwise ``PRIOR_SHARE`` / ``GATE_SHARE``, the
    mechanism's coin-flip rule and the gate's ``LONG_THRESHOLD``; the learner learns
    after row ``learner_start`` (the prior predicts before it, on the whole budget).
    K > 2 classes never take the short split (on wine, three balanced classes, it cost
    12 points of held-out accuracy at epsilon 1, 46.7 -> 35.0), but are left to the
    prior alone as two are: their gate's own resolution is no finer.

    Examples
    --------
    >>> fallback_plan(0.1, 1e-5, 1000).prior_share, fallback_plan(1.0, 1e-5, 1000).prior_share
    (0.5, 0.2)
    >>> fallback_plan(0.1, 1e-5, 1000, classes=3).short
    False
    >>> [fallback_plan(0.1, 1e-5, n).prior_only for n in (800, 1000)]  # resolution 0.29, 0.21
    [True, False]
    >>> fallback_plan(0.1, 1e-5, 150, classes=3).prior_only  # iris's 120 rows: 1.77
    True
    >>> fallback_plan(0.1, 1e-5, 5_000).learner_from, fallback_plan(1.0, 1e-5, 5_000).learner_from
    (1023, 0)
    >>> [fallback_plan(1.0, 1e-5, n).threshold for n in (100, 300, 5_000)]  # alone, short
    [inf, None, 0.0]
    """
    resolution = gate_resolution(epsilon, delta, horizon)
    if not math.isinf(epsilon) and resolution > PRIOR_ONLY_RESOLUTION:
        return FallbackPlan(*PRIOR_ONLY_SHARES, 0.0, True, True, threshold=math.inf)
    start = learner_start(epsilon, delta, horizon)
    short = classes == 2 and not math.isinf(epsilon) and resolution > SHORT_RESOLUTION
    if short:
        return FallbackPlan(SHORT_PRIOR_SHARE, GATE_SHARE, 0.0, True, learner_from=start)
    return FallbackPlan(PRIOR_SHARE, GATE_SHARE, None, False, learner_from=start,
                        threshold=LONG_THRESHOLD)
