"""Checkpoints ``dpol run`` resumes from, and files written whole or not at all (L5).

A checkpoint holds, in one file, everything a run needs to go on: its arguments, the
learners (their whole state: counters, **the un-noised sums and the noise generators'
states**, post-processing), the releases made so far, and any bound or scaling released
privately before the stream. Whoever reads it can subtract the noise from every release,
so it lives in its own folder beside the outputs (never inside what a user publishes),
made readable by its owner only (0700 folder, 0600 file; a folder that is a symbolic
link is refused), and must be kept like the raw data. Its format
(:mod:`dpol._state_file`) runs no code when read, and every checkpoint is signed with
an HMAC-SHA256 under a key of the user's (:func:`signing_key`): a resumed run reads
only checkpoints this account's dpol wrote, so a crafted one (which could steer dpol's
code, or set a noise scale of 0 under the same claim) is refused unread, and so is a
truncated, altered or foreign file, with one line.

**Why a resumed run cannot leak.** Releases become visible only inside a checkpoint or
in the final outputs, and a checkpoint stores the releases together with the learner
state that produced them; the last one is saved, with every release, before any output
is published. A crash after a release was computed but before its checkpoint was
written loses that release unseen; resuming redraws it from the saved noise generator
(the same value for generator noise; fresh OS randomness for secure noise, for a step
nobody saw). So no step is ever visible with two different noisy values (which would let
an observer average the noise away), and the private estimates made before the stream
are read back from the checkpoint, never released a second time.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

import dpol
from dpol._state_file import StateFileError, read_state, write_state
from dpol._validation import fail
from dpol.learners import Trace

__all__ = ["CHECKPOINT", "PICKLED", "atomic_path", "atomic_write", "check_resumed",
           "data_fingerprint", "join_traces", "load_checkpoint", "private_folder",
           "save_checkpoint", "stream_slices"]

#: rows per call of ``run`` between two progress updates (at least; ~100 updates a run)
CHUNK_ROWS = 1024

#: the checkpoint's file name in its folder
CHECKPOINT = "checkpoint.npz"
#: the pickled checkpoints of earlier versions, refused unread (unpickling runs code)
PICKLED = "checkpoint.pkl"
_VERSION = 2


@contextmanager
def atomic_path(path: str | Path, mode: int | None = None) -> Iterator[Path]:
    """A temporary file beside ``path`` to write into; renamed to ``path`` when the block
    ends, removed if it raises (Ctrl-C included). For writers that keep a file open
    across many steps; :func:`atomic_write` for one call. ``mode``: the file's
    permissions (default: what ``open`` would give under the umask).

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "b.txt"
    >>> with atomic_path(out) as tmp:
    ...     _ = tmp.write_text("whole")
    ...     out.exists()
    False
    >>> out.read_text()
    'whole'
    """
    path = Path(path)
    # the final suffix kept last: writers that read the format from it (savefig) still can
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".partial{path.suffix}",
                                dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:  # on disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask() if mode is None else mode)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, write: Callable[[Path], object],
                 mode: int | None = None) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "a.txt"
    >>> atomic_write(out, lambda p: p.write_text("whole")).read_text()
    'whole'
    >>> def broken(p):
    ...     p.write_text("half")
    ...     raise KeyboardInterrupt
    >>> try:
    ...     atomic_write(out, broken)
    ... except KeyboardInterrupt:
    ...     pass
    >>> out.read_text(), sorted(q.name for q in out.parent.iterdir())  # old file, no debris
    ('whole', ['a.txt'])
    """
    with atomic_path(path, mode) as tmp:
        write(tmp)
    return Path(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def data_fingerprint(*arrays: np.ndarray, digest=None) -> str:
    """A SHA-256 of the arrays' shapes and bytes: a resumed run checks its data is the same.
    ``digest``: a running ``hashlib.sha256()`` to update (a chunked run's, chunk after
    chunk), whose hex digest so far is returned.

    Examples
    --------
    >>> a, b = np.zeros((2, 3)), np.ones((1, 3))
    >>> running = hashlib.sha256()
    >>> _ = data_fingerprint(a, digest=running)
    >>> data_fingerprint(b, digest=running) == data_fingerprint(a, b)
    True
    """
    digest = hashlib.sha256() if digest is None else digest
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(repr((a.shape, a.dtype.str)).encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


#: the member of a checkpoint archive that holds its signature
_SIGNATURE = "signature"


def signing_key() -> bytes:
    """This user's key for signing checkpoints: 32 random bytes kept in the file named
    by ``DPOL_KEY_FILE``, else ``$XDG_CONFIG_HOME/dpol/checkpoint.key`` (default
    ``~/.config``), made owner-only on first use. Keep it like the checkpoints."""
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    path = Path(os.environ.get("DPOL_KEY_FILE") or config / "dpol" / "checkpoint.key")
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent)  # 0600, whole before it is linked
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        try:
            os.link(tmp, path)  # made once: a process that lost the race reads the winner's
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    key = path.read_bytes()
    if len(key) < 32:
        raise fail("DPOL_KEY_FILE", "hold a key of 32 bytes or more", str(path))
    return key


def _mac(archive: zipfile.ZipFile, key: bytes) -> bytes:
    """HMAC-SHA256 of every member of the archive but the signature, names included."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    for info in archive.infolist():
        if info.filename != _SIGNATURE:
            mac.update(info.filename.encode() + b"\0")
            with archive.open(info) as fh:
                for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    mac.update(chunk)
    return mac.digest()


def _private_folder(folder: Path) -> Path:
    if folder.is_symlink():  # its files could land, and stay, wherever it points
        raise fail("checkpoint folder", "not be a symbolic link (checkpoints de-noise the "
                   "releases: they stay in a folder of their own)", str(folder))
    return folder


def private_folder(folder: str | Path) -> Path:
    """The checkpoint folder ``folder``, made owner-only (0700, also when it existed: what
    it holds de-noises the releases); a symbolic link is refused."""
    folder = _private_folder(Path(folder))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def save_checkpoint(folder: str | Path, payload: dict) -> Path:
    """Write ``payload`` as the checkpoint of ``folder`` (made owner-only), atomically.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "run.checkpoint"
    >>> payload = {"args": {}, "done": {"private": 3}, "parts": {}, "models": {},
    ...            "fingerprint": ""}
    >>> path = save_checkpoint(folder, payload)
    >>> oct(folder.stat().st_mode & 0o777), oct(path.stat().st_mode & 0o777)
    ('0o700', '0o600')
    >>> load_checkpoint(folder)["done"]
    {'private': 3}
    """
    folder = private_folder(folder)
    for debris in folder.glob(f".{CHECKPOINT}.*.partial*"):  # a killed writer's
        debris.unlink(missing_ok=True)
    body = {"version": _VERSION, "dpol": dpol.__version__, **payload}
    key = signing_key()

    def write(tmp: Path) -> None:
        write_state(tmp, body)
        with zipfile.ZipFile(tmp, "a") as archive:
            archive.writestr(_SIGNATURE, _mac(archive, key))

    return atomic_write(folder / CHECKPOINT, write, mode=0o600)


def load_checkpoint(folder: str | Path) -> dict:
    """The checkpoint of ``folder`` (written by :func:`save_checkpoint`); one clear
    ``InvalidInputError`` for a folder without one, a pickled checkpoint of an earlier
    version (never unpickled), a truncated, altered or foreign file, or another version's.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / CHECKPOINT).write_bytes(b"PK truncated")
    >>> load_checkpoint(folder)  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: resume must hold a checkpoint.npz that dpol wrote, whole
    (not an npz archive); got '...'
    """
    folder = _private_folder(Path(folder))
    path = folder / CHECKPOINT
    if not path.is_file():
        if (folder / PICKLED).is_file():
            raise fail("resume", f"hold a checkpoint of this dpol version ({PICKLED} is an "
                       "earlier version's pickle, which is never loaded: unpickling can run "
                       "code; run again)", str(folder))
        raise fail("resume", f"be a folder holding a {CHECKPOINT} written by dpol run "
                   "--checkpoint-every", str(folder))
    try:
        with zipfile.ZipFile(path) as archive:  # the signature before anything is read
            names = archive.namelist()
            signed = _SIGNATURE in names and hmac.compare_digest(
                archive.read(_SIGNATURE), _mac(archive, signing_key()))
    except (OSError, zipfile.BadZipFile, EOFError, ValueError):
        signed = None
    if signed is False:
        raise fail("resume", f"hold a {CHECKPOINT} signed by this account's dpol (its "
                   "signature does not match the key: written by another user or machine, "
                   "or altered; it is not read)", str(folder))
    try:
        if signed is None:
            raise StateFileError("not an npz archive")
        body = read_state(path)
    except StateFileError as exc:
        raise fail("resume", f"hold a {CHECKPOINT} that dpol wrote, whole ({exc})",
                   str(folder)) from None
    if not isinstance(body, dict) or body.get("version") != _VERSION or not {
            "args", "done", "parts", "models", "fingerprint"} <= set(body):
        raise fail("resume", f"hold a {CHECKPOINT} of dpol run in this version's format",
                   str(folder))
    if body.get("dpol") != dpol.__version__:
        raise fail("resume", f"hold a checkpoint of this dpol version ({dpol.__version__}; "
                   f"it was written by {body.get('dpol')}): its learners' state may differ",
                   str(folder))
    return body


def check_resumed(args: dict, resumed: dict | None) -> None:
    """Refuse to continue the checkpoint ``resumed`` with arguments ``args`` other than the
    ones its run was given (the file, chunk size, options, ...), naming the first that
    differs: a resumed run goes on with its own settings, never silently others.

    Examples
    --------
    >>> check_resumed({"chunk_rows": 500}, {"args": {"chunk_rows": 1000}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: chunk_rows must be 1000, as in the checkpoint ...; got 500
    """
    if resumed is None:
        return
    for name, value in args.items():
        saved = resumed["args"].get(name, value)
        if name != "out_dir" and saved != value:  # out: however the resume spelt it
            if name == "seed":  # never printed: it would let anyone remove the noise
                raise fail("seed", "be the seed of the checkpoint resumed", "another seed")
            raise fail(name, f"be {saved!r}, as in the checkpoint resumed (a resumed run "
                       "goes on with its own arguments)", value)


def stream_slices(key: str, model, X, y, u, tick: Callable[[int], None], state: dict,
            every: int | None, save: Callable[[], None]) -> Trace:
    """``model.run`` in slices from row ``state["done"][key]`` on (the same releases, bit
    for bit: a learner's ``run`` after ``run`` continues its stream), so progress can be
    shown and, at the end of the first slice after every ``every`` rows, the state saved
    with the releases so far. The slices depend on the stream's length only, so a
    resumed run adds up its regret in the same order as an uninterrupted one."""
    parts = state["parts"].setdefault(key, [])
    start = saved = state["done"].get(key, 0)
    state["models"][key] = model
    step = max(CHUNK_ROWS, -(-len(y) // 100))
    while start < len(y):
        stop = min(start + step, len(y))
        parts.append(model.run(X[start:stop], y[start:stop], comparator=u))
        state["done"][key] = start = stop
        if every and (stop - saved >= every or stop == len(y)):
            save()  # the releases with the state that made them, in one atomic file
            saved = stop
        tick(stop)
    return join_traces(parts)


def join_traces(parts: list[Trace]) -> Trace:
    """One trace of consecutive slices (regret continued across them)."""
    offsets = np.cumsum([0.0] + [p.regret[-1] for p in parts[:-1]])
    return Trace(weights=np.vstack([p.weights for p in parts]),
                 losses=np.concatenate([p.losses for p in parts]),
                 predictions=np.concatenate([p.predictions for p in parts]),
                 final_weights=parts[-1].final_weights, privacy=parts[-1].privacy,
                 n_clipped=parts[-1].n_clipped,
                 regret=np.concatenate([p.regret + o for p, o in zip(parts, offsets,
                                                                      strict=True)]),
                 model_predictions=None if any(p.model_predictions is None for p in parts)
                 else np.concatenate([p.model_predictions for p in parts]))
