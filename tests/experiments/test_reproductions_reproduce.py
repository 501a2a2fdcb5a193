"""`reproduce`, the entry of every paper experiment: an unknown name or a bad seed count
is refused before any work."""

from __future__ import annotations

import pytest


def test_reproduce_function_refuses_an_unknown_name_before_any_work(tmp_path):
    # the Python function, not only the command, checks the name: an unknown one used to
    # fall through to the last branch and run wdp-regret for minutes
    from dpol.errors import InvalidInputError
    from dpol.experiments.reproductions.reproduce import reproduce

    with pytest.raises(InvalidInputError, match=r"^experiment must be one of .*; got "
                                                r"'no-such-experiment'"):
        reproduce("no-such-experiment", tmp_path, quick=True, seeds=1, data=None, workers=1)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("seeds", [0, -1, 1.5])
def test_reproduce_function_refuses_a_bad_seed_count_before_any_work(tmp_path, seeds):
    # seeds=0 used to run wdp-regret on no seed and fail in the plot's log scale, and the
    # KNJ branch read it as "default" (seeds or 3)
    from dpol.errors import InvalidInputError
    from dpol.experiments.reproductions.reproduce import reproduce

    for name in ("wdp-regret", "knj-incremental"):
        with pytest.raises(InvalidInputError, match=r"^seeds must "):
            reproduce(name, tmp_path, quick=True, seeds=seeds, data=None, workers=1)
    assert not any(tmp_path.iterdir())
