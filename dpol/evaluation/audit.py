"""Empirical differential-privacy audits: the statistics (layer L5).

An audit runs a mechanism many times on two neighbouring streams, applies threshold tests
to a released statistic and turns the counts into a **lower bound** on epsilon at the
claimed delta. For every event E, an (epsilon, delta)-DP mechanism M and neighbours a, b
satisfy ``P[M(b) in E] <= e^epsilon P[M(a) in E] + delta`` (and with a, b swapped), so

    epsilon >= ln((P[M(b) in E] - delta) / P[M(a) in E]).

The event (a threshold on a linear discriminant) is picked on half the runs and counted
on the held-out half; Clopper-Pearson bounds give a lower bound at the stated confidence
(:func:`audit_releases`). **A bound above the claim is a violation; a bound below it
proves nothing.** For Gaussian linear mechanisms the discriminant is the likelihood-ratio
test, so the audit is nearly tight (:func:`expected_gaussian_audit` predicts it: use it
to choose ``n_runs``). Under window DP only the W protected releases are audited
(:func:`audited_rows`). The runners: :mod:`dpol.evaluation.audit_counters`,
:mod:`dpol.evaluation.audit_learners`, :mod:`dpol.evaluation.audit_bandit`; the pairs
and under-noised twins: :mod:`dpol.evaluation.audit_pairs`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpol._lazy import scipy_stats as stats
from dpol._seeding import spawn_seeds
from dpol._validation import as_matrix, check_int, check_real, fail
from dpol.accounting.guarantee import PrivacyGuarantee

__all__ = [
    "AuditResult",
    "audit",
    "audit_releases",
    "audited_rows",
    "expected_gaussian_audit",
]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit: an epsilon lower bound and the evidence behind it.

    ``epsilon_lower``: with probability >= ``confidence`` the mechanism is not (e,
    delta)-DP for any e < epsilon_lower, at the claim's ``delta``. ``event``: the held-out
    test on ``threshold``; ``counts`` of the ``n_test`` held-out runs of a and b in it.

    Examples
    --------
    >>> r = AuditResult(0.2, 1.0, 1e-5, 0.95, (100, 100), 0.0, "score > t", (10, 12), (50, 50))
    >>> r.passed
    True
    """

    epsilon_lower: float
    claimed_epsilon: float
    delta: float
    confidence: float
    n_runs: tuple[int, int]
    threshold: float
    event: str
    counts: tuple[int, int]
    n_test: tuple[int, int]
    name: str = "mechanism"

    @property
    def passed(self) -> bool:
        """True when no violation was found (epsilon_lower <= claimed epsilon)."""
        return self.epsilon_lower <= self.claimed_epsilon

    def summary(self) -> str:
        """A printable report of the audit and what it proves."""
        verdict = ("PASSED: no violation found (an audit cannot prove privacy)" if self.passed
                   else f"VIOLATION: the claim is false with {self.confidence:.0%} confidence")
        return (f"DP audit of {self.name}: epsilon >= {self.epsilon_lower:.4g} at delta="
                f"{self.delta:g} with {self.confidence:.0%} confidence (claimed epsilon="
                f"{self.claimed_epsilon:g})\n  runs per stream: {self.n_runs[0]} (a), "
                f"{self.n_runs[1]} (b); held-out event '{self.event}' with t="
                f"{self.threshold:.6g}: {self.counts[0]}/{self.n_test[0]} (a) vs "
                f"{self.counts[1]}/{self.n_test[1]} (b)\n  {verdict}")


# ---------------------------------------------------------------------------- statistics
def _cp_upper(k: np.ndarray, n: int, gamma: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound: P[p <= bound] >= 1 - gamma."""
    k = np.asarray(k, dtype=float)
    out = stats.beta.ppf(1.0 - gamma, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k >= n, 1.0, out)


def _cp_lower(k: np.ndarray, n: int, gamma: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bound: P[p >= bound] >= 1 - gamma."""
    k = np.asarray(k, dtype=float)
    out = stats.beta.ppf(gamma, np.maximum(k, 1e-300), n - k + 1.0)
    return np.where(k <= 0, 0.0, out)


def _bound(k_low: np.ndarray, n_low: int, k_high: np.ndarray, n_high: int, delta: float,
           gamma: float) -> np.ndarray:
    """ln((lower bound of P[M(high) in E] - delta) / upper bound of P[M(low) in E]), >= 0."""
    numerator = _cp_lower(k_high, n_high, gamma) - delta
    with np.errstate(divide="ignore"):
        return np.maximum(0.0, np.log(np.maximum(numerator, 0.0) / _cp_upper(k_low, n_low,
                                                                              gamma)))


def _lda_direction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fisher's discriminant: pooled covariance^-1 (mean_b - mean_a), with a tiny ridge."""
    ca, cb = a - a.mean(axis=0), b - b.mean(axis=0)
    diff = b.mean(axis=0) - a.mean(axis=0)
    cov = (ca.T @ ca + cb.T @ cb) / max(len(a) + len(b) - 2, 1)
    scale = float(np.trace(cov)) / cov.shape[0]
    if scale == 0.0:  # no noise at all: the mean difference separates perfectly
        return diff
    # the ridge keeps zero-variance coordinates (e.g. a data-independent first iterate)
    # from making the system singular; 1e-9 of the average variance changes nothing else
    return np.linalg.solve(cov + 1e-9 * scale * np.eye(cov.shape[0]), diff)


def audit_releases(
    releases_a: object,
    releases_b: object,
    *,
    epsilon: float,
    delta: float,
    statistic: str | Callable = "lda",
    confidence: float = 0.95,
    train_fraction: float = 0.5,
    name: str = "mechanism",
) -> AuditResult:
    """Epsilon lower bound from independent releases on two neighbouring inputs.

    Parameters
    ----------
    releases_a, releases_b : arrays (n_a, k), (n_b, k)
        One row per independent run of the mechanism on input a and on input b.
    epsilon, delta : float
        The claimed guarantee; the bound is computed at ``delta``.
    statistic : "lda" or callable
        ``"lda"``: Fisher's linear discriminant fitted on the training runs (the
        likelihood-ratio statistic for Gaussian releases). A callable maps an (n, k) array
        to n scores and is used as is.
    confidence : float
        Probability that the reported bound is <= the true epsilon of the test event.
    train_fraction : float
        Share of each side's runs used to fit the statistic and choose the event.

    Returns
    -------
    AuditResult

    Examples
    --------
    The Gaussian mechanism with sensitivity = std (exactly (4.377, 1e-5)-DP):

    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(40_000, 2)), rng.normal(size=(40_000, 2)) + [1.0, 0.0]
    >>> result = audit_releases(a, b, epsilon=4.377, delta=1e-5)
    >>> round(result.epsilon_lower, 3), result.passed
    (2.298, True)
    """
    eps = check_real("epsilon", epsilon, low=0.0, allow_inf=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True,
                            high_open=True)
    frac = check_real("train_fraction", train_fraction, low=0.0, high=1.0, low_open=True,
                      high_open=True)
    if not (callable(statistic) or statistic == "lda"):
        raise fail("statistic", "be 'lda' or a callable mapping releases to scores", statistic)
    a = _as_runs("releases_a", releases_a)
    b = _as_runs("releases_b", releases_b, a.shape[1])
    na, nb = (min(len(x) - 1, max(1, round(frac * len(x)))) for x in (a, b))
    if statistic == "lda":
        w = _lda_direction(a[:na], b[:nb])
        sa, sb = a @ w, b @ w
    else:
        sa, sb = (_scores(statistic, x) for x in (a, b))
    gamma = (1.0 - confidence) / 2.0  # two one-sided intervals: union bound
    # choosing at a stricter level (gamma / 100) penalises thresholds that rest on a few
    # training counts, whose held-out value regresses (winner's curse); the choice only
    # affects power: any event fixed before the held-out runs are looked at is valid
    threshold, above, high_is_b = _choose_event(sa[:na], sb[:nb], delta, gamma / 100.0)
    # Validity: the event E = {score > t} (or its complement) and the direction were fixed
    # from the training runs alone, so on the independent held-out runs the counts are
    # Binomial(n, P[M(a) in E]) and Binomial(n, P[M(b) in E]). Each one-sided
    # Clopper-Pearson bound fails with probability <= gamma, both hold with probability
    # >= 1 - 2 gamma = confidence, and then (epsilon, delta)-DP implies
    # epsilon >= ln((P_high - delta) / P_low) >= ln((lower_high - delta) / upper_low).
    ta, tb = sa[na:], sb[nb:]
    ka = int(np.count_nonzero((ta > threshold) == above))
    kb = int(np.count_nonzero((tb > threshold) == above))
    if high_is_b:
        bound = _bound(ka, len(ta), kb, len(tb), delta, gamma)
    else:
        bound = _bound(kb, len(tb), ka, len(ta), delta, gamma)
    return AuditResult(float(bound), eps, delta, confidence, (len(a), len(b)),
                       float(threshold), "score > t" if above else "score <= t",
                       (ka, kb), (len(ta), len(tb)), name)


def _as_runs(name: str, value: object, k: int | None = None) -> np.ndarray:
    arr = np.asarray(value)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.ndim != 2 or (k is not None and arr.shape[1] != k):
        raise fail(name, "have shape (n_runs, k)" + (f" with k={k}" if k else ""), arr)
    out = as_matrix(name, arr, arr.shape[1])
    if len(out) < 4:
        raise fail(name, "hold at least 4 runs (training and held-out)", arr)
    return out


def _scores(statistic: Callable, releases: np.ndarray) -> np.ndarray:
    out = np.asarray(statistic(releases), dtype=float)
    if out.shape != (len(releases),) or not np.all(np.isfinite(out)):
        raise fail("statistic", f"return {len(releases)} finite scores", out)
    return out


def _choose_event(sa: np.ndarray, sb: np.ndarray, delta: float,
                  gamma: float) -> tuple[float, bool, bool]:
    """(threshold, event is 'above', high side is b) with the best training bound."""
    pooled = np.sort(np.concatenate([sa, sb]))
    n = len(pooled)
    # thresholds at quantiles dense in both tails, where DP violations show
    tails = np.unique(np.geomspace(1.0, n / 2.0, 200).astype(int) - 1)
    thresholds = np.unique(pooled[np.concatenate([tails, n - 1 - tails])])
    ka = len(sa) - np.searchsorted(np.sort(sa), thresholds, side="right")  # above t
    kb = len(sb) - np.searchsorted(np.sort(sb), thresholds, side="right")
    na, nb = len(sa), len(sb)
    candidates = [  # (bound per threshold, above, high side is b)
        (_bound(ka, na, kb, nb, delta, gamma), True, True),
        (_bound(kb, nb, ka, na, delta, gamma), True, False),
        (_bound(na - ka, na, nb - kb, nb, delta, gamma), False, True),
        (_bound(nb - kb, nb, na - ka, na, delta, gamma), False, False),
    ]
    best = max(range(4), key=lambda i: float(np.max(candidates[i][0])))
    values, above, high_is_b = candidates[best]
    return float(thresholds[int(np.argmax(values))]), above, high_is_b


def expected_gaussian_audit(mu: float, n_test: int, *, delta: float,
                            confidence: float = 0.95) -> tuple[float, float]:
    """Predicted audit bound for a Gaussian mechanism with ratio mu, and its standard error.

    The best threshold test's expected held-out counts through the Clopper-Pearson
    bounds, with the delta-method error of ln(q/p). Use it to choose ``n_runs``.

    Examples
    --------
    >>> bound, se = expected_gaussian_audit(0.536, 100_000, delta=1e-5)
    >>> round(bound, 2), round(se, 2)
    (1.39, 0.12)
    """
    mu = check_real("mu", mu, low=0.0, low_open=True)
    n = check_int("n_test", n_test, low=2)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    gamma = (1.0 - check_real("confidence", confidence, low=0.0, high=1.0, low_open=True,
                              high_open=True)) / 2.0
    tau = np.linspace(-3.0, 9.0, 4801)
    p, q = stats.norm.sf(tau), stats.norm.sf(tau - mu)
    values = _bound(n * p, n, n * q, n, delta, gamma)
    i = int(np.argmax(values))
    return float(values[i]), float(math.sqrt((1 - p[i]) / (n * p[i]) + (1 - q[i]) / (n * q[i])))


def audit(release: Callable, stream_a: object, stream_b: object, *, n_runs: int,
          claimed: PrivacyGuarantee, seed: object = None, name: str = "mechanism",
          **options) -> AuditResult:
    """Audit any mechanism given as ``release(stream, n_runs, seed) -> array (n_runs, k)``.

    ``release`` must return ``n_runs`` independent runs on ``stream``; the two streams get
    independent seeds. ``options`` go to :func:`audit_releases`.

    Examples
    --------
    >>> def release(stream, n, seed):  # the Gaussian mechanism, sensitivity 1, std 2
    ...     return stream + 2.0 * np.random.default_rng(seed).normal(size=(n, 1))
    >>> result = audit(release, 0.0, 1.0, n_runs=10_000, seed=1,
    ...                claimed=PrivacyGuarantee(1.0, 1e-5))
    >>> result.passed
    True
    """
    n_runs = check_int("n_runs", n_runs, low=4)
    seed_a, seed_b = spawn_seeds(seed, 2)
    a, b = release(stream_a, n_runs, seed_a), release(stream_b, n_runs, seed_b)
    return audit_releases(a, b, epsilon=claimed.epsilon, delta=claimed.delta, name=name,
                          **options)


def audited_rows(claimed: PrivacyGuarantee, first: int, n_rows: int) -> slice:
    """The releases an audit of ``claimed`` reads, as a slice of the ``n_rows`` releases.

    ``first`` is the first release depending on the differing element. Without a window
    every release is read; under window DP only ``first .. first+W-1`` (WDP Definition 6:
    later ones may contain the element exactly).

    Examples
    --------
    >>> audited_rows(PrivacyGuarantee(1.0, 1e-5), 3, 10)
    slice(0, 10, None)
    >>> audited_rows(PrivacyGuarantee(1.0, 1e-5, window=4), 3, 10)
    slice(3, 7, None)
    """
    n_rows = check_int("n_rows", n_rows, low=1)
    first = check_int("first", first, low=0)
    if first >= n_rows:
        raise fail("first", f"be < n_rows={n_rows} (no release depends on the element)", first)
    if claimed.window is None:
        return slice(0, n_rows)
    return slice(first, min(n_rows, first + claimed.window))


def _check_position(position: int, horizon: int) -> int:
    """The index of the differing element, in 0 .. horizon - 1."""
    position = check_int("position", position, low=0)
    if position >= horizon:
        raise fail("position", f"be < horizon={horizon}", position)
    return position
