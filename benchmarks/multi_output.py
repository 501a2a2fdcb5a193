"""K-class PQFTL (``outputs=K``) against one-vs-rest under the same (epsilon, delta).

A K-class least-squares model shares the Gram matrix V between its K outputs, and
``PrivateQuadraticFTL(outputs=K)`` releases it once, with the noise of one scalar label
on every coordinate (its Privacy section). One-vs-rest runs K binary PQFTLs (labels
+-1), each releasing its own V and u; under the same total budget each must be
K-fold composable: each learner is an exact Gaussian mechanism of mu = mu*(eps_k,
delta), K of them compose to sqrt(K) mu, so eps_k is the epsilon at delta of mu*(eps,
delta) / sqrt(K) (the noise multiplier sqrt(K) times larger; exact, by Gaussian DP).
``--loose`` also runs each at epsilon / K and delta / K (basic composition: more noise).

Data: scikit-learn's iris (K = 3, d = 4) and digits (K = 10, d = 64), an 80/20
stratified split per seed, features standardised on the training rows, rows divided
by the 95th percentile of the training rows' norms (bound 1, the rest clipped); PQFTL
with alpha = 0.01, ``noise_ridge``, the BLT counter and an intercept; the class is the
argmax of the K averaged-model predictions. Held-out accuracy, mean [worst] of 5 seeds.

    python benchmarks/multi_output.py            # about a minute
    python benchmarks/multi_output.py --seeds 2 --epsilons 1

Prints a table and writes ``benchmarks/results/multi_output.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris
from sklearn.model_selection import train_test_split

from dpol.accounting.closed_forms import gaussian_epsilon, mu_star
from dpol.learners import PrivateQuadraticFTL
from dpol.learners.intercept import WithIntercept

DELTA = 1e-5
DATA = {"iris": load_iris, "digits": load_digits}
OUT = Path(__file__).parent / "results" / "multi_output.json"


def prepare(name: str, seed: int) -> tuple[np.ndarray, ...]:
    X, y = DATA[name](return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=seed)
    mean, std = Xtr.mean(0), Xtr.std(0)
    std[std == 0] = 1.0  # digits' constant pixels
    Xtr, Xte = (Xtr - mean) / std, (Xte - mean) / std
    scale = np.percentile(np.linalg.norm(Xtr, axis=1), 95)
    order = np.random.default_rng(seed).permutation(len(Xtr))  # the stream's order
    return Xtr[order] / scale, Xte / scale, ytr[order], yte


def learner(d: int, n: int, epsilon: float, delta: float, seed: int, outputs: int = 1):
    return WithIntercept(PrivateQuadraticFTL(
        d + 1, horizon=n, epsilon=epsilon, delta=delta, alpha=0.01, noise_ridge=True,
        counter="blt", outputs=outputs, seed=seed))


def multi_output(Xtr, Xte, ytr, epsilon, seed, K):
    m = learner(Xtr.shape[1], len(Xtr), epsilon, DELTA, seed, outputs=K)
    m.run(Xtr, np.eye(K)[ytr])
    return np.argmax(m.predict_rows(Xte), axis=1)


def one_vs_rest(Xtr, Xte, ytr, epsilon, seed, K, loose=False):
    if loose or not math.isfinite(epsilon):
        eps_k, delta_k = (epsilon / K, DELTA / K) if loose else (epsilon, DELTA)
    else:  # K exact Gaussian mechanisms of mu*(eps, delta) / sqrt(K) compose to (eps, delta)
        eps_k, delta_k = gaussian_epsilon(math.sqrt(K) / mu_star(epsilon, DELTA), DELTA), DELTA
    scores = []
    for k in range(K):
        m = learner(Xtr.shape[1], len(Xtr), eps_k, delta_k, seed * 100 + k)
        m.run(Xtr, np.where(ytr == k, 1.0, -1.0))
        scores.append(m.predict_rows(Xte))
    return np.argmax(np.stack(scores, axis=1), axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", default="1,0.1,inf")
    parser.add_argument("--loose", action="store_true", help="also epsilon/K one-vs-rest")
    args = parser.parse_args()
    epsilons = [float(e) for e in args.epsilons.split(",")]
    methods = {"multi-output": multi_output, "one-vs-rest": one_vs_rest}
    if args.loose:
        methods["one-vs-rest eps/K"] = lambda *a: one_vs_rest(*a, loose=True)
    results = {}
    warnings.simplefilter("ignore")  # clipping (the 5% beyond the 95th percentile), inf
    for name in DATA:
        for eps in epsilons:
            for method, run in methods.items():
                acc = []
                for seed in range(args.seeds):
                    Xtr, Xte, ytr, yte = prepare(name, seed)
                    K = int(ytr.max()) + 1
                    acc.append(float(np.mean(run(Xtr, Xte, ytr, eps, seed, K) == yte)))
                results[f"{name} eps={eps:g} {method}"] = acc
                print(f"{name:7s} eps={eps:<4g} {method:18s} {np.mean(acc):.3f} "
                      f"[{np.min(acc):.3f}]", flush=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
