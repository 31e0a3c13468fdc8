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
    accelerators: Number,
    usd_per_accelerator_hour: float,
    infrastructure_overhead: float,
    accelerators_per_instance: int = 1,
) -> Number:
    """USD per hour of `accelerators` busy serving, bought as whole instances of `accelerators_per_instance`
    (engine/offers.py): their price plus the infrastructure overhead on top. A fleet serves around the clock, so
    start-up and billing increments do not change its hourly rate."""
    paid = np.ceil(np.asarray(accelerators) / accelerators_per_instance) * accelerators_per_instance
    out = paid * usd_per_accelerator_hour * (1.0 + infrastructure_overhead)
    return float(out) if np.ndim(out) == 0 else out  # type: ignore[return-value]
