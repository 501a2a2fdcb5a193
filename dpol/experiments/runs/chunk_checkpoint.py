"""Checkpoints of a chunked run, ``dpol run FILE --chunk-rows N --checkpoint-every M`` (L5).

A chunked run (:mod:`.chunked`) holds one chunk in memory and what it sums over the
stream, so that is what its checkpoint holds: the learners (the private one and its
non-private twin, their whole state as in a whole-file checkpoint: :mod:`.checkpoint`),
the rows learned, the running loss and accuracy sums with the points of the loss curves
sampled so far, the rows clipped, the labels' counts, and a SHA-256 of the rows read so
far. No row and no release: the releases (``iterates.npy``) and per-step losses
(``losses.csv``) are written as they come into the checkpoint folder itself (owner-only,
beside the outputs), and each checkpoint records their length and SHA-256 when it was
saved; they are linked into the outputs when the run is published. A chunked run has no
private bounds or scaling to keep: it refuses them. Checkpoints fall between chunks:
after the first chunk that ends ``M`` rows or more after the last checkpoint, and after
the last chunk.

A resumed run reads the file again from its start in the same chunks and hashes the rows
the checkpoint holds without learning them (no learner sees a row twice); a file whose
rows or length changed since, or outputs changed since, is refused with one line. Then
both output files are cut back to the lengths the checkpoint recorded, and it goes on.

**Why a resumed run cannot leak.** The rows written after the last checkpoint (by a run
killed before the next one) are cut off and drawn again from the saved noise generator:
the same values for generator noise; for secure noise fresh ones, for steps never
published, which sat only in the checkpoint folder, whose checkpoint removes the noise
from every release anyway. So the outputs never show a step with two noisy values, and
no step a checkpoint holds is drawn again. A Ctrl-C cuts the files back at once, and a
run stopped before its first checkpoint leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from pathlib import Path

import numpy as np

from dpol._validation import fail
from dpol.experiments.runs.checkpoint import data_fingerprint, private_folder, save_checkpoint
from dpol.experiments.runs.output import checkpoint_folder
from dpol.experiments.runs.report import prediction_heads
from dpol.experiments.runs.request import RunRequest

__all__ = ["ChunkCheckpoints", "ChunkWriters", "OutputFile"]

#: the files a chunked run writes as the chunks come, then publishes
ITERATES, LOSSES = "iterates.npy", "losses.csv"
#: rows of losses.csv formatted at once (the format's arguments are Python floats)
_CSV_BLOCK = 1 << 15
#: bytes read at once when a resumed run hashes what it wrote before
_BLOCK = 1 << 24


class OutputFile:
    """A file written by appends whose length (and SHA-256, ``hashed``) is known at every
    checkpoint; ``mark``, a checkpoint's record of it, reopens it for a resumed run:
    checked, then cut back to that length.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "f.bin"
    >>> f = OutputFile(path, hashed=True)
    >>> f.write(b"kept"); mark = f.mark(); f.write(b" lost"); f.close()
    >>> g = OutputFile(path, mark=mark); g.write(b"!"); g.close()
    >>> path.read_bytes()
    b'kept!'
    """

    def __init__(self, path: Path, hashed: bool = False, mark: dict | None = None) -> None:
        self.path, self.size = Path(path), 0
        self.hash = hashlib.sha256() if hashed or mark is not None else None
        if mark is None:
            self.fh = _open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "wb")
            return
        try:
            self.fh = _open(self.path, os.O_RDWR, "r+b")
        except FileNotFoundError:
            raise fail("resume", f"find the {self.path.name} the checkpointed run wrote "
                       "beside its checkpoint (it was deleted)", str(self.path.parent)) from None
        while self.size < mark["bytes"] and (block := self.fh.read(
                min(_BLOCK, mark["bytes"] - self.size))):
            self.hash.update(block)
            self.size += len(block)
        if self.size != mark["bytes"] or self.hash.hexdigest() != mark["sha256"]:
            self.fh.close()
            raise fail("resume", f"find the {self.path.name} the checkpointed run wrote as "
                       "its checkpoint left it (it was cut or changed since)",
                       str(self.path.parent))
        self.fh.truncate(self.size)  # the rows after the checkpoint: drawn again

    def write(self, data: bytes) -> None:
        self.fh.write(data)
        self.size += len(data)
        if self.hash is not None:
            self.hash.update(data)

    def mark(self) -> dict:
        """Its length and SHA-256 so far, on disk (what a checkpoint records)."""
        self.fh.flush()
        os.fsync(self.fh.fileno())
        return {"bytes": self.size, "sha256": self.hash.hexdigest()}

    def close(self) -> None:
        self.fh.close()


def _open(path: Path, flags: int, mode: str):
    """``open(path, mode)`` that refuses a symbolic link (which could point the writes, or
    a resumed run's cut, at another file)."""
    return os.fdopen(os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o666), mode)


class ChunkWriters:
    """``iterates.npy`` and ``losses.csv`` written as the chunks come into ``folder`` (the
    staging folder, or with checkpoints the checkpoint folder), ``T`` rows each;
    ``hashed``: their marks kept for checkpoints; ``marks``: a resumed run's, whose files
    are reopened at the checkpoint. On an error (Ctrl-C included) the files are cut back
    to the last checkpoint, or removed if none was saved."""

    def __init__(self, folder: Path, T: int, hashed: bool = False,
                 marks: dict | None = None) -> None:
        self.folder, self.T, self.hashed, self.saved = Path(folder), T, hashed, marks
        self.npy = self.csv = None
        if marks is not None:
            self.npy, self.csv = (OutputFile(self.folder / n, mark=marks[n])
                                  for n in (ITERATES, LOSSES))

    def __enter__(self) -> ChunkWriters:
        return self

    def __exit__(self, kind, value, tb) -> None:
        files = [f for f in (self.npy, self.csv) if f is not None]
        for f in files:
            if kind is not None and self.hashed and self.saved is not None:
                f.fh.truncate(self.saved[f.path.name]["bytes"])
            f.close()
            if kind is not None and self.hashed and self.saved is None:
                f.path.unlink(missing_ok=True)
        if kind is not None and self.hashed and self.saved is None:
            try:  # the folder this run made for them, if nothing else is in it
                self.folder.rmdir()
            except OSError:
                pass

    def marks(self) -> dict:
        """The files' lengths and hashes, on disk: a checkpoint's record of them (kept in
        ``saved`` once that checkpoint is written)."""
        return {ITERATES: self.npy.mark(), LOSSES: self.csv.mark()}

    def add(self, trace, start: int) -> None:
        """The releases and losses of rows ``start`` + 1 on."""
        if self.npy is None:  # the width is the learner's release's
            self.npy, self.csv = (OutputFile(self.folder / n, self.hashed)
                                  for n in (ITERATES, LOSSES))
            header = io.BytesIO()
            np.lib.format.write_array_header_1_0(header, {
                "descr": np.lib.format.dtype_to_descr(np.dtype(np.float64)),
                "fortran_order": False, "shape": (self.T + 1, *trace.weights.shape[1:])})
            self.npy.write(header.getvalue())
            self.csv.write((",".join(["t", "loss", *prediction_heads(trace.predictions)])
                            + "\n").encode())
        self.npy.write(np.ascontiguousarray(trace.weights, dtype=np.float64).tobytes())
        n = len(trace.losses)
        pred = trace.predictions.reshape(n, -1)  # K outputs: K a row
        # one %-format per block of rows, not a join per row (measured at K = 3: 2.0 against
        # 4.6 us a row): "%.10g" % v is f"{v:.10g}", and "%d" of a float t < 2^53 is str(t)
        line = "%d" + ",%.10g" * (1 + pred.shape[1]) + "\n"
        for lo in range(0, n, _CSV_BLOCK):
            hi = min(n, lo + _CSV_BLOCK)
            table = np.column_stack([np.arange(start + lo + 1, start + hi + 1, dtype=float),
                                     trace.losses[lo:hi], pred[lo:hi]])
            self.csv.write((line * (hi - lo) % tuple(table.ravel().tolist())).encode())

    def finish(self, last: np.ndarray) -> None:
        """The release after the last step."""
        self.npy.write(np.asarray(last, dtype=np.float64).tobytes())


class ChunkCheckpoints:
    """When a chunked run saves its state, and what a resumed one checks before it
    learns a row: ``resumed``, the checkpoint it continues (the same file, ``T`` rows
    of ``total_rows``, or refused). Without ``request.checkpoint_every`` it saves
    nothing and hashes nothing."""

    def __init__(self, request: RunRequest, T: int, total_rows: int,
                 resumed: dict | None = None) -> None:
        self.request, self.T, self.total_rows = request, T, total_rows
        self.every = request.checkpoint_every
        self.folder = checkpoint_folder(request.out) if self.every else None
        self.digest = hashlib.sha256() if self.every else None
        self.done = self.saved = 0
        self.state = self.fingerprint = None
        if resumed is not None:
            state = resumed.get("chunked")
            if state is None:
                raise fail("resume", "hold a checkpoint of a chunked run (this one's run read "
                           "the file whole: resume it without chunk_rows)", str(self.folder))
            if (state["rows"], state["T"]) != (total_rows, T):
                raise fail("resume", f"find the rows the checkpointed run read (the data "
                           f"changed since: {state['rows']} rows then, {total_rows} now)",
                           str(request.data))
            self.state, self.fingerprint = state, resumed["fingerprint"]
            self.done = self.saved = state["done"]

    @property
    def learned(self):
        """The resumed run's learners and running sums (None for a new run)."""
        return None if self.state is None else self.state["learned"]

    def writers(self, stage: Path) -> ChunkWriters:
        """The output files: in ``stage``, or with checkpoints in the checkpoint folder."""
        if self.folder is None:
            return ChunkWriters(stage, self.T)
        return ChunkWriters(private_folder(self.folder), self.T, hashed=True,
                            marks=None if self.state is None else self.state["outputs"])

    def skip(self, table: np.ndarray, seen: int) -> bool:
        """Whether ``table``, the rows after the first ``seen``, is held by the checkpoint
        resumed: then hashed to check it is the same, never learned again."""
        if seen >= self.done:
            return False
        data_fingerprint(table, digest=self.digest)
        if seen + len(table) >= self.done and (
                seen + len(table) != self.done
                or self.digest.hexdigest() != self.fingerprint):
            raise fail("resume", "find the rows the checkpointed run read (the data changed "
                       "since)", str(self.request.data))
        return True

    def learned_chunk(self, table: np.ndarray, learned, writers: ChunkWriters,
                      seen: int) -> None:
        """After the chunk ``table`` was learned (``seen`` rows in all): hash it and, when
        one is due, save a checkpoint."""
        if self.every is None:
            return
        data_fingerprint(table, digest=self.digest)
        if seen - self.saved >= self.every or seen == self.T:
            request, marks = self.request, writers.marks()
            save_checkpoint(self.folder, {
                "args": request.args, "run_id": request.run_id, "estimate": None,
                "fingerprint": self.digest.hexdigest(), "parts": {},
                "done": dict.fromkeys(learned.models, seen), "models": learned.models,
                "chunked": {"done": seen, "rows": self.total_rows, "T": self.T,
                            "chunk_rows": request.chunk_rows, "outputs": marks,
                            "learned": learned}})
            self.saved, writers.saved = seen, marks  # what an error now cuts back to

    def publish_into(self, stage: Path) -> None:
        """The output files, linked (or copied) from the checkpoint folder into ``stage``."""
        if self.folder is None:
            return
        for name in (ITERATES, LOSSES):
            try:
                os.link(self.folder / name, stage / name)
            except OSError:  # a file system without hard links
                shutil.copyfile(self.folder / name, stage / name)
