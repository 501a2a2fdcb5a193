"""No silent clipping: learners, counters and bandits warn once more than 5% of the rows
seen were clipped to the declared bounds (``ClippingWarning``), and never below that.

(The suite ignores ClippingWarning elsewhere, where tests clip on purpose; pytest.warns
and warnings.catch_warnings here see it regardless.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol._clip_warning import (
    FRACTION,
    MIN_ROWS,
    SUGGEST_SHARE,
    label_offset_advice,
    round_up,
    suggested_bound,
)
from dpol.counters import BinaryTreeCounter
from dpol.errors import ClippingWarning
from dpol.learners import PrivateBanditFrankWolfe, PrivateQuadraticFTL
from dpol.sets import Box

T, DIM = 200, 2


def _caught(action) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [w for w in caught if issubclass(w.category, ClippingWarning)]


def _rows(n_over: int, n: int = T, seed: int = 0) -> np.ndarray:
    """n rows of norm 0.5, the first n_over of them of norm 3 (over the bound 1)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, DIM))
    X *= (0.5 / np.linalg.norm(X, axis=1))[:, None]
    X[:n_over] *= 6.0
    return X


def _pqftl():
    return PrivateQuadraticFTL(DIM, horizon=T, epsilon=1.0, delta=1e-5, seed=0)


def test_run_warns_with_the_count_and_a_bound_from_the_raw_rows():
    X = _rows(40)  # 20% of the rows at norm 3
    m = _pqftl()
    caught = _caught(lambda: m.run(X, np.zeros(T)))
    assert len(caught) == 1 and m.n_clipped_ == 40
    text = str(caught[0].message)
    assert "PrivateQuadraticFTL clipped 40 of 200 rows (20%) to bound=1, y_bound=1" in text
    # the raw norms are 3 (20%) and 0.5: the smallest bound at most 2.5% exceed is 3, named
    # by the learner's own parameter; no label was clipped, so none is suggested
    assert "Suggested: bound=3 (at most 2.5% of these rows exceed it" in text
    assert "y_bound=" not in text.split("Suggested")[1] and "not a private release" in text
    assert caught[0].filename == __file__  # it points at the caller's line


def test_no_warning_at_or_below_five_percent():
    X = _rows(int(FRACTION * T))  # exactly 5%: not more than 5%
    m = _pqftl()
    assert _caught(lambda: m.run(X, np.zeros(T))) == [] and m.n_clipped_ == 10


def test_learn_one_warns_once_when_the_share_first_exceeds_five_percent():
    X = _rows(0)
    X[MIN_ROWS - 2:MIN_ROWS] *= 6.0  # rows 19 and 20 (1-based) clipped: 2 of 20 = 10%
    m = _pqftl()
    seen = []
    for i in range(60):
        caught = _caught(lambda i=i: m.learn_one(X[i], 0.0))
        seen += [(i + 1, str(w.message)) for w in caught]
    assert [t for t, _ in seen] == [MIN_ROWS]  # once, at the first judged row
    assert "clipped 2 of 20 rows (10%)" in seen[0][1]
    # a run continuing the same learner does not warn again
    assert _caught(lambda: m.run(_rows(40, 100), np.zeros(100))) == []


def test_counters_warn_on_run_and_on_add():
    values = _rows(30, 64)
    counter = BinaryTreeCounter(64, DIM, epsilon=1.0, delta=1e-5, seed=0)
    caught = _caught(lambda: counter.run(values))
    assert len(caught) == 1 and "BinaryTreeCounter clipped 30 of 64 elements" in str(
        caught[0].message)
    stepped = BinaryTreeCounter(64, DIM, epsilon=1.0, delta=1e-5, seed=0)
    caught = _caught(lambda: [stepped.add(v) for v in values])
    assert len(caught) == 1 and "clipped 20 of 20 elements" in str(caught[0].message)


def test_bandit_warns_on_clipped_loss_values():
    m = PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=DIM), horizon=100, epsilon=1.0,
                                delta=1e-5, seed=0)
    big = 10.0 * m.loss_bound
    caught = _caught(lambda: m.run(lambda X, steps: np.full(len(X), big), 40))
    assert len(caught) == 1
    assert "clipped 20 of 20 loss values" in str(caught[0].message)
    # every raw loss value is 20.47: rounded up to two digits
    assert "Suggested: loss_bound=21 (" in str(caught[0].message)


@pytest.mark.parametrize("n_over", [0, 5])
def test_in_bound_data_never_warns(n_over):
    m = _pqftl()
    assert _caught(lambda: m.run(_rows(n_over), np.zeros(T))) == []


# ------------------------------------------------------------ the advice, read from raw data
def test_round_up_gives_two_digits_never_below_the_value():
    assert [round_up(v) for v in (2389.7, 0.0123, 98.0, 1.0, 1e-7 * 1.001)] == [
        2400.0, 0.013, 98.0, 1.0, 1.1e-7]
    # values it cannot round are handed back as they are
    assert [round_up(v) for v in (0.0, -3.0, np.inf)] == [0.0, -3.0, np.inf]
    assert np.isnan(round_up(np.nan))


@pytest.mark.parametrize("n", [1, 39, 40, 41, 569])
def test_a_suggested_bound_leaves_at_most_its_share_above_it(n):
    values = np.random.default_rng(n).lognormal(0.0, 1.0, size=n)
    bound = suggested_bound(values)
    assert np.sum(values > bound) <= np.floor(SUGGEST_SHARE * n)
    # the smallest such two-digit number: one step of its second digit lower leaves more
    lower = bound - 10.0 ** (np.floor(np.log10(bound)) - 1)
    assert np.sum(values > lower) > np.floor(SUGGEST_SHARE * n)


def test_no_bound_is_suggested_from_no_values_or_unreadable_ones():
    assert np.isnan(suggested_bound([]))
    assert np.isnan(suggested_bound([1.0, np.nan, 2.0]))
    assert np.isnan(suggested_bound([np.inf] * 3))  # overflowed norms: no finite bound


def test_label_offset_advice_only_for_labels_far_from_0_for_their_spread():
    assert label_offset_advice(np.array([3.0]), "", "") is None  # no spread to judge
    assert label_offset_advice(np.array([150.0, np.inf]), "", "") is None
    assert label_offset_advice(np.array([-1.0, 1.0, 3.0]), "", "") is None  # |1| <= 1.63
    text = label_offset_advice(np.array([-150.0, -154.0]), "y + {offset:g}", "private")
    assert text.startswith("the labels' mean (-152) is beyond their spread (2)")
    assert "public offset (y + -150) or privately (private)" in text
