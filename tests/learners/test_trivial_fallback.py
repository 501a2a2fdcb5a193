"""WithTrivialFallback: the prior and the gate, their privacy, and run against the loop."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from fallback_cases import inner as _inner
from fallback_cases import stream as _stream
from fallback_cases import weak_signal_runs

from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners._fallback_budget import gate_start
from dpol.learners.trivial_fallback import WithTrivialFallback, block_sums, fallback_budget


def _wrapped(z_prior=2.0, z_gate=3.0, seed=2, **kw):
    return WithTrivialFallback(_inner(**kw), prior_multiplier=z_prior,
                               gate_multiplier=z_gate, seed=seed)


@pytest.mark.parametrize("outputs", [1, 3])
def test_run_gives_the_learn_one_loop(outputs):
    X, y = _stream(outputs=outputs)
    kw = {} if outputs == 1 else {"outputs": outputs}
    a, b = _wrapped(**kw), _wrapped(**kw)
    trace = a.run(X, y)
    loop = []
    for x, label in zip(X, y, strict=True):
        loop.append(b.predict_one(x))
        b.learn_one(x, label)
    assert np.allclose(trace.model_predictions, np.array(loop), atol=1e-9)
    assert len(a.releases_) == len(b.releases_) == 9  # blocks 1, 2, ..., 128, then 45 rows
    for (n_a, p_a, e_a), (n_b, p_b, e_b) in zip(a.releases_, b.releases_, strict=True):
        assert n_a == n_b and np.allclose(p_a, p_b)
        np.testing.assert_allclose(e_a, e_b)  # nan where the gate skips the block
    # 300 rows: the gate skips the blocks ending by row 300 // 4 = 75 (1, 2, ..., 32)
    assert [bool(np.isnan(e)) for _, _, e in a.releases_] == [True] * 6 + [False] * 3
    assert a.uses_model == b.uses_model and np.allclose(a.prior, b.prior)


def _replay(releases, margins, y, b=0.0, gate_from=0):
    """The predictions, gate state and prior replayed from ``releases_`` by the module
    docstring's formulas at zero noise (every std 0): each block's label sum and model
    error count are the exact ones (no count in the blocks ending at or before row
    ``gate_from``), the prior's errors are counted on the labels (not read off the
    sums), and the model predicts where d < 0 or the prior's rate is exactly 0."""
    num, gate, weight, gate_weight, start, uses, expected = 0.0, 0.0, 0.0, 0.0, 0, False, []
    for n, labels, errors in releases:
        rows = slice(start, start + n)
        prior = num / weight if weight else 0.0
        assert labels == pytest.approx(y[rows].sum())
        trivial = np.sum(y[rows] != (1 if prior > 0 else -1))
        expected.extend(margins[rows] - b if uses else np.full(n, prior - b))
        if start + n > gate_from:
            assert errors == np.sum(np.where(margins[rows] > 0, 1, -1) != y[rows])
            gate, gate_weight = gate + n * (errors - trivial), gate_weight + n * n
        else:
            assert np.isnan(errors)
        num, weight = num + n * labels, weight + n * n
        uses = bool((gate_weight and gate / gate_weight < 0) or num == 0)
        start += n
    return np.array(expected), uses, num / weight


def test_zero_noise_gives_the_exact_statistics():
    X, y = _stream()
    with pytest.warns(NonPrivateWarning):  # the non-private twin says so
        twin, inner = _inner(epsilon=math.inf), _inner(epsilon=math.inf)
    margins = twin.run(X, y).prequential_predictions
    for gate_from in (0, 127):  # the gate in every block, or after row 300 // 4 = 75
        with pytest.warns(NonPrivateWarning):
            inner = _inner(epsilon=math.inf)
        m = WithTrivialFallback(inner, prior_multiplier=0.0, gate_multiplier=0.0, seed=0,
                                gate_from=gate_from)
        out = m.run(X, y).model_predictions
        assert [n for n, _, _ in m.releases_] == [1, 2, 4, 8, 16, 32, 64, 128, 45]
        expected, uses, prior = _replay(m.releases_, margins, y,
                                        gate_from=gate_start(len(y), gate_from))
        np.testing.assert_allclose(out, expected, atol=1e-12)
        assert m.uses_model == uses and uses  # the model beats the prior here
        assert m.prior == pytest.approx(prior)
        assert m.privacy.epsilon == math.inf


def test_an_offset_judges_the_classes_of_the_labels_and_of_m_plus_b():
    # a learner fitting y - b (b = 0.4, public) inside a wrapper told the offset: without
    # noise its label sums are the labels' own, and each error count compares the class
    # of m_t + b (the class the estimator predicts) with y's class
    X, y = _stream()
    b = 0.4
    with pytest.warns(NonPrivateWarning):
        twin, inner = (_inner(epsilon=math.inf, y_bound=1.0 + b) for _ in range(2))
    m = WithTrivialFallback(inner, prior_multiplier=0.0, gate_multiplier=0.0, offset=b,
                            gate_from=0)
    out = m.run(X, y - b).model_predictions
    margins = twin.run(X, y - b).prequential_predictions + b
    expected, uses, prior = _replay(m.releases_, margins, y, b)
    np.testing.assert_allclose(out, expected, atol=1e-12)  # centred, as the learner's
    assert m.uses_model == uses and m.prior == pytest.approx(prior)
    assert m.predict_one(X[0]) == pytest.approx(inner.predict_one(X[0]) if uses
                                                else m.prior - b)
    with pytest.raises(InvalidInputError, match="offset must be 0 with link='logit'"):
        WithTrivialFallback(_inner(), prior_multiplier=1.0, gate_multiplier=1.0,
                            link="logit", offset=b)
    with pytest.raises(InvalidInputError, match="offset must be a finite number"):
        WithTrivialFallback(_inner(), prior_multiplier=1.0, gate_multiplier=1.0,
                            offset=float("nan"))


@pytest.mark.parametrize("outputs", [1, 3])
def test_the_prior_errors_read_off_a_label_sum_are_the_counted_ones(outputs):
    _, y = _stream(n=50, outputs=outputs)
    m = _wrapped(**({} if outputs == 1 else {"outputs": outputs}))
    labels, classes = m._labels(y)
    for c in ((-1, 1) if outputs == 1 else range(outputs)):
        assert m.prior_errors(50, labels.sum(axis=0), c) == pytest.approx(np.sum(classes != c))


def test_a_prior_within_its_noise_of_the_boundary_lets_the_model_predict():
    # a gate that never opens (threshold 1e300): the model predicts exactly where the
    # released prior's rate lies within `significance` of its public std, z 2 / sqrt(W),
    # of 0 (replayed from releases_); a noiseless prior of a balanced-but-not-even stream
    # is never within 0 stds of 0, and the cases cover both outcomes
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(300, 3)) / 3, np.where(rng.random(300) < 0.5, -1.0, 1.0)
    seen = set()
    for z_prior, significance, seed in itertools.product((0.0, 5.0), (0.0, 1.0, 3.0), range(3)):
        m = WithTrivialFallback(_inner(), prior_multiplier=z_prior, gate_multiplier=1.0,
                                threshold=1e300, significance=significance, seed=seed,
                                gate_from=0)
        m.run(X, y)
        n = np.array([r[0] for r in m.releases_], dtype=float)
        rate = n @ np.array([r[1] for r in m.releases_]) / (n @ n)
        expected = bool(abs(rate) <= significance * z_prior * 2.0 / math.sqrt(n @ n))
        assert m.uses_model == expected, (z_prior, significance, seed)
        seen.add(expected)
    assert seen == {True, False}


def test_in_the_first_blocks_the_prior_predicts_even_where_it_is_a_coin_flip():
    # a gate that never opens and a prior noisy enough (z = 5) to be a coin flip on a
    # balanced stream: after each release the model predicts exactly where the coin-flip
    # rule holds *and* the released block was the gate's (it ends after gate_start = 75
    # of 300 rows); the rule as it was (the coin flips in the first blocks too) would let
    # the model predict there, and the cases cover both outcomes
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(300, 3)) / 3, np.where(rng.random(300) < 0.5, -1.0, 1.0)
    seen = {True: set(), False: set()}
    for seed, early in itertools.product(range(4), (False, True)):
        m = WithTrivialFallback(_inner(), prior_multiplier=5.0, gate_multiplier=1.0,
                                threshold=1e300, seed=seed)
        m._coin_flips_early = early
        for t, (x, v) in enumerate(zip(X, y, strict=True)):
            before = len(m.releases_)
            m.learn_one(x, v)
            if len(m.releases_) == before:
                continue
            n = np.array([r[0] for r in m.releases_], dtype=float)
            w = np.where(np.cumsum(n) <= gate_start(300), (5.0 / m.early_multiplier) ** 2, 1.0)
            rate = (w * n) @ np.array([r[1] for r in m.releases_]) / (w @ n**2)
            coin = bool(abs(rate) <= 5.0 * 2.0 / math.sqrt(w @ n**2))
            gated = t + 1 > gate_start(300)
            assert m.uses_model == (coin and (gated or early)), (seed, early, t)
            assert not m.gate_open  # the model predicts by the coin-flip rule alone
            seen[gated].add(m.uses_model)
    # the first blocks: never the model (the rule as it was let it in); the later: both
    assert seen == {False: {False, True}, True: {False, True}}
    early_only = [WithTrivialFallback(_inner(), prior_multiplier=5.0, gate_multiplier=1.0,
                                      threshold=1e300, seed=s) for s in range(4)]
    for m in early_only:
        for x, v in zip(X[:75], y[:75], strict=True):
            m.learn_one(x, v)
            assert not m.uses_model


@pytest.mark.parametrize("offset", [0.0, 0.4])
def test_the_noise_has_the_stated_scale_and_not_two_thirds_or_three_halves_of_it(offset):
    # 600 wrappers on a 3-row stream release 2 blocks each: 1,200 residuals per mechanism.
    # Their mean square over the stated variance has std sqrt(2 / 1200) = 0.041 about 1,
    # so the right scale lies within 4 of them (0.16) of 1, while 2/3 or 3/2 of the scale
    # puts the ratio at 2.25 or 0.44, more than 0.16 away. With a centre b = 0.4 the
    # learner fits y - b within y_bound 1.4, but the prior sums the +-1 labels: its std
    # is still 2 z_prior (the learner's window, 2.8 z_prior, would put the ratio at 0.51).
    X, y = _stream(n=3)
    z_prior, z_gate = 1.5, 2.5
    label_res, error_res = [], []
    for seed in range(600):
        m = WithTrivialFallback(_inner(horizon=3, seed=seed, y_bound=1.0 + offset),
                                prior_multiplier=z_prior, gate_multiplier=z_gate,
                                seed=10_000 + seed, offset=offset, gate_from=0)
        # the wrapper's model predictions
        inner, model = _inner(horizon=3, seed=seed, y_bound=1.0 + offset), []
        for x, v in zip(X, y - offset, strict=True):
            model.append(inner.predict_one(x))
            inner.learn_one(x, v)
        model = np.array(model)
        m.run(X, y - offset)
        start = 0
        for n, labels, errors in m.releases_:
            exact_labels, exact_errors = block_sums(model[start:start + n] + offset,
                                                    y[start:start + n],
                                                    np.where(y[start:start + n] > 0, 1, -1))
            label_res.append(labels - exact_labels)
            error_res.append(errors - exact_errors)
            start += n
    # stds: the label sum's 2 L z_prior (L = 1: +-1 labels), the error count's 1 z_gate
    for res, std in ((label_res, z_prior * 2.0), (error_res, z_gate * 1.0)):
        ratio = float(np.mean(np.square(res))) / std**2
        assert abs(ratio - 1.0) < 0.16
        for wrong in (2 / 3, 3 / 2):
            assert abs(ratio / wrong**2 - 1.0) > 0.16


def test_the_first_blocks_release_the_prior_alone_on_both_budgets():
    # 12 rows: the gate skips the blocks ending by row 12 // 4 = 3 (1 and 2 rows), where
    # the label sum alone has std 2 z_early, 1 / z_early^2 = 1 / z_prior^2 + 1 / z_gate^2:
    # the mu^2 the later blocks' two releases spend together, so the stated events hold
    # for every row. 300 wrappers give 600 residuals of each kind; the mean square over
    # the stated variance has std sqrt(2 / 600) = 0.058, so the right scale lies within
    # 0.23 (4 of them) of 1 while 2/3 or 3/2 of it (ratios 2.25, 0.44) is more than 0.23
    # away; z_prior alone (the later blocks' scale) would put the early ratio at
    # (1.5 / 1.286)^2 = 1.36, also more than 0.23 away.
    X, y = _stream(n=12)
    z_prior, z_gate = 1.5, 2.5
    early, late = [], []
    for seed in range(300):
        m = WithTrivialFallback(_inner(horizon=12, seed=seed), prior_multiplier=z_prior,
                                gate_multiplier=z_gate, seed=20_000 + seed)
        m.run(X, y)
        start = 0
        for n, labels, errors in m.releases_:
            residual = labels - y[start:start + n].sum()
            (early if start + n <= 3 else late).append(residual)
            assert np.isnan(errors) == (start + n <= 3)
            start += n
    z_early = 1.0 / math.sqrt(z_prior ** -2 + z_gate ** -2)
    assert m.early_multiplier == pytest.approx(z_early)
    for res, std in ((early, 2.0 * z_early), (late, 2.0 * z_prior)):
        ratio = float(np.mean(np.square(res))) / std**2
        assert abs(ratio - 1.0) < 0.23
        for wrong in (2 / 3, 3 / 2):
            assert abs(ratio / wrong**2 - 1.0) > 0.23
    early_ratio = float(np.mean(np.square(early))) / (2.0 * z_prior) ** 2
    assert abs(early_ratio - 1.0) > 0.23  # not the later blocks' scale
    # the guarantee is the two events' (one row costs the same in every block)
    names = [e.name for e in m.privacy_events()[-2:]]
    assert names == ["trivial fallback: prior", "trivial fallback: gate"]


@pytest.mark.parametrize(("z_prior", "z_gate"), [(0.0, 3.0), (2.0, 0.0), (0.0, 0.0)])
def test_a_mechanism_without_noise_makes_the_guarantee_infinite(z_prior, z_gate):
    # a zero multiplier releases exact sums (z_gate = 0 also leaves the first blocks'
    # prior without noise: z_early = 0); the guarantee beside a private learner must
    # say so, not state the learner's and the other mechanism's epsilon alone
    X, y = _stream(n=12)
    m = WithTrivialFallback(_inner(horizon=12), prior_multiplier=z_prior,
                            gate_multiplier=z_gate, seed=0)
    m.run(X, y)
    if z_gate == 0.0:  # the first block (row 0) is released exactly
        assert m.releases_[0][1] == y[0]
    assert math.isfinite(m.learner.privacy.epsilon)
    assert m.privacy.epsilon == math.inf


@pytest.mark.parametrize("outputs", [1, 3])
def test_the_sensitivities_are_the_largest_changes_of_the_block_sums(outputs):
    # Every stream of 7 labels (blocks of 1, 2, 4 rows) against every neighbour that
    # replaces one label, given fixed model margins (the outputs the gate is conditioned
    # on): the l2 distance of the vectors of block sums. The prior's errors are read off
    # the released label sums, so they need no sensitivity of their own.
    rng = np.random.default_rng(0)
    m = _wrapped(**({} if outputs == 1 else {"outputs": outputs}))
    alphabet = [np.array(v) for v in ([-1.0], [1.0])] if outputs == 1 \
        else list(np.eye(outputs))
    model = rng.normal(size=(7, outputs)) if outputs > 1 else rng.normal(size=7)
    blocks = [slice(0, 1), slice(1, 3), slice(3, 7)]

    def sums(stream):
        y = np.array(stream) if outputs > 1 else np.array(stream)[:, 0]
        labels, classes = m._labels(y)
        out = [block_sums(model[b], labels[b], classes[b]) for b in blocks]
        return np.concatenate([np.ravel(s) for s, _ in out]), np.array([e for _, e in out])

    most = np.zeros(2)
    for stream in itertools.product(range(len(alphabet)), repeat=7):
        base = sums([alphabet[i] for i in stream])
        for t, other in itertools.product(range(7), range(len(alphabet))):
            if other <= stream[t]:  # each unordered pair once
                continue
            changed = [alphabet[i] for i in (*stream[:t], other, *stream[t + 1:])]
            new = sums(changed)
            most = np.maximum(most, [np.linalg.norm(base[0] - new[0]),
                                     np.linalg.norm(base[1] - new[1])])
    assert most[0] == pytest.approx(m.prior_sensitivity)
    assert most[1] == pytest.approx(m.gate_sensitivity)


def test_the_guarantee_composes_to_the_target():
    z_prior, z_gate, rest = fallback_budget(1.0, 1e-5)
    m = WithTrivialFallback(_inner(epsilon=rest, delta=1e-5), prior_multiplier=z_prior,
                            gate_multiplier=z_gate, seed=0, epsilon=1.0)
    assert len(m.privacy_events()) == len(m.learner.privacy_events()) + 2
    assert m.privacy.epsilon == pytest.approx(1.0, rel=1e-6)


def test_it_keeps_the_prior_where_the_model_is_no_better_and_the_model_where_it_is():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 3)) / 3
    noise = np.where(rng.random(3000) < 0.9, -1.0, 1.0)  # 90% one class, X irrelevant
    z_prior, z_gate, rest = fallback_budget(1.0, 1e-5)
    keep = WithTrivialFallback(_inner(horizon=3000, epsilon=rest), prior_multiplier=z_prior,
                               gate_multiplier=z_gate, seed=0, epsilon=1.0)
    keep.run(X, noise)
    assert not keep.uses_model and keep.prior < 0
    assert np.all(keep.predict_rows(X[:5]) == keep.prior)
    signal = np.where(X[:, 0] > 0, 1.0, -1.0)
    use = WithTrivialFallback(_inner(horizon=3000, epsilon=rest), prior_multiplier=z_prior,
                              gate_multiplier=z_gate, seed=0, epsilon=1.0)
    use.run(X, signal)
    assert use.uses_model
    assert np.allclose(use.predict_rows(X[:5]), [use.predict_one(x) for x in X[:5]])


def test_the_threshold_moves_only_the_rule_on_the_same_releases():
    # A weak signal (46% of the labels follow x_0, the rest are 70/30 noise): at the
    # horizon the gate's mean error difference d lies half a std below 0. Threshold 0
    # (the estimators' on a long stream) lets the model predict; the one-sided test of
    # one std keeps the prior. The releases are the same bits: the threshold reads them.
    low, one = weak_signal_runs()
    assert low.releases_ == one.releases_
    sd = math.hypot(low.gate_multiplier * low.gate_sensitivity, low._prior_error_std()) / math.sqrt(
        low._gate_weight)
    assert -sd < low._gate_num / low._gate_weight < 0.0 and not low._prior_is_a_coin_flip()
    assert low.uses_model and not one.uses_model
    assert low.gate_open and not one.gate_open  # the gate's rule, not the coin flips


def test_bad_input_is_refused_and_changes_nothing():
    with pytest.raises(InvalidInputError, match="neighbouring"):
        WithTrivialFallback(_inner(neighbouring="add_remove"), prior_multiplier=1.0,
                            gate_multiplier=1.0)
    m = _wrapped(outputs=3)
    X, _ = _stream(n=4, outputs=3)
    with pytest.raises(InvalidInputError, match="one-hot"):
        m.run(X, np.full((4, 3), 0.5))
    with pytest.raises(InvalidInputError, match="one-hot"):
        m.learn_one(X[0], [1.0, 1.0, 0.0])
    assert m.t_ == 0 and m.releases_ == []
    two = _wrapped()
    with pytest.raises(InvalidInputError, match=r"y must be -1 or \+1"):
        two.run(X, np.array([1.0, -1.0, 0.5, 1.0]))
    assert two.t_ == 0 and two.releases_ == [] and two.learner.t_ == 0
    with pytest.raises(InvalidInputError, match=r"learner\.noise must be 'gaussian'"):
        WithTrivialFallback(_inner(noise="secure"), prior_multiplier=1.0,
                            gate_multiplier=1.0)
    used = _inner()
    used.learn_one([0.1, 0.2, 0.3], 1.0)
    with pytest.raises(InvalidInputError, match="fresh"):
        WithTrivialFallback(used, prior_multiplier=1.0, gate_multiplier=1.0)


@pytest.mark.parametrize("method", ["run", "learn_one"])
def test_rows_the_learner_clips_are_said_once_not_silenced(method):
    # the wrapper clips nothing itself: the learner's one ClippingWarning must reach the
    # user (wrapping it once silenced every clip of fallback=True)
    from dpol.errors import ClippingWarning

    X, y = _stream(n=100)
    X = X * 20.0  # norms ~10 against the learner's bound 1: most rows are clipped
    m = _wrapped(horizon=100)
    with pytest.warns(ClippingWarning) as caught:
        if method == "run":
            m.run(X, y)
        else:
            for x, label in zip(X, y, strict=True):
                m.learn_one(x, label)
    assert len([w for w in caught if w.category is ClippingWarning]) == 1
    assert m.n_clipped_ == m.learner.n_clipped_ > 50
