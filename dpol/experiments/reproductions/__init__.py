"""The papers' experiments, by name (``dpol reproduce``; layer L5).

:mod:`.reproduce` names them and runs one, full or quick; one module per paper holds
its protocol: :mod:`.jkt_appendix_g` (JKT), :mod:`.wdp_regret` (WDP), :mod:`.nw_kernel`
(NW), :mod:`.env_bandit` (ENV) and :mod:`.knj_incremental` (KNJ). Their seeds run through
the sweeps' runner (:func:`dpol.experiments.sweeps.runner.run_sweep`), on any engine.
"""
