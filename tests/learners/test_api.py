"""What every learner shares: mechanism= (the mechanism arguments as one object), the
capability tags, and learned state ending in ``_`` (``t_``, with ``t`` a read-only alias)."""

import inspect
import warnings

import numpy as np
import pytest
from learner_cases import LEARNERS, make, stream

from dpol.accounting import Mechanism
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners import (
    BanditFrankWolfe,
    PrivateBanditFrankWolfe,
    PrivateIGD,
    PrivateKernelRegression,
    PrivateQuadraticFTL,
)
from dpol.learners._api import TAGS
from dpol.learners._wrapper import LearnerWrapper
from dpol.learners.intercept import WithIntercept
from dpol.losses import Regularized, SquaredLoss
from dpol.sets import L2Ball

ALL = sorted(LEARNERS)


def _builds(factory, **kw) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            factory(16, **{"epsilon": 1.0, "delta": 1e-5, "seed": 0, **kw})
    except (InvalidInputError, TypeError):
        return False
    return True


#: configurations beyond the contract cases: the kernel's published (not private) scalar
#: mechanism, the one mode with calibration="paper"
EXTRA = [lambda T, **kw: PrivateKernelRegression(
    3, horizon=T, mode="published_scalar", query_points=np.eye(3) * 0.5, **kw)]


@pytest.mark.parametrize("tag, keywords", [
    ("secure", {"noise": "secure"}),
    ("paper", {"calibration": "paper"}),
    ("pure", {"noise": "gamma", "delta": 0.0}),
])
def test_tags_say_what_the_constructors_accept(tag, keywords):
    # a tag: some configuration of the class accepts the keyword; no tag: none does
    by_class: dict[type, list[bool]] = {}
    for name in ALL:
        m = make(name, 16)
        if isinstance(m, LearnerWrapper):  # its tags are its learner's (class checked here)
            assert m.tags == m.base.tags
            continue
        by_class.setdefault(type(m), []).append(_builds(LEARNERS[name][0], **keywords))
    for factory in EXTRA:
        by_class[type(make_extra(factory))].append(_builds(factory, **keywords))
    for cls, accepted in by_class.items():
        tags = cls.accepts.tags | cls._tags  # what an instance's tags are
        assert (tag in tags) == any(accepted), (cls.__name__, tag, accepted)


def make_extra(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory(16, epsilon=1.0, delta=1e-5, seed=0)


@pytest.mark.parametrize("name", ALL)
def test_tags_are_known_read_only_and_match_the_public_attributes(name):
    m = make(name, 16)
    assert m.tags <= set(TAGS)
    assert ("least_squares" in m.tags) == bool(getattr(m, "least_squares", False))
    inner = getattr(m, "base", m)  # a feature wrapper's mechanism is its learner's
    assert ("counters" in m.tags) == ("counter" in inspect.signature(type(inner)).parameters
                                      or hasattr(inner, "_counter")
                                      or hasattr(inner, "_counters"))
    with pytest.raises(AttributeError):
        m.tags = frozenset()


def test_bandit_tags_and_a_wrapper_s_tags():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        twin = BanditFrankWolfe(L2Ball(2), horizon=16, seed=0)
    private = PrivateBanditFrankWolfe(L2Ball(2), horizon=16, epsilon=1.0, seed=0)
    assert twin.tags == {"bandit"} and {"bandit", "counters", "pure"} <= private.tags
    assert twin.mechanism is None and private.mechanism.epsilon == 1.0
    inner = PrivateQuadraticFTL(3, horizon=16, epsilon=1.0, counter="window",
                                counter_options={"window": 4})
    wrapped = WithIntercept(inner)
    assert wrapped.tags == inner.tags and wrapped.mechanism == inner.mechanism
    assert inner.mechanism.counter_options == {"window": 4}


@pytest.mark.parametrize("name", ALL)
def test_t_is_learned_state_with_a_read_only_alias(name):
    m = make(name, 32)
    X, y = stream(name, 32)
    m.run(X[:5], y[:5])
    m.learn_one(X[5], y[5])
    assert m.t_ == m.t == 6
    with pytest.raises(AttributeError):
        m.t = 0


@pytest.mark.parametrize("name", ALL)
def test_mechanism_object_equals_the_keywords(name):
    X, y = stream(name, 32)
    short = make(name, 32, seed=5)
    spec = Mechanism(epsilon=1.0, delta=0.0 if "gamma" in name else 1e-5, seed=5)
    factory, _ = LEARNERS[name]
    long = factory(32, mechanism=spec)
    np.testing.assert_array_equal(short.run(X, y).weights, long.run(X, y).weights)
    assert long.privacy == short.privacy and long.mechanism == short.mechanism
    # the learner gives back what it was built with, and takes it again
    again = factory(32, mechanism=long.mechanism)
    assert again.mechanism == long.mechanism


def test_mechanism_and_keywords_must_agree():
    spec = Mechanism(epsilon=1.0, delta=1e-6, neighbouring="add_remove")
    m = PrivateQuadraticFTL(2, horizon=8, mechanism=spec, delta=1e-6)  # the same: fine
    assert (m.delta, m.neighbouring) == (1e-6, "add_remove")
    with pytest.raises(InvalidInputError, match="neighbouring must be given once"):
        PrivateQuadraticFTL(2, horizon=8, mechanism=spec, neighbouring="replace_one")
    with pytest.raises(InvalidInputError, match="PrivateIGD takes no counter_options"):
        PrivateIGD(2, loss=Regularized(SquaredLoss(), 0.1), domain=L2Ball(2), horizon=8,
                   mechanism=Mechanism(1.0, counter_options={"window": 4}))
    with pytest.raises(InvalidInputError, match=r"mechanism must be a dpol\.accounting"):
        PrivateQuadraticFTL(2, horizon=8, mechanism={"epsilon": 1.0})
    with pytest.raises(InvalidInputError, match="neighbouring must be one of"):
        Mechanism(1.0, neighbouring="swap")


def test_mechanism_is_frozen_and_its_options_read_only():
    spec = Mechanism(1.0, counter_options={"window": 4})
    with pytest.raises(AttributeError):
        spec.epsilon = 2.0
    with pytest.raises(TypeError):
        spec.counter_options["window"] = 8
    assert "mechanism" in inspect.signature(PrivateQuadraticFTL).parameters


@pytest.mark.parametrize("name", ALL)
def test_no_counter_is_built_only_to_read_its_sensitivity(name, monkeypatch):
    # every counter a learner constructs is one it runs: calibration needs no probes
    from dpol.counters import Counter

    built = []
    original = Counter.__init__

    def counting(self, *args, **kwargs):
        built.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Counter, "__init__", counting)
    m = make(name, 32)
    m = getattr(m, "base", m)  # a feature wrapper runs its learner's counters
    held = getattr(m, "_counters", None) or (getattr(m, "_counter", None),)
    held = [c for c in held if c is not None]
    assert len(built) == len(held) and all(any(b is c for c in held) for b in built)


def test_a_keyword_the_learner_does_not_take_is_refused_by_name():
    igd = {"loss": Regularized(SquaredLoss(), 0.1), "domain": L2Ball(2), "horizon": 8,
           "epsilon": 1.0}
    with pytest.raises(InvalidInputError, match="counter must be left unset: PrivateIGD "
                       "takes no counter; got 'tree'"):
        PrivateIGD(2, counter="tree", **igd)
    with pytest.raises(TypeError, match="unexpected keyword argument 'epsilom'"):
        PrivateIGD(2, epsilom=1.0, **igd)
    with pytest.raises(InvalidInputError, match="noise must be one of 'gaussian', 'secure' "
                       "for PrivateIGD; got 'laplace'"):
        PrivateIGD(2, noise="laplace", **igd)
    with pytest.raises(InvalidInputError, match="epsilon must be given to PrivateIGD"):
        PrivateIGD(2, **{k: v for k, v in igd.items() if k != "epsilon"})
    assert PrivateIGD(2, counter=None, **igd).mechanism.epsilon == 1.0  # None: unset


def test_accepts_is_what_the_docs_table_and_the_tags_read():
    from dpol.learners._api import accepts_table

    table = accepts_table()
    for cls in (PrivateIGD, PrivateQuadraticFTL, PrivateBanditFrankWolfe, BanditFrankWolfe):
        assert f"| `{cls.__name__}` | {cls.accepts.describe()} |" in table
    assert PrivateQuadraticFTL.accepts.tags == {"counters", "secure", "paper", "window"}
    assert BanditFrankWolfe.accepts.fields == ("neighbouring", "seed")


def test_default_counters_are_spelled_by_their_canonical_names():
    # an alias would resolve to the same counter, but learner.counter, the accepts table
    # and reports show the default as written: it must be a name of COUNTER_NAMES
    from dpol.counters import COUNTER_NAMES
    from dpol.learners import PrivateFTAL, PrivateIncrementalRegression, PrivateOnlineFrankWolfe

    defaults = {cls.__name__: cls.accepts.counter
                for cls in (PrivateQuadraticFTL, PrivateIncrementalRegression,
                            PrivateBanditFrankWolfe, PrivateFTAL, PrivateOnlineFrankWolfe)}
    assert defaults == {"PrivateQuadraticFTL": "binary_tree",
                        "PrivateIncrementalRegression": "binary_tree",
                        "PrivateBanditFrankWolfe": "binary_tree",
                        "PrivateFTAL": "window_tree", "PrivateOnlineFrankWolfe": "window_tree"}
    assert set(defaults.values()) <= set(COUNTER_NAMES)
