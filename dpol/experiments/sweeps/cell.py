"""One cell of a sweep: a learner on a data set, scored; never raises (layer L5).

Everything a cell computes comes from its configuration (the data set and the noise are
seeded by the cell's seed, as in ``dpol run LEARNER DATASET --seed S``), so its
results are the same bits on whichever engine or machine runs it; only the timings and
the worker name differ.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
import warnings

import numpy as np

__all__ = ["METRICS", "run_cell"]

#: what a finished cell records besides its configuration, timings and warnings
METRICS = ("guarantee", "real_epsilon", "real_delta", "rows", "average_regret",
           "mean_loss", "accuracy", "n_clipped")


def _evaluate(cell: dict) -> dict:
    from dpol.adapters.registry import LEARNERS, comparator, make_learner
    from dpol.datasets import load_dataset
    from dpol.datasets.files import clip_to_bounds
    from dpol.experiments.runs.scores import online_accuracy

    stream = load_dataset(cell["dataset"], seed=cell["seed"], horizon=cell["horizon"])
    X, y, clip = clip_to_bounds(stream.X, stream.y, 1.0, 1.0)
    model = make_learner(cell["learner"], X.shape[1], horizon=len(y), epsilon=cell["epsilon"],
                         delta=cell["delta"], counter=cell["counter"], seed=cell["seed"],
                         calibration=cell["calibration"], options=dict(cell["options"]))
    u = comparator(model, X, y)
    started = time.perf_counter()
    trace = model.run(X, y, comparator=u)
    fit = time.perf_counter() - started
    guarantee = trace.privacy
    classification = LEARNERS[cell["learner"]].task == "classification"
    return {"guarantee": str(guarantee), "real_epsilon": float(guarantee.epsilon),
            "real_delta": float(guarantee.delta), "rows": len(y),
            "average_regret": float(trace.regret[-1] / len(y)),
            "mean_loss": float(np.mean(trace.losses)),
            "accuracy": (online_accuracy(trace.prequential_predictions, y)
                         if classification else None),
            "n_clipped": int(clip.clipped + trace.n_clipped), "fit_seconds": fit}


def run_cell(cell: dict) -> dict:
    """Run one cell; a failure is recorded (``status`` "failed", ``error``), not raised.

    Examples
    --------
    >>> cell = {"learner": "pqftl", "dataset": "synthetic-regression", "counter": None,
    ...         "epsilon": 1.0, "delta": None, "seed": 0, "horizon": 200,
    ...         "calibration": "tight", "options": {}}
    >>> r = run_cell(cell)
    >>> r["status"], r["guarantee"].split(";")[0], round(r["average_regret"], 4), r["error"]
    ('done', '(1, 1e-05)-DP, replace_one, unit: one stream element', 0.4223, None)
    >>> r["guarantee"].split("; ")[1]  # a simulation: every cell's noise has its seed
    'seeded noise: private only while the seed stays secret'
    >>> r = run_cell({**cell, "options": {"alpha": -1.0}})
    >>> r["status"], r["error"]
    ('failed', 'InvalidInputError: alpha must be > 0.0; got -1.0')
    """
    started = time.perf_counter()
    record = {"status": "done", "error": None, "traceback": None,
              **dict.fromkeys(METRICS), "fit_seconds": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            record.update(_evaluate(cell))
        except Exception as exc:  # recorded with its error; the other cells go on
            record.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                          traceback=traceback.format_exc(limit=8))
    record["warnings"] = "; ".join(dict.fromkeys(f"{w.category.__name__}: {w.message}"
                                                 for w in caught))
    record["seconds"] = time.perf_counter() - started
    record["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return record
