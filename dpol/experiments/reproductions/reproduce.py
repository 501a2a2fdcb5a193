"""``dpol reproduce``: the paper experiments by name, full or quick (layer L5)."""

from __future__ import annotations

from pathlib import Path

from dpol._validation import check_choice, check_int

__all__ = ["EXPERIMENTS", "reproduce"]

#: the experiments ``dpol reproduce`` runs, by name
EXPERIMENTS = ("jkt-synthetic", "jkt-year", "jkt-logistic", "wdp-regret", "nw-kernel",
               "env-bandit", "knj-incremental")


def reproduce(experiment: str, out: Path, *, quick: bool, seeds: int | None,
              data: Path | None, workers: int, progress=None, backend: str = "local",
              address: str | None = None):
    """Run one experiment; ``quick`` shrinks it to about a minute.

    Its runs go to one engine (:func:`~dpol.experiments.sweeps.runner.using_engine`): ``workers``
    local processes, or ``backend`` "ray" or "dask" (started here, or joined at
    ``address``); the results are the same whichever runs them.

    Examples
    --------
    The quick JKT logistic experiment, one seed, on scikit-learn's breast cancer data (the
    fallback when no ``data`` file is given):

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = reproduce("jkt-logistic", Path(tmp), quick=True, seeds=1, data=None,
    ...                     workers=1)
    ...     print(res.name, res.report.name, res.csv.name, [f.name for f in res.figures])
    jkt_logistic jkt_logistic.md jkt_logistic.csv ['jkt_logistic_accuracy.png']
    >>> sorted({r["epsilon"] for r in res.rows}), len(res.rows)  # 2 alphas x 4 epsilons
    ([0.1, 1.0, 10.0, inf], 8)
    """
    check_choice("experiment", experiment, EXPERIMENTS)  # before any work: no fall-through
    if seeds is not None:  # 0 seeds ran the sweep on nothing and failed in the plots
        seeds = check_int("seeds", seeds, low=1)
    from dpol.experiments.sweeps.runner import using_engine

    with using_engine(backend, workers, address):
        return _reproduce(experiment, out, quick=quick, seeds=seeds, data=data,
                          workers=workers, progress=progress)


def _reproduce(experiment: str, out: Path, *, quick: bool, seeds: int | None,
               data: Path | None, workers: int, progress):
    from dpol.experiments.reproductions import jkt_appendix_g as jkt
    from dpol.experiments.reproductions.env_bandit import env_bandit_regret
    from dpol.experiments.reproductions.knj_incremental import incremental_regression
    from dpol.experiments.reproductions.nw_kernel import nw_kernel
    from dpol.experiments.reproductions.wdp_regret import wdp_regret_growth

    eps = (0.01, 0.1, 1.0) if quick else jkt.PAPER_EPSILONS
    n_seeds = seeds if seeds is not None else (1 if quick else 5)
    common = {"seeds": n_seeds, "workers": workers, "progress": progress}
    if experiment == "jkt-synthetic":
        return jkt.synthetic_regression(out, horizon=20_000 if quick else 100_000,
                                        epsilons=eps, **common)
    if experiment == "jkt-year":
        return jkt.year_prediction(out, data, epsilons=eps,
                                   limit=50_000 if quick and data else None, **common)
    if experiment == "jkt-logistic":
        return jkt.logistic_regression(out, data, epsilons=(0.1, 1.0, 10.0) if quick else eps,
                                       limit=50_000 if quick and data else None, **common)
    if experiment == "nw-kernel":
        return nw_kernel(out, horizon=1000 if quick else 5000, holdout=500 if quick else 2000,
                         epsilons=(1.0, 100.0) if quick else (0.1, 1.0, 10.0, 100.0),
                         seeds=seeds if seeds is not None else (1 if quick else 3),
                         workers=workers, progress=progress)
    if experiment == "knj-incremental":
        if quick:
            return incremental_regression(out, horizon=512, dims=(2, 4, 8),
                                          epsilons=(4.0, 8.0, 16.0),
                                          seeds=seeds if seeds is not None else 2,
                                          sparse_dims=(16, 32), sparse_horizon=200,
                                          projection_dim=8, workers=workers, progress=progress)
        return incremental_regression(out, seeds=seeds if seeds is not None else 3,
                                      workers=workers, progress=progress)
    if experiment == "env-bandit":
        return env_bandit_regret(out, exponents=(10, 12) if quick else (10, 12, 14, 16),
                                 seeds=seeds if seeds is not None else (1 if quick else 3),
                                 workers=workers, progress=progress)
    return wdp_regret_growth(out, exponents=range(10, 14) if quick else range(10, 17),
                             seeds=seeds if seeds is not None else (1 if quick else 3),
                             workers=workers, progress=progress)
