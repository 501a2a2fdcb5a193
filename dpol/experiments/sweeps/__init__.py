"""``dpol sweep``: grids of learners x counters x epsilons x seeds x data sets (layer L5).

:mod:`.config` reads a sweep's TOML into cells, :mod:`.cell` runs one, :mod:`.sweep`
runs the unfinished cells on an engine of :mod:`.engines` (local processes, Ray or
Dask) through :mod:`.runner`, keeping each result in :mod:`.store` as it arrives;
:mod:`.report` summarises and plots a store.
"""
