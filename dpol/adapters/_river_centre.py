"""RiverRegressor's private label centre, from the stream's first block of rows (L5).

:class:`~dpol.adapters.OnlineRegressor` releases the labels' mean b from all the rows of
``fit`` before its learner starts (:mod:`dpol.adapters._private_prep`). river's
``learn_one`` sees one row at a time, so :class:`~dpol.adapters.RiverRegressor` with
``centre_budget > 0`` holds back the first ``centre_rows`` rows (at most the horizon),
releases their labels' mean b with the same mechanism and significance rule
(:func:`~dpol.adapters._private_prep.release_centre`), then builds the learner on the
rest of the budget, fitting y - b within ``y_bound + |b|``, and streams the held rows
through it in order. Until then nothing is released: ``predict_one`` is 0 and
``privacy`` None; a stream shorter than the block learns nothing. Predictions are b plus
the learner's, clipped to ``[-y_bound, y_bound]``.

b is kept only beyond 3 of its public stds, so the block needs many rows (n > 71 y_bound
/ |mean| at epsilon 1) that represent the stream; off by default, since on small or
ordered streams b is often dropped (figures: docs/benchmarks/defaults.md).

Privacy
-------
Replace-one (add/remove is refused: an added row would change the block). Sensitivity:
the clipped labels' mean over the public n = min(centre_rows, horizon) rows moves by at
most 2 y_bound / n. Calibration: one Gaussian mechanism on ``centre_budget`` of the
Gaussian budget (:mod:`dpol.datasets.private_label_mean`); the learner, built from b,
takes the rest, and ``privacy`` composes both adaptively to the target
(:func:`dpol.accounting.events.compose_guarantee`).
"""

from __future__ import annotations

import numpy as np

from dpol._validation import check_int, check_real, fail
from dpol.accounting.closed_forms import resolve_delta
from dpol.accounting.events import compose_guarantee
from dpol.adapters._fallback import tagged_seed
from dpol.adapters._private_prep import release_centre

__all__ = ["CENTRE_ROWS", "CENTRE_TAG", "FirstBlockCentre", "check_centre"]

#: default rows held back for the centre: its std is 2 z_c y_bound / n (z_c = 11.8 at
#: epsilon 1 and a share of 0.1), so 1,000 rows keep a centre beyond 0.07 y_bound
CENTRE_ROWS = 1000
#: mixed into an int seed's entropy for the centre's noise (:func:`tagged_seed`)
CENTRE_TAG = 0x63656E74  # "cent"


class FirstBlockCentre:
    """The first block's rows until their labels' mean is released, then the centre.

    Examples
    --------
    >>> c = FirstBlockCentre(0.1, 3, horizon=100, epsilon=1.0, delta=None, y_bound=400.0,
    ...                      seed=0)
    >>> [c.hold({"a": 0.1}, y) for y in (150.0, 160.0, 170.0)]
    [False, False, True]
    >>> round(c.release(), 3), c.centre.value  # 3 rows: b drowned by its noise, so 0
    (0.944, 0.0)
    """

    def __init__(self, share: float, rows: int, *, horizon: int, epsilon: float,
                 delta: float | None, y_bound: float, seed: object) -> None:
        self.share, self.rows = share, min(rows, horizon)
        self.epsilon, self.delta = epsilon, resolve_delta(delta, horizon)
        self.y_bound = y_bound
        self.seed = tagged_seed(seed, CENTRE_TAG)
        self.held: list[tuple[dict, float]] = []
        self.centre = None  # the PrivateLabelMean, once released

    def hold(self, x: dict, y: float) -> bool:
        """Hold one row back (a copy of x); whether the block is complete."""
        self.held.append((dict(x), y))
        return len(self.held) == self.rows

    def release(self) -> float:
        """Release the block's centre (``centre``); the epsilon left for the learner."""
        labels = np.array([y for _, y in self.held])
        self.centre, rest = release_centre("RiverRegressor", labels, bound=self.y_bound,
                                           share=self.share, epsilon=self.epsilon,
                                           delta=self.delta, seed=self.seed, stacklevel=6)
        return rest

    @property
    def learner_bound(self) -> float:
        """|y - b| <= y_bound + |b|: the learner's label bound."""
        return self.y_bound + abs(self.centre.value)

    def predict(self, margin: float) -> float:
        """b plus the learner's prediction, within the labels' bound."""
        return float(np.clip(margin + self.centre.value, -self.y_bound, self.y_bound))

    def guarantee(self, learner: object):
        """The centre's and the learner's events composed to the target epsilon."""
        return compose_guarantee([*self.centre.privacy_events(), *learner.privacy_events()],
                                 learner.delta, target=self.epsilon,
                                 seeded=learner.privacy.seeded)



def check_centre(share: object, rows: object, options: dict | None) -> tuple[float, int]:
    """``centre_budget`` in [0, 1) and ``centre_rows`` >= 1, checked; a centre refused on
    add/remove streams (``options``: the learner's)."""
    share = check_real("centre_budget", share, low=0.0, high=1.0, high_open=True)
    rows = check_int("centre_rows", rows, low=1)
    neighbouring = (options or {}).get("neighbouring", "replace_one")
    if share > 0.0 and neighbouring != "replace_one":
        raise fail("centre_budget", "be 0 for add/remove streams (an added row would "
                   "change which rows form the centre's block)", share)
    return share, rows
