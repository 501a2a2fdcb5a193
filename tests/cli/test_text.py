"""The command's text helpers: where a warning came from."""

from __future__ import annotations

import numpy as np


def test_warnings_of_other_libraries_say_where_they_came_from():
    import warnings

    from dpol.cli.text import origin
    from dpol.errors import NonPrivateWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.float64(0.0) / np.float64(0.0)
        warnings.warn("no noise", NonPrivateWarning, stacklevel=1)
    numpy_warning, ours = caught
    assert origin(numpy_warning) == f" (from {__file__}:{numpy_warning.lineno})"
    assert origin(ours) == ""  # dpol's own warnings name their cause in their text
    matplotlib = warnings.WarningMessage(
        "invalid value encountered in scalar subtract", RuntimeWarning,
        "/venv/lib/python3.11/site-packages/matplotlib/transforms.py", 355)
    assert origin(matplotlib) == " (from matplotlib/transforms.py:355)"
