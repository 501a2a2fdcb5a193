"""jax_privacy's multi-participation sensitivities for benchmarks/participation.py.

    /path/to/venv/bin/python benchmarks/_jax_privacy_participation.py encoders.npz K:B ...
    /path/to/venv/bin/python benchmarks/_jax_privacy_participation.py --blt T:K:B:ERROR ...

Reads the encoders dpol built (``toeplitz/<name>``: a Toeplitz first column;
``matrix/<name>``: a lower-triangular encoder C) and prints one JSON list: per encoder and
(k, b) pattern, jax_privacy's squared sensitivity (``toeplitz.minsep_sensitivity_squared``
for positive non-increasing columns, else the banded exact value or the Algorithm 4 upper
bound of ``sensitivity``) and the seconds it took. With ``--blt``: per (T, k, b, error),
jax_privacy's own BLT optimised for that min-separation pattern
(``buffered_toeplitz.optimize``, its buffer count chosen by it) and its loss (error x
squared sensitivity, ``LossFn.build_min_sep(...).loss``), with the seconds the
optimisation took. Not imported by dpol or its tests.
"""

import json
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax_privacy.matrix_factorization import sensitivity, toeplitz  # noqa: E402


def _toeplitz_sq(coef, n, k, b):
    c = np.asarray(coef)
    if np.all(c >= 0) and np.all(np.diff(c) <= 0):
        return float(toeplitz.minsep_sensitivity_squared(jnp.asarray(c), b, k, n)), "toeplitz"
    if n > 2048:  # a T x T matrix past 32 MiB: not compared
        return None, "skipped"
    full = np.zeros(n)
    full[: min(c.size, n)] = c[:n]
    matrix = np.zeros((n, n))
    for i in range(n):
        matrix[i:, i] = full[: n - i]
    return _matrix_sq(matrix, k, b)


def _matrix_sq(matrix, k, b):
    C = jnp.asarray(matrix)
    try:
        return float(sensitivity.get_sensitivity_banded(C, b, k)) ** 2, "banded"
    except ValueError:  # columns closer than b overlap: the upper bound
        return float(sensitivity.get_min_sep_sensitivity_upper_bound(C, b, k)) ** 2, "bound"


def rows(path, patterns):
    data = np.load(path)
    out = []
    for key in data.files:
        kind, name = key.split("/", 1)
        n = int(data[key].shape[0])
        for k, b in patterns:
            if b > n:
                continue
            start = time.perf_counter()
            if kind == "toeplitz":
                value, method = _toeplitz_sq(data[key], n, k, b)
            else:
                value, method = _matrix_sq(data[key], k, b)
            if value is None:
                continue
            out.append({"strategy": name, "T": n, "k": k, "b": b, "sens_sq": value,
                        "method": method, "seconds": time.perf_counter() - start})
    return out


def blt_rows(specs):
    from jax_privacy.matrix_factorization import buffered_toeplitz

    out = []
    for spec in specs:
        n, k, b, error = spec.split(":")
        n, k, b = int(n), int(k), int(b)
        start = time.perf_counter()
        blt = buffered_toeplitz.optimize(n=n, min_sep=b, max_participations=k, error=error)
        seconds = time.perf_counter() - start
        loss = buffered_toeplitz.LossFn.build_min_sep(
            n=n, error=error, min_sep=b, max_participations=k).loss(blt)
        out.append({"T": n, "k": k, "b": b, "error": error, "loss": float(loss),
                    "buffers": len(blt.buf_decay), "seconds": seconds})
    return out


if __name__ == "__main__":
    if sys.argv[1] == "--blt":
        print(json.dumps(blt_rows(sys.argv[2:])))
    else:
        pats = [tuple(int(v) for v in p.split(":")) for p in sys.argv[2:]]
        print(json.dumps(rows(sys.argv[1], pats)))
