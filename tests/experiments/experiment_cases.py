"""Shared pieces of the experiments' tests: the check that a written figure is a real
picture, and the figures plots.py drew (kept instead of closed)."""

from __future__ import annotations

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
