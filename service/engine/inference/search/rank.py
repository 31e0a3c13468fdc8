"""The serving planner: the cheapest deployment of a token workload that meets a TTFT and a TPOT objective.

Search: every deployment group (accelerator × engine × weight format × KV precision × devices per replica) is
checked once (engine/format/KV support, tensor-degree rule, price, memory via the single estimate's
max_batch_size), then every batch size 1..max that fits is evaluated at once in arrays (bulk.py: speed.py's
formulas over numpy vectors). A replica serves `b` requests per end-to-end time (the estimator's batching
model); the fleet is ceil(demand ÷ (max_utilization × replica throughput)) replicas, priced at the cheapest
provider listing the accelerator. The best plan and every frontier point are re-evaluated through the single
estimate (evaluate.py), and their reported figures are that evaluation's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...budget import Checkpoint, unlimited
from ...hardware import Accelerator
from ...offers import limit_of
from ..model.arrays import BatchSpeeds
from ..model.continuous import load_speeds
from ..model.cost import usd_per_hour
from ..model.evaluate import InferenceEvaluation, evaluate
from ..model.formats import ENGINE_KV_PRECISIONS, WeightFormat, default_kv_precision, resolve_weight_format
from ..model.memory import Workload, max_batch_size
from ..model.plan import InferencePlan
from ..model.schedule import Schedule, default_scheduler, seqs_limit
from ..request import hardware_problems
from .misses import Misses, nearest_misses
from .request import PriceOption, ServingSearch

STACKED = 32  # groups whose continuous-batching curves are computed in one array (continuous.load_speeds)
REASONS = (
    "unsupported_engine",
    "unsupported_format",
    "unsupported_kv_precision",
    "invalid_devices",
    "no_price",
    "does_not_fit",
    "above_max_num_seqs",
    "misses_ttft",
    "misses_tpot",
    "too_many_replicas",
    "not_sold",
)
_PROBLEM_REASON = {
    "engine": "unsupported_engine",
    "weights.format": "unsupported_format",
    "weights.precision": "unsupported_format",
    "kv_cache_precision": "unsupported_kv_precision",
}


def replicas_needed(demand_rps: Any, replica_rps: Any, max_utilization: float) -> Any:
    """Replicas that serve `demand_rps` with each at most `max_utilization` busy (scalars or arrays); the
    1e-12 keeps an exact multiple from rounding up on float noise."""
    return np.maximum(np.ceil(demand_rps / (max_utilization * replica_rps) * (1.0 - 1e-12)), 1.0)


@dataclass(frozen=True)
class Group:
    """One deployment group that passed every check but memory and latency."""

    accelerator: Accelerator
    price: PriceOption
    workload: Workload  # at batch 1
    weights: tuple[str | None, str | None]  # the (precision, format) option as requested
    devices: int


@dataclass(frozen=True)
class Deployment:
    """A group at one batch size, re-evaluated through the single estimate."""

    group: Group
    plan: InferencePlan
    evaluation: InferenceEvaluation
    replicas: int
    usd_per_hour: float  # the whole fleet


@dataclass(frozen=True)
class _Point:
    usd_per_hour: float
    e2e: float
    group: int
    batch: int


@dataclass
class PlanResult:
    search: ServingSearch
    best: Deployment | None
    frontier: list[Deployment]
    exclusions: dict[str, int]
    considered: int
    evaluated: int
    groups_checked: int
    misses: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = True  # False: the caller's time budget ended the search before every group
    groups: list[Group] = field(default_factory=list)  # those that passed their checks (disaggregated.py)


def search(space: ServingSearch, checkpoint: Checkpoint = unlimited) -> PlanResult:
    """Every deployment group of `space` at every batch size, ranked; stops early (complete False) when
    `checkpoint` says the caller's time budget is spent."""
    exclusions = dict.fromkeys(REASONS, 0)
    groups: list[Group] = []
    points: list[_Point] = []
    misses = Misses()
    considered = evaluated = 0
    complete = True
    pending: list[tuple[Group, int, int]] = []  # evaluated STACKED at a time (continuous.load_speeds)
    known: dict[tuple, Any] = {}  # a group's speeds do not depend on its offer: computed once for its offers
    for multiplicity, reason, group in _groups(space):
        if groups and not checkpoint():
            complete = False
            break
        considered += multiplicity * space.max_batch
        if reason is not None:
            exclusions[reason] += multiplicity * space.max_batch
            continue
        assert group is not None
        pending.append((group, len(groups), multiplicity))
        groups.append(group)
        if len(pending) == STACKED:
            evaluated += _evaluate_pending(space, pending, exclusions, points, misses, known)
            pending = []
    evaluated += _evaluate_pending(space, pending, exclusions, points, misses, known)
    frontier_points = _pareto(points)
    best = frontier_points[0] if frontier_points else None
    result = PlanResult(
        search=space,
        best=_deployment(space, groups, best) if best else None,
        frontier=[_deployment(space, groups, p) for p in _thin(frontier_points, space.frontier_points)],
        exclusions=exclusions,
        considered=considered,
        evaluated=evaluated,
        groups_checked=len(groups),
        complete=complete,
        groups=groups,
    )
    if best is None:
        result.misses = nearest_misses(
            space,
            misses,
            exclusions,
            lambda group, batch: _deployment(space, groups, _Point(0.0, 0.0, group, batch)),
        )
    return result


def _groups(space: ServingSearch) -> Iterator[tuple[int, str | None, Group | None]]:
    """(provider multiplicity, exclusion reason or None, group) for every deployment group of the space."""
    workloads: dict[tuple, Workload | str] = {}
    for acc in space.accelerators:
        prices = space.prices.get(acc.id, ())
        multiplicity = max(1, len(prices))
        offers_by_devices = {devices: _offers_for(space, prices, devices) for devices in space.devices}
        for engine in space.engines:
            for weights in space.formats:
                for kv in space.kv_precisions:
                    key = (engine, weights, kv)
                    if key not in workloads:
                        workloads[key] = _workload(space, engine, weights, kv)
                    w = workloads[key]
                    optional = space.kv_searched_by_default and kv is not None
                    if optional and _redundant(w, workloads.get((engine, weights, None))):
                        continue
                    for devices in space.devices:
                        if isinstance(w, str):
                            yield multiplicity, w, None
                            continue
                        reason = _group_reason(w, acc, weights, devices, prices)
                        if optional and reason == "unsupported_kv_precision":
                            continue
                        offers = offers_by_devices[devices] if reason is None else []
                        if reason is None and not offers:
                            reason = "not_sold"
                        if reason is not None:
                            yield multiplicity, reason, None
                            continue
                        # the configurations are counted once, on the first
                        for k, price in enumerate(offers):
                            yield (
                                (multiplicity if k == 0 else 0),
                                None,
                                Group(acc, price, w, weights, devices),
                            )


def _offers_for(space: ServingSearch, prices: tuple[PriceOption, ...], devices: int) -> list[PriceOption]:
    """The offers worth evaluating for replicas of `devices`: of those that sell them (whole instances, valid
    slices), the cheapest of each kind of terms (instance size, limit, the caller's quota), cheapest first. A fleet
    on larger instances may idle part of one, so the cheapest price per accelerator-hour alone does not decide."""
    best: dict[tuple, PriceOption] = {}
    for option in prices:  # cheapest first
        if not option.sells(devices):
            continue
        t = option.terms
        key = (t.accelerators_per_instance, limit_of(t, space.quotas.get(option.provider.lower())))
        best.setdefault(key, option)
    return list(best.values())


def _redundant(w: Workload | str, default: Workload | str | None) -> bool:
    """A KV precision the search added itself (not asked for) that the engine cannot hold, or that its default
    for the weights already is."""
    return isinstance(w, str) or (isinstance(default, Workload) and default.kv_precision == w.kv_precision)


def _workload(
    space: ServingSearch, engine: str, weights: tuple[str | None, str | None], kv: str | None
) -> Workload | str:
    """The batch-1 workload of (engine, weights, KV), or the exclusion reason when the engine cannot load it."""
    precision, named = weights
    fmt: WeightFormat | None
    fmt, errors = resolve_weight_format(engine, precision, named)
    if fmt is None or errors or (named and space.model.architecture != "transformer"):
        return "unsupported_format"
    kv_precision = kv or default_kv_precision(engine, fmt)
    if kv_precision not in ENGINE_KV_PRECISIONS[engine]:
        return "unsupported_kv_precision"
    scheduler = default_scheduler(engine)
    schedule = Schedule(
        scheduler=scheduler,
        percentile=space.percentile,
        prefix_hit_rate=space.prefix_hit_rate if scheduler == "continuous" else 0.0,
        front_end_latency_s=space.front_end_latency_s,
    )
    return Workload(
        space.model, engine, fmt, kv_precision, 1, space.prompt_tokens, space.output_tokens, schedule=schedule
    )


def _group_reason(
    w: Workload,
    acc: Accelerator,
    weights: tuple[str | None, str | None],
    devices: int,
    prices: tuple[PriceOption, ...],
) -> str | None:
    problems = hardware_problems(w, acc, weights[1])
    for path, reason in _PROBLEM_REASON.items():  # the contract's order: engine, format, KV
        if path in problems:
            return reason
    if devices not in w.counts:
        return "invalid_devices"
    if not prices:
        return "no_price"
    return None


def _evaluate_pending(
    space: ServingSearch,
    pending: list[tuple[Group, int, int]],
    exclusions: dict[str, int],
    points: list[_Point],
    misses: Misses,
    known: dict[tuple, Any],
) -> int:
    """Evaluate the pending groups (in search order), the speeds of those not yet `known` computed in one stack
    (a group's offers share its speeds); returns how many configurations were evaluated."""
    todo: dict[tuple, tuple[Group, int]] = {}
    for group, _, _ in pending:
        key = _speed_key(group)
        if key in known or key in todo:
            continue
        fit = max_batch_size(
            group.workload, group.accelerator, group.devices, upper=searched_batches(space, group)
        )
        if fit:
            todo[key] = (group, fit)
        else:
            known[key] = (0, None, None)
    found = load_speeds(
        [
            (g.workload, g.accelerator, g.devices, np.arange(1, fit + 1, dtype=float))
            for g, fit in todo.values()
        ]
    )
    for (key, (_, fit)), speeds in zip(todo.items(), found, strict=True):
        replicas = replicas_needed(
            space.requests_per_second, speeds.requests_per_second, space.max_utilization
        )
        known[key] = (fit, speeds, replicas)
    return sum(
        _evaluate_group(
            space, group, index, multiplicity, exclusions, points, misses, known[_speed_key(group)]
        )
        for group, index, multiplicity in pending
    )


def searched_batches(space: ServingSearch, group: Group) -> int:
    """search.max_batch_size, or the engine's default max_num_seqs where smaller: a plan's batch runs unqueued."""
    w = group.workload
    return seqs_limit(w.schedule, w.engine, group.accelerator, space.max_batch)


def _speed_key(group: Group) -> tuple:
    return (group.accelerator.id, id(group.workload), group.devices)


def _evaluate_group(
    space: ServingSearch,
    group: Group,
    index: int,
    multiplicity: int,
    exclusions: dict[str, int],
    points: list[_Point],
    misses: Misses,
    found: tuple[int, BatchSpeeds | None, Any],
) -> int:
    """Rank every fitting batch size of one group at its offer (fit, speeds and replicas given); returns how many
    configurations were evaluated."""
    fit, speeds, replicas = found
    runs = searched_batches(space, group)  # batches above the engine's max_num_seqs would queue: not searched
    exclusions["above_max_num_seqs"] += multiplicity * (space.max_batch - runs)
    exclusions["does_not_fit"] += multiplicity * (runs - fit)
    if fit == 0 or speeds is None:
        return 0
    if group.price.terms.interruptions_per_hour > 0.0:  # spot: sized on the capacity evictions leave up
        up_rps = speeds.requests_per_second * group.price.up_share(group.devices)
        replicas = replicas_needed(space.requests_per_second, up_rps, space.max_utilization)
    devices = group.devices
    usd = fleet_usd_per_hour(space, group, replicas)
    ttft_ok = speeds.time_to_first_token_s <= space.ttft_s
    tpot_ok = speeds.time_per_output_token_s <= space.tpot_s
    # the fleet within the replica bound, the offer's max_accelerators and the caller's quota there
    most = limit_of(group.price.terms, space.quotas.get(group.price.provider.lower()))
    within = replicas * devices <= most if most is not None else True
    replicas_ok = (replicas <= space.max_replicas) & within
    feasible = ttft_ok & tpot_ok & replicas_ok
    exclusions["misses_ttft"] += multiplicity * int((~ttft_ok).sum())
    exclusions["misses_tpot"] += multiplicity * int((ttft_ok & ~tpot_ok).sum())
    exclusions["too_many_replicas"] += multiplicity * int((ttft_ok & tpot_ok & ~replicas_ok).sum())
    if feasible.any():
        kept = np.flatnonzero(feasible)
        for i in kept[_pareto_indices(usd[kept], speeds.end_to_end_s[kept])]:
            points.append(_Point(float(usd[i]), float(speeds.end_to_end_s[i]), index, int(i) + 1))
    if points:
        return fit  # something is feasible: the nearest misses will not be asked for
    everywhere = np.ones(fit, dtype=bool)
    misses.offer("lowest_ttft", speeds.time_to_first_token_s, everywhere, index)
    misses.offer("lowest_tpot", speeds.time_per_output_token_s, everywhere, index)
    misses.offer("cheapest_ttft_ok", usd, ttft_ok & replicas_ok, index)
    misses.offer("cheapest_tpot_ok", usd, tpot_ok & replicas_ok, index)
    misses.offer("fewest_replicas", replicas, ttft_ok & tpot_ok, index)
    return fit


def _pareto_indices(cost: np.ndarray, latency: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both cost and latency, cheapest first (ties in cost:
    the lowest latency; then the smallest index)."""
    order = np.lexsort((np.arange(len(cost)), latency, cost))
    lat = latency[order]
    best_before = np.concatenate(([np.inf], np.minimum.accumulate(lat)[:-1]))
    return order[lat < best_before]


def _pareto(points: list[_Point]) -> list[_Point]:
    if not points:
        return []
    cost = np.array([p.usd_per_hour for p in points])
    latency = np.array([p.e2e for p in points])
    return [points[i] for i in _pareto_indices(cost, latency)]


def _thin(points: list[_Point], limit: int) -> list[_Point]:
    """At most `limit` points spread evenly along the frontier, both ends kept."""
    if len(points) <= limit:
        return points
    if limit == 1:
        return points[:1]
    picks = sorted({round(i * (len(points) - 1) / (limit - 1)) for i in range(limit)})
    return [points[i] for i in picks]


def group_plan(space: ServingSearch, group: Group, batch: int) -> InferencePlan:
    """The single estimate's typed plan for one replica of `group` at `batch` (what the estimate body asks)."""
    oh = space.infrastructure_overhead
    return InferencePlan(
        workload=replace(group.workload, batch=batch),
        accelerator=group.accelerator,
        count=group.devices,
        targets={"time_to_first_token_s": space.ttft_s, "time_per_output_token_s": space.tpot_s},
        cost={"provider": group.price.provider, "infrastructure_overhead": oh},
        usd_per_accelerator_hour=group.price.usd_per_hour,
        price_source=group.price.source,
        infrastructure_overhead=oh,
        details=False,
        decimal_places=1,
        suggestions=False,
    )


def _deployment(space: ServingSearch, groups: list[Group], point: _Point) -> Deployment:
    group = groups[point.group]
    plan = group_plan(space, group, point.batch)
    ev = evaluate(plan)
    up_rps = ev.speed.requests_per_second * group.price.up_share(group.devices)  # spot: evictions' capacity
    replicas = int(replicas_needed(space.requests_per_second, up_rps, space.max_utilization))
    return Deployment(group, plan, ev, replicas, float(fleet_usd_per_hour(space, group, replicas)))


def fleet_usd_per_hour(space: ServingSearch, group: Group, replicas: Any) -> Any:
    """USD per hour of `replicas` of the group, bought as whole instances of its offer (model/cost.py)."""
    per = group.price.terms.accelerators_per_instance
    return usd_per_hour(
        replicas * group.devices, group.price.usd_per_hour, space.infrastructure_overhead, per
    )
