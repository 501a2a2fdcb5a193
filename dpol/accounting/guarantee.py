"""The privacy guarantee every noisy object exposes as ``.privacy``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpol._validation import check_choice, check_int, check_real

__all__ = ["ELEMENT", "NEIGHBOURING_RELATIONS", "PrivacyGuarantee"]

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
        ``None`` for ordinary DP over the whole stream; an int W for window DP (WDP,
        Definition 6): element i is protected, at (epsilon, delta), in the releases at
        times i .. i+W-1 only; later releases may reveal it exactly.
    unit : str
        What is protected: one stream element.

    Examples
    --------
    >>> g = PrivacyGuarantee(1.0, 1e-5)
    >>> g.is_private, g.window
    (True, None)
    >>> str(PrivacyGuarantee(0.5, 0.0, window=64))
    '(0.5, 0)-DP, replace_one, window W=64, unit: one stream element'
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: str = "replace_one"
    window: int | None = None
    unit: str = ELEMENT

    def __post_init__(self) -> None:
        check_real("epsilon", self.epsilon, low=0.0, allow_inf=True)
        check_real("delta", self.delta, low=0.0, high=1.0, high_open=True)
        check_choice("neighbouring", self.neighbouring, NEIGHBOURING_RELATIONS)
        if self.window is not None:
            check_int("window", self.window, low=1)

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
        return f"{text}, unit: {self.unit}"
