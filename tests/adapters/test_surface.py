"""dpol/adapters/_surface.py: the adapters' warnings speak to their user, the estimator's
name and parameters, at the line that called ``fit`` / ``partial_fit`` / ``learn_one``
(issue 19: they named ``WithIntercept`` and pointed into dpol's files)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.errors import ClippingWarning, NonPrivateWarning

pytest.importorskip("sklearn")

from dpol.adapters.sklearn import OnlineClassifier, OnlineRegressor

ROWS = np.random.default_rng(0).normal(size=(200, 3)) * 2.0  # norms about 3.4: clipped
LABELS = np.where(ROWS[:, 0] > 0, 1, 0)


def _caught(call) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return caught


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_clipping_warning_names_the_estimator_its_parameter_and_the_users_line(method):
    est = OnlineClassifier(epsilon=1.0, random_state=0)
    caught = _caught(lambda: getattr(est, method)(ROWS, LABELS))
    (w,) = [w for w in caught if w.category is ClippingWarning]
    text = str(w.message)
    # of the rows the learner learnt: with fit (horizon 200) the fallback's first blocks,
    # rows 1-31, feed the class prior alone, which reads no x (partial_fit's horizon of
    # 65,536 rows needs no such rows at epsilon 1: learner_start)
    learnt = est.learner_.learner.t_
    assert learnt == 200 - est.learner_.learner_from
    assert est.learner_.learner_from == (31 if method == "fit" else 0)
    assert text.startswith(f"OnlineClassifier clipped {est.n_clipped_} of {learnt} rows")
    assert "WithIntercept" not in text and "to x_bound=1, y_bound=1" in text
    assert w.filename == __file__  # this file's line, not dpol's
    suggested = float(text.split("Suggested: x_bound=")[1].split(" ")[0])
    norms = np.linalg.norm(ROWS, axis=1)
    assert np.sum(norms > suggested) <= 0.025 * len(norms)
    # following the suggestion ends the warning
    again = _caught(lambda: OnlineClassifier(epsilon=1.0, random_state=0,
                                             x_bound=suggested).fit(ROWS, LABELS))
    assert not [w for w in again if w.category is ClippingWarning]


def test_a_learner_without_intercept_is_named_by_the_estimator_too():
    # PQFTL's own parameter is `bound`; the estimator's is `x_bound`
    est = OnlineRegressor(epsilon=1.0, random_state=0, fit_intercept=False)
    (w,) = [w for w in _caught(lambda: est.fit(ROWS, ROWS[:, 0] / 10))
            if w.category is ClippingWarning]
    assert str(w.message).startswith("OnlineRegressor clipped")
    assert "to x_bound=1, y_bound=1" in str(w.message) and "Suggested: x_bound=" in str(w.message)


def test_every_warning_of_fit_points_at_the_caller_and_filters_still_apply():
    est = OnlineRegressor(epsilon=float("inf"), random_state=0)
    caught = _caught(lambda: est.fit(ROWS / 10, ROWS[:, 0] / 100))
    assert [w.category for w in caught] == [NonPrivateWarning]
    assert caught[0].filename == __file__
    assert str(caught[0].message).startswith(  # the estimator, not PrivateQuadraticFTL
        "OnlineRegressor with epsilon=inf releases without noise (learner 'ridge'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        warnings.simplefilter("error", ClippingWarning)
        OnlineRegressor(epsilon=float("inf"), random_state=0).fit(ROWS / 10, ROWS[:, 0] / 100)
        # an "error" filter raises at the caller once fit is done: the model is whole
        est = OnlineRegressor(epsilon=1.0, random_state=0)
        with pytest.raises(ClippingWarning):
            est.fit(ROWS, ROWS[:, 0] / 10)
        assert est.t_ == 200 and hasattr(est, "coef_")


def test_river_learn_one_warns_as_the_estimator_at_the_callers_line():
    pytest.importorskip("river")
    from dpol.adapters import RiverRegressor

    model = RiverRegressor(horizon=200, seed=0)
    caught = []
    for row in ROWS:
        caught += _caught(lambda row=row: model.learn_one(dict(enumerate(row)), 0.1))
    (w,) = [w for w in caught if w.category is ClippingWarning]
    assert str(w.message).startswith("RiverRegressor clipped") and w.filename == __file__


def test_a_privately_released_bound_gets_no_raw_data_suggestion():
    # a suggestion read from the raw data is not private, and under private scaling not
    # even in the units of the bound; the warning says what to do instead
    from dpol._clip_warning import note_clipping

    class Owner:  # what an adapter's learner holds after x_bound="auto", y_bound="auto"
        t, n_clipped_, x_bound, y_bound = 100, 60, 1.0, 0.2
        bound_names, released_bounds = ("x_bound", "y_bound"), ("y_bound",)

    labels = np.linspace(0.0, 2.0, 100)  # 90 of 100 above the released 0.2
    norms = np.full(100, 0.5)
    (w,) = [w for w in _caught(lambda: note_clipping(
        Owner(), bounds="x_bound=1, y_bound=0.2", raw=lambda: (norms, labels)))]
    text = str(w.message)
    assert "Suggested" not in text and "read from the raw data" not in text
    assert text.endswith("y_bound was released privately below the data: declare it or "
                         "give the estimate a larger bounds_budget")
    Owner.released_bounds = ()  # declared: the suggestion as before
    (w,) = _caught(lambda: note_clipping(Owner(), bounds="x_bound=1, y_bound=0.2",
                                         raw=lambda: (norms, labels)))
    assert "Suggested: y_bound=2 " in str(w.message)


def test_the_adapter_tells_its_learner_which_bounds_were_released():
    pytest.importorskip("opendp")
    # 1,000 rows at bounds_budget 0.9: above the 790 rows a reliable estimate needs
    # (PrivateBounds.min_rows: 2 ln(181 / 0.05) / (0.45 * 0.05)); fewer are refused
    X = np.random.default_rng(0).normal(size=(1000, 2))
    y = X[:, 0]
    for kwargs, released in (({"x_bound": "auto", "y_bound": "auto"}, ("x_bound", "y_bound")),
                             ({"x_bound": "auto"}, ("x_bound",)), ({}, ())):
        est = OnlineRegressor(epsilon=1.0, random_state=0, bounds_budget=0.9, **kwargs)
        _caught(lambda est=est: est.fit(X, y))
        learner = est.learner_
        while learner is not None:  # every wrapped learner warns the same way
            assert learner.released_bounds == released
            learner = getattr(learner, "learner", None)


def test_labels_far_from_zero_are_warned_with_a_public_offset():
    # diabetes-like labels (mean 152, spread 77): without the private centre, the ridge
    # shrinks the intercept with the weights, so the model predicts towards 0; with it
    # (the default) inside y_bound = 400, the learner's window is 400 + |b|, and the
    # advice is their range; a declared range draws no warning
    from dpol.errors import LabelOffsetWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) / 3.0
    z = rng.standard_normal(300)
    y = 152.0 + 77.0 * (z - z.mean()) / z.std()
    (w,) = [w for w in _caught(lambda: OnlineRegressor(
        epsilon=1.0, random_state=0, y_bound=400.0).fit(X, y))
        if w.category is LabelOffsetWarning]
    assert "window of y_bound + |b| = 5" in str(w.message)
    assert "declare their range, y_bound=(" in str(w.message)
    assert not [w for w in _caught(lambda: OnlineRegressor(
        epsilon=1.0, random_state=0, y_bound=(-20, 330)).fit(X, y))
        if w.category is LabelOffsetWarning]
    est = OnlineRegressor(epsilon=1.0, random_state=0, y_bound=400.0, centre_budget=0.0)
    (w,) = [w for w in _caught(lambda: est.fit(X, y)) if w.category is LabelOffsetWarning]
    assert str(w.message).startswith("OnlineRegressor: the labels' mean (152)")
    assert "func=lambda y: y - 150" in str(w.message) and w.filename == __file__
    caught = _caught(lambda: OnlineRegressor(epsilon=1.0, random_state=0, y_bound=400.0,
                                             centre_budget=0.0).fit(X, y - 150.0))
    assert not [w for w in caught if w.category is LabelOffsetWarning]


def test_a_call_that_raises_still_reissues_its_warnings_at_the_caller():
    # surfaced records the warnings and re-issues them in a finally: a fit that fails
    # after warning must not swallow them (the user sees why as well as that it failed)
    from dpol.adapters._surface import speak_as, surfaced

    class Inner:
        learner = None

    class Outer:
        learner = Inner()

    outer = Outer()
    speak_as(outer, "OnlineRegressor", released=("y_bound",))
    for held in (outer, outer.learner):  # every learner of the chain speaks the same way
        assert (held.warning_name, held.bound_names, held.released_bounds) == (
            "OnlineRegressor", ("x_bound", "y_bound"), ("y_bound",))

    class Estimator:
        learner = "ridge"

        @surfaced
        def fit(self):
            # as if from inside dpol: only the re-issued copy names this file
            warnings.warn_explicit("clipped", ClippingWarning, "dpol/learner.py", 1)
            raise RuntimeError("refused")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="refused"):
            Estimator().fit()
    (w,) = caught
    assert w.category is ClippingWarning and w.filename == __file__
