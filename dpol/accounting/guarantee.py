"""The privacy guarantee every noisy object exposes as ``.privacy``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpol._validation import check_choice, check_int, check_real, fail

__all__ = ["ELEMENT", "NEIGHBOURING_RELATIONS", "SEEDED", "PrivacyGuarantee"]

#: what a seeded guarantee adds to its statement
SEEDED = "seeded noise: private only while the seed stays secret"

#: the unit of privacy of every counter and full-information learner
ELEMENT = "one stream element"

#: ``replace_one``: one element replaced by any other admissible element (the papers'
#: default). ``add_remove``: one element replaced by the null element (zero), which
#: halves every sensitivity; dp-accounting calls this ADD_OR_REMOVE_ONE.
NEIGHBOURING_RELATIONS = ("replace_one", "add_remove")


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (epsilon, delta) guarantee with the relation and unit it protects.

    Parameters
    ----------
    epsilon, delta : float
        The guarantee; ``epsilon=inf`` means no privacy at all.
    neighbouring : {"replace_one", "add_remove"}
        The neighbouring relation on streams.
    window : int or None
        ``None`` for DP over the whole stream; W for window DP (WDP, Definition 6):
        element i is protected in the releases at times i .. i+W-1 only.
    unit : str
        What is protected: one stream element.
    seeded : bool
        True when the noise came from the caller's seed: the guarantee then holds only
        against whoever does not know it (with the seed, the noise can be subtracted).
        False for fresh OS entropy (``seed=None``).

    Examples
    --------
    >>> g = PrivacyGuarantee(1.0, 1e-5)
    >>> g.is_private, g.window
    (True, None)
    >>> print(PrivacyGuarantee(1.0, 1e-5, seeded=True))  # doctest: +NORMALIZE_WHITESPACE
    (1, 1e-05)-DP, replace_one, unit: one stream element; seeded noise: private only
    while the seed stays secret
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: str = "replace_one"
    window: int | None = None
    unit: str = ELEMENT
    seeded: bool = False

    def __post_init__(self) -> None:
        check_real("epsilon", self.epsilon, low=0.0, allow_inf=True)
        check_real("delta", self.delta, low=0.0, high=1.0, high_open=True)
        check_choice("neighbouring", self.neighbouring, NEIGHBOURING_RELATIONS)
        if self.window is not None:
            check_int("window", self.window, low=1)
        if not isinstance(self.seeded, bool):
            raise fail("seeded", "be True or False", self.seeded)

    @property
    def is_private(self) -> bool:
        """False when the release carries no privacy (epsilon is infinite)."""
        return math.isfinite(self.epsilon)

    @property
    def is_pure(self) -> bool:
        """True for pure epsilon-DP (delta == 0)."""
        return self.delta == 0.0

    def __str__(self) -> str:
        delta = f"{self.delta:g}"
        text = f"({self.epsilon:g}, {delta})-DP, {self.neighbouring}"
        if self.window is not None:
            text += f", window W={self.window}"
        text = f"{text}, unit: {self.unit}"
        if self.seeded and self.is_private:
            text += f"; {SEEDED}"
        return text
