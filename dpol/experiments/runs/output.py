"""Where ``dpol run`` puts what it publishes, and what it keeps apart (layer L5).

**The output folder holds one run, whole.** Every output is written into a fresh staging
folder beside ``--out`` (``.NAME.staging-PID-XXXX``), which is renamed into place once
the last file is written: a reader sees all of a run's outputs or none of them, never a
report beside the iterates of another run. A folder that already holds files is refused
unless the caller says to replace it (then the old run is moved aside, the new one
renamed in, and the old one deleted). Staging folders of a killed process are removed by
the next run into the same folder.

**Checkpoints sit beside it, never inside** (``NAME.checkpoint``, owner-only
permissions): a checkpoint holds the un-noised sums and the noise generators' states, so
it can de-noise every release, and must be kept like the raw data, not published with
the outputs (:mod:`dpol.experiments.runs.checkpoint`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dpol._validation import fail
from dpol.experiments.runs.checkpoint import CHECKPOINT, PICKLED, _umask

__all__ = ["CHECKPOINT_SUFFIX", "RUN_FILE", "check_out", "checkpoint_folder",
           "find_checkpoint", "remove_checkpoint", "run_id_of", "staged_output",
           "write_run_file"]

#: the checkpoint folder of ``--out NAME`` is ``NAME`` + this, beside it
CHECKPOINT_SUFFIX = ".checkpoint"
#: the run's summary in its output folder; its ``run_id`` tells a resumed run its own
#: earlier outputs apart from another run's
RUN_FILE = "run.json"


def checkpoint_folder(out: str | Path) -> Path:
    """The checkpoint folder of the output folder ``out``: beside it, not inside.

    Examples
    --------
    >>> checkpoint_folder("results/run").as_posix()
    'results/run.checkpoint'
    """
    out = Path(out)
    if out.name in ("", ".."):  # "--out ." names the current folder
        out = out.resolve()
    return out.parent / f"{out.name}{CHECKPOINT_SUFFIX}"


def find_checkpoint(folder: str | Path) -> tuple[Path, Path]:
    """(checkpoint folder, output folder) of ``folder``: a run's output folder (its
    checkpoint beside it) or the checkpoint folder itself.

    Examples
    --------
    >>> find_checkpoint("nowhere/run")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: resume must name a run's output folder with its
    checkpoint beside it (nowhere/run.checkpoint), or that checkpoint folder; got
    'nowhere/run'
    """
    folder = Path(folder)
    beside = checkpoint_folder(folder)
    if folder.name.endswith(CHECKPOINT_SUFFIX) and not (beside / CHECKPOINT).is_file():
        return folder, folder.with_name(folder.name[:-len(CHECKPOINT_SUFFIX)])
    if (beside / CHECKPOINT).is_file() or (folder / PICKLED).is_file():
        return (beside if (beside / CHECKPOINT).is_file() else folder), folder
    if run_id_of(folder) is not None:
        raise fail("resume", "name an unfinished run: this one is published whole, with no "
                   "checkpoint left to resume", str(folder))
    raise fail("resume", f"name a run's output folder with its checkpoint beside it "
               f"({beside}), or that checkpoint folder", str(folder))


def remove_checkpoint(out: str | Path) -> None:
    """Delete the checkpoint folder of ``out`` (its run is published: nothing to resume),
    and say so if it could not be deleted: it can de-noise the releases."""
    folder = checkpoint_folder(out)
    shutil.rmtree(folder, ignore_errors=True)
    if folder.exists():
        warnings.warn(f"the checkpoint folder {folder} could not be deleted: it can remove "
                      "the noise from every release, delete it", UserWarning, stacklevel=2)


def write_run_file(folder: Path, summary: dict) -> None:
    """``run.json``: the run's id, guarantee and settings, for programs that read runs."""
    (Path(folder) / RUN_FILE).write_text(json.dumps(summary, indent=2, default=str) + "\n")


def run_id_of(out: Path) -> str | None:
    """The ``run_id`` of the run published in ``out`` (None if none can be read)."""
    try:
        return json.loads((Path(out) / RUN_FILE).read_text()).get("run_id")
    except (OSError, ValueError, AttributeError):
        return None


def check_out(out: str | Path, *, replace: bool, run_id: str | None = None) -> None:
    """Refuse an ``out`` that is a file, or a folder holding files, unless ``replace``
    or they are the published outputs of the run ``run_id`` (a resumed run's own). A run
    killed while it replaced ``out`` is put back first."""
    out = Path(out)
    if out.absolute().parent.is_dir():
        _remove_stale(out.absolute().parent, out.name)
    for path, name in ((out, "out"), (checkpoint_folder(out), "checkpoint folder")):
        if path.is_symlink():  # renamed into place (out), or private (its checkpoint)
            raise fail(name, "not be a symbolic link (name the folder itself)", str(path))
    if out.exists() and not out.is_dir():
        raise fail("out", "name a folder (or one to create)", str(out))
    if (not replace and out.is_dir() and any(out.iterdir())
            and (run_id is None or run_id_of(out) != run_id)):
        raise fail("out", "be a new or empty folder: it holds the files of another run "
                   "(--replace replaces them; or choose another --out)", str(out))


@contextmanager
def staged_output(out: str | Path, *, replace: bool, run_id: str | None = None,
                  then: Callable[[], None] | None = None) -> Iterator[Path]:
    """A fresh folder to write a run's outputs into, renamed to ``out`` when the block
    ends; removed, with nothing published, if it raises (Ctrl-C included). ``then``
    runs right after the rename (removing the run's checkpoint); Ctrl-C is ignored
    from the rename to its end, so a run is either unpublished or published whole.

    Examples
    --------
    >>> out = Path(tempfile.mkdtemp()) / "run"
    >>> with staged_output(out, replace=False) as stage:
    ...     _ = (stage / "a.txt").write_text("whole")
    ...     out.exists()
    False
    >>> sorted(p.name for p in out.iterdir())
    ['a.txt']
    >>> try:
    ...     with staged_output(out, replace=True) as stage:
    ...         _ = (stage / "b.txt").write_text("half")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> sorted(p.name for p in out.iterdir()), sorted(p.name for p in out.parent.iterdir())
    (['a.txt'], ['run'])
    """
    out = Path(out)
    check_out(out, replace=replace, run_id=run_id)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-{os.getpid()}-", dir=parent))
    try:
        yield stage
        _sync(stage)
        os.chmod(stage, 0o777 & ~_umask())  # mkdtemp's 0700 -> what mkdir would make
        with _uninterrupted():
            _publish(stage, out, replace=replace, run_id=run_id)
            if then is not None:
                then()
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _publish(stage: Path, out: Path, *, replace: bool, run_id: str | None) -> None:
    check_out(out, replace=replace, run_id=run_id)  # again: it may have changed since
    if out.is_dir() and not any(out.iterdir()):
        out.rmdir()
    if not out.exists():
        os.rename(stage, out)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.replaced-{os.getpid()}-",
                                  dir=stage.parent))
    os.rename(out, aside / out.name)  # the old run, whole, until the new one is in place
    try:
        os.rename(stage, out)
    except BaseException:
        os.rename(aside / out.name, out)
        raise
    shutil.rmtree(aside, ignore_errors=True)


@contextmanager
def _uninterrupted() -> Iterator[None]:
    """Ctrl-C ignored in the block (main thread only: where Python takes the signal)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _sync(folder: Path) -> None:
    """Every file of ``folder`` on disk before a rename makes them visible."""
    for path in folder.iterdir():
        if path.is_file():
            with open(path, "rb") as fh:
                os.fsync(fh.fileno())


def _remove_stale(parent: Path, name: str) -> None:
    """Staging and replaced folders of ``name`` whose process is gone (killed -9); a
    replaced run killed before its successor was renamed in goes back into place."""
    for kind in ("staging", "replaced"):
        for path in parent.glob(f".{name}.{kind}-*-*"):
            pid = path.name[len(f".{name}.{kind}-"):].split("-")[0]
            if pid.isdigit() and not _alive(int(pid)):
                if kind == "replaced" and (path / name).is_dir() and not (
                        parent / name).exists():
                    os.rename(path / name, parent / name)
                shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
