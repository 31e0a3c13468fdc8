"""The one cost formula of a training run: the accelerator-hours billed × the hourly price, plus the infrastructure
overhead (storage, network, orchestration) as a share of that compute cost (docs/formulas.md, "Cost").

What is billed is what the offer sells (engine/offers.py): whole instances, from start-up to the end of the run,
rounded up to the billing increment and at least the minimum billed.

Written once over `float | ndarray`: the estimate, its range, the advice's cheaper-part scan and the planner's
search all call `total_usd`; `cost` adds the parts the response shows. The plan carries every cost input but the
price and the offer's terms (which the search varies per offer), so a new cost input is a plan field read here and
nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ...offers import Terms, billed_seconds
from ...units import SECONDS_PER_HOUR
from .plan import TrainingPlan

Number = TypeVar("Number", float, np.ndarray)


def compute_usd(accelerator_hours: Number, usd_per_accelerator_hour: float) -> Number:
    """What the accelerators cost: accelerator-hours × the price of one accelerator for one hour."""
    return accelerator_hours * usd_per_accelerator_hour


def billed_accelerator_hours(devices: Number, run_s: Number, terms: Terms) -> Number:
    """Accelerator-hours paid for: whole instances × (start-up + run, rounded up to the billing increment, at least
    the minimum billed)."""
    per = terms.accelerators_per_instance
    paid_devices = np.ceil(np.asarray(devices) / per) * per
    hours = paid_devices * billed_seconds(run_s, terms) / SECONDS_PER_HOUR
    return float(hours) if np.ndim(hours) == 0 else hours  # type: ignore[return-value]


def total_usd(
    devices: Number,
    run_s: Number,
    usd_per_accelerator_hour: float,
    plan: TrainingPlan,
    terms: Terms | None = None,
) -> Number:
    """Compute cost of the hours billed on `terms` (default: the plan's offer) plus the plan's infrastructure
    overhead on top of it (a share of the compute cost)."""
    hours = billed_accelerator_hours(devices, run_s, plan.offer_terms if terms is None else terms)
    compute = compute_usd(hours, usd_per_accelerator_hour)
    return compute + compute * plan.infrastructure_overhead


@dataclass(frozen=True)
class Cost:
    """A run's cost in USD; every USD figure is None when the plan has no price."""

    accelerator_hours: float  # devices × run hours
    billed_accelerator_hours: float  # whole instances × billed hours (start-up, increments, minimum)
    billed_seconds: float
    instances: int
    usd_per_accelerator_hour: float | None
    compute_usd: float | None
    infrastructure_usd: float | None
    total_usd: float | None


def cost(plan: TrainingPlan, devices: int, run_s: float) -> Cost:
    """The cost of running `devices` of the plan's accelerator for `run_s` seconds on the plan's offer, at its price
    and overhead."""
    terms = plan.offer_terms
    billed_s = billed_seconds(run_s, terms)
    billed = billed_accelerator_hours(float(devices), run_s, terms)
    instances = -(-devices // terms.accelerators_per_instance)
    hours = devices * run_s / SECONDS_PER_HOUR
    usd = plan.usd_per_hour
    if usd is None:
        return Cost(hours, billed, billed_s, instances, None, None, None, None)
    compute = compute_usd(billed, usd)
    infrastructure = compute * plan.infrastructure_overhead
    return Cost(hours, billed, billed_s, instances, usd, compute, infrastructure, compute + infrastructure)
