"""The one cost formula of serving: accelerators × the hourly price of one, plus the infrastructure overhead
(load balancers, storage, network) as a share of it (docs/formulas.md, "Cost").

Written once over `float | ndarray`: the estimate, its suggestions, the planner's search (arrays of replica counts)
and the planner's response all call `usd_per_hour`.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

Number = TypeVar("Number", float, np.ndarray)


def usd_per_hour(
    accelerators: Number, usd_per_accelerator_hour: float, infrastructure_overhead: float
) -> Number:
    """USD per hour of `accelerators` busy serving: their price plus the infrastructure overhead on top."""
    return accelerators * usd_per_accelerator_hour * (1.0 + infrastructure_overhead)
