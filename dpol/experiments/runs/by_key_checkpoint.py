"""Checkpoints of ``dpol run --by KEY --checkpoint-every M`` (layer L5).

A run by key is many ordinary runs, so its checkpoints are theirs
(:mod:`dpol.experiments.runs.checkpoint`: signed, owner-only, no code run when read), kept
in the run's checkpoint folder ``OUT.checkpoint`` beside the output folder:

* ``checkpoint.npz``: the run's **manifest**, its arguments and a hash of the whole table,
  written before any key runs: ``--resume OUT`` reads them back and refuses another file
  or other arguments in one line.
* ``keys/KEY``, ``keys/KEY.checkpoint``: each key's run, with that key's folder as its
  output folder. The key's checkpoint is **kept** after its outputs are published there,
  so a key killed at any point after its last release is resumed from it, never run
  again: resuming a finished key re-publishes the same outputs and learns no row.
* ``keys/KEY.done``: a signed record of a finished key's result rows and notes, written
  after its outputs: a resumed run takes that key as it is, reading no checkpoint of it.

Resuming, the keys with a record are done; the others run from their checkpoint (the
releases so far, and the noise generators' states: no released noise is drawn again) or
from the start. Each key's seed is a function of the run's seed and the key's rank, and a
key's slices depend on its rows only, so a resumed run publishes the files of an
uninterrupted one, byte for byte (each key's ``run.json`` names its own run id). The
whole folder is deleted once the outputs are published. The key runs write into this
folder themselves: on Ray or Dask across machines it must be on a file system that every
worker shares with the driver.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from dpol._validation import fail
from dpol.experiments.runs.checkpoint import (
    CHECKPOINT,
    check_resumed,
    load_checkpoint,
    save_checkpoint,
)
from dpol.experiments.runs.output import checkpoint_folder
from dpol.experiments.runs.pipeline import run_learner

__all__ = ["KEYS", "finished_keys", "kept_line", "run_key_checkpointed", "start_manifest"]

#: the sub-folder of the checkpoint folder holding each key's run
KEYS = "keys"
#: suffix of a finished key's record beside its folder
_DONE = ".done"


def start_manifest(out: Path, args: dict, fingerprint: str, resumed: dict | None) -> Path:
    """The folder of the keys' runs; a fresh run saves its manifest first (a resumed one
    checks its arguments and rows against it, refusing in one line)."""
    folder = checkpoint_folder(out)
    if resumed is None:
        shutil.rmtree(folder / KEYS, ignore_errors=True)  # a run killed before its manifest
        save_checkpoint(folder, {"args": args, "done": {}, "parts": {}, "models": {},
                                 "fingerprint": fingerprint, "by_key": True})
    else:
        check_resumed(args, resumed)
        if resumed["fingerprint"] != fingerprint:
            raise fail("resume", "find the rows the checkpointed run read (the data changed "
                       "since)", str(out))
    return folder / KEYS


def finished_keys(keys: Path, folders: list[str]) -> dict[int, tuple[list, list]]:
    """The keys (by rank) whose runs are finished: their result rows and notes."""
    done = {}
    for i, name in enumerate(folders):
        record = keys / f"{name}{_DONE}"
        if (record / CHECKPOINT).is_file():
            saved = load_checkpoint(record)
            done[i] = saved["rows"], saved["notes"]
    return done


def run_key_checkpointed(learner: str, table, args: dict, seed: object, where: str
                         ) -> tuple[list, list, None]:
    """One key's run (in a worker) into the folder ``where``, checkpointed there and
    resumed from its checkpoint if it has one; its rows and notes (its files stay in
    ``where``: None)."""
    where = Path(where)
    kept = checkpoint_folder(where)
    if (kept / CHECKPOINT).is_file():
        saved = load_checkpoint(kept)
        # the key's rows come from the checked file: its checkpoint holds only their name
        result = run_learner(**{**saved["args"], "data": table, "out_dir": where},
                             _resumed=saved, _keep_checkpoint=True)
    else:  # a chunked key published before its record (its checkpoint then removed) or
        # killed before its first checkpoint: run again, from its start
        shutil.rmtree(where, ignore_errors=True)
        result = run_learner(learner, table, where, seed=seed, _keep_checkpoint=True, **args)
    save_checkpoint(where.parent / f"{where.name}{_DONE}", {
        "args": {}, "done": {}, "parts": {}, "models": {}, "fingerprint": "",
        "rows": result.rows, "notes": result.notes})
    return result.rows, result.notes, None


def kept_line(folder: Path) -> str:
    """What the checkpoint folder of a run by key keeps, for the line a Ctrl-C prints."""
    done = len(list((folder / KEYS).glob(f"*{_DONE}")))
    return f"the runs of the keys finished ({done}) and the progress of the others"
