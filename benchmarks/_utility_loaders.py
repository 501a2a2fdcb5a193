"""Offline loaders of the data sets of ``benchmarks/utility.py`` (their list and groups:
``_utility_data.SOURCES`` / ``GROUPS``).

Each loader returns (features, labels) in stream order, read from a file that an
installable package ships (river's bundled files, scikit-learn's ``load_*``,
statsmodels' ``datasets``): nothing is downloaded. Labels are -1 / +1 (classification),
class indices 0..K-1 as floats (multiclass) or real values in their own units
(regression). Which river data sets are bundled: those whose class derives from
``river.datasets.base.FileDataset`` (Phishing, Bananas, Shuttle, TrumpApproval,
ImageSegments, Yeast, SolarFlare, ChickWeights, ...); the ``RemoteDataset`` ones (Elec2,
CreditCard, Higgs, ...) download on first use and are not used here.
"""

from __future__ import annotations

import numpy as np

#: seed of the one shuffle of the tables that have no stream order of their own
SPLIT_SEED = 0
#: the class of river's ImageSegments taken as +1 (one-vs-rest): the first class in
#: alphabetical order, fixed before any run (every class holds 330 of the 2,310 rows)
SEGMENT_CLASS = "brickface"
#: the label of river's Yeast (14 multi-label columns) taken as the binary label: the
#: first column, fixed before any run (31.5% positive)
YEAST_LABEL = "Class1"
#: seed of the generated imbalanced sets (``_imbalanced``, ``_rare_noise``)
IMBALANCED_SEED = 2026


def _shuffled(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    return X[order], y[order]


def _sign(flags) -> np.ndarray:
    return np.where(np.asarray(flags, dtype=bool), 1.0, -1.0)


def _one_hot(values: list, categories: list) -> list[list[float]]:
    """One coordinate per category of the data set's documented schema (public)."""
    return [[float(v == c) for c in categories] for v in values]


def _river_plain(name: str) -> tuple[np.ndarray, np.ndarray]:
    """river's numeric streams, feature order as river gives it (Shuttle: by index)."""
    from river import datasets

    data = {"phishing": datasets.Phishing, "bananas": datasets.Bananas,
            "shuttle": datasets.Shuttle, "trump-approval": datasets.TrumpApproval}[name]()
    rows, labels = [], []
    for x, y in data:
        keys = sorted(x, key=lambda k: int(k[1:])) if name == "shuttle" else list(x)
        rows.append([float(x[k]) for k in keys])
        labels.append(float(y) if name == "trump-approval" else (1.0 if y else -1.0))
    return np.array(rows), np.array(labels)


def _image_segments() -> tuple[np.ndarray, np.ndarray]:
    from river import datasets

    pairs = list(datasets.ImageSegments())
    X = np.array([[float(v) for v in x.values()] for x, _ in pairs])
    return X, _sign([y == SEGMENT_CLASS for _, y in pairs])


def _yeast() -> tuple[np.ndarray, np.ndarray]:
    from river import datasets

    pairs = list(datasets.Yeast())
    X = np.array([[float(v) for v in x.values()] for x, _ in pairs])
    return X, _sign([y[YEAST_LABEL] for _, y in pairs])


def _solar_flare() -> tuple[np.ndarray, np.ndarray]:
    """+1: at least one M- or X-class flare in the next 24 h (3.6% of the rows); the three
    letter-coded columns one-hot over the categories of the UCI description."""
    from river import datasets

    coded = {"zurich-class": list("ABCDEFH"), "largest-spot-size": list("XRSAHK"),
             "spot-distribution": list("XOIC")}
    rows, labels = [], []
    for x, y in datasets.SolarFlare():
        row = [float(x[k]) for k in x if k not in coded]
        for k, cats in coded.items():
            row += _one_hot([x[k]], cats)[0]
        rows.append(row)
        labels.append(y["m-class-flares"] + y["x-class-flares"] > 0)
    return np.array(rows), _sign(labels)


def _chick_weights() -> tuple[np.ndarray, np.ndarray]:
    """Weight in grams (35-373, raw) from the day and the diet (one-hot of 1-4); the
    chick's number is an identifier, not a feature, and is dropped."""
    from river import datasets

    pairs = list(datasets.ChickWeights())
    X = np.array([[float(x["time"]), *_one_hot([x["diet"]], [1, 2, 3, 4])[0]]
                  for x, _ in pairs])
    return X, np.array([float(y) for _, y in pairs])


def _sklearn(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    bunch = getattr(datasets, "load_" + name.replace("-", "_"))()
    if name == "breast-cancer":
        return _shuffled(bunch.data, _sign(bunch.target == 1))
    # diabetes: the raw progression score; iris, wine, digits: class indices 0..K-1
    return _shuffled(bunch.data.astype(float), bunch.target.astype(float))


def _imbalanced() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's ``make_classification``: 2,500 rows, 10 features (4 informative),
    12% positive, 2% of labels flipped, a weak class separation (0.8); parameters and
    seed fixed before any run."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=2500, n_features=10, n_informative=4,
                               weights=[0.88], flip_y=0.02, class_sep=0.8,
                               random_state=IMBALANCED_SEED)
    return X, _sign(y == 1)


def _rare_noise() -> tuple[np.ndarray, np.ndarray]:
    """1,000 rows of 12 standard normal features and a label drawn apart from them, 4%
    positive: nothing to learn, so the majority class is the best model there is."""
    rng = np.random.default_rng(IMBALANCED_SEED)
    return rng.normal(size=(1000, 12)), _sign(rng.random(1000) < 0.04)


def _statsmodels(name: str) -> tuple[np.ndarray, np.ndarray]:
    import importlib

    module = {"mode-choice": "modechoice"}.get(name, name)
    frame = importlib.import_module(f"statsmodels.datasets.{module}").load_pandas().data
    if name == "randhie":
        target = np.log1p(frame["mdvis"].to_numpy(dtype=np.float64))
        features = frame.drop(columns="mdvis")
    elif name == "fair":  # any extramarital affair: statsmodels' own logit example
        target = _sign(frame["affairs"].to_numpy() > 0)
        features = frame.drop(columns="affairs")
    elif name == "star98":  # share of a district's pupils above the national median
        above, below = frame["NABOVE"].to_numpy(float), frame["NBELOW"].to_numpy(float)
        target = above / (above + below)
        features = frame.drop(columns=["NABOVE", "NBELOW"])
    elif name == "anes96":  # the 1996 vote (Dole as +1) from the survey's answers
        target = _sign(frame["vote"].to_numpy() == 1)
        features = frame.drop(columns=["vote", "popul"])  # logpopul kept
    elif name == "mode-choice":  # the travel mode chosen, one row per (person, mode)
        target = _sign(frame["choice"].to_numpy() == 1)
        modes = _one_hot(frame["mode"].tolist(), [1.0, 2.0, 3.0, 4.0])
        features = np.hstack([np.array(modes), frame.drop(
            columns=["individual", "mode", "choice"]).to_numpy(dtype=np.float64)])
        return _shuffled(features, target)
    elif name == "engel":  # household food expenditure (raw, 242-2033) from income
        target = frame["foodexp"].to_numpy(dtype=np.float64)
        features = frame.drop(columns="foodexp")
    else:
        raise ValueError(f"no statsmodels loader for {name!r}")
    return _shuffled(features.to_numpy(dtype=np.float64), target)


def load_packaged(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The raw features and labels of a packaged data set ``name`` in stream order."""
    if name in ("phishing", "bananas", "shuttle", "trump-approval"):
        return _river_plain(name)
    river = {"image-segments": _image_segments, "yeast": _yeast,
             "solar-flare": _solar_flare, "chick-weights": _chick_weights}
    if name in river:
        return river[name]()
    if name in ("breast-cancer", "diabetes", "iris", "wine", "digits"):
        return _sklearn(name)
    if name == "imbalanced":
        return _imbalanced()
    if name == "rare-noise":
        return _rare_noise()
    return _statsmodels(name)
