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
