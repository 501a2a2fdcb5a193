"""``dpol run --chunk-rows N``: streams larger than memory, read and learned in chunks (L5).

The file is read ``N`` rows at a time (:func:`dpol.datasets.chunks.iter_table`); each
chunk is clipped to the declared bounds and fed to the learner's ``run``, which
continues its stream (the releases are those of one ``run`` over the whole file, bit for
bit), and the non-private twin beside it. Releases go straight to ``iterates.npy`` and
the per-step losses to ``losses.csv`` (both written whole, then renamed into place), so
memory holds one chunk and the learners' state, whatever the length of the file.

What needs the whole stream in memory is left out, and the report says so: the regret
(its comparator is the best fixed point in hindsight), the held-out split, bounds or
scaling estimated privately. Classification labels must be coded -1 / +1 or 0 / 1 (a
chunk cannot know which two values a later chunk holds); K > 2 classes (a learner of
:data:`~dpol.adapters._multi_class.MULTI_CLASS_LEARNERS`) must be coded 0 .. K - 1 and
declared with ``options={"outputs": K}`` (``--option outputs=K``), since K fixes the
learner before the first chunk is read: label k becomes the one-hot row e_{k+1}, as a
whole-file run codes labels 0 .. K - 1 when every class occurs.
"""

from __future__ import annotations

import gzip
import itertools
import math
import secrets
import warnings
from pathlib import Path

import numpy as np

from dpol._validation import check_int, check_real, fail
from dpol.adapters._multi_class import MULTI_CLASS_LEARNERS
from dpol.adapters.registry import LEARNERS, check_features, make_learner, zero_point
from dpol.datasets import Stream
from dpol.datasets._csv_header import SAMPLE, csv_header
from dpol.datasets.chunks import iter_table
from dpol.datasets.files import clip_to_bounds, split_label
from dpol.errors import NonPrivateWarning
from dpol.experiments.plots import plot_curves
from dpol.experiments.report import ExperimentResult
from dpol.experiments.runs import scores
from dpol.experiments.runs.output import staged_output
from dpol.experiments.runs.report import CURVE_POINTS, prediction_heads, write_report
from dpol.learners.random_features import BANDWIDTH

__all__ = ["chunked_arguments", "count_rows", "feature_arguments", "run_chunked"]


def count_rows(path: str | Path) -> int:
    """Data rows of a file without parsing them (a first, cheap pass: non-blank lines,
    less a header line; the NPY shape; the Parquet metadata)."""
    path = Path(path)
    name = path.name.lower()
    if name.endswith(".npy"):
        return int(np.load(path, mmap_mode="r").shape[0])
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        lines = (line for line in fh if line.strip())
        first = next(lines, None)
        if first is None:
            return 0
        ahead = [line.decode() for line in itertools.islice(lines, SAMPLE)]
        header = csv_header(first.decode(), ahead, str(path))[0] is not None  # the readers'
        return len(ahead) + sum(1 for _ in lines) + (0 if header else 1)


def chunked_arguments(args: dict, chunk_rows: object, auto: bool) -> dict:
    """:func:`run_chunked`'s keywords from ``run_learner``'s checked arguments, refusing
    what a chunked run cannot do (one line naming the argument, before anything is read)."""
    chunk_rows = check_int("chunk_rows", chunk_rows, low=1)
    data = args["data"]
    if not isinstance(data, (str, Path)) or str(data) == "-" or not Path(data).is_file():
        raise fail("data", "be a file for a chunked run (standard input and named data sets "
                   "are read whole)", data)
    for name, value, why in (
            ("normalize", args["normalize"] != "clip", "standardize and private read the "
             "whole file first"),
            ("x_bound", auto, "bounds estimated privately read the whole file first"),
            ("test_fraction", args["test_fraction"] is not None, "a held-out split needs the "
             "whole file"),
            ("checkpoint_every", args["checkpoint_every"] is not None, "checkpoints of a "
             "chunked run are not supported yet")):
        if value:
            raise fail(name, f"be left unset with chunk_rows ({why})", args[name])
    keep = ("epsilon", "delta", "horizon", "counter", "seed", "calibration", "target_col",
            "x_bound", "y_bound", "options", "baseline", "command", "replace")
    return {"chunk_rows": chunk_rows, **{k: args[k] for k in keep}}


def feature_arguments(spec, learner: str, fit_intercept: bool | None, random_features: object,
                      bandwidth: float | None) -> dict:
    """``make_learner``'s feature keywords of a run, checked before any data is read: an
    intercept by default for a linear learner, random features when asked."""
    if fit_intercept is None:
        fit_intercept = spec.linear
    random_features = check_features(learner, fit_intercept, random_features)
    if bandwidth is None:
        bandwidth = BANDWIDTH
    elif random_features is None:  # a flag that would change nothing
        raise fail("bandwidth", "be given only with random_features (the bandwidth of "
                   "their kernel)", bandwidth)
    check_real("bandwidth", bandwidth, low=0.0, low_open=True)
    return {"fit_intercept": fit_intercept, "random_features": random_features,
            "bandwidth": bandwidth}


def _labels(y: np.ndarray, start: int, outputs: int = 1, learner: str = "") -> np.ndarray:
    """Labels +-1, or one-hot rows of the K = ``outputs`` classes 0 .. K - 1."""
    codes = np.arange(outputs) if outputs > 1 else (-1.0, 0.0, 1.0)
    ok = np.isin(y, codes)
    if not ok.all():
        row = int(np.flatnonzero(~ok)[0])
        rule = (f"labels 0 .. {outputs - 1} (the {outputs} classes of --option outputs="
                f"{outputs})" if outputs > 1 else "labels -1 / +1 or 0 / 1 (K > 2 classes "
                "coded 0 .. K-1: --option outputs=K, for "
                f"{', '.join(MULTI_CLASS_LEARNERS)}"
                + ("" if learner in MULTI_CLASS_LEARNERS else
                   f"; {learner} fits two classes only") + ")")
        raise fail("data", f"hold {rule} for a chunked classification run",
                   f"{y[row]:g} in row {start + row + 1}")
    if outputs > 1:
        return (y[:, None] == codes[None, :]).astype(np.float64)
    return np.where(y > 0.0, 1.0, -1.0)


def _outputs(learner: str, classification: bool, options: dict | None,
             calibration: str) -> int:
    """K of a chunked run: the declared ``outputs`` (1: labels +-1), checked before any
    row is read; only a multi-class learner takes K > 2."""
    k = (options or {}).get("outputs", 1) if classification else 1
    if k == 2:
        raise fail("options", "leave outputs unset for two classes (coded -1 / +1 or 0 / 1)",
                   options)
    if k != 1:
        k = check_int("outputs", k, low=3)
        scores.class_options(learner, np.zeros((0, k)), options, calibration)
    return k


class _Tally:
    """Running sums of one model's per-step losses and sign agreements, and its curve."""

    def __init__(self, marks: np.ndarray) -> None:
        self.loss = self.correct = 0.0
        self.marks, self.curve = marks, []
        self.spoke = False  # any prediction other than 0

    def add(self, losses: np.ndarray, predictions: np.ndarray, y: np.ndarray, start: int
            ) -> None:
        cum = self.loss + np.cumsum(losses)
        hit = (self.marks > start) & (self.marks <= start + len(losses))
        self.curve += [cum[m - start - 1] / m for m in self.marks[hit]]
        self.loss = float(cum[-1])
        self.correct += float(np.sum(scores.hits(predictions, y)))
        self.spoke = self.spoke or bool(np.any(predictions))


def run_chunked(learner: str, data: str | Path, out_dir: str | Path, *, chunk_rows: int,
                epsilon: float, delta: float | None, horizon: int | None,
                counter: str | None, seed: int | None, calibration: str,
                target_col: int | str | None, x_bound: float, y_bound: float,
                options: dict | None, baseline: bool, progress=None,
                command: str | None = None, features: dict | None = None,
                replace: bool = False) -> ExperimentResult:
    """Run ``learner`` over the file ``data`` in chunks of ``chunk_rows`` rows (see the
    module docstring); arguments as :func:`~dpol.experiments.runs.pipeline.run_learner`,
    ``features`` its checked ``fit_intercept``, ``random_features`` and ``bandwidth``
    (default: none of them).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "d.npy"
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(3000, 3)) / 3
    >>> np.save(path, np.column_stack([X, X @ [0.5, -0.2, 0.1]]))
    >>> res = run_chunked("pqftl", path, path.parent / "out", chunk_rows=1000, epsilon=1.0,
    ...                   delta=None, horizon=None, counter=None, seed=0, calibration="tight",
    ...                   target_col=None, x_bound=1.0, y_bound=1.0, options=None,
    ...                   baseline=True)
    >>> [r["model"] for r in res.rows], np.load(path.parent / "out" / "iterates.npy").shape
    (['pqftl', 'pqftl, non-private twin', 'predict 0 (trivial)'], (3001, 3))
    """
    spec = LEARNERS[learner]
    classification = spec.task == "classification"
    outputs = _outputs(learner, classification, options, calibration)
    total_rows = count_rows(data)
    T = min(horizon, total_rows) if horizon is not None else total_rows
    if T == 0:
        raise fail("data", "hold at least one row", str(data))
    marks = np.unique(np.geomspace(1, T, CURVE_POINTS).astype(int))
    build = dict(horizon=horizon or total_rows, epsilon=epsilon, delta=delta, counter=counter,
                 x_bound=x_bound, y_bound=y_bound, calibration=calibration, options=options,
                 **(features or {}))
    out = Path(out_dir)
    models, tallies, zero = {}, {}, _Tally(marks)
    done = clipped = label_sum = 0
    counts = np.zeros(outputs)  # K classes: rows of each, for the majority class
    name = how = labels = ""
    if outputs > 1:
        labels = (f"label {', '.join(f'{k} -> e{k + 1}' for k in range(outputs))} (one-hot "
                  f"rows of {outputs} classes)")
    with staged_output(out, replace=replace) as stage:  # published whole, or not at all
        writers = _Writers(stage, T)
        with writers, warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            chunks = iter_table(data, chunk_rows)
            for table, names in chunks:
                table = table[:T - done]
                X, y, what, _ = split_label(table, names, target_col=target_col)
                y = _labels(y, done, outputs, learner) if classification else y
                X, y, clip = clip_to_bounds(X, y, x_bound, y_bound)
                if not models:
                    name, how = f"{Path(data).name} ({what})", "; ".join(
                        p for p in (labels, what) if p)
                    models["private"] = make_learner(learner, X.shape[1], seed=seed, **build)
                    if baseline:
                        models["twin"] = make_learner(learner, X.shape[1], seed=seed, **{
                            **build, "epsilon": math.inf, "calibration": "tight"})
                    tallies = {k: _Tally(marks) for k in models}
                for key, model in models.items():
                    trace = model.run(X, y)
                    tallies[key].add(trace.losses, trace.prequential_predictions, y, done)
                    if key == "private":
                        writers.add(trace, done)
                    if progress:
                        progress(done + len(y), T, learner if key == "private" else
                                 "non-private twin")
                z = models["private"]._loss_value(  # predict 0
                    zero_point(models["private"]), X, y)
                zero.add(z, np.zeros(np.shape(y)), y, done)
                clipped += clip.clipped
                if outputs > 1:
                    counts += np.bincount(np.argmax(y, axis=1), minlength=outputs)
                else:
                    label_sum += float(np.sum(y))
                done += len(y)
                if done >= T:
                    break
            writers.finish(models["private"].weights)
        model = models["private"]
        rows = []
        for key, m in models.items():
            row = {"model": learner if key == "private" else f"{learner}, non-private twin",
                   "guarantee": str(m.privacy), "mean_loss": tallies[key].loss / T}
            if classification:
                row["accuracy"] = tallies[key].correct / T
            rows.append(row)
        rows.append({"model": "predict 0 (trivial)", "guarantee": "(0, 0)-DP",
                     "mean_loss": zero.loss / T})
        if classification:  # the majority class in hindsight: the share of its label
            rows.append({"model": "majority class (trivial)", "guarantee": "(0, 0)-DP",
                         "accuracy": float(counts.max()) / T if outputs > 1
                         else 0.5 + abs(label_sum) / (2 * T)})
        keys = list(dict.fromkeys(k for r in rows for k in r))
        rows = [{k: r.get(k, math.nan) for k in keys} for r in rows]
        curves = {r["model"]: (marks[:len(t.curve)], np.array(t.curve))
                  for r, t in zip(rows, [*tallies.values(), zero], strict=False)}
        figures = [stage / "loss.png"]
        plot_curves(curves, figures[0], ylabel="mean loss up to t",
                    title=f"Running mean loss, {learner} on {name}, T={T}")
        notes = [f"chunked run of {T} rows in chunks of {chunk_rows}: the regret is not "
                 "computed (its comparator, the best fixed point in hindsight, needs the whole "
                 "stream); mean loss beside predicting 0 instead"]
        horizon_note = scores.horizon_note(build["horizon"], T, total_rows, 0)
        notes += [n for n in (horizon_note, scores.silent_note(
            learner, tallies["private"].spoke, False)) if n]
        if model.privacy.seeded:
            notes.append(scores.SEEDED_NOTE)
        if clipped > 0.05 * T:  # no suggestion: it would need every raw row at hand
            y_part = "" if classification else f", |y| <= {y_bound:g}"
            notes.append(f"{clipped} of {T} rows ({100 * clipped / T:.0f}%) were clipped to the "
                         f"declared bounds ||x|| <= {x_bound:g}{y_part}")
        stream = Stream(np.empty((0, 0)), range(T), name, how, n_clipped=clipped)
        info = {"learner": learner, "spec": spec, "model": model, "stream": stream,
                "n_rows": total_rows, "available": total_rows, "horizon": build["horizon"],
                "counter": counter, "x_bound": x_bound, "y_bound": y_bound,
                "options": options or {}, "n_clipped": model.n_clipped_, "data": data,
                "command": command, "test": None, "notes": notes, "guarantee": model.privacy,
                "epsilon": epsilon, "split": None, "losses": "per-step loss and prediction",
                "run_id": secrets.token_hex(8)}
        report = write_report(stage, info, rows, figures, out_name=out.name)
    return ExperimentResult(f"run_{learner}", rows, out / report.name, out / "losses.csv",
                            [out / f.name for f in figures], notes, labels)


class _Writers:
    """``iterates.npy`` and ``losses.csv`` written as the chunks come, into the run's
    staging folder (published whole when the run ends, removed on any error or Ctrl-C)."""

    def __init__(self, out: Path, T: int) -> None:
        self.out, self.T, self.npy, self.csv = out, T, None, None

    def __enter__(self) -> _Writers:
        return self

    def __exit__(self, kind, value, tb) -> None:
        for fh in (self.npy, self.csv):
            if fh is not None:
                fh.close()

    def add(self, trace, start: int) -> None:
        if self.npy is None:  # the width is the learner's release's
            self.npy = open(self.out / "iterates.npy", "wb")
            np.lib.format.write_array_header_1_0(self.npy, {
                "descr": np.lib.format.dtype_to_descr(np.dtype(np.float64)),
                "fortran_order": False, "shape": (self.T + 1, *trace.weights.shape[1:])})
            self.csv = open(self.out / "losses.csv", "w")
            self.csv.write(",".join(["t", "loss", *prediction_heads(trace.predictions)]) + "\n")
        self.npy.write(np.ascontiguousarray(trace.weights, dtype=np.float64).tobytes())
        t = np.arange(start + 1, start + len(trace.losses) + 1)
        pred = trace.predictions.reshape(len(t), -1)  # K outputs: K a row
        self.csv.write("".join(",".join([str(i), *(f"{v:.10g}" for v in (loss, *p))]) + "\n"
                               for i, loss, p in zip(t, trace.losses, pred, strict=True)))

    def finish(self, last: np.ndarray) -> None:
        """The release after the last step."""
        self.npy.write(np.asarray(last, dtype=np.float64).tobytes())
