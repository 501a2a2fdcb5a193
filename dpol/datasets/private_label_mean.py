"""The trivial model inside the guarantee: a private mean of the labels.

A private linear model shrinks towards 0 while its noise is large, intercept included,
so on imbalanced classes or labels far from 0 it predicts worse than the trivial model.
Learning the labels' offset apart (:func:`private_label_mean`) and the model on the
centred labels makes a drowned model predict the private prior or mean instead
(``centre_budget`` of :mod:`dpol.adapters.sklearn`).

Privacy
-------
Replace-one or add/remove. Sensitivity of the sum of labels clipped to ``||y|| <=
bound``: ``2 bound`` under replace-one (``sqrt(2)`` for one-hot rows), ``bound`` under
add/remove. Calibration: N(0, (z * sensitivity)^2) per coordinate, one Gaussian
mechanism of multiplier z (Dwork and Roth 2014, Thm A.1; ``GaussianDpEvent(z)``). n is
public, so the mean and its clipping are post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpol._seeding import resolve_rng
from dpol._validation import check_bound, check_choice, check_real, fail
from dpol.accounting.events import MechanismEvent
from dpol.clipping import clip_norms
from dpol.noise import gaussian
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["PrivateLabelMean", "private_label_mean"]


@dataclass(frozen=True)
class PrivateLabelMean:
    """A released mean of clipped labels.

    Attributes
    ----------
    value : float or ndarray of shape (K,)
        The mean (clipped to the labels' ball: post-processing).
    noise_multiplier : float
        z: the sum's noise std over its sensitivity (inf: no labels were read; 0: exact).
    sensitivity : float
        Of the sum under ``neighbouring`` (module Privacy).
    n : int
    neighbouring : str
    n_clipped : int
        Labels clipped to the bound: an exact count, for the data holder (not released).
    """

    value: float | np.ndarray
    noise_multiplier: float
    sensitivity: float
    n: int
    neighbouring: str
    n_clipped: int = 0

    @property
    def std(self) -> float:
        """The public std of each coordinate of ``value``'s noise (before clipping)."""
        return self.noise_multiplier * self.sensitivity / self.n

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """One Gaussian event (none without noise: the exact mean is no private release)."""
        z = self.noise_multiplier
        if z == 0.0:
            return ()
        return (MechanismEvent(dp_accounting.GaussianDpEvent(z), self.neighbouring,
                               name="private label mean"),)


def private_label_mean(y: object, *, bound: float, noise_multiplier: float,
                       one_hot: bool = False, neighbouring: str = "replace_one",
                       seed: object = None) -> PrivateLabelMean:
    """The mean of the labels ``y`` clipped to ``||y|| <= bound``, by the Gaussian mechanism.

    Parameters
    ----------
    y : array of shape (n,) or (n, K)
        The labels (rows of K values: one-hot rows with ``one_hot``).
    bound : float
        The labels' public bound (they are clipped to it).
    noise_multiplier : float
        z (0: the exact mean), e.g. :func:`dpol.accounting.closed_forms.gaussian_share`
        of a budget.
    one_hot : bool
        Whether every row is some e_k (then the replace-one sensitivity is sqrt(2) bound).
    neighbouring : {"replace_one", "add_remove"}
    seed : None, int, SeedSequence or Generator

    Returns
    -------
    PrivateLabelMean

    Examples
    --------
    >>> y = np.array([1.0, -1.0, -1.0, -1.0] * 250)  # 25% positive: prior mean -0.5
    >>> m = private_label_mean(y, bound=1.0, noise_multiplier=5.0, seed=0)
    >>> round(m.value, 3), m.std  # z = 5, sensitivity 2, n = 1000: std 0.01
    (-0.499, 0.01)
    >>> private_label_mean(y, bound=1.0, noise_multiplier=0.0).value  # exact
    -0.5
    """
    bound = check_bound("bound", bound)
    z = check_real("noise_multiplier", noise_multiplier, low=0.0)
    neighbouring = check_choice("neighbouring", neighbouring, ("replace_one", "add_remove"))
    labels = np.asarray(y, dtype=np.float64)
    if labels.ndim not in (1, 2) or labels.shape[0] == 0 or not np.all(np.isfinite(labels)):
        raise fail("y", "be a non-empty finite array of shape (n,) or (n, K)", labels.shape)
    rows = labels.reshape(len(labels), -1)
    if one_hot and not (np.all((rows == 0.0) | (rows == 1.0)) and np.all(rows.sum(1) == 1)):
        raise fail("y", "hold one-hot rows with one_hot=True (the sqrt(2) sensitivity is "
                   "theirs)", "rows that are not some e_k")
    norms = clip_norms(rows)
    over = norms > bound
    if np.any(over):
        rows = rows * np.where(over, bound / np.where(over, norms, 1.0), 1.0)[:, None]
    if neighbouring == "add_remove":
        sensitivity = bound
    else:
        sensitivity = (math.sqrt(2.0) if one_hot else 2.0) * bound
    total = rows.sum(axis=0)
    if z > 0.0:
        total = total + gaussian(resolve_rng(seed), total.shape, z * sensitivity)
    mean = total / len(rows)
    norm = float(np.linalg.norm(mean))
    if norm > bound:  # post-processing: the mean of labels in the ball lies in it
        mean = mean * (bound / norm)
    value = float(mean[0]) if labels.ndim == 1 else mean
    return PrivateLabelMean(value, z, sensitivity, len(rows), neighbouring,
                            int(np.count_nonzero(over)))
