"""Shared pieces of the experiments' tests: the check that a written figure is a real
picture, the figures plots.py drew (kept instead of closed), and a run killed outright."""

from __future__ import annotations

import os
import signal

import numpy as np


def assert_real_png(path):
    """A PNG that is an actual picture: the signature, a sane size, more than one colour."""
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 20


def drawn(monkeypatch) -> list:
    """Keep the figures plots.py closes, to inspect what it drew."""
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    return figures


def killed_in_child(body) -> None:
    """Run ``body()`` in a forked child that ``body`` kills by SIGKILL mid-run (no
    exception unwound, no ``finally`` run: as ``kill -9`` leaves a run); fails if the
    child ends any other way."""
    pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(1)
    status = os.waitpid(pid, 0)[1]
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def killing(real, at: int):
    """``real``, wrapped so that the process is killed by SIGKILL as it makes call number
    ``at`` (before that call runs: what it would have saved is lost)."""
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        if len(calls) == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)

    return wrapper


def killed_at_first_record(run) -> None:
    """``run()`` (a run by key with checkpoints) in a forked child, SIGKILLed as it saves
    its first key's record (``KEY.done``): that key's outputs are published, its record
    not."""
    def child():
        from dpol.experiments.runs import by_key_checkpoint

        real = by_key_checkpoint.save_checkpoint

        def save(folder, payload):
            if str(folder).endswith(".done"):
                os.kill(os.getpid(), signal.SIGKILL)
            return real(folder, payload)

        by_key_checkpoint.save_checkpoint = save
        run()

    killed_in_child(child)


def keyed_csv(path, keys, n: int, seed: int):
    """A CSV of columns x0, key, x1, y (= 0.6 x0 - 0.4 x1): ``n`` rows whose keys, drawn
    from ``keys``, interleave in the file; its path."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) / 2
    key = rng.choice(keys, size=n)
    np.savetxt(path, np.column_stack([X[:, 0], key, X[:, 1], X @ [0.6, -0.4]]),
               delimiter=",", header="x0,key,x1,y", comments="", fmt="%.6g")
    return path


def run_files(out) -> dict:
    """Every file of a run's output folder, by path; run.json without its run id (random:
    it tells a resumed run its own outputs apart)."""
    import json

    files = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            blob = path.read_bytes()
            if path.name == "run.json":
                blob = json.loads(blob)
                assert len(blob.pop("run_id")) == 16
            files[path.relative_to(out).as_posix()] = blob
    return files
