"""The driver of ``dpol train``: checks, steps, checkpoints, failover (layer L5).

At each step the driver sends the released iterate to the engine, adds the partitions'
clipped gradient sums in partition order, and lets
:class:`~dpol.learners.dp_matrix_factorization.PrivateMiniBatchFTRL` add the counter's
noise and release the next iterate. Every ``checkpoint_every`` steps it saves the
learner (the counter with its noise generator's position, the iterate, every release)
in a signed checkpoint that runs no code when read
(:mod:`dpol.experiments.runs.checkpoint`). A resumed run reads it back and repeats the
steps after it with the same gradients and the same noise draws, so a step released
before a crash is released again with the very same bits: no noise is ever redrawn.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from dpol._validation import check_int, fail
from dpol.experiments.runs.checkpoint import CHECKPOINT, load_checkpoint, save_checkpoint
from dpol.experiments.training.engines import make_engine
from dpol.experiments.training.sources import as_source
from dpol.learners.dp_matrix_factorization import PrivateMiniBatchFTRL

__all__ = ["TrainResult", "TrainingFailed", "train"]

#: the arguments of :func:`train` that fix its releases (a resumed run must repeat them)
_RELEASE_ARGS = ("label", "loss", "epochs", "batch_size", "clip", "lr", "epsilon", "delta",
                 "counter", "counter_options", "shuffle_seed")


class TrainingFailed(RuntimeError):
    """A run that stopped after its first step; the message says where its last
    checkpoint is (or that none was written)."""


@dataclass
class TrainResult:
    """What :func:`train` released and how it ran.

    ``iterates`` holds the T released iterates (theta_1 .. theta_T), ``weights`` the last;
    ``privacy`` is the learner's guarantee, derived from the counter's event.
    """

    weights: np.ndarray
    iterates: np.ndarray
    privacy: object
    features: tuple[str, ...]
    n_rows: int
    steps: int
    steps_per_epoch: int
    n_clipped: int
    engine: str
    workers: int
    seconds: float
    resumed_from: int = 0

    @property
    def rows_per_second(self) -> float:
        """Row gradients computed per second of stepping (resumed steps only)."""
        done = (self.steps - self.resumed_from) * self.n_rows / self.steps_per_epoch
        return done / self.seconds if self.seconds > 0 else float("inf")

    def to_dict(self) -> dict:
        """A JSON-ready summary: the model, its guarantee and the run's figures."""
        out = asdict(self)
        out.pop("iterates")
        out.update(weights=self.weights.tolist(), privacy=str(self.privacy),
                   epsilon=self.privacy.epsilon, delta=self.privacy.delta,
                   features=list(self.features), rows_per_second=self.rows_per_second)
        return out


def _fingerprint(source, counts: list[int]) -> str:
    """The data's layout (columns, partitions, their rows): a resumed run checks it."""
    text = repr((source.features, source.label, source.kind, counts))
    return hashlib.sha256(text.encode()).hexdigest()


def _resume(learner, folder, args: dict, fingerprint: str) -> int:
    """Restore the learner from ``folder``'s checkpoint; the step it was taken after."""
    body = load_checkpoint(folder)
    if body["args"] != args:
        diff = sorted(k for k in args if body["args"].get(k) != args.get(k))
        raise fail("resume", f"continue a run with the same arguments ({', '.join(diff)} "
                   "differ from the checkpoint's)", str(folder))
    if body["fingerprint"] != fingerprint:
        raise fail("resume", "continue a run on the same data (its columns, partitions or "
                   "row counts differ from the checkpoint's)", str(folder))
    learner.set_state(body["models"]["learner"])
    return learner.t_


def _first_line(exc: BaseException, width: int = 160) -> str:
    """The error's type and the first line of its message, cut to ``width`` characters:
    Ray's and Dask's run to a dozen lines (the dead actor's ids, the causes of a crash),
    and the failure is one line that ends with the checkpoint to resume.

    >>> _first_line(RuntimeError("The actor died.\\n\\tpid: 7"))
    'RuntimeError: The actor died.'
    """
    line = str(exc).strip().split("\n", 1)[0].strip()
    line = line if len(line) <= width else line[:width - 3].rstrip() + "..."
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


def _loop(learner, engine, every: int | None, save: Callable[[], None],
          on_step: Callable | None) -> None:
    """The steps from ``learner.t_`` on: partition sums added in partition order."""
    while learner.t_ < learner.horizon:
        total, clipped = np.zeros(learner.dim), 0
        for _, vec, n in engine.sums(learner.batch(), learner.weights):
            total = total + vec
            clipped += n
        learner.step(total, clipped)
        if every and (learner.t_ % every == 0 or learner.t_ == learner.horizon):
            save()
        if on_step is not None:
            on_step(learner.t_, learner.horizon)


def train(data: object, *, label: str = "y", features: object = None,
          loss: str = "logistic", epochs: int = 1, batch_size: int, clip: float = 1.0,
          lr: float = 1.0, epsilon: float, delta: float | None = None,
          counter: object = "blt", counter_options: dict | None = None,
          seed: object = None, shuffle_seed: int = 0, engine: str = "local",
          address: str | None = None, workers: int | None = None,
          checkpoint: str | Path | None = None, checkpoint_every: int | None = None,
          resume: bool = False, on_step: Callable | None = None) -> TrainResult:
    """Train a linear (squared) or logistic model by DP-FTRL over partitioned data.

    ``data``: a Parquet file or folder, a Dask DataFrame, a Ray Dataset or (X, y);
    ``engine``: "local" (this process), "dask" or "ray" (``address`` of a running
    cluster, else a local one of ``workers``). The learner's arguments are those of
    :class:`~dpol.learners.dp_matrix_factorization.PrivateMiniBatchFTRL`. With
    ``checkpoint`` (a folder) the state is saved every ``checkpoint_every`` steps
    (default: once an epoch); ``resume=True`` continues from it with the same releases.
    ``on_step(t, T)`` is called after each release (t of T steps done). Bad input is
    refused with one line before any step; a failure after the first step raises
    :class:`TrainingFailed` naming the last checkpoint.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)) / 2; y = np.sign(X[:, 0])
    >>> r = train((X, y), batch_size=30, epochs=2, epsilon=4.0, delta=1e-5, seed=0)
    >>> r.steps, r.steps_per_epoch, r.iterates.shape, bool(r.weights[0] > 0)
    (20, 10, (20, 3), True)
    """
    given = dict(locals())
    source = as_source(data, label, features)
    args = {k: given[k] for k in _RELEASE_ARGS}
    args["features"] = list(source.features)
    learner_args = dict(batch_size=batch_size, epochs=epochs, loss=loss, clip=clip, lr=lr,
                        epsilon=epsilon, delta=delta, counter=counter,
                        counter_options=counter_options, seed=seed,
                        shuffle_seed=shuffle_seed)
    # every argument checked before a cluster is joined or a row read (the rows of a
    # Parquet folder are in its metadata: the learner itself, else a stand-in)
    check_int("batch_size", batch_size, low=1)
    early = PrivateMiniBatchFTRL(len(source.features), n_rows=source.n_rows or batch_size,
                                 **learner_args)
    if checkpoint_every is not None:
        check_int("checkpoint_every", checkpoint_every, low=1)
    if resume and checkpoint is None:
        raise fail("resume", "come with a checkpoint folder to resume from", resume)
    if checkpoint is not None:
        held = (Path(checkpoint) / CHECKPOINT).is_file()
        if resume and not held:
            raise fail("resume", f"find a {CHECKPOINT} in the checkpoint folder (written by "
                       "a run with a checkpoint)", str(checkpoint))
        if held and not resume:
            raise fail("checkpoint", "be a folder without a checkpoint (resume the run it "
                       "holds, or choose another folder)", str(checkpoint))
    eng = make_engine(engine, address, workers)
    try:
        return _run(eng, source, args, learner_args, early, checkpoint, checkpoint_every,
                    resume, on_step)
    finally:
        eng.close()


def _run(eng, source, args, learner_args, early, checkpoint, every, resume,
         on_step) -> TrainResult:
    counts = eng.load(source, learner_args["loss"], learner_args["clip"])
    n = int(sum(counts))
    learner = early if early.n_rows == n else PrivateMiniBatchFTRL(
        len(source.features), n_rows=n, **learner_args)
    eng.place(list(np.cumsum([0, *counts[:-1]])), learner.steps_per_epoch,
              learner.shuffle_seed)
    fingerprint = _fingerprint(source, counts)
    start = _resume(learner, checkpoint, args, fingerprint) if resume else 0
    if checkpoint is not None and every is None:
        every = learner.steps_per_epoch
    saved = [start if resume else None]

    def save() -> None:
        save_checkpoint(checkpoint, {"args": args, "done": {"step": learner.t_},
                                     "parts": {}, "fingerprint": fingerprint,
                                     "models": {"learner": learner.get_state()}})
        saved[0] = learner.t_

    began = time.perf_counter()
    try:
        _loop(learner, eng, every if checkpoint is not None else None, save, on_step)
    except (Exception, KeyboardInterrupt) as exc:
        where = (f"its last checkpoint, after step {saved[0]}, is in {checkpoint}: resume "
                 "with resume=True (dpol train --resume)" if saved[0] is not None
                 else "no checkpoint was written")
        raise TrainingFailed(f"training stopped at step {learner.t_ + 1} of "
                             f"{learner.horizon} ({_first_line(exc)}); {where}") from exc
    return TrainResult(learner.weights, np.array(learner.iterates_), learner.privacy,
                       source.features, n, learner.horizon, learner.steps_per_epoch,
                       learner.n_clipped_, eng.name, eng.workers,
                       time.perf_counter() - began, start)
