"""``dpol train``: one private model over data larger than a machine (layer L5).

Mini-batch DP-FTRL / DP-MF (:mod:`dpol.learners.dp_matrix_factorization`) over the
partitions of a Parquet folder, a Dask DataFrame or a Ray Dataset: :mod:`.sources`
(partitions, their columns checked from metadata), :mod:`.shard` (what a worker holds:
a partition's rows grouped by step), :mod:`.engines` (in this process, Dask or Ray) and
:mod:`.train` (the driver: steps, checkpoints, failover). Dask, Ray and pyarrow are
optional extras, imported only by the engine or source that needs them.
"""

from dpol.experiments.training.train import TrainingFailed, TrainResult, train

__all__ = ["TrainResult", "TrainingFailed", "train"]
