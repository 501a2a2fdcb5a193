"""No public constructor takes more than 12 named parameters (issue 33, item 3).

A learner's privacy arguments are one ``mechanism=`` (or the ``**privacy`` short keywords,
not counted); its algorithm's are named. The scikit-learn and river estimators name every
hyperparameter in ``__init__`` (scikit-learn's ``get_params`` reads the signature), so
they are held at their present width instead, and may not grow.
"""

from __future__ import annotations

import inspect

import pytest

import dpol.adapters.river as river_adapters
import dpol.adapters.sklearn as sklearn_adapters
import dpol.counters as counters
import dpol.learners as learners
from dpol.learners._api import LearnerAPI
from dpol.learners.intercept import WithIntercept
from dpol.learners.random_features import WithRandomFeatures
from dpol.learners.trivial_fallback import WithTrivialFallback

WIDEST = 12
#: the estimators' widths today (see the module docstring): a ceiling, not a target
ESTIMATORS = {sklearn_adapters.OnlineClassifier: 19, sklearn_adapters.OnlineRegressor: 18,
              river_adapters.RiverClassifier: 17, river_adapters.RiverRegressor: 17}


def _public_classes(module, base):
    return [obj for obj in map(module.__dict__.get, module.__all__)
            if isinstance(obj, type) and issubclass(obj, base) and not inspect.isabstract(obj)]


LEARNERS = [*_public_classes(learners, LearnerAPI), WithIntercept, WithRandomFeatures,
            WithTrivialFallback, learners.PrivateProjectedSGD, learners.PrivateFrankWolfe]
COUNTERS = _public_classes(counters, counters.Counter)


def width(cls: type) -> int:
    """Named parameters of ``cls``'s constructor (``*args`` and ``**privacy`` not counted)."""
    return sum(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in inspect.signature(cls).parameters.values())


@pytest.mark.parametrize("cls", LEARNERS + COUNTERS, ids=lambda c: c.__name__)
def test_no_public_constructor_takes_more_than_twelve_parameters(cls):
    assert width(cls) <= WIDEST, (cls.__name__, list(inspect.signature(cls).parameters))


@pytest.mark.parametrize("cls", list(ESTIMATORS), ids=lambda c: c.__name__)
def test_the_estimators_do_not_grow(cls):
    assert width(cls) <= ESTIMATORS[cls]


@pytest.mark.parametrize("cls", _public_classes(learners, LearnerAPI), ids=lambda c: c.__name__)
def test_a_learner_signature_shows_its_parameters_and_mechanism(cls):
    # no rewritten __init__: the signature is the constructor's own, ending in
    # mechanism=None, **privacy (the short keywords: the Mechanism's fields)
    params = list(inspect.signature(cls).parameters.values())
    assert params[-2].name == "mechanism" and params[-2].default is None
    assert params[-1].kind is params[-1].VAR_KEYWORD and params[-1].name == "privacy"
    assert not hasattr(cls.__init__, "__wrapped__")  # functools.wraps marks a wrapper
