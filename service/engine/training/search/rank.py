"""The training planner: the cheapest, the fastest, or the time-vs-cost frontier of the ways to run one training job.

For every candidate (an accelerator and an activation-recomputation mode, as a base TrainingPlan) the layouts of
the search space are enumerated and evaluated in one numpy pass (model/arrays.py: the single estimate's model over
arrays); time does not depend on the price, so each layout is priced on every offer (provider × pricing model) at
once. Then constraints (memory, deadline, budget) and the objective pick among them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ...budget import Checkpoint, unlimited
from ...i18n import _
from ...offers import (
    DEFAULT_MAX_STARTUP_SHARE,
    NEUTRAL,
    Terms,
    billed_seconds,
    buyable,
    instances,
    startup_dominates,
)
from ...units import human_duration, human_usd
from ..intervals import time_factors
from ..model.arrays import Layouts, evaluate_layouts
from ..model.cost import total_usd
from ..model.plan import TrainingPlan
from .misses import nearest_misses
from .pool import Limits, Pool, feasibility, frontier, objective_order
from .space import SearchSpace, enumerate_layouts

# cheapest_p90: the cheapest at the p90 of the cost (training/intervals.py), for a budget that must hold
OBJECTIVES = ("cheapest", "cheapest_p90", "fastest", "pareto")
EXCLUSION_REASONS = (
    "invalid_layout",
    "not_sold",
    "startup_dominates",
    "does_not_fit",
    "misses_deadline",
    "over_budget",
)
FRONTIER_POINTS = 40  # the frontier is thinned to at most this many points, ends kept


@dataclass(frozen=True)
class Offer:
    """One way to pay for the accelerator: a provider's cheapest row of one pricing model."""

    provider: str
    pricing_model: str
    usd_per_hour: float
    price: Any = None  # the catalog Price it came from (None: a price the request gives)
    terms: Terms = NEUTRAL  # what it sells and how it bills (engine/offers.py)
    source: Any = (
        None  # pricing.source_of: the row, its terms and its freshness; "override" for a given price
    )


@dataclass(frozen=True)
class Candidate:
    """An accelerator and recomputation mode to search: the base plan (its layout is ignored) and its offers."""

    plan: TrainingPlan
    offers: tuple[Offer, ...]


class Prepared(NamedTuple):
    """A candidate with its search space enumerated once: the product's size and the layouts build_plan accepts."""

    candidate: Candidate
    grid_size: int
    layouts: Layouts


def prepare(candidates: list[Candidate], space_for: Callable[[TrainingPlan], SearchSpace]) -> list[Prepared]:
    """Each candidate's space (`space_for(plan)`), enumerated."""
    prepared = []
    for candidate in candidates:
        space = space_for(candidate.plan)
        prepared.append(Prepared(candidate, space.grid_size, enumerate_layouts(candidate.plan, space)))
    return prepared


@dataclass(frozen=True)
class Constraints:
    deadline_s: float | None = None
    budget_usd: float | None = None
    quotas: Mapping[str, int] = field(
        default_factory=dict
    )  # provider (lower case) -> most accelerators there
    max_price_age_days: int | None = None
    max_startup_share: float = DEFAULT_MAX_STARTUP_SHARE  # offers.startup_dominates

    def quota(self, provider: str) -> int | None:
        return self.quotas.get(provider.lower())


@dataclass(frozen=True)
class Point:
    """One evaluated configuration: where it runs, how it is laid out, what it takes."""

    candidate: Candidate
    offer: Offer
    data: int
    tensor: int
    pipeline: int
    context: int
    expert: int
    zero_stage: int
    sequence_parallel: bool
    virtual_pipeline: int
    micro_batch: int
    devices: int
    seconds: float
    total_usd: float
    memory_bytes: float
    utilization: float
    accelerator_hours: float
    zero_bubble: bool = False  # the pipeline under ZB-H1 (SearchSpace.pipeline_schedules)
    billed_seconds: float = 0.0  # start-up + run, rounded up to the offer's increment, at least its minimum
    interruptions: float = 0.0  # expected over the run: failures and, on spot, evictions
    evictions: float = 0.0  # of which spot capacity reclaimed
    interruptions_s: float = 0.0  # seconds they lose (restarts and re-done work)

    @property
    def instances(self) -> int:
        return instances(self.devices, self.offer.terms)

    @property
    def plan(self) -> TrainingPlan:
        return self.candidate.plan

    def parallelism(self) -> dict[str, Any]:
        """The layout as `hardware.parallelism` spells it (every degree, 1s included; the schedule when not 1F1B)."""
        layout: dict[str, Any] = {
            "data": self.data,
            "tensor": self.tensor,
            "pipeline": self.pipeline,
            "context": self.context,
            "expert": self.expert,
            "zero_stage": self.zero_stage,
            "sequence_parallel": self.sequence_parallel,
            "virtual_pipeline": self.virtual_pipeline,
        }
        if self.zero_bubble:
            layout["pipeline_schedule"] = "zero_bubble"
        return layout

    def describe(self) -> str:
        if self.total_usd != self.total_usd:  # NaN: searched without a price
            return _("{devices} × {id} (no price): {seconds}").format(
                devices=self.devices, id=self.plan.accelerator.id, seconds=human_duration(self.seconds)
            )
        return (
            f"{self.devices} × {self.plan.accelerator.id} ({self.offer.provider}, {self.offer.pricing_model}): "
            f"{human_duration(self.seconds)}, {human_usd(self.total_usd)}"
        )


@dataclass
class PlanSearch:
    """What the search found: the results for the objective, the frontier, exclusions, nearest misses, stats."""

    results: list[Point]
    frontier: list[Point]
    excluded: dict[str, int]
    nearest_misses: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)


def search(
    prepared: list[Prepared],
    constraints: Constraints,
    objective: str = "pareto",
    limit: int = 5,
    checkpoint_bytes_per_s: float | None = None,
    checkpoint: Checkpoint = unlimited,
) -> PlanSearch:
    """Evaluate every prepared candidate's layouts on its offers and pick under the constraints; stop early when
    `checkpoint` says the time budget is spent (stats `complete` False: the answer ranks what was evaluated)."""
    started = time.perf_counter()
    candidates = [p.candidate for p in prepared]
    pool = Pool(Limits(constraints.deadline_s, constraints.budget_usd, objective, limit))
    considered, layouts_evaluated, invalid, complete = 0, 0, 0, True
    for ci, (candidate, grid_size, layouts) in enumerate(prepared):
        if ci and not checkpoint():
            complete = False
            break
        offers = len(candidate.offers)
        considered += grid_size * offers
        invalid += (grid_size - len(layouts.data)) * offers
        if not len(layouts.data):
            continue
        numbers = evaluate_layouts(candidate.plan, layouts, checkpoint_bytes_per_s)
        layouts_evaluated += len(layouts.data)
        p90 = _p90_factor(candidate.plan) if objective == "cheapest_p90" else None
        for oi, offer in enumerate(candidate.offers):
            on_offer = numbers.on_offer(candidate.plan, offer.terms)  # spot: slower by its evictions
            usd = on_offer.usd(offer.usd_per_hour, candidate.plan, offer.terms)
            sold = buyable(on_offer.devices, offer.terms, constraints.quota(offer.provider))
            share = constraints.max_startup_share
            waiting = startup_dominates(on_offer.devices, on_offer.seconds, offer.terms, share)
            usd_p90 = None
            if (
                p90 is not None
            ):  # the same cost formula at the time's p90: one more array pass, this objective only
                seconds_p90 = on_offer.seconds * p90
                usd_p90 = total_usd(
                    on_offer.devices, seconds_p90, offer.usd_per_hour, candidate.plan, offer.terms
                )
            pool.add(ci, oi, layouts, on_offer, usd, sold, usd_p90, waiting)
    a = pool.arrays()  # the kept rows only (pool.py): the ranking below is exact on them
    fits, in_time, in_budget = feasibility(a["seconds"], a["usd"], a["fits"], pool.limits)
    feasible = np.flatnonzero(fits & in_time & in_budget)
    excluded = {"invalid_layout": int(invalid), **pool.excluded}
    frontier_rows = frontier(a["seconds"], a["usd"], a["memory"], feasible)
    ranked = _rank(a, feasible, objective, frontier_rows)
    point = _pointer(candidates, pool, a)
    results = [point(i) for i in ranked[:limit]]
    thinned = [point(i) for i in _thin(frontier_rows, FRONTIER_POINTS)]
    misses = [] if len(feasible) else nearest_misses(a, (fits, in_time, in_budget), constraints, point)
    stats = {
        "configurations_considered": int(considered),
        "configurations_evaluated": int(pool.evaluated),
        "layouts_evaluated": int(layouts_evaluated),
        "pruned_invalid": int(invalid),
        "feasible": int(pool.feasible),
        "candidates": len(candidates),
        "server_seconds": time.perf_counter() - started,
        "complete": complete,
    }
    return PlanSearch(results, thinned, excluded, misses, stats)


def _rank(
    a: dict[str, np.ndarray], rows: np.ndarray, objective: str, frontier_rows: np.ndarray
) -> np.ndarray:
    """Feasible rows, best first: cheapest (then faster, then less memory), cheapest_p90 (the same at the p90 cost),
    fastest (then cheaper, less memory); pareto ranks its frontier by cost, so its first result is the cheapest plan
    that meets the constraints."""
    if not len(rows):
        return rows
    if objective == "pareto":
        return objective_order(a["seconds"], a["usd"], a["memory"], a["devices"], frontier_rows, "cheapest")
    usd = a["usd_p90"] if objective == "cheapest_p90" else a["usd"]
    return objective_order(a["seconds"], usd, a["memory"], a["devices"], rows, objective)


def _p90_factor(plan: TrainingPlan) -> float:
    """The p90 multiplier on the time of the candidate's class (one lookup per candidate, not per row)."""
    factors = time_factors(plan)
    return factors[1] if factors is not None else 1.0


def _thin(rows: np.ndarray, most: int) -> np.ndarray:
    if len(rows) <= most:
        return rows
    keep = np.unique(np.linspace(0, len(rows) - 1, most).round().astype(np.int64))
    return rows[keep]


def _pointer(candidates: list[Candidate], pool: Pool, a: dict[str, np.ndarray]) -> Any:
    def point(i: int) -> Point:
        ci, oi, part, row = int(a["candidate"][i]), int(a["offer"][i]), int(a["part"][i]), int(a["row"][i])
        _candidate, _offer, lay, numbers, usd, _rows, _fits, _p90 = pool.parts[part]
        terms = candidates[ci].offers[oi].terms
        billed = billed_seconds(float(numbers.seconds[row]), terms)
        return Point(
            candidate=candidates[ci],
            offer=candidates[ci].offers[oi],
            data=int(lay.data[row]),
            tensor=int(lay.tensor[row]),
            pipeline=int(lay.pipeline[row]),
            context=int(lay.context[row]),
            expert=int(lay.expert[row]),
            zero_stage=int(lay.zero_stage[row]),
            sequence_parallel=bool(lay.sequence_parallel[row]),
            virtual_pipeline=int(lay.virtual_pipeline[row]),
            micro_batch=int(lay.micro_batch[row]),
            devices=int(numbers.devices[row]),
            seconds=float(numbers.seconds[row]),
            total_usd=float(usd[row]),
            memory_bytes=float(numbers.memory_bytes[row]),
            utilization=float(numbers.utilization[row]),
            accelerator_hours=float(numbers.accelerator_hours[row]),
            zero_bubble=bool(lay.zero_bubble[row]),
            billed_seconds=billed,
            interruptions=_at(numbers.interruptions, row),
            evictions=_at(numbers.evictions, row),
            interruptions_s=_at(numbers.interruptions_s, row),
        )

    return point


def _at(values: Any, row: int) -> float:
    """A per-layout figure of one row (a scalar when the numbers carry none per layout)."""
    return float(values[row]) if np.ndim(values) else float(values)
