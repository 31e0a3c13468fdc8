"""Disaggregated candidates of the serving planner (`search.disaggregation: true`): a prefill pool and a decode pool
of one accelerator, engine, format and KV precision at one offer, any two tensor degrees of the search.

For each pair (prefill degree, decode degree), over arrays (model/disaggregated.py's formulas):
- decode pool: every batch b that fits a decode replica; TPOT(b) = T(b, 0)/tokens per step must meet the objective;
  R_d(b) = ceil(demand ÷ (max_utilization × b/((O − 1)·TPOT(b)))) replicas; the cheapest b is kept.
- prefill pool: the largest utilisation ρ (a grid up to max_utilization and the queue's cap) whose TTFT at the
  percentile (front end + M/D/1 wait + own prefill + KV transfer) meets the objective; R_p = ceil(demand ÷ (ρ ×
  capacity)).
- cost: both pools at the offer's price, whole instances each. The cheapest pair is re-evaluated through the single
  estimate (its body, with the pools and the demand as an arrival rate) and reported from that evaluation.
Mixed accelerators (prefill on one part, decode on another) are not searched: the estimate takes them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...budget import Checkpoint, unlimited
from ...offers import limit_of
from ..model.disaggregated import decode_rate, kv_transfer, prefill_capacity, prefill_seconds
from ..model.engine_step import StepParts, step_parts
from ..model.evaluate import InferenceEvaluation, evaluate
from ..model.memory import max_batch_size
from ..model.plan import InferencePlan
from ..model.prefill_wait import MAX_PREFILL_LOAD, queue_wait, queued_at
from ..model.schedule import Disaggregation, Pool, quantile_q
from .rank import Group, fleet_usd_per_hour, group_plan, replicas_needed, searched_batches
from .request import ServingSearch

LOADS = np.linspace(0.005, 1.0, 200)  # prefill utilisations tried (scaled to the cap)


@dataclass(frozen=True)
class PoolPlan:
    """The cheapest disaggregated deployment found, re-evaluated through the single estimate."""

    group: Group  # the accelerator, workload, offer (devices: the decode degree)
    split: Disaggregation
    decode_batch: int  # the batch per decode replica the search sized the pool at
    plan: InferencePlan
    evaluation: InferenceEvaluation
    usd_per_hour: float
    prefill_usd_per_hour: float


@dataclass(frozen=True)
class _Pair:
    usd_per_hour: float
    group: Group  # at the prefill degree
    prefill: tuple[int, int]  # (degree, replicas)
    decode: tuple[int, int, int]  # (degree, replicas, batch per replica)


def best_disaggregated(
    space: ServingSearch, groups: list[Group], checkpoint: Checkpoint = unlimited
) -> PoolPlan | None:
    """The cheapest pair of pools over the groups' families (accelerator × workload × offer), or None; stops between
    families when `checkpoint` says the caller's time budget is spent (the best found so far is kept)."""
    families: dict[tuple, list[Group]] = {}
    for g in groups:
        if g.workload.schedule.continuous and g.workload.layout == "tensor":
            families.setdefault((g.accelerator.id, id(g.workload), id(g.price)), []).append(g)
    best: _Pair | None = None
    for k, family in enumerate(families.values()):
        if k and not checkpoint():
            break
        found = _family(space, family)
        if found is not None and (best is None or found.usd_per_hour < best.usd_per_hour):
            best = found
    if best is None:
        return None
    acc = best.group.accelerator
    (tp_p, r_p), (tp_d, r_d, b) = best.prefill, best.decode
    return _reevaluate(space, best.group, Pool(acc, tp_p, r_p), Pool(acc, tp_d, r_d), b)


def _family(space: ServingSearch, family: list[Group]) -> _Pair | None:
    """The cheapest pair of degrees of one family, or None."""
    w, acc = family[0].workload, family[0].accelerator
    fits = {g.devices: max_batch_size(w, acc, g.devices, upper=searched_batches(space, g)) for g in family}
    family = [g for g in family if fits[g.devices]]  # one request must fit a replica of either pool
    parts = {g.devices: step_parts(w, acc, g.devices) for g in family}
    decode = {g.devices: _decode_pool(space, g, parts[g.devices], fits[g.devices]) for g in family}
    most = (
        limit_of(family[0].price.terms, space.quotas.get(family[0].price.provider.lower()))
        if family
        else None
    )
    best = None
    for g in family:
        prefill = _prefill_pool(space, g, parts[g.devices], decode)
        for tp_d, (r_p, usd_p) in prefill.items():
            r_d, b, usd_d = decode[tp_d]  # type: ignore[misc]
            within = most is None or r_p * g.devices + r_d * tp_d <= most
            if within and (best is None or usd_p + usd_d < best.usd_per_hour):
                best = _Pair(usd_p + usd_d, g, (g.devices, r_p), (tp_d, r_d, b))
    return best


def _decode_pool(space: ServingSearch, g: Group, p: StepParts, fit: int) -> tuple[int, int, float] | None:
    """(replicas, batch, $/h) of the cheapest decode pool of degree g.devices (`fit` requests fit a replica)
    meeting the TPOT objective."""
    batch = np.arange(1, fit + 1, dtype=float)
    step, rate = decode_rate(p, batch)
    replicas = replicas_needed(space.requests_per_second, rate, space.max_utilization)
    ok = (step / p.tokens_per_step <= space.tpot_s) & (replicas <= space.max_replicas)
    if not ok.any():
        return None
    usd = np.where(ok, fleet_usd_per_hour(space, g, replicas), np.inf)
    i = int(np.argmin(usd))
    return int(replicas[i]), i + 1, float(usd[i])


def _prefill_pool(
    space: ServingSearch, g: Group, p: StepParts, decode: dict[int, tuple[int, int, float] | None]
) -> dict[int, tuple[int, float]]:
    """For each decode degree with a pool: (replicas, $/h) of the cheapest prefill pool of degree g.devices whose
    TTFT at the percentile meets the objective (the KV transfer depends on both degrees)."""
    service = float(prefill_seconds(p))
    capacity = float(prefill_capacity(p))
    load = LOADS * min(space.max_utilization, MAX_PREFILL_LOAD)
    wait = queue_wait(load, service)
    queued = queued_at(load, wait, quantile_q(space.percentile))
    out: dict[int, tuple[int, float]] = {}
    for tp_d, pool in decode.items():
        if pool is None:
            continue
        # over the network (the planner does not place pools in one domain; the estimate may find it faster)
        pools = Disaggregation(Pool(g.accelerator, g.devices, 10**6), Pool(g.accelerator, tp_d, 1))
        transfer, _, _ = kv_transfer(g.workload, pools, service)
        ok = float(p.front_end_s) + service + transfer + queued <= space.ttft_s
        if not ok.any():
            continue
        rho = float(load[np.flatnonzero(ok)[-1]])
        replicas = float(replicas_needed(space.requests_per_second, rho * capacity, 1.0))
        if replicas > space.max_replicas:
            continue
        out[tp_d] = (int(replicas), float(fleet_usd_per_hour(space, g, replicas)))
    return out


def _reevaluate(space: ServingSearch, group: Group, prefill: Pool, decode: Pool, batch: int) -> PoolPlan:
    """The pools through the single estimate at the demand as a Poisson rate (the figures reported)."""
    base = group_plan(space, replace(group, devices=decode.tensor_parallel), 1)
    split = Disaggregation(prefill, decode)
    schedule = replace(
        base.workload.schedule, disaggregation=split, requests_per_second=space.requests_per_second
    )
    price = (group.price.usd_per_hour, group.price.source)
    plan = replace(
        base,
        workload=replace(base.workload, schedule=schedule),
        pool_prices={"prefill": price, "decode": price},
    )
    pre_usd = float(
        fleet_usd_per_hour(space, replace(group, devices=prefill.tensor_parallel), prefill.replicas)
    )
    dec_usd = float(
        fleet_usd_per_hour(space, replace(group, devices=decode.tensor_parallel), decode.replicas)
    )
    return PoolPlan(
        group=replace(group, devices=decode.tensor_parallel),
        split=split,
        decode_batch=batch,
        plan=plan,
        evaluation=evaluate(plan),
        usd_per_hour=pre_usd + dec_usd,
        prefill_usd_per_hour=pre_usd,
    )
