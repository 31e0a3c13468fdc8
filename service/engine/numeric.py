"""One formula for a scalar and for an array of layouts: the step model's layout-dependent terms take `Num`
(a float or int, or a numpy array of them) and branch through `where`, so that the single estimate
(training/model/step.py) and the planner's array model (training/model/arrays.py) evaluate the same code."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

Num = Any  # float | int | np.ndarray (numpy's operators are untyped for mypy; `Any` keeps both call sites checked)


def where(condition: Num, if_true: Num, if_false: Num) -> Num:
    """`if_true if condition else if_false` for a scalar condition (no numpy on the single estimate's path),
    np.where over an array of conditions. Both branches are evaluated: keep them free of division by zero."""
    if isinstance(condition, np.ndarray):
        return np.where(condition, if_true, if_false)
    return if_true if condition else if_false


def maximum(a: Num, b: Num) -> Num:
    """Python's `max(a, b)` (the first unless the second is greater) for scalars, elementwise over arrays. Written
    out rather than through `where`: the single estimate calls it ~50 times, and the extra call was measurable."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.where(b > a, b, a)
    return b if b > a else a


def minimum(a: Num, b: Num) -> Num:
    """Python's `min(a, b)` (the first unless the second is smaller) for scalars, elementwise over arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.where(b < a, b, a)
    return b if b < a else a


def ceil(x: Num) -> Num:
    """math.ceil for a scalar (as a float), np.ceil over an array."""
    if isinstance(x, np.ndarray):
        return np.ceil(x)
    return float(math.ceil(x))
