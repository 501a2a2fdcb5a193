"""Independent check of the counters against naive references (tests/reference_counters.py).

The references are written from the papers' pseudo-code (JKT §3.4, ENV §2.3, WDP §3.3,
Honaker's estimator as in tensorflow_privacy's EfficientTreeAggregator) without looking at
``dpol.counters``. Every test compares observable behaviour only: releases, ``node_values``,
``sensitivity`` and ``variance``.

The main tool is a one-hot noise probe: every noise row the counter draws is replaced by
its own unit vector e_k (draw number k in draw order) and the data are zero, so release t
equals sum_k c[t, k] e_k and reveals exactly which draws, with which weights, enter it.
Which tree node a draw belongs to is derived from the reference: a draw is identified with
the reference node whose column (the releases it enters, with weights) it equals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.counters import BinaryTreeCounter, HonakerTreeCounter, WindowTreeCounter
from dpol.errors import NonPrivateWarning
from dpol.noise.source import NoiseSource

from reference_counters import (
    ReferenceBinaryTree,
    ReferenceHonakerTree,
    ReferenceWindowTree,
    all_streams,
    dyadic_prefix,
    linear_structure,
)

TREE_HORIZONS = (1, 2, 3, 5, 7, 8, 9, 16, 33, 100)
WINDOWS = (1, 2, 3, 4, 8, 16)


def pow2(w: int) -> int:
    return 1 << (w - 1).bit_length()


# (label, kind, horizon, window) of every structure probed in tests 1 and 5
PROBE_CASES = (
    [("binary", "binary", t, None) for t in TREE_HORIZONS]
    + [("padded", "padded", t, None) for t in TREE_HORIZONS]
    + [("honaker", "honaker", t, None) for t in TREE_HORIZONS]
    + [("window", "window", 5 * w + 3, w) for w in WINDOWS]
    # W >= T: the window tree must be the plain binary tree (WDP spec §9 test 4)
    + [("window>=T", "window", t, w) for t, w in ((8, 8), (37, 64), (100, 1024))]
)
PROBE_IDS = [f"{label}-T{t}" + (f"-W{w}" if w else "") for label, _, t, w in PROBE_CASES]


def make_lead(kind: str, horizon: int, dim: int = 1, window: int | None = None, **kwargs):
    kwargs.setdefault("noise_multiplier", 1.0)
    if kind == "binary":
        return BinaryTreeCounter(horizon, dim, **kwargs)
    if kind == "padded":
        return BinaryTreeCounter(horizon, dim, padded=True, **kwargs)
    if kind == "honaker":
        return HonakerTreeCounter(horizon, dim, **kwargs)
    return WindowTreeCounter(horizon, dim, window=window, **kwargs)


def make_ref(kind: str, horizon: int, window: int | None = None):
    if kind == "binary":
        return ReferenceBinaryTree(horizon)
    if kind == "padded":
        return ReferenceBinaryTree(horizon, padded=True)
    if kind == "honaker":
        return ReferenceHonakerTree(horizon)
    return ReferenceWindowTree(horizon, window)


def probe(monkeypatch, kind, horizon, window, mode):
    """One-hot noise probe of the lead's counter: (C, n_draws, counter).

    C[t-1, k] is the weight of draw k in the release at t (zero data, so the release is
    pure noise). NoiseSource.draw is patched at class level, before construction, so that
    draws made at construction are also counted.
    """
    dim = 8 * horizon + 16

    def fake_draw(self, n):
        k = getattr(self, "_probe_next", 0)
        assert k + n <= self.dim, "probe dimension too small for the number of draws"
        self._probe_next = k + n
        return np.eye(self.dim)[k:k + n].copy()

    monkeypatch.setattr(NoiseSource, "draw", fake_draw)
    counter = make_lead(kind, horizon, dim, window)
    zeros = np.zeros((horizon, dim))
    if mode == "run":
        rel = counter.run(zeros)
    else:
        rel = np.stack([counter.add(row) for row in zeros])
    n = getattr(counter._source, "_probe_next", 0)
    assert np.all(rel[:, n:] == 0.0)
    return rel[:, :n], n, counter


def columns(c: np.ndarray) -> list[np.ndarray]:
    return [c[:, k] for k in range(c.shape[1])]


def sorted_nonzero_columns(c: np.ndarray) -> np.ndarray:
    cols = [col for col in columns(c) if np.any(col != 0.0)]
    cols.sort(key=lambda col: tuple(np.round(col, 9)))
    return np.array(cols).reshape(len(cols), c.shape[0])


def assign_nodes(c: np.ndarray, keys, r: np.ndarray) -> list:
    """For each lead draw (column of c), the reference noise key with the same column.

    Zero columns (draws that no release uses) get None. Several reference nodes can share
    a column (e.g. W = 2: the right leaf of block k-1 and the left leaf of block k are both
    used only at t = 2k-1); any choice among them gives the same sets of nodes per release.
    """
    free = list(range(len(keys)))
    out = []
    for col in columns(c):
        if not np.any(col != 0.0):
            out.append(None)
            continue
        hit = next((k for k in free if np.allclose(r[:, k], col, rtol=0, atol=1e-12)), None)
        assert hit is not None, f"draw with column {col} matches no reference noise variable"
        free.remove(hit)
        out.append(keys[hit])
    return out


# --------------------------------------------------------------------------------------
# 1. linear noise structure (one-hot probe)
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["run", "add"])
@pytest.mark.parametrize(("label", "kind", "horizon", "window"), PROBE_CASES, ids=PROBE_IDS)
def test_probe_matches_reference_noise_structure(monkeypatch, label, kind, horizon, window,
                                                 mode):
    # Catches: a release summing the wrong nodes or too few/many; noise redrawn per release
    # instead of persisted per node (a node's draw would then appear in a single release);
    # padding draws reused across releases; draws scaled or weighted wrongly (Honaker
    # weights); the window tree noising a window other than [t-W'+1, t]; run() and add()
    # building different structures.
    c, n_draws, counter = probe(monkeypatch, kind, horizon, window, mode)
    ref = make_ref(kind, horizon, window)
    keys, r = linear_structure(ref)

    # the same multiset of used noise variables (columns), up to draw order
    got, want = sorted_nonzero_columns(c), sorted_nonzero_columns(r)
    assert got.shape == want.shape, f"{got.shape[0]} used draws, reference {want.shape[0]}"
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    if kind != "honaker":
        assert set(np.unique(c)) <= {0.0, 1.0}, "non-tree coefficients: draws scaled or reused"

    # draws no release uses (yet): at most the reference's complete-but-unused nodes (the
    # pseudo-code draws every node when it completes; drawing lazily is equally valid)
    n_pad = sum(1 for key in keys if key[0] == "pad")
    n_zero_lead = n_draws - got.shape[0]
    n_zero_ref = r.shape[1] - want.shape[0]
    assert 0 <= n_zero_lead <= n_zero_ref, (n_zero_lead, n_zero_ref)

    # node_values lists exactly the nodes that receive noise (padding draws are not nodes)
    assert counter.node_values(np.zeros((horizon, counter.dim))).shape[0] == n_draws - n_pad

    nodes = assign_nodes(c, keys, r)
    used = [[nodes[k] for k in np.flatnonzero(c[t - 1])] for t in range(1, horizon + 1)]
    if kind in ("binary", "padded") or (kind == "window" and pow2(window) >= horizon):
        pad_to = max(math.ceil(math.log2(horizon)), 1)  # ENV: ceil(log2 T) draws per release
        for t in range(1, horizon + 1):
            tree = sorted((key[1], key[2]) for key in used[t - 1] if key[0] == "node")
            pads = [key for key in used[t - 1] if key[0] == "pad"]
            assert tree == sorted(dyadic_prefix(t)), f"t={t}: nodes {tree}"
            if kind == "padded":
                assert len(used[t - 1]) == pad_to, f"t={t}: {len(used[t - 1])} draws"
                assert all(key[1] == t for key in pads)  # fresh: used by release t only
            else:
                assert not pads
    if kind == "window":
        wp = pow2(window)
        m = wp.bit_length()  # log2 W' + 1
        per_item: dict[int, set] = {i: set() for i in range(1, horizon + 1)}
        for t in range(1, horizon + 1):
            assert np.count_nonzero(c[t - 1]) <= m, f"t={t}: more than log2 W'+1 noisy nodes"
            covered = sorted(i for key in used[t - 1] for i in range(key[1], key[2] + 1))
            assert covered == list(range(max(1, t - wp + 1), t + 1)), f"t={t}: {used[t - 1]}"
            for key in used[t - 1]:
                for i in range(key[1], key[2] + 1):
                    per_item[i].add(key)
        assert max(len(s) for s in per_item.values()) <= m


def test_reference_window_tree_follows_the_papers_layout():
    # Self-check of the reference against WDP §3.2: the pseudo-code's release uses exactly
    # the suffix nodes of block k-1 and the prefix nodes of block k, and the paper's example
    # (W = 4, t = 7: noisy v4, s56, v7; t = 8: only s58).
    ref = ReferenceWindowTree(8, 4)
    keys, r = linear_structure(ref)
    for t in range(1, 9):
        used = sorted((keys[k][1], keys[k][2]) for k in np.flatnonzero(r[t - 1]))
        assert used == sorted(ref.used_noisy_nodes(t))
    assert sorted(ref.used_noisy_nodes(7)) == [(4, 4), (5, 6), (7, 7)]
    assert ref.used_noisy_nodes(8) == [(5, 8)]


@pytest.mark.parametrize(("label", "kind", "horizon", "window"), PROBE_CASES, ids=PROBE_IDS)
def test_node_values_are_reference_nodes_and_sensitivity(label, kind, horizon, window):
    # node_values must hold the clean value of every node a release uses, and nothing but
    # clean values of complete reference nodes; the declared sensitivity must be
    # 2*sqrt(levels) with levels counted on the reference (beyond the brute-force range
    # T <= 8). Catches an encoder that omits a used node (sensitivity under-counted), holds
    # partial or wrong sums, or a levels count off by one for large T (ceil vs floor).
    rng = np.random.default_rng(9)
    v = rng.normal(size=(horizon, 2))
    ref = make_ref(kind, horizon, window)
    keys, r = linear_structure(ref)
    value = {key: v[key[1] - 1:key[2]].sum(axis=0) for key in keys if key[0] == "node"}
    used = {keys[k] for k in range(len(keys)) if np.any(r[:, k] != 0) and keys[k][0] == "node"}
    counter = make_lead(kind, horizon, 2, window)
    rows = list(counter.node_values(v))
    free = set(value)
    for row in rows:
        hit = next((key for key in free if np.allclose(value[key], row, rtol=0, atol=1e-12)),
                   None)
        assert hit is not None, f"node_values row {row} is no complete reference node"
        free.remove(hit)
    assert not used & free, f"used nodes missing from node_values: {sorted(used & free)}"
    assert counter.sensitivity == pytest.approx(2.0 * math.sqrt(ref.levels()), rel=1e-12)


# --------------------------------------------------------------------------------------
# 2. brute-force sensitivity
# --------------------------------------------------------------------------------------
SENS_CASES = ([("binary", None), ("padded", None), ("honaker", None)]
              + [("window", w) for w in (1, 2, 4, 8)])


def max_change(nv: np.ndarray, horizon: int, relation: str) -> float:
    """Max l2 change of the node vector over all single changes of one element.

    nv[s] is the node vector of stream s of all_streams(horizon) (alphabet -1, 0, 1; the
    last position varies fastest). replace_one: any other value at one position;
    add_remove: the element replaced by 0.
    """
    n = nv.shape[0]
    digits = np.array([[(s // 3 ** (horizon - 1 - p)) % 3 for p in range(horizon)]
                       for s in range(n)])
    best = 0.0
    for p in range(horizon):
        step = 3 ** (horizon - 1 - p)
        for new in range(3):
            if relation == "add_remove" and new != 1:  # digit 1 is the value 0
                continue
            partner = np.arange(n) + (new - digits[:, p]) * step
            best = max(best, float(np.max(np.linalg.norm(nv - nv[partner], axis=1))))
    return best


@pytest.mark.parametrize("horizon", range(1, 9))
@pytest.mark.parametrize(("kind", "window"), SENS_CASES,
                         ids=[k + (f"-W{w}" if w else "") for k, w in SENS_CASES])
def test_bruteforce_sensitivity(kind, window, horizon):
    # Catches: a declared sensitivity that is too small (privacy failure: an element lies in
    # more noised nodes than counted, e.g. ceil vs floor of log2 T the wrong way) or too
    # large (wasted noise, e.g. log2 W'+1 levels declared when T < W' or ceil(log2 T)+1 for
    # T = 3), and a node_values that omits or double-counts noised nodes.
    streams = all_streams(horizon)
    ref = make_ref(kind, horizon, window)
    ref_nv = streams @ ref.incidence()  # clean value of each reference node
    lead_nv = None
    for relation in ("replace_one", "add_remove"):
        counter = make_lead(kind, horizon, 1, window, neighbouring=relation)
        if lead_nv is None:
            lead_nv = np.stack([counter.node_values(s[:, None]).ravel() for s in streams])
        got = max_change(lead_nv, horizon, relation)
        want = max_change(ref_nv, horizon, relation)
        scale = 2.0 if relation == "replace_one" else 1.0
        assert want == pytest.approx(scale * math.sqrt(ref.levels()), rel=1e-12)
        assert got == pytest.approx(want, rel=1e-12), f"{relation}: node_values max change"
        assert counter.sensitivity == pytest.approx(want, rel=1e-12), (
            f"{relation}: declared {counter.sensitivity}, brute force {want}")


def test_bruteforce_max_change_can_see_a_missing_node():
    # The brute-force helper itself must detect a node vector that lost a level: drop the
    # root of an 8-item binary tree and the maximum falls from 2*sqrt(4) to 2*sqrt(3).
    streams = all_streams(8)
    a = ReferenceBinaryTree(8).incidence()
    full = max_change(streams @ a, 8, "replace_one")
    cut = max_change(streams @ a[:, :-1], 8, "replace_one")
    assert full == pytest.approx(4.0) and cut == pytest.approx(2.0 * math.sqrt(3.0))


# --------------------------------------------------------------------------------------
# 3. zero noise
# --------------------------------------------------------------------------------------
ZERO_CASES = ([("binary", None), ("padded", None), ("honaker", None)]
              + [("window", w) for w in WINDOWS])
ZERO_IDS = [k + (f"-W{w}" if w else "") for k, w in ZERO_CASES]


@pytest.mark.parametrize("horizon", (1, 2, 3, 7, 8, 9, 100))
@pytest.mark.parametrize(("kind", "window"), ZERO_CASES, ids=ZERO_IDS)
def test_zero_noise_is_exact_cumsum(kind, window, horizon):
    # Catches: a release that drops or double-counts part of the exact prefix (e.g. the
    # expired part of the window tree, a node counted twice), stray noise at z = 0, and a
    # missing NonPrivateWarning.
    rng = np.random.default_rng(11)
    v = rng.normal(size=(horizon, 3))
    v = 0.9 * v / np.maximum(1.0, np.linalg.norm(v, axis=1, keepdims=True))  # no clipping
    expect = np.cumsum(v, axis=0)
    with pytest.warns(NonPrivateWarning):
        a = make_lead(kind, horizon, 3, window, noise_multiplier=0.0, seed=1)
    with pytest.warns(NonPrivateWarning):
        b = make_lead(kind, horizon, 3, window, noise_multiplier=0.0, seed=1)
    assert np.array_equal(a.run(v), expect)
    assert np.array_equal(np.stack([b.add(row) for row in v]), expect)
    assert a.n_clipped_ == 0 and b.n_clipped_ == 0


@pytest.mark.parametrize("horizon", (1, 2, 3, 7, 8, 9, 100))
@pytest.mark.parametrize(("kind", "window"), ZERO_CASES, ids=ZERO_IDS)
def test_zero_noise_equals_reference_pseudo_code(kind, window, horizon):
    # Integer data make every order of summation exact, so the lead and the reference
    # pseudo-code (which sums clean and noisy node values) must agree bit for bit.
    # Catches the same bugs as above, measured against the pseudo-code itself.
    rng = np.random.default_rng(12)
    v = rng.integers(-3, 4, size=(horizon, 2)).astype(float)
    with pytest.warns(NonPrivateWarning):
        lead = make_lead(kind, horizon, 2, window, bound=100.0, noise_multiplier=0.0)
    ref = make_ref(kind, horizon, window).run(v, lambda key: np.zeros(2))
    assert np.array_equal(ref, np.cumsum(v, axis=0))
    assert np.array_equal(lead.run(v), ref)


# --------------------------------------------------------------------------------------
# 4. expired items (WDP spec §9 test 2) and, for every counter, data-independent noise
# --------------------------------------------------------------------------------------
EXPIRE_CASES = ([("window", w, 5 * w + 3) for w in WINDOWS]
                + [("binary", None, 37), ("padded", None, 37), ("honaker", None, 37)])


@pytest.mark.parametrize("mode", ["run", "add"])
@pytest.mark.parametrize(("kind", "window", "horizon"), EXPIRE_CASES,
                         ids=[k + (f"-W{w}" if w else "") for k, w, _ in EXPIRE_CASES])
def test_perturbing_one_item_shifts_later_releases_exactly(kind, window, horizon, mode):
    # Catches: noise that depends on the data (a clean/noisy mix-up in a node, noise drawn
    # in a data-dependent order), an expired item still entering through a noisy node with
    # a stale value, a release at t < i that already sees item i (off-by-one in the tree),
    # and a changed item that is dropped from or double-counted in later releases.
    rng = np.random.default_rng(5)
    v = rng.normal(size=(horizon, 3))
    v = 0.9 * v / np.maximum(1.0, np.linalg.norm(v, axis=1, keepdims=True))
    wp = pow2(window) if window else horizon
    for i in sorted({1, 2, min(wp, horizon), min(wp + 1, horizon), horizon // 2, horizon}):
        v2 = v.copy()
        v2[i - 1] = np.array([600.0, -500.0, 400.0])  # norm 877 <= bound
        delta = v2[i - 1] - v[i - 1]
        outs = []
        for data in (v, v2):
            c = make_lead(kind, horizon, 3, window, bound=1e3, seed=3)
            outs.append(c.run(data) if mode == "run" else np.stack([c.add(x) for x in data]))
        diff = outs[1] - outs[0]
        assert np.array_equal(diff[: i - 1], np.zeros((i - 1, 3))), f"i={i}: t<i changed"
        np.testing.assert_allclose(diff[i - 1:], np.broadcast_to(delta, diff[i - 1:].shape),
                                   rtol=0, atol=1e-9, err_msg=f"i={i}")
        if kind == "window":
            # the noisy part (release minus the exact sum of items <= t - W') is unchanged
            # once item i has expired
            for t in range(i + wp, horizon + 1):
                noisy = [out[t - 1] - d[: t - wp].sum(axis=0)
                         for out, d in zip(outs, (v, v2), strict=True)]
                np.testing.assert_allclose(noisy[1], noisy[0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("window", WINDOWS)
def test_reference_window_tree_expired_items(window):
    # The reference itself satisfies WDP §9 test 2 with fixed node noise (sanity check of
    # the reference that the lead is compared with).
    horizon, wp = 5 * window + 3, pow2(window)
    rng = np.random.default_rng(6)
    table: dict = {}

    def noise(key):
        return table.setdefault(key, rng.normal(scale=1e3, size=2))

    v = rng.normal(size=(horizon, 2))
    ref = ReferenceWindowTree(horizon, window)
    base = ref.run(v, noise)
    for i in (1, wp + 1, horizon):
        v2 = v.copy()
        v2[i - 1] += [700.0, -300.0]
        diff = ref.run(v2, noise) - base
        assert np.array_equal(diff[: i - 1], np.zeros((i - 1, 2)))
        np.testing.assert_allclose(diff[i + wp - 1:], np.broadcast_to(v2[i - 1] - v[i - 1],
                                   diff[i + wp - 1:].shape), rtol=0, atol=1e-9)


# --------------------------------------------------------------------------------------
# 5. analytic variance against the probed linear structure
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("label", "kind", "horizon", "window"), PROBE_CASES, ids=PROBE_IDS)
def test_variance_matches_probed_structure(monkeypatch, label, kind, horizon, window):
    # Catches: variance(t) that counts nodes instead of the weights actually applied
    # (Honaker), ignores padding, uses popcount where the window tree uses
    # popcount(j)+popcount(W'-j), or is off by one in t.
    c, _, counter = probe(monkeypatch, kind, horizon, window, "run")
    units = (c**2).sum(axis=1)  # variance of release t in units of one draw's variance
    ts = np.arange(1, horizon + 1)
    var = np.asarray(counter.variance(ts))
    np.testing.assert_allclose(var / counter.noise_scale**2, units, rtol=1e-12)
    np.testing.assert_allclose(var / var[0], units / units[0], rtol=1e-12)
    _, r = linear_structure(make_ref(kind, horizon, window))
    np.testing.assert_allclose(units, (r**2).sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("horizon", (8, 16, 100))
def test_honaker_variance_at_powers_of_two(monkeypatch, horizon):
    # Honaker's estimate of a complete subtree of 2^l leaves has variance 2^l/(2^(l+1)-1)
    # node units: 4/7 at t = 4 and 8/15 at t = 8. Catches an estimator that weights the
    # node and its children equally, or forgets to recurse into the children's estimates.
    c, _, counter = probe(monkeypatch, "honaker", horizon, None, "add")
    units = (c**2).sum(axis=1)
    assert units[3] == pytest.approx(4 / 7, rel=1e-12)
    assert units[7] == pytest.approx(8 / 15, rel=1e-12)
    assert counter.variance(4) / counter.noise_scale**2 == pytest.approx(4 / 7, rel=1e-12)
    assert counter.variance(8) / counter.noise_scale**2 == pytest.approx(8 / 15, rel=1e-12)
