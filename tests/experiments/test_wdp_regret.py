"""The WDP regret reproduction: the growth fit that tells log T from sqrt(T), and the
regret of WDP-COCOP / COCOL growing like log T with a fixed window."""

from __future__ import annotations

import numpy as np
import pytest
from experiment_cases import assert_real_png

from dpol.experiments.reproductions.wdp_regret import fit_growth, wdp_regret_growth


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
    # the test's time; this range still tells slope 0.1 from 0.5). Only epsilon = 1 is
    # asserted on, so only it runs (each task has its own seed: the same numbers); the
    # non-private rows of the default epsilons=(1, inf) were half the time, and the
    # docstring's example runs that default.
    result = wdp_regret_growth(tmp_path, exponents=range(10, 16), seeds=1, dim=10,
                               epsilons=(1.0,))
    rows = {(r["algorithm"], r["epsilon"]): r for r in result.rows}
    cocop, cocol = rows[("WDP-COCOP", 1.0)], rows[("WDP-COCOL", 1.0)]
    assert cocop["loglog_slope"] < 0.2
    assert cocol["R(2^14)"] / cocol["R(2^10)"] < 2.5
    assert cocol["loglog_slope"] < 0.4  # clearly below sqrt(T) growth
    assert_real_png(result.figures[0])
