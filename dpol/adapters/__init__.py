"""Adapters (layer L5): learners by name, scikit-learn estimators, river models.

* :mod:`dpol.adapters.registry` — :data:`LEARNERS`, :func:`make_learner` (defaults for a
  generic stream) and :func:`comparator` (the best fixed point for regret);
* :mod:`dpol.adapters.sklearn` — :class:`~dpol.adapters.sklearn.OnlineRegressor` and
  :class:`~dpol.adapters.sklearn.OnlineClassifier` with ``fit`` / ``partial_fit``
  (the ``sklearn`` extra);
* :mod:`dpol.adapters.river` — :class:`~dpol.adapters.river.RiverRegressor` and
  :class:`~dpol.adapters.river.RiverClassifier` on dict features (the ``river`` extra).

The adapters import scikit-learn and river only in their own modules, so this package
imports without them.
"""

from dpol.adapters.registry import LEARNERS, LearnerSpec, comparator, make_learner

__all__ = ["LEARNERS", "LearnerSpec", "comparator", "make_learner"]
