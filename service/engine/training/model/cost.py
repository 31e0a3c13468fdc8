"""The one cost formula of a training run: accelerator-hours × the hourly price, plus the infrastructure overhead
(storage, network, orchestration) as a share of that compute cost (docs/formulas.md, "Cost").

Written once over `float | ndarray`: the estimate, its range, the advice's cheaper-part scan and the planner's
search all call `total_usd`; `cost` adds the parts the response shows. The plan carries every cost input but the
price (which the search varies per offer), so a new cost input is a plan field read here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from .plan import TrainingPlan

Number = TypeVar("Number", float, np.ndarray)


def compute_usd(accelerator_hours: Number, usd_per_accelerator_hour: float) -> Number:
    """What the accelerators cost: accelerator-hours × the price of one accelerator for one hour."""
    return accelerator_hours * usd_per_accelerator_hour


def total_usd(accelerator_hours: Number, usd_per_accelerator_hour: float, plan: TrainingPlan) -> Number:
    """Compute cost plus the plan's infrastructure overhead on top of it (a share of the compute cost)."""
    compute = compute_usd(accelerator_hours, usd_per_accelerator_hour)
    return compute + compute * plan.infrastructure_overhead


@dataclass(frozen=True)
class Cost:
    """A run's cost in USD; every USD figure is None when the plan has no price."""

    accelerator_hours: float
    usd_per_accelerator_hour: float | None
    compute_usd: float | None
    infrastructure_usd: float | None
    total_usd: float | None


def cost(plan: TrainingPlan, accelerator_hours: float) -> Cost:
    """The cost of `accelerator_hours` of the plan's accelerator at the plan's price and overhead."""
    usd = plan.usd_per_hour
    if usd is None:
        return Cost(accelerator_hours, None, None, None, None)
    compute = compute_usd(accelerator_hours, usd)
    infrastructure = compute * plan.infrastructure_overhead
    return Cost(accelerator_hours, usd, compute, infrastructure, compute + infrastructure)
