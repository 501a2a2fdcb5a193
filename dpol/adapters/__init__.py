"""Adapters (layer L5): learners by name, scikit-learn estimators, river models.

* :mod:`dpol.adapters.registry` — :data:`LEARNERS`, :func:`make_learner` (defaults for a
  generic stream) and :func:`comparator` (the best fixed point for regret);
* :class:`OnlineRegressor` and :class:`OnlineClassifier` (:mod:`dpol.adapters.sklearn`,
  the ``sklearn`` extra): scikit-learn estimators with ``fit`` / ``partial_fit``;
* :class:`RiverRegressor` and :class:`RiverClassifier` (:mod:`dpol.adapters.river`, the
  ``river`` extra): river models on dict features.

The four classes are imported lazily, so this package imports without scikit-learn or
river (a missing extra raises an ``ImportError`` naming it); they are not in ``__all__``.

Examples
--------
>>> from dpol.adapters import RiverRegressor
>>> RiverRegressor.__module__
'dpol.adapters.river'
"""

from __future__ import annotations

import importlib

from dpol.adapters.registry import LEARNERS, LearnerSpec, comparator, make_learner

__all__ = ["LEARNERS", "LearnerSpec", "comparator", "make_learner"]

#: class name -> (module, the package it needs, the extra that installs it)
_LAZY = {
    "OnlineClassifier": ("dpol.adapters.sklearn", "scikit-learn", "sklearn"),
    "OnlineRegressor": ("dpol.adapters.sklearn", "scikit-learn", "sklearn"),
    "RiverClassifier": ("dpol.adapters.river", "river", "river"),
    "RiverRegressor": ("dpol.adapters.river", "river", "river"),
}


def __getattr__(name: str) -> type:
    if name not in _LAZY:
        raise AttributeError(f"module 'dpol.adapters' has no attribute {name!r}")
    module, package, extra = _LAZY[name]
    try:
        found = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ImportError(f"dpol.adapters.{name} needs {package} ({exc}): pip install "
                          f"'dpol[{extra}]'", name=exc.name) from exc
    globals()[name] = found  # the next lookup skips this function
    return found


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
