"""Shared pieces of the command's tests: a runner of the app, and the checks of a clean
refusal and of a real picture."""

from __future__ import annotations

import numpy as np
from typer.testing import CliRunner


def invoke(app, args, **kw):
    return CliRunner().invoke(app, [str(a) for a in args], **kw)


def assert_real_png(path):
    """A PNG that is an actual picture: the signature, a sane size, many colours."""
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 20


def assert_refused(result, *phrases):
    """A clean refusal: non-zero exit, one error line naming the problem, no traceback."""
    assert result.exit_code == 1, result.output
    text = result.stderr if hasattr(result, "stderr") else result.output
    lines = [line for line in text.splitlines() if line.startswith("dpol ")]
    assert len(lines) == 1 and "error:" in lines[0], text
    assert all(p in lines[0] for p in phrases), lines[0]
    assert "Traceback" not in result.output and result.exception is not None
