"""The experiments' plots: every point of a curve drawn (negative values and a zero
baseline on a symlog axis), positive curves on a log axis, curves told apart."""

from __future__ import annotations

import numpy as np
from experiment_cases import assert_real_png, drawn


def test_regret_plot_draws_negative_values_and_a_zero_baseline(tmp_path, monkeypatch):
    # a log axis masks values <= 0 (the non-private twin beating its comparator drew no
    # line at all) and a baseline at 0 made tight_layout warn "invalid value encountered
    # in scalar subtract" (pytest turns that warning into an error here)
    from dpol.experiments.plots import plot_curves

    figures = drawn(monkeypatch)
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

    figures = drawn(monkeypatch)
    t = np.arange(1, 50)
    plot_curves({"a": (t, 1.0 / t)}, tmp_path / "a.png", title="a", ylabel="y",
                baselines={"b": 0.01})
    assert figures[0].axes[0].get_yscale() == "log"
    # the linear zone reaches the smallest non-zero tail, at most six decades down
    assert value_scale([np.array([-1.0, 2.0])], [3e-4, 2.0]) == ("symlog", 1e-4)
    assert value_scale([np.array([-1.0, 5.0])], [1e-12, 5.0]) == ("symlog", 1e-6)
