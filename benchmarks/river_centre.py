"""RiverRegressor with and without its first-block label centre (``centre_budget``).

The figures of :mod:`dpol.adapters._river_centre`: prequential R^2 (each row predicted
before it is learnt) at epsilon 1 over 5 seeds, mean [worst], and the non-private twin
(one run: it draws no noise). Two streams: 3,000 synthetic rows (labels 150 + 80 a -
40 b + noise, a block of 500; scored on the last 1,000 rows) and river's ChickWeights
(578 rows, labels 35-373, a block of 200; scored after the block), in its own order and
shuffled; ``y_bound=400``.

    python benchmarks/river_centre.py          # about 2 minutes

Needs river (the ``bench`` extra).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol.adapters import RiverRegressor


def _synthetic(seed: int) -> tuple[list[dict], np.ndarray]:
    rng = np.random.default_rng(100 + seed)
    X = rng.normal(size=(3000, 2)) / 2
    y = 150.0 + 80.0 * X[:, 0] - 40.0 * X[:, 1] + 10.0 * rng.normal(size=3000)
    return [{"a": a, "b": b} for a, b in X], y


def _chick_weights(shuffled: bool) -> tuple[list[dict], np.ndarray]:
    from river import datasets

    rows = list(datasets.ChickWeights())
    if shuffled:
        rows = [rows[i] for i in np.random.default_rng(0).permutation(len(rows))]
    return ([{"time": x["time"] / 21, "diet": (x["diet"] - 2.5) / 1.5} for x, _ in rows],
            np.array([y for _, y in rows], dtype=float))


def _prequential(xs: list[dict], y: np.ndarray, *, epsilon: float, seed: int,
                 share: float, block: int, x_bound: float) -> np.ndarray:
    model = RiverRegressor(epsilon=epsilon, y_bound=400.0, x_bound=x_bound, horizon=len(y),
                           seed=seed, centre_budget=share, centre_rows=block)
    out = np.empty(len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the twin's NonPrivateWarning, clipping notes
        for i, (x, label) in enumerate(zip(xs, y, strict=True)):
            out[i] = model.predict_one(x)
            model.learn_one(x, label)
    return out


def _r2(pred: np.ndarray, y: np.ndarray) -> float:
    return float(1.0 - np.mean((pred - y) ** 2) / np.var(y))


def main() -> None:
    cases = [("synthetic, last 1,000", _synthetic, 500, slice(-1000, None), 1.0),
             ("ChickWeights, own order", lambda s: _chick_weights(False), 200,
              slice(200, None), 1.5),
             ("ChickWeights, shuffled", lambda s: _chick_weights(True), 200,
              slice(200, None), 1.5)]
    print("| stream | centre | epsilon 1, mean [worst] | non-private twin |")
    print("|---|---|---|---|")
    for name, data, block, scored, x_bound in cases:
        for share in (0.0, 0.1):
            scores = []
            for seed in range(5):
                xs, y = data(seed)
                pred = _prequential(xs, y, epsilon=1.0, seed=seed, share=share,
                                    block=block, x_bound=x_bound)
                scores.append(_r2(pred[scored], y[scored]))
            xs, y = data(0)
            twin = _r2(_prequential(xs, y, epsilon=math.inf, seed=0, share=share,
                                    block=block, x_bound=x_bound)[scored], y[scored])
            print(f"| {name} | {'block of ' + str(block) if share else 'none'} | "
                  f"{np.mean(scores):.2f} [{min(scores):.2f}] | {twin:.2f} |")


if __name__ == "__main__":
    main()
