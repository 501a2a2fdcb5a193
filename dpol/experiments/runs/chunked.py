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
whole-file run codes labels 0 .. K - 1 when every class occurs. With
``checkpoint_every`` the run saves its state between chunks and ``--resume`` continues
it (:mod:`.chunk_checkpoint`). A key's rows of a chunked run by key
(:class:`~.by_key_chunked.KeyRows`) carry the column names and the name its report shows.
"""

from __future__ import annotations

import gzip
import itertools
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dpol._validation import check_int, fail
from dpol.adapters._multi_class import MULTI_CLASS_LEARNERS
from dpol.adapters.registry import make_learner, zero_point
from dpol.datasets import Stream
from dpol.datasets._csv_header import SAMPLE, csv_header
from dpol.datasets.chunks import iter_table
from dpol.datasets.files import clip_to_bounds, split_label
from dpol.errors import NonPrivateWarning
from dpol.experiments.plots import plot_curves
from dpol.experiments.report import ExperimentResult
from dpol.experiments.runs import scores
from dpol.experiments.runs.chunk_checkpoint import ChunkCheckpoints, ChunkWriters
from dpol.experiments.runs.output import remove_checkpoint, staged_output
from dpol.experiments.runs.report import CURVE_POINTS, write_report
from dpol.experiments.runs.request import RunRequest, interval_text
from dpol.learners._psd_solve import _blas_controller
from dpol.learners._shared_sums import share_exact_sums

__all__ = ["count_rows", "run_chunked"]


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
        return len(ahead) + _count_lines(fh) + (0 if header else 1)


#: a blank line (what bytes.strip() empties) at the start of a block or after a newline
_BLANK = re.compile(rb"^[ \t\r\x0b\x0c]*\n", re.MULTILINE)
#: the bytes that may start a blank line after a newline (the regex runs only then)
_BLANK_STARTS = np.frombuffer(b"\n\r \t\x0b\x0c", dtype=np.uint8)


def _count_lines(fh) -> int:
    """The non-blank lines left in the binary file ``fh``, counted in 16 MiB blocks (a
    Python loop over the lines took 0.5 us a line, this 0.07)."""
    count, tail = 0, b""
    while block := fh.read(1 << 24):
        block = tail + block
        cut = block.rfind(b"\n") + 1  # whole lines only: the rest goes with the next block
        body, tail = block[:cut], block[cut:]
        count += body.count(b"\n")
        codes = np.frombuffer(body, dtype=np.uint8)
        after = codes[np.flatnonzero(codes[:-1] == 10) + 1]  # what follows each newline
        if body[:1].isspace() or np.isin(after, _BLANK_STARTS).any():
            count -= len(_BLANK.findall(body))
    return count + bool(tail.strip())


def run_chunked(request: RunRequest, progress=None, resumed: dict | None = None
                ) -> ExperimentResult:
    """Run ``request.learner`` over the file ``request.data`` in chunks of
    ``request.chunk_rows`` rows (see the module docstring): read and learn each chunk,
    score the run, publish its outputs; ``progress(done, total, label)`` as rows are
    learned; ``resumed``: the checkpoint a resumed run continues.

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request
    >>> path = Path(tempfile.mkdtemp()) / "d.npy"
    >>> rng = np.random.default_rng(0); X = rng.normal(size=(3000, 3)) / 3
    >>> np.save(path, np.column_stack([X, X @ [0.5, -0.2, 0.1]]))
    >>> res = run_chunked(run_request("pqftl", path, path.parent / "out", chunk_rows=1000,
    ...                               seed=0, fit_intercept=False))
    >>> [r["model"] for r in res.rows], np.load(path.parent / "out" / "iterates.npy").shape
    (['pqftl', 'pqftl, non-private twin', 'predict 0 (trivial)'], (3001, 3))
    """
    _check_chunked(request)
    outputs = _outputs(request)
    total_rows = count_rows(request.data)
    T = min(request.horizon, total_rows) if request.horizon is not None else total_rows
    if T == 0:
        raise fail("data", "hold at least one row", str(request.data))
    out, keeper = request.out, ChunkCheckpoints(request, T, total_rows, resumed)
    with staged_output(out, replace=request.replace, run_id=request.run_id,  # whole, or not
                       then=(lambda: remove_checkpoint(out)) if keeper.every else None
                       ) as stage:
        learned = _learn_chunks(request, keeper, stage, outputs, progress)
        keeper.publish_into(stage)
        rows = _rows(request, learned, T, outputs)
        figures = [stage / "loss.png"]
        curves = {r["model"]: (learned.marks[:len(t.curve)], np.array(t.curve)) for r, t in
                  zip(rows, [*learned.tallies.values(), learned.zero], strict=False)}
        plot_curves(curves, figures[0], ylabel="mean loss up to t",
                    title=f"Running mean loss, {request.learner} on {learned.name}, T={T}")
        notes = _notes(request, learned, T, total_rows)
        report = write_report(stage, _report_info(request, learned, T, total_rows, notes),
                              rows, figures, out_name=out.name)
    return ExperimentResult(f"run_{request.learner}", rows, out / report.name,
                            out / "losses.csv", [out / f.name for f in figures], notes,
                            learned.labels)


def _check_chunked(request: RunRequest) -> None:
    """Refuse what a chunked run cannot do (one line naming the argument, before anything
    is read)."""
    data = request.data
    if not isinstance(data, (str, Path)) or str(data) == "-" or not Path(data).is_file():
        raise fail("data", "be a file for a chunked run (standard input and named data sets "
                   "are read whole)", data)
    for name, value, why in (
            ("normalize", request.normalize != "clip", "standardize and private read the "
             "whole file first"),
            ("x_bound", any(request.auto), "bounds estimated privately read the whole file "
             "first"),
            ("test_fraction", request.test_fraction is not None, "a held-out split needs "
             "the whole file")):
        if value:
            raise fail(name, f"be left unset with chunk_rows ({why})", getattr(request, name))


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


def _outputs(request: RunRequest) -> int:
    """K of a chunked run: the declared ``outputs`` (1: labels +-1), checked before any
    row is read; only a multi-class learner takes K > 2."""
    options = request.options
    k = (options or {}).get("outputs", 1) if request.classification else 1
    if k == 2:
        raise fail("options", "leave outputs unset for two classes (coded -1 / +1 or 0 / 1)",
                   options)
    if k != 1:
        k = check_int("outputs", k, low=3)
        scores.class_options(request.learner, np.zeros((0, k)), options, request.calibration)
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


@dataclass
class _Learned:
    """What the chunks left: the learners and their running tallies, predict 0's, the
    rows clipped, the labels' counts (majority class), the stream's name and coding."""

    marks: np.ndarray  # the steps t at which the loss curves are sampled
    zero: _Tally
    labels: str  # how K > 2 classes are coded ("" otherwise)
    models: dict = field(default_factory=dict)
    tallies: dict = field(default_factory=dict)
    clipped: int = 0
    counts: np.ndarray | None = None  # rows of each of K classes
    label_sum: float = 0.0  # of the labels +-1
    name: str = ""
    how: str = ""


def _learn_chunks(request: RunRequest, keeper: ChunkCheckpoints, stage: Path, outputs: int,
                  progress) -> _Learned:
    """Read the first ``keeper.T`` rows chunk by chunk and feed each to the learners
    (their releases and losses written as they come, checkpoints saved when due); a
    resumed run's chunks before its checkpoint are checked, not learned again."""
    T = keeper.T
    learned = keeper.learned
    if learned is None:
        marks = np.unique(np.geomspace(1, T, CURVE_POINTS).astype(int))
        coding = "" if outputs == 1 else (
            f"label {', '.join(f'{k} -> e{k + 1}' for k in range(outputs))} (one-hot rows "
            f"of {outputs} classes)")
        learned = _Learned(marks, _Tally(marks), coding, counts=np.zeros(outputs))
    elif "twin" in learned.models:  # resumed: a restored twin shares its sums again
        share_exact_sums(learned.models["private"], learned.models["twin"])
    done = 0
    # one BLAS thread: a chunk's large products (losses, labels' checks) woke OpenBLAS's
    # second thread, whose spinning cost ~10% of the run's CPU (ridge, d = 10: measured)
    with keeper.writers(stage) as writers, warnings.catch_warnings(), \
            _blas_controller().limit(limits=1, user_api="blas"):
        warnings.simplefilter("ignore", NonPrivateWarning)
        for table, names in iter_table(request.data, request.chunk_rows):
            table = table[:T - done]
            if not keeper.skip(table, done):
                X, y, what, _ = split_label(table, getattr(request.data, "names", names),
                                            target_col=request.target_col)
                y = _labels(y, done, outputs, request.learner) if request.classification \
                    else y - request.y_centre  # a declared range's public shift (0: none)
                X, y, clip = clip_to_bounds(X, y, request.x_bound, request.y_bound)
                if not learned.models:
                    _start(request, learned, X.shape[1], keeper.total_rows, what)
                _learn_chunk(request, learned, writers, X, y, done, T, progress)
                learned.clipped += clip.clipped
                keeper.learned_chunk(table, learned, writers, done + len(y))
            done += len(table)
            if done >= T:
                break
        writers.finish(learned.models["private"].weights)
    return learned


def _start(request: RunRequest, learned: _Learned, dim: int, total_rows: int,
           what: str) -> None:
    """The learner and its twin, made when the first chunk tells the dimension."""
    learned.name = f"{getattr(request.data, 'label', Path(request.data).name)} ({what})"
    learned.how = "; ".join(p for p in (learned.labels, what, request.range_text) if p)
    build = dict(horizon=request.horizon or total_rows, epsilon=request.epsilon,
                 delta=request.delta, counter=request.counter, x_bound=request.x_bound,
                 y_bound=request.y_bound, calibration=request.calibration,
                 options=request.options, **request.features)
    learned.models["private"] = make_learner(request.learner, dim, seed=request.seed, **build)
    if request.baseline:
        learned.models["twin"] = make_learner(request.learner, dim, seed=request.seed, **{
            **build, "epsilon": math.inf, "calibration": "tight"})
        # fed the same rows right after the private learner: it takes their exact sums
        share_exact_sums(learned.models["private"], learned.models["twin"])
    learned.tallies = {k: _Tally(learned.marks) for k in learned.models}


def _learn_chunk(request: RunRequest, learned: _Learned, writers: ChunkWriters, X: np.ndarray,
                 y: np.ndarray, done: int, T: int, progress) -> None:
    """One chunk, rows ``done`` + 1 on, through every learner and predict 0."""
    for key, model in learned.models.items():
        trace = model.run(X, y)
        learned.tallies[key].add(trace.losses, trace.prequential_predictions, y, done)
        if key == "private":
            writers.add(trace, done)
        if progress:
            progress(done + len(y), T, request.learner if key == "private" else
                     "non-private twin")
    private = learned.models["private"]
    learned.zero.add(private._loss_value(zero_point(private), X, y), np.zeros(np.shape(y)),
                     y, done)
    if np.ndim(y) == 2:  # K classes: one-hot rows
        learned.counts += np.bincount(np.argmax(y, axis=1), minlength=len(learned.counts))
    else:
        learned.label_sum += float(np.sum(y))


def _rows(request: RunRequest, learned: _Learned, T: int, outputs: int) -> list[dict]:
    """The result rows: each learner's mean loss (and accuracy), then the trivial ones."""
    rows = []
    for key, m in learned.models.items():
        row = {"model": request.learner if key == "private" else
               f"{request.learner}, non-private twin",
               "guarantee": str(m.privacy), "mean_loss": learned.tallies[key].loss / T}
        if request.classification:
            row["accuracy"] = learned.tallies[key].correct / T
        rows.append(row)
    rows.append({"model": f"predict {request.y_centre:g} (trivial)", "guarantee": "(0, 0)-DP",
                 "mean_loss": learned.zero.loss / T})
    if request.classification:  # the majority class in hindsight: the share of its label
        rows.append({"model": "majority class (trivial)", "guarantee": "(0, 0)-DP",
                     "accuracy": float(learned.counts.max()) / T if outputs > 1
                     else 0.5 + abs(learned.label_sum) / (2 * T)})
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return [{k: r.get(k, math.nan) for k in keys} for r in rows]


def _notes(request: RunRequest, learned: _Learned, T: int, total_rows: int) -> list[str]:
    """What a user must not miss: no regret, the horizon, silence, the seed, clipping."""
    # no row count here: with --by, every key's run then shares the note, printed once
    notes = [f"chunked run in chunks of {request.chunk_rows} rows: the regret is not "
             "computed (its comparator, the best fixed point in hindsight, needs the whole "
             "stream); mean loss beside predicting 0 instead"]
    horizon_note = scores.horizon_note(request.horizon or total_rows, T, total_rows, 0)
    notes += [n for n in (horizon_note, scores.silent_note(
        request.learner, learned.tallies["private"].spoke, False)) if n]
    if learned.models["private"].privacy.seeded:
        notes.append(scores.SEEDED_NOTE)
    clipped = learned.clipped
    if clipped > 0.05 * T:  # no suggestion: it would need every raw row at hand
        c, h = request.y_centre, request.y_bound
        y_part = "" if request.classification else f", y in {interval_text(c, h)}" \
            if c else f", |y| <= {h:g}"
        notes.append(f"{clipped} of {T} rows ({100 * clipped / T:.0f}%) were clipped to the "
                     f"declared bounds ||x|| <= {request.x_bound:g}{y_part}")
    return notes


def _report_info(request: RunRequest, learned: _Learned, T: int, total_rows: int,
                 notes: list[str]) -> dict:
    """What :func:`~dpol.experiments.runs.report.write_report` says of a chunked run."""
    model = learned.models["private"]
    stream = Stream(np.empty((0, 0)), range(T), learned.name, learned.how,
                    n_clipped=learned.clipped)
    return {"learner": request.learner, "spec": request.spec, "model": model,
            "stream": stream, "n_rows": total_rows, "available": total_rows,
            "horizon": request.horizon or total_rows, "counter": request.counter,
            "x_bound": request.x_bound, "y_bound": request.y_bound,
            "y_centre": request.y_centre,
            "options": request.options or {}, "n_clipped": model.n_clipped_,
            "data": getattr(request.data, "label", request.data), "command": request.command,
            "test": None, "notes": notes,
            "guarantee": model.privacy, "epsilon": request.epsilon, "split": None,
            "losses": "per-step loss and prediction", "run_id": request.run_id,
            "checkpoint_every": request.checkpoint_every}
