"""The default regressor on raw labels, as a new user runs it: the bound it is told to declare.

``make_pipeline(StandardScaler(), OnlineRegressor(epsilon=e, random_state=s))`` on raw
features and labels is refused at the default ``y_bound=1`` when most labels lie beyond
it, and the refusal names what to declare. This script fits again with each of:

* ``y_bound=B``: the smallest two-digit B that at most 2.5% of |y| exceed (what the
  refusal named before 2026-11-29);
* **central** ``(lo, hi)``: lo and hi the 1.25% and 98.75% order statistics rounded
  outwards;
* **narrowest** ``(lo, hi)``: the narrowest range that at most 2.5% of the labels fall
  outside (``dpol._clip_warning.suggested_range``: what it names now).

All three are read from the raw training labels: advice for the data holder, outside the
guarantee. Beside them: the **private mean** alone (the trivial model learnt privately on
the whole budget within the narrowest range: the labels' mean with Gaussian noise of std
z (hi - lo) / n, its expected R^2 -(std / sd(y))^2 minus the split's own offset), and
ordinary least squares (non-private). Held-out R^2 on a fixed 80/20 split (seed 0), mean
[worst] over the seeds. Data sets: ``benchmarks/utility.py``'s two raw-label sets and
seven more regression sets that ship with statsmodels and river (lags of a series as
features for the three series), none of them in ``utility.py``'s groups.

    python benchmarks/raw_labels.py                  # about 1 minute
    python benchmarks/raw_labels.py --seeds 2 --datasets engel,elnino
    python benchmarks/raw_labels.py --mean-alone --seeds 20 --out /tmp/mean.json

``--mean-alone`` measures instead what a regressor falling back to the private mean would
give on a stream too short for a model: the default with the narrowest range beside the
labels' mean alone on 90% of the budget (as the classifiers' prior alone), released as
it is, or kept only beyond ``CENTRE_SIGNIFICANCE`` of its stds (else the range's centre,
as the regressor's centre is).

Needs the ``bench`` extra (river, statsmodels). Prints a table and writes
``benchmarks/results/raw_labels.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
from pathlib import Path

import numpy as np
from _utility_data import prepare

from dpol._clip_warning import SUGGEST_SHARE, _two_digits, suggested_bound, suggested_range
from dpol.accounting.closed_forms import (
    default_delta,
    gaussian_noise_multiplier,
    gaussian_share,
)

OUT = Path(__file__).parent / "results" / "raw_labels.json"
ADVICE = ("y_bound=B", "central (lo, hi)", "narrowest (lo, hi)")


def _lags(series: np.ndarray, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """(the k previous values, the value) of every step of a series."""
    X = np.column_stack([series[k - 1 - j:len(series) - 1 - j] for j in range(k)])
    return X, series[k:]


def _statsmodels(name: str, features: list[str], label: str):
    import statsmodels.api as sm

    data = getattr(sm.datasets, name).load_pandas().data
    return data[features].to_numpy(float), data[label].to_numpy(float)


def _river_series(name: str) -> tuple[np.ndarray, np.ndarray]:
    import river.datasets as rd

    return _lags(np.array([y for _, y in getattr(rd, name)()], dtype=float))


def _sunspots() -> tuple[np.ndarray, np.ndarray]:
    import statsmodels.api as sm

    return _lags(sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(float))


def _elnino() -> tuple[np.ndarray, np.ndarray]:
    import statsmodels.api as sm

    months = sm.datasets.elnino.load_pandas().data.to_numpy(float)[:, 1:]
    return months[:, :11], months[:, 11]  # January to November -> December


def _utility(name: str) -> tuple[np.ndarray, np.ndarray]:
    ds = prepare(name)
    return np.vstack([ds.X_raw_train, ds.X_raw_test]), np.r_[ds.raw_train, ds.raw_test]


#: name -> (what it is, loader of raw (X, y))
SETS = {
    "engel": ("utility.py: statsmodels Engel, food expenditure", lambda: _utility("engel")),
    "chick-weights": ("utility.py: river ChickWeights, grams",
                      lambda: _utility("chick-weights")),
    "grunfeld": ("statsmodels Grunfeld: investment ~ value, capital", lambda: _statsmodels(
        "grunfeld", ["value", "capital"], "invest")),
    "macrodata": ("statsmodels macrodata: unemployment ~ 6 series", lambda: _statsmodels(
        "macrodata", ["realgdp", "realcons", "realinv", "cpi", "infl", "realint"], "unemp")),
    "statecrime": ("statsmodels statecrime: violent crime ~ 5 rates", lambda: _statsmodels(
        "statecrime", ["hs_grad", "poverty", "single", "white", "urban"], "violent")),
    "elnino": ("statsmodels elnino: December ~ January to November", _elnino),
    "sunspots": ("statsmodels sunspots: activity ~ 3 lags", _sunspots),
    "airline": ("river AirlinePassengers: passengers ~ 3 lags",
                lambda: _river_series("AirlinePassengers")),
    "waterflow": ("river WaterFlow: flow ~ 3 lags", lambda: _river_series("WaterFlow")),
}


def central_range(y: np.ndarray, share: float = SUGGEST_SHARE) -> tuple[float, float]:
    """lo and hi: the order statistics leaving at most share / 2 of y out on each side."""
    arr = np.sort(y)
    k = math.floor(share / 2.0 * arr.size)
    return _two_digits(arr[k], math.floor), _two_digits(arr[arr.size - 1 - k], math.ceil)


def advice(y: np.ndarray) -> dict[str, object]:
    return {"y_bound=B": suggested_bound(np.abs(y)), "central (lo, hi)": central_range(y),
            "narrowest (lo, hi)": suggested_range(y)}


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    return float(1.0 - np.mean((y - pred) ** 2) / np.var(y))


def measure(name: str, epsilons: list[float], seeds: int) -> dict:
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from dpol.adapters import OnlineRegressor

    X, y = SETS[name][1]()
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(0.8 * len(y))
    train, test = order[:cut], order[cut:]
    bounds = advice(y[train])
    ols = _r2(y[test], make_pipeline(StandardScaler(), LinearRegression()).fit(
        X[train], y[train]).predict(X[test]))
    out = {"data set": name, "rows": len(y), "d": X.shape[1], "advice": bounds,
           "least squares": ols, "scores": {}}
    lo, hi = bounds["narrowest (lo, hi)"]
    for epsilon in epsilons:
        z = gaussian_noise_multiplier(epsilon, default_delta(cut))
        std = z * (hi - lo) / cut  # replace-one: a label moves the sum by hi - lo
        offset = (y[train].mean() - y[test].mean()) ** 2 / np.var(y[test])
        out["scores"][f"{epsilon:g}"] = {"private mean": -(std ** 2) / np.var(y[test]) - offset}
        for kind, bound in bounds.items():
            r2 = []
            for seed in range(seeds):
                model = make_pipeline(StandardScaler(), OnlineRegressor(
                    epsilon=epsilon, y_bound=bound, random_state=seed))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # clipping and label advice: known
                    model.fit(X[train], y[train])
                r2.append(_r2(y[test], model.predict(X[test])))
            out["scores"][f"{epsilon:g}"][kind] = r2
    return out


def mean_alone(name: str, epsilons: list[float], seeds: int, share: float = 0.9) -> dict:
    """The default on the narrowest range against the labels' private mean alone on
    ``share`` of the budget (as released; kept beyond ``CENTRE_SIGNIFICANCE`` stds),
    held-out R^2 per seed, and the gate's resolution (the classifiers' public rule)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from dpol.adapters import OnlineRegressor
    from dpol.adapters._private_prep import CENTRE_SIGNIFICANCE
    from dpol.datasets.private_label_mean import private_label_mean
    from dpol.learners._fallback_budget import gate_resolution

    X, y = SETS[name][1]()
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(0.8 * len(y))
    train, test = order[:cut], order[cut:]
    lo, hi = suggested_range(y[train])
    c, h = (lo + hi) / 2.0, (hi - lo) / 2.0
    out = {"data set": name, "rows": cut, "range": (lo, hi), "scores": {}}
    for epsilon in epsilons:
        delta = default_delta(cut)
        z = gaussian_share(epsilon, delta, share)[0]
        cells = {"resolution": gate_resolution(epsilon, delta, cut), "default": [],
                 "mean alone": [], "mean alone, kept beyond 3 stds": []}
        for seed in range(seeds):
            model = make_pipeline(StandardScaler(), OnlineRegressor(
                epsilon=epsilon, y_bound=(lo, hi), random_state=seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X[train], y[train])
            cells["default"].append(_r2(y[test], model.predict(X[test])))
            mean = private_label_mean(np.clip(y[train] - c, -h, h), bound=h,
                                      noise_multiplier=z, seed=seed)
            kept = mean.value if abs(mean.value) > CENTRE_SIGNIFICANCE * mean.std else 0.0
            cells["mean alone"].append(_r2(y[test], np.full(len(test), c + mean.value)))
            cells["mean alone, kept beyond 3 stds"].append(
                _r2(y[test], np.full(len(test), c + kept)))
        out["scores"][f"{epsilon:g}"] = cells
    return out


def _print_mean_alone(rows: list[dict], seeds: int) -> None:
    kinds = ("default", "mean alone", "mean alone, kept beyond 3 stds")
    print(f"held-out R^2, mean [worst] of {seeds} seeds, the narrowest range declared")
    print("| data set | rows | eps | gate resolution | " + " | ".join(kinds)
          + " |\n|---|---|---|---|" + "---|" * len(kinds))
    for r in rows:
        for e, cells in r["scores"].items():
            print(f"| {r['data set']} | {r['rows']} | {e} | {cells['resolution']:.2f} | "
                  + " | ".join(_cell(cells[k]) for k in kinds) + " |")


def _cell(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.2f}"
    return f"{np.mean(v):.2f} [{min(v):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--datasets", default=",".join(SETS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--mean-alone", action="store_true",
                        help="instead: the default against the private mean alone")
    args = parser.parse_args()
    names = args.datasets.split(",")
    unknown = sorted(set(names) - set(SETS))
    if unknown:
        parser.error(f"--datasets: not known here: {', '.join(unknown)}")
    if args.mean_alone:
        rows = [mean_alone(n, args.epsilons, args.seeds) for n in names]
        _print_mean_alone(rows, args.seeds)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"seeds": args.seeds, "rows": rows}, indent=1,
                                       default=float) + "\n")
        print(f"wrote {args.out}")
        return
    rows = [measure(n, args.epsilons, args.seeds) for n in names]
    print(f"held-out R^2, mean [worst] of {args.seeds} seeds; the bound declared after the "
          "refusal")
    print("| data set | rows | d | eps | " + " | ".join(ADVICE) + " | private mean | least "
          "squares |\n|---|---|---|---|" + "---|" * (len(ADVICE) + 2))
    for r in rows:
        for e, cells in r["scores"].items():
            print(f"| {r['data set']} | {r['rows']} | {r['d']} | {e} | "
                  + " | ".join(_cell(cells[k]) for k in ADVICE)
                  + f" | {_cell(cells['private mean'])} | {r['least squares']:.2f} |")
    print("\n| data set | " + " | ".join(ADVICE) + " |\n|---|" + "---|" * len(ADVICE))
    for r in rows:
        print(f"| {r['data set']} | " + " | ".join(
            f"{v:g}" if np.ndim(v) == 0 else f"({v[0]:g}, {v[1]:g})"
            for v in (r["advice"][k] for k in ADVICE)) + " |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seeds": args.seeds, "sets": {
        n: SETS[n][0] for n in names}, "rows": rows}, indent=1, default=float) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
