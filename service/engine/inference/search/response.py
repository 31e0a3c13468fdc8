"""PlanResult → the JSON answer of POST /v1/plans/inference (no physics here).

Cost split (docs/formulas.md "Serving plans"): a replica spends ttft of every batch cycle on prefill and the
rest of the end-to-end time on decode, so the fleet's $/hour is split by those shares of device time: input
tokens carry the prefill share, output tokens the decode share, and the two together pay for every request.
"""

from __future__ import annotations

from typing import Any

from ...i18n import N_, _, num
from ...offers import eviction_down_share, instances
from ...units import SECONDS_PER_HOUR, human_duration
from ..intervals import metric_bounds
from ..model.cost import usd_per_hour
from ..model.schedule import DEFAULT_FRONT_END_LATENCY_S
from .disaggregated import PoolPlan
from .pools_response import disaggregated_section
from .rank import Deployment, PlanResult, replicas_needed
from .request import ServingSearch

SLO_BASIS = N_(
    "steady state at each batch size taken as a replica's concurrency. Under continuous batching (vLLM, SGLang, "
    "TensorRT-LLM) requests join and leave the batch at every engine step and prompts are prefilled in chunks "
    "beside running decodes: the objectives hold at slo.percentile of the TTFT and TPOT distributions "
    '(docs/formulas.md "Continuous batching"). Engines that batch statically prefill a whole batch before '
    "decoding it, so every request of a batch sees the same TTFT and TPOT and the objectives hold for every "
    "request. slo.max_utilization leaves headroom on top of the replicas' capacity."
)


def build_plan_response(result: PlanResult, pools: PoolPlan | None = None) -> dict[str, Any]:
    space = result.search
    disaggregated, section = disaggregated_section(space, result.best, pools, estimate_request)
    rps = space.requests_per_second
    feasible = result.considered - sum(result.exclusions.values())
    return {
        "feasible": result.best is not None or pools is not None,
        "disaggregated": disaggregated,
        "plan": deployment_json(space, result.best) if result.best else None,
        "frontier": [deployment_json(space, d) for d in result.frontier],
        "nearest_misses": [
            {**m, "deployment": deployment_json(space, m["deployment"]) if m["deployment"] else None}
            for m in result.misses
        ],
        "exclusions": result.exclusions,
        "search": {
            "configurations_considered": result.considered,
            "configurations_evaluated": result.evaluated,
            "configurations_feasible": feasible,
            "deployment_groups": space.groups,
            "groups_evaluated": result.groups_checked,
            "complete": result.complete,
            "batch_sizes": {"min": 1, "max": space.max_batch},
            "accelerators": len(space.accelerators),
        },
        "workload": {
            "requests_per_second": rps,
            "input_tokens_per_second": rps * space.prompt_tokens,
            "output_tokens_per_second": rps * space.output_tokens,
            "prompt_tokens": space.prompt_tokens,
            "output_tokens": space.output_tokens,
        },
        "slo": {
            "time_to_first_token_s": space.ttft_s,
            "time_per_output_token_s": space.tpot_s,
            "max_utilization": space.max_utilization,
            "percentile": space.percentile,
            "front_end_latency_s": space.front_end_latency_s,
            "basis": _(SLO_BASIS),
        },
        "disaggregated_serving": section,
        "notes": _notes(result),
    }


def deployment_json(space: ServingSearch, dep: Deployment) -> dict[str, Any]:
    g, ev, w = dep.group, dep.evaluation, dep.plan.workload
    speed, b = ev.speed, w.batch
    ttft, tpot, e2e = (
        speed.time_to_first_token_s or 0.0,
        speed.time_per_output_token_s or 0.0,
        speed.end_to_end_s,
    )
    replica_rps = speed.requests_per_second
    return {
        "accelerator": g.accelerator.id,
        "name": g.accelerator.name,
        "provider": g.price.provider,
        "pricing_model": _pricing_model(g),
        "engine": w.engine,
        "weights": {"precision": w.fmt.precision, "format": w.fmt.name},
        "kv_cache_precision": w.kv_precision,
        "devices_per_replica": g.devices,
        "tensor_parallel": g.devices if w.layout == "tensor" else 1,
        "layout": w.layout,
        "replicas": dep.replicas,
        "total_devices": dep.replicas * g.devices,
        "instances": instances(dep.replicas * g.devices, g.price.terms),
        "instance_type": g.price.terms.instance_type,
        "accelerators_per_instance": g.price.terms.accelerators_per_instance,
        "price_stale": (g.price.source.get("stale") if isinstance(g.price.source, dict) else False),
        "evictions": _evictions(space, dep),
        "batch_size": b,
        "concurrency": dep.replicas * b,
        "latency": {
            "time_to_first_token_s": ttft,
            "time_per_output_token_s": tpot,
            "end_to_end_s": e2e,
            "percentile": space.percentile if speed.percentiles is not None else None,
            "percentiles": speed.percentiles,
            "human": _("TTFT {ttft}, {value} ms per token, {e2e} per request").format(
                ttft=human_duration(ttft), value=num(tpot * 1e3, 1), e2e=human_duration(e2e)
            ),
        },
        "throughput": {
            "requests_per_second_per_replica": replica_rps,
            "output_tokens_per_second_per_replica": speed.output_tokens_per_second,
            "fleet_requests_per_second": dep.replicas * replica_rps,
            "utilization": space.requests_per_second / (dep.replicas * replica_rps),
        },
        "memory": {
            "per_device_bytes": ev.memory.per_device_bytes,
            "capacity_bytes": ev.memory.capacity_bytes,
            "fits": ev.memory.fits,
        },
        "cost": _cost(space, dep, ttft, e2e),
        **_intervals(dep),
        "estimate_request": estimate_request(space, dep),
    }


def _intervals(dep: Deployment) -> dict[str, Any]:
    """p10/p90 of one replica's TTFT, TPOT and output tokens/s and their classes (inference/intervals.py), for the
    answered deployments only."""
    speed = dep.evaluation.speed
    predicted = {
        "output_tokens_per_second": speed.output_tokens_per_second,
        "time_to_first_token_s": speed.time_to_first_token_s,
        "time_per_output_token_s": speed.time_per_output_token_s,
    }
    bounds, basis = metric_bounds(predicted, dep.group.accelerator)
    section = {
        "latency": {m: bounds[m] for m in ("time_to_first_token_s", "time_per_output_token_s")},
        "throughput": {"output_tokens_per_second_per_replica": bounds["output_tokens_per_second"]},
    }
    return {"intervals": section, "interval_basis": basis}


def _cost(space: ServingSearch, dep: Deployment, ttft: float, e2e: float) -> dict[str, Any]:
    """Fleet $/hour at the workload's demand, split into input/output by the prefill share of device time;
    `at_capacity` is one fully busy replica (the figures POST /v1/estimates/inference reports)."""
    g, w = dep.group, dep.plan.workload
    p, o, b = space.prompt_tokens, space.output_tokens, w.batch
    load = dep.evaluation.speed.load
    # continuous batching: the share of engine time in steps that carry prefill (the estimate's rule); static
    # batches: the prefill's share of the batch's time
    prefill_share = load["prefill_time_share"] if load is not None else ttft / e2e
    rps = dep.evaluation.speed.requests_per_second
    usd_per_request = dep.usd_per_hour / SECONDS_PER_HOUR / space.requests_per_second
    replica_per_second = (
        usd_per_hour(g.devices, g.price.usd_per_hour, space.infrastructure_overhead) / SECONDS_PER_HOUR
    )
    otps = dep.evaluation.speed.output_tokens_per_second or 0.0
    return {
        "usd_per_hour": dep.usd_per_hour,
        "usd_per_accelerator_hour": g.price.usd_per_hour,
        "usd_per_million_input_tokens": usd_per_request * prefill_share / p * 1e6,
        "usd_per_million_output_tokens": usd_per_request * (1.0 - prefill_share) / o * 1e6,
        "usd_per_request": usd_per_request,
        "prefill_share": prefill_share,
        "at_capacity": {
            "usd_per_hour_per_replica": replica_per_second * SECONDS_PER_HOUR,
            "usd_per_million_input_tokens": (
                replica_per_second * prefill_share / (rps * p) * 1e6
                if load is not None
                else replica_per_second * ttft / (b * p) * 1e6
            ),
            "usd_per_million_output_tokens": (
                replica_per_second * (1.0 - prefill_share) / (rps * o) * 1e6
                if load is not None
                else replica_per_second * (e2e - ttft) / (b * o) * 1e6
            ),
            "usd_per_million_output_tokens_all_time": replica_per_second / otps * 1e6 if otps else None,
        },
        "infrastructure_overhead": space.infrastructure_overhead,
        "price_source": g.price.source,
    }


def estimate_request(space: ServingSearch, dep: Deployment) -> dict[str, Any]:
    """A POST /v1/estimates/inference body for one replica of this deployment (same numbers, re-derivable)."""
    g, w = dep.group, dep.plan.workload
    precision, named = g.weights
    body: dict[str, Any] = {"model": dict(space.model_request)}
    weights = {k: v for k, v in (("precision", precision), ("format", named)) if v is not None}
    if weights:
        body["weights"] = weights
    cost: dict[str, Any] = (
        {"usd_per_accelerator_hour": g.price.usd_per_hour}
        if g.price.source == "override"
        else {"provider": g.price.provider}
    )
    if g.price.terms.instance_type:
        cost["instance_type"] = g.price.terms.instance_type
    if _pricing_model(g) not in (None, "on-demand"):
        cost["pricing_model"] = _pricing_model(g)
    if space.infrastructure_overhead:
        cost["infrastructure_overhead"] = space.infrastructure_overhead
    if space.as_of:
        cost["as_of"] = space.as_of
    body.update(
        engine=w.engine,
        kv_cache_precision=w.kv_precision,
        batch_size=w.batch,
        prompt_tokens=space.prompt_tokens,
        output_tokens=space.output_tokens,
        hardware={"accelerator": g.accelerator.id, "count": g.devices},
        targets={"time_to_first_token_s": space.ttft_s, "time_per_output_token_s": space.tpot_s},
        slo=_slo_echo(space),
        cost=cost,
        output={"suggestions": False, "recommendations": False},
    )
    if w.schedule.prefix_hit_rate:
        body["workload"] = {"prefix_hit_rate": w.schedule.prefix_hit_rate}
    return body


def _notes(result: PlanResult) -> list[str]:
    space, notes = result.search, []
    unpriced = [a.id for a in space.accelerators if not space.prices.get(a.id)]
    if unpriced:
        notes.append(
            _("Not priced, so not ranked: {unpriced} (counted under exclusions.no_price).").format(
                unpriced=", ".join(unpriced)
            )
        )
    if result.best is not None:
        d = result.best
        notes.append(
            _(
                "Replicas = ceil({requests_per_second:g} req/s ÷ ({max_utilization:g} × "
                "{requests_per_second2:.4g} req/s per replica)) = {replicas}: one replica serves a batch "
                "of {batch} requests every {end_to_end_s:.4g} s."
            ).format(
                requests_per_second=space.requests_per_second,
                max_utilization=space.max_utilization,
                requests_per_second2=d.evaluation.speed.requests_per_second,
                replicas=d.replicas,
                batch=d.plan.workload.batch,
                end_to_end_s=d.evaluation.speed.end_to_end_s,
            )
        )
    return notes


def _evictions(space: ServingSearch, dep: Deployment) -> dict[str, Any]:
    """What spot evictions take from the fleet (search/request.py PriceOption.up_share): the offer's rate, the share of the
    time a replica is down, and the replicas added so that the capacity left still serves the demand."""
    g = dep.group
    down = eviction_down_share(g.devices, g.price.terms)
    plain = int(replicas_needed(space.requests_per_second, dep.evaluation.speed.requests_per_second,
                                space.max_utilization))  # fmt: skip
    return {
        "per_instance_hour": g.price.terms.interruptions_per_hour,
        "fleet_per_hour": g.price.terms.interruptions_per_hour
        * instances(dep.replicas * g.devices, g.price.terms),
        "replica_down_share": down,
        "extra_replicas": max(dep.replicas - plain, 0),
    }


def _pricing_model(g: Any) -> str | None:
    """The priced row's pricing model (None for a price given in the request)."""
    return g.price.source.get("pricing_model") if isinstance(g.price.source, dict) else None


def _slo_echo(space: ServingSearch) -> dict[str, Any]:
    """The estimate body's slo: the percentile, and the front-end latency when the plan request gave its own."""
    slo: dict[str, Any] = {"percentile": space.percentile}
    if space.front_end_latency_s != DEFAULT_FRONT_END_LATENCY_S:
        slo["front_end_latency_s"] = space.front_end_latency_s
    return slo
