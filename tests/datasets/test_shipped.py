"""dpol/datasets/shipped.py: every named stream of DATASETS within the unit bounds,
reproducible from its seed, and unknown names refused."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.datasets import DATASETS, load_dataset
from dpol.errors import InvalidInputError


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_named_data_set_within_bounds(name):
    _, task, where = DATASETS[name]
    for module, extra in (("sklearn", "real"), ("river", "river"),
                          ("statsmodels", "statsmodels")):
        if f"'{extra}' extra" in where:
            pytest.importorskip(module)
    s = load_dataset(name, seed=1, horizon=300)
    assert 0 < len(s.y) <= 300 and s.X.shape[0] == len(s.y)
    assert np.all(np.linalg.norm(s.X, axis=1) <= 1.0 + 1e-12)
    assert np.all(np.abs(s.y) <= 1.0) and s.normalization
    if task == "classification":
        assert set(np.unique(s.y)) == {-1.0, 1.0}
    again = load_dataset(name, seed=1, horizon=300)
    np.testing.assert_array_equal(again.X, s.X)


def test_load_dataset_refuses_unknown_names():
    with pytest.raises(InvalidInputError, match="dataset must be one of synthetic-regression"):
        load_dataset("mnist")
