"""jax_privacy's DP-MF training of a logistic model, for benchmarks/training_jax_privacy.py.

    /path/to/jax-venv/bin/python benchmarks/_jax_privacy_training.py data.npz spec.json

Reads the rows, the held-out rows and the batches dpol's public schedule chose
(``data.npz``: ``X, y, X_test, y_test, order, offsets``; step t's rows are
``order[offsets[t % b]:offsets[t % b + 1]]``) and the run (``spec.json``: epochs,
steps_per_epoch, batch_size, lr, clip, delta, epsilons, seeds). Builds everything the
jax_privacy way: its own BLT optimised for the min-separation participation (E, b)
(``buffered_toeplitz.optimize``, max error), its own sensitivity of it
(``toeplitz.minsep_sensitivity_squared``), z of one Gaussian release from dp_accounting's
PLD accountant, per-example clipping by ``clipping.clipped_grad`` (replace-one: element
sensitivity 2 clip), correlated noise by ``noise_addition.matrix_factorization_privatizer``
on the BLT's inverse, then theta <- theta - lr g_hat / batch_size. Prints one JSON object:
per epsilon and seed the held-out accuracy, the noise std and the wall and CPU seconds
(all of jax's threads) of the training loop. Not imported by
dpol or its tests.
"""

import json
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import dp_accounting  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax_privacy import clipping, noise_addition  # noqa: E402
from jax_privacy.matrix_factorization import buffered_toeplitz, toeplitz  # noqa: E402


def _loss(theta, x, y, mask):
    # log(1 + exp(-y <theta, x>)), zero on padding rows (their gradient is 0, clipped 0)
    return jnp.sum(mask * jnp.logaddexp(0.0, -y * (x @ theta)))


def _z(epsilon, delta):
    """z of one Gaussian release at (epsilon, delta), dp_accounting's PLD accountant."""
    if not np.isfinite(epsilon):
        return 0.0
    return float(dp_accounting.calibrate_dp_mechanism(
        lambda: dp_accounting.pld.PLDAccountant(), dp_accounting.GaussianDpEvent,
        epsilon, delta,
        # PLD grids grow as z shrinks: a bracket from 0.2 keeps them small
        dp_accounting.mechanism_calibration.ExplicitBracketInterval(0.2, 50.0)))


def main(data_path, spec_path):
    data = np.load(data_path)
    spec = json.loads(open(spec_path).read())
    E, b, B = spec["epochs"], spec["steps_per_epoch"], spec["batch_size"]
    T, clip, lr = E * b, spec["clip"], spec["lr"]
    order, offsets = data["order"], data["offsets"]
    width = int(np.max(np.diff(offsets)))
    batches = []  # padded to one width so the step compiles once
    for s in range(b):
        rows = order[offsets[s]:offsets[s + 1]]
        pad = width - rows.size
        batches.append((np.concatenate([data["X"][rows], np.zeros((pad, data["X"].shape[1]))]),
                        np.concatenate([data["y"][rows], np.ones(pad)]),
                        np.concatenate([np.ones(rows.size), np.zeros(pad)])))
    began = time.perf_counter()
    blt = buffered_toeplitz.optimize(n=T, min_sep=b, max_participations=E, error="max")
    sens = float(np.sqrt(toeplitz.minsep_sensitivity_squared(blt.toeplitz_coefs(T), b, E, T)))
    setup = time.perf_counter() - began
    grad = jax.jit(clipping.clipped_grad(_loss, l2_clip_norm=clip, batch_argnums=(1, 2, 3)))
    out = {"sensitivity": sens, "buffers": len(blt.buf_decay), "setup_seconds": setup,
           "runs": []}
    for epsilon in spec["epsilons"]:
        z = _z(float(epsilon), spec["delta"])
        std = z * 2.0 * clip * sens
        for seed in spec["seeds"]:
            privatizer = noise_addition.matrix_factorization_privatizer(
                blt.inverse_as_streaming_matrix(), stddev=std, prng_key=int(seed))
            theta = jnp.zeros(data["X"].shape[1])
            state = privatizer.init(theta)
            began, cpu = time.perf_counter(), time.process_time()
            for t in range(T):
                x, y, mask = batches[t % b]
                g = grad(theta, x, y, mask)
                noisy, state = privatizer.update(g, state)
                theta = theta - lr * noisy / B
            theta = np.asarray(theta)
            seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
            accuracy = float(np.mean(np.where(data["X_test"] @ theta > 0, 1.0, -1.0)
                                     == data["y_test"]))
            out["runs"].append({"epsilon": epsilon, "seed": seed, "z": z, "std": std,
                                "accuracy": accuracy, "seconds": seconds, "cpu_seconds": cpu,
                                "theta": theta.tolist()})
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:3])
