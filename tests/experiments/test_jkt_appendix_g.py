"""Paper experiments: outputs, the trends the papers claim, and the WDP regret fit."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpol.adapters.registry import LEARNERS
from dpol.experiments.reproductions.jkt_appendix_g import (
    logistic_regression,
    synthetic_regression,
    year_prediction,
)
from dpol.experiments.reproductions.reproduce import EXPERIMENTS, reproduce
from dpol.experiments.reproductions.wdp_regret import fit_growth, wdp_regret_growth


def assert_real_png(path):
    """A PNG that is an actual picture: the signature, a sane size, more than one colour."""
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 20


def test_synthetic_regression_outputs_and_trends(tmp_path):
    result = synthetic_regression(tmp_path, horizon=4000, epsilons=(0.1, 1.0, 10.0), seeds=2)
    assert result.report.exists() and result.csv.exists()
    for fig in result.figures:
        assert_real_png(fig)
    text = result.report.read_text()
    assert "1e-2 at epsilon = 0.01" in text and "predict 0" in text.lower()
    tight = [r for r in result.rows if r["calibration"] == "tight"]
    regrets = [r["mean_avg_regret"] for r in tight]
    # JKT G.1 trend: average regret falls as epsilon grows and approaches FTL
    assert regrets == sorted(regrets, reverse=True)
    ftl = next(r for r in result.rows if r["calibration"].startswith("FTL"))
    assert ftl["mean_avg_regret"] < regrets[-1]
    # tight calibration beats the paper's at every epsilon (the paper's is sound here)
    paper = [r for r in result.rows if r["calibration"] == "paper"]
    assert all(p["real_epsilon"] <= p["epsilon"] for p in paper)
    assert all(t["mean_avg_regret"] < p["mean_avg_regret"] for t, p in zip(tight, paper,
                                                                         strict=True))


def test_year_prediction_fallback_and_local_copy(tmp_path):
    rng = np.random.default_rng(0)
    rows = np.c_[rng.integers(1922, 2012, 300), rng.normal(size=(300, 90))]
    local = tmp_path / "YearPredictionMSD.csv"
    np.savetxt(local, rows, delimiter=",")
    result = year_prediction(tmp_path / "local", local, epsilons=(1.0,), seeds=1)
    assert "YearPredictionMSD" in result.report.read_text()
    fallback = year_prediction(tmp_path / "fallback", epsilons=(1.0,), seeds=1)
    assert "diabetes" in fallback.report.read_text()


def test_logistic_regression_learns_at_large_epsilon(tmp_path):
    result = logistic_regression(tmp_path, epsilons=(0.1, 100.0), seeds=2, alphas=(0.01,))
    by_eps = {r["epsilon"]: r for r in result.rows}
    # non-private IGD learns (breast cancer is nearly separable); PIGD at a large epsilon
    # with averaged releases gets close, at a small one it is near chance
    assert by_eps[math.inf]["heldout_accuracy_mean"] > 0.9
    assert by_eps[100.0]["heldout_accuracy_averaged_mean"] > 0.85
    assert by_eps[0.1]["heldout_accuracy_averaged_mean"] < by_eps[100.0][
        "heldout_accuracy_averaged_mean"]
    assert_real_png(result.figures[0])


def test_fit_growth_tells_log_from_sqrt():
    horizons = 2.0 ** np.arange(10, 17)
    log_fit = fit_growth(horizons, 5 + 3 * np.log(horizons))
    sqrt_fit = fit_growth(horizons, np.sqrt(horizons))
    assert log_fit["log_r2"] > 0.999 and log_fit["loglog_slope"] < 0.2
    assert sqrt_fit["loglog_slope"] == pytest.approx(0.5)


@pytest.mark.slow
def test_wdp_regret_grows_like_log_t(tmp_path):
    # issue 3 / WDP Theorems 3-4: with a fixed window the regret of WDP-COCOP grows like
    # log T. Over T = 2^10..2^15 log growth has a log-log slope near 0.1 and sqrt(T)
    # growth 0.5; the bounds below sit between the two. COCOL's constants grow like
    # rho^4 (docs/errata.md, WDP-6); R(2^14)/R(2^10) was measured at 2.0-2.2, and log
    # growth keeps it below 2.5 where sqrt(T) growth would give 4. Measured at seed 0 over
    # 2^10..2^15: COCOP slope 0.04, COCOL ratio 2.19, COCOL slope 0.28 (T = 2^16 doubled
    # the test's time; this range still tells slope 0.1 from 0.5).
    result = wdp_regret_growth(tmp_path, exponents=range(10, 16), seeds=1, dim=10)
    rows = {(r["algorithm"], r["epsilon"]): r for r in result.rows}
    cocop, cocol = rows[("WDP-COCOP", 1.0)], rows[("WDP-COCOL", 1.0)]
    assert cocop["loglog_slope"] < 0.2
    assert cocol["R(2^14)"] / cocol["R(2^10)"] < 2.5
    assert cocol["loglog_slope"] < 0.4  # clearly below sqrt(T) growth
    assert_real_png(result.figures[0])


def _drawn(monkeypatch):
    """Keep the figures plots.py closes, to inspect what it drew."""
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    return figures


def test_regret_plot_draws_negative_values_and_a_zero_baseline(tmp_path, monkeypatch):
    # a log axis masks values <= 0 (the non-private twin beating its comparator drew no
    # line at all) and a baseline at 0 made tight_layout warn "invalid value encountered
    # in scalar subtract" (pytest turns that warning into an error here)
    from dpol.experiments.plots import plot_curves

    figures = _drawn(monkeypatch)
    t = np.arange(1, 200)
    curves = {"private": (t, 1.0 / np.sqrt(t)), "twin": (t, -0.03 + 0.0 / t),
              "twin again": (t, -0.03 + 0.0 / t)}
    plot_curves(curves, tmp_path / "r.png", title="r", ylabel="R_t / t",
                baselines={"predict 0": 0.0})
    ax = figures[0].axes[0]
    assert ax.get_yscale() == "symlog"
    lines = {line.get_label(): line for line in ax.get_lines()}
    for name in curves:  # every point of every curve lands at a finite place on the axes
        xy = lines[name].get_xydata()
        assert np.all(np.isfinite(ax.transData.transform(xy))), name
    # identical curves stay apart: each has its own line style and marker
    styles = {(lines[n].get_linestyle(), lines[n].get_marker()) for n in curves}
    assert len(styles) == len(curves)
    assert lines["predict 0"].get_ydata()[0] == 0.0
    assert_real_png(tmp_path / "r.png")


def test_positive_curves_keep_a_log_axis(tmp_path, monkeypatch):
    from dpol.experiments.plots import plot_curves, value_scale

    figures = _drawn(monkeypatch)
    t = np.arange(1, 50)
    plot_curves({"a": (t, 1.0 / t)}, tmp_path / "a.png", title="a", ylabel="y",
                baselines={"b": 0.01})
    assert figures[0].axes[0].get_yscale() == "log"
    # the linear zone reaches the smallest non-zero tail, at most six decades down
    assert value_scale([np.array([-1.0, 2.0])], [3e-4, 2.0]) == ("symlog", 1e-4)
    assert value_scale([np.array([-1.0, 5.0])], [1e-12, 5.0]) == ("symlog", 1e-6)


def test_demo_regret_plot_has_no_gaps(tmp_path, monkeypatch):
    # the demo's FTL curve is negative early on: every thinned point must be drawn
    from dpol.experiments.reproductions.jkt_appendix_g import synthetic_regression

    figures = _drawn(monkeypatch)
    synthetic_regression(tmp_path, horizon=2000, epsilons=(0.01, 1.0), seeds=1)
    ax = figures[0].axes[0]
    ftl = next(line for line in ax.get_lines() if line.get_label().startswith("FTL"))
    assert np.any(ftl.get_ydata() < 0)  # the case a log axis drops
    assert ax.get_yscale() == "symlog"
    assert np.all(np.isfinite(ax.transData.transform(ftl.get_xydata())))


@pytest.mark.parametrize("name", list(LEARNERS))
def test_run_in_slices_releases_what_one_run_releases(name):
    # dpol run feeds the learner in slices to show progress: the releases, losses and
    # regret must be those of one run, bit for bit
    from dpol.adapters.registry import comparator, make_learner
    from dpol.experiments.runs import checkpoint

    rng = np.random.default_rng(1)
    n = 1500  # slices of 1024 and 476 rows (checkpoint.CHUNK_ROWS)
    X = rng.normal(size=(n, 4)) * 0.3
    target = X @ np.array([0.5, -0.3, 0.2, 0.1])
    y = np.sign(target) if LEARNERS[name].task == "classification" else target
    whole = make_learner(name, 4, horizon=n, epsilon=1.0, seed=5)
    u = comparator(whole, X, y)
    one = whole.run(X, y, comparator=u)
    sliced = make_learner(name, 4, horizon=n, epsilon=1.0, seed=5)
    ticks = []
    state = {"done": {}, "parts": {}, "models": {}}
    joined = checkpoint.stream_slices("private", sliced, X, y, u, ticks.append, state,
                                      None, lambda: None)
    assert ticks == [1024, n]
    for field in ("weights", "losses", "predictions", "final_weights", "model_predictions"):
        np.testing.assert_array_equal(getattr(joined, field), getattr(one, field))
    np.testing.assert_allclose(joined.regret, one.regret, rtol=1e-12, atol=1e-12)


def test_run_scores_trivial_baselines_and_split():
    from dpol.experiments.runs.scores import heldout_scores, holdout_split, trivial_rows

    train, test = holdout_split(1000, 0.25)
    assert len(test) == 250 and np.all(np.diff(train) > 0)  # training rows keep their order
    assert not set(train) & set(test) and len(train) + len(test) == 1000
    again = holdout_split(1000, 0.25)
    np.testing.assert_array_equal(again[1], test)  # fixed, whatever else is seeded
    y = np.array([3.0, 5.0, 7.0, 9.0])
    assert heldout_scores(np.full(4, y.mean()), y, False)["heldout_r2"] == 0.0
    rows = trivial_rows(np.ones(3), np.array([1.0, 2.0, 3.0]), y, False,
                        {"model": "predict 0 (trivial)"})
    mean = rows[1]
    assert mean["heldout_mse"] == pytest.approx(np.mean((y - 2.0) ** 2))  # training mean
    assert rows[0]["heldout_mse"] == pytest.approx(np.mean(y**2))


DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_glossary_page_holds_the_terms_of_the_reports():
    from dpol.experiments.report import GLOSSARY

    page = " ".join((DOCS / "glossary.md").read_text().split())
    for term, definition in GLOSSARY.items():
        assert f"**{term}**: {' '.join(definition.split())}" in page, term


def test_errata_page_names_tests_that_exist():
    import re

    page = (DOCS / "errata.md").read_text()
    refs = set(re.findall(r"`([a-z_]+\.py)::([a-z0-9_]+)`", page))
    assert len(refs) > 50
    tests = Path(__file__).resolve().parents[1]
    for module, name in sorted(refs):
        assert f"def {name}(" in next(tests.rglob(module)).read_text(), (module, name)
    for ident in ("JKT-6", "WDP-1", "NW-1", "KNJ-1", "ENV-1"):
        assert f"### {ident}." in page


def test_run_report_cites_only_documents_that_ship(tmp_path):
    import re

    from dpol.experiments.runs.pipeline import run_learner

    with pytest.warns(Warning):  # POL's paper calibration warns (docs/errata.md, JKT-6)
        result = run_learner("pol", "synthetic-classification", tmp_path, horizon=300,
                             calibration="paper")
    text = result.report.read_text()
    assert "docs/errata.md" in text and (DOCS / "errata.md").exists()
    assert not re.search(r"\bspec\b|review item|DESIGN", text, re.I), text
    for term in ("replace-one", "paper calibration", "R (the bounds)"):
        assert f"**{term}**" in text
    assert "decided here:** JKT-6 in docs/errata.md" in text


def test_every_learner_of_dpol_run_names_errata_that_exist():
    from dpol.adapters.registry import LEARNERS
    from dpol.experiments.runs.report import ERRATA_IDS

    page = (DOCS / "errata.md").read_text()
    # DP-FTRL (Kairouz et al. 2021) is none of the papers of docs/errata.md
    assert set(ERRATA_IDS) == set(LEARNERS) - {"ftrl"}
    for ids in ERRATA_IDS.values():
        for part in ids.split(", "):
            for ident in part.split(" to "):
                assert f"### {ident}." in page, ident


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_reproduction_report_defines_the_terms_it_uses(tmp_path, name):
    # a reader of docs/ or of a `dpol reproduce` folder has no other glossary: every
    # report ends with the entries of GLOSSARY its text uses (replace-one at least: each
    # states its neighbouring relation)
    from dpol.experiments.report import GLOSSARY, terms_used

    report = reproduce(name, tmp_path, quick=True, seeds=1, data=None, workers=1).report
    body, _, terms = report.read_text().partition("\n## Terms\n")
    assert "replace-one" in terms_used(body)
    for term in terms_used(body):
        assert f"* **{term}**: {GLOSSARY[term]}" in terms, term
