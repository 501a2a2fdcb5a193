"""The report's fixed texts for ``benchmarks/utility.py``: its protocol and its targets
(filled in by ``_utility_markdown``)."""

from __future__ import annotations

from _utility_targets import LARGE
from _utility_trivial import BASELINE_SEEDS

__all__ = ["PROTOCOL", "TARGETS"]

#: the protocol, formatted with the learners' keywords and the number of random features
PROTOCOL = """\
**Groups.** The data sets are split, once and in the code (`GROUPS` in
`benchmarks/_utility_data.py`, fixed on 2026-11-28), into a **tuning** group, on which
the defaults may be chosen (the nine sets they were tuned on before, with one
multiclass and one raw-label set; four small or imbalanced binary sets joined it on
2026-11-29, none taken from the other group), and an **evaluation** group that no default is tuned
on: its figures say how the defaults generalise. Each group is reported, and its
targets judged, on its own.

**Protocol.** Each data set is split once (seed 0): 20% held out, the other 80% is the
stream, in the data set's own order (river's files are ordered streams; scikit-learn's
and statsmodels' tables were shuffled once, seed 0). Every private method runs at each
epsilon with delta = min(1e-5, 1/n) (n: stream length; 1e-5 on every set here) under
replace-one neighbouring (one stream element swapped for any other), with noise seeds
0, 1, ...; the split and the stream order do not change with the seed. The
**prequential** score predicts each stream row with the current released model
(`predict_one`) before learning it, averaged over the stream; the **held-out** score is
the final released model's (`predict_one` after the stream) on the held-out rows. dpol's
learners are built by `dpol.adapters.make_learner` with the registry's defaults for
||x|| <= 1, |y| <= 1 and horizon n, and with the adapters' defaults for the keywords they
pass on ({keywords}); giga and ftal, registered with a ridge loss, also run
on classification with the registry's logistic loss and domain (`logistic_options`;
GIGA's own alpha, `GIGA_LOGISTIC_ALPHA`; ftal also with the hinge loss); a method
ending in `+rff` is a learner on {features} random Fourier features of x
(`random_features={features}`, the adapters' bandwidth: a model non-linear in x, with the
same guarantee). The **default** learner of a task is the one `OnlineClassifier()` /
`OnlineRegressor()` uses; the default regressor runs centred as `OnlineRegressor` runs it
(the labels' mean released on `centre_budget` of the budget, the learner on y - b,
predictions b + its own within [-1, 1], the guarantee composed), and the default
classifier inside the trivial fallback as `OnlineClassifier` runs it by default (a
private class prior and a private gate on the model's prequential errors, 30% of the
Gaussian budget, 60% on a short two-class stream, the guarantee composed; at epsilon 0.1
the learner starts after the first blocks, up to 1,023 rows, whose rows feed the prior
alone on the whole budget; its figures without the fallback:
[trivial_fallback.md](trivial_fallback.md)).
Multiclass sets (labels 0..K-1) run the default classifier alone, through
`OnlineClassifier` itself (held out after `fit`, prequential by `partial_fit` row by
row): "not supported" where it refuses K > 2 classes. On the raw-label sets (labels far
from 0) the default regressor also runs as a new user runs it, `make_pipeline(
StandardScaler(), OnlineRegressor(epsilon=e, random_state=s))` on the raw features and
labels, refused at the default `y_bound=1` and fitted again with the range `y_bound=(lo,
hi)` its error names (row "default on raw labels (pipeline)"; not part of the targets). Baselines:
**trivial** = the stream's majority class, or its mean (0 after centring; predict 0 on
the synthetic stream); **twin** = the same dpol learner
at epsilon = inf (no noise); **river** = `LogisticRegression()` / `LinearRegression()`
with progressive validation; **sklearn** = `SGDClassifier(loss="log_loss")` /
`SGDRegressor()` fed by `partial_fit` one row at a time (both non-private, defaults,
with an intercept; multiclass: river's `OneVsRestClassifier`, SGD's own one-vs-rest);
**dp-lib** = diffprivlib's offline `LogisticRegression(epsilon,
data_norm=1)` / `LinearRegression(epsilon, bounds_X=(-1, 1), bounds_y=(-1, 1))`, the
same declared bounds, pure epsilon-DP (delta = 0), its default intercept included
(multiclass: one-vs-rest, epsilon / K per class).

**Preprocessing (the same for every method; outside every guarantee).** Features are
standardised with the training split's mean and standard deviation and each row is
divided by the 95th percentile of the training rows' norms; regression labels are
centred at the training mean and divided by the 95th percentile of |y - mean|. The
declared bounds are then ||x|| <= 1 and |y| <= 1, which about 5% of the stream's rows
exceed and which the private methods enforce by clipping (dpol counts them in
`n_clipped_`). These statistics come from the data without privacy, so the guarantees
stated cover the learning given the scaling, not the scaling: a user would declare such
bounds from public knowledge or spend budget on private estimates. The synthetic streams
have ||x|| = 1 and |y| <= 1 by construction and are used as generated.

**Scores.** Accuracy in % (classification, multiclass); R^2 = 1 - MSE / variance of the
scored labels (regression, in the label's own units; on the same rows it orders methods
as the MSE does; the JSON also has the MSE). A cell is "mean [worst, best]" over the seeds.
"""

#: the targets, as _utility_targets judges them
TARGETS = f"""\
**Targets (the default learner; per group; epsilon = 1 and 0.1).** T1: on every data
set, its prequential loss and its final model's held-out loss are no worse than those of
the **private trivial model** plus one standard error of the trivial held-out score
(sqrt(p(1-p)/n) for accuracy, sd((y - c)^2)/sqrt(n) for the MSE), in the mean over seeds
(against its mean) and in the worst seed (against its expected worst of as many seeds).
The private trivial model is the trivial model learned privately on the whole budget at
the same epsilon (`benchmarks/_utility_trivial.py`): the class prior released per
doubling block, as the trivial fallback releases it, or the labels' mean released once.
It runs on {BASELINE_SEEDS} seeds, and both figures are read off them, not off its own
five seeds, a bar that moved with its luck (on a small stream its sign is wrong in some
seeds, not in others). Under each group's targets, "T1's false alarms" judges the model
itself, on further groups of five seeds, as if it were a learner (against this bar and
the one before), and each miss says how often the model's own worst of five seeds is as
bad: a miss the baseline itself makes in half its draws is weak evidence. The default
learner's own five seeds are one draw too: at epsilon 0.1 another draw moves several
verdicts, so the fallback's choices were made on 30 seeds and their **expected** misses
([trivial_fallback.md](trivial_fallback.md), "The first blocks"): read the counts at 0.1
beside those.
The majority class itself is no target: it is known before the first row and without
noise, and on small streams at small epsilon even the private prior alone misses it
([trivial_fallback.md](trivial_fallback.md)); the tables keep it (column "trivial"), and
the JSON says per data set whether the learner also beats it (`beats_majority`).
T2 (epsilon = 1): on every data set of at least {LARGE:,} rows, it closes at least half
of the gap from the trivial baseline to its non-private twin,
(L_trivial - L) / (L_trivial - L_twin) >= 0.5 on the seed means, on the stream and held
out (n/a where the twin is no better than the trivial baseline). T3: its final model's
held-out score matches or beats diffprivlib's at the same epsilon on at least two thirds
of the data sets. Losses: 1 - accuracy, or the MSE.
"""
