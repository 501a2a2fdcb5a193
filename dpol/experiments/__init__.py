"""The applications built on the library (layer L5), one folder each.

* :mod:`dpol.experiments.reproductions` — the papers' experiments (``dpol reproduce``,
  ``dpol demo``): tables, plots and a markdown report each.
* :mod:`dpol.experiments.runs` — ``dpol run``: one learner on a table or a named data
  set, as a pipeline of stages (read, bounds and scaling, learner, scores, outputs), with
  its checkpoints and its report.
* :mod:`dpol.experiments.sweeps` — ``dpol sweep``: grids of cells on an engine (local
  processes, Ray or Dask), kept in a results store; its runner also runs the
  reproductions' seeds.

Beside them, what they share and the bodies of the small commands: :mod:`.report`
(CSV tables, markdown reports, the glossary), :mod:`.plots`, :mod:`.account` (``dpol
account``), :mod:`.audit_run` (``dpol audit``) and :mod:`.counter_errors` (``dpol
counters``).
"""

from dpol.experiments.report import ExperimentResult
from dpol.experiments.sweeps.runner import run_sweep

__all__ = ["ExperimentResult", "run_sweep"]
