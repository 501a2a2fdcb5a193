"""Which learners of the registry fit K > 2 classes (layer L5): the adapters' and
``dpol run``'s one list."""

from __future__ import annotations

from dpol.adapters.registry import LEARNERS
from dpol.learners import PrivateQuadraticFTL

__all__ = ["MULTI_CLASS_LEARNERS"]

#: the classification learners that fit K > 2 classes: PQFTL with ``outputs=K`` (one Gram
#: matrix for all, the noise of one label: its Privacy section)
MULTI_CLASS_LEARNERS = tuple(name for name, spec in LEARNERS.items()
                             if spec.task == "classification"
                             and spec.cls is PrivateQuadraticFTL)
