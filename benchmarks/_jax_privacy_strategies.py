"""jax_privacy's figures for benchmarks/strategies_mean.py, run in jax_privacy's own venv.

    /path/to/venv/bin/python benchmarks/_jax_privacy_strategies.py [--repeats R] 64 256 1024

Prints one JSON list: per horizon and strategy, mean and max loss in dpol's normalisation
(mean or max of the per-query squared error times the squared sensitivity, single
participation) and the optimisation time, the median of R calls (default 1; the first
includes jax's compilation, which later calls may reuse). Not imported by dpol or its
tests.
"""

import json
import statistics
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax_privacy.matrix_factorization import (  # noqa: E402
    banded,
    buffered_toeplitz,
    dense,
    sensitivity,
    toeplitz,
)

BANDS = 64
REPEATS = 1


def _timed(build):
    """(result, median seconds over REPEATS calls)."""
    seconds = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = build()
        seconds.append(time.perf_counter() - start)
    return out, statistics.median(seconds)


def _toeplitz_row(name, n, coef, seconds):
    err = toeplitz.per_query_error(strategy_coef=coef, n=n)
    sens = float(toeplitz.sensitivity_squared(coef, n))
    return {"strategy": name, "T": n, "mean_loss": float(jnp.mean(err)) * sens,
            "max_loss": float(jnp.max(err)) * sens, "build_s": seconds}


def rows(n):
    out = []
    out.append(_toeplitz_row("sqrt-toeplitz", n,
                             toeplitz.optimal_max_error_strategy_coefs(n), 0.0))
    for error in ("max", "mean"):
        blt, seconds = _timed(lambda e=error: buffered_toeplitz.optimize(n=n, error=e))
        out.append(_toeplitz_row(f"blt ({error})", n, blt.toeplitz_coefs(n), seconds))
    coef, seconds = _timed(lambda: toeplitz.optimize_banded_toeplitz(n, min(BANDS, n)))
    out.append(_toeplitz_row(f"banded-{BANDS} (mean)", n, coef, seconds))
    if n <= 1024:
        strategy, seconds = _timed(lambda: banded.optimize(n, bands=min(BANDS, n)))
        err = banded.per_query_error(strategy)  # unit columns: sensitivity 1
        out.append({"strategy": f"banded matrix-{BANDS} (mean)", "T": n,
                    "mean_loss": float(jnp.mean(err)), "max_loss": float(jnp.max(err)),
                    "build_s": seconds})
        c, seconds = _timed(lambda: dense.optimize(n))
        err = dense.per_query_error(strategy_matrix=c)
        sens = float(sensitivity.single_participation_sensitivity(c)) ** 2
        out.append({"strategy": "dense mean-optimal", "T": n,
                    "mean_loss": float(jnp.mean(err)) * sens,
                    "max_loss": float(jnp.max(err)) * sens, "build_s": seconds})
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--repeats"]:
        REPEATS, args = int(args[1]), args[2:]
    print(json.dumps([r for n in map(int, args) for r in rows(n)]))
