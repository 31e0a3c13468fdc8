"""A serving plan: one configuration (model and format on a part, count, targets, cost inputs), validated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...hardware import Accelerator
from .memory import Workload


@dataclass(frozen=True)
class InferencePlan:
    workload: Workload
    accelerator: Accelerator
    count: int | None  # None = "auto"
    targets: dict[str, float]
    cost: Mapping[str, Any]
    usd_per_accelerator_hour: float | None
    price_source: Any  # "override", the catalog price row used (dict), or None
    infrastructure_overhead: float
    details: bool
    decimal_places: int
    suggestions: bool
    # serving.disaggregation: each pool's (USD per accelerator-hour, price source); None when co-located
    pool_prices: Mapping[str, tuple[float | None, Any]] | None = None
