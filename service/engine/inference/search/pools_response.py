"""The serving plan's `disaggregated_serving` section and `disaggregated` mark (search/disaggregated.py's answer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...i18n import N_, _
from ...units import SECONDS_PER_HOUR
from .disaggregated import PoolPlan
from .rank import Deployment
from .request import ServingSearch

Body = Callable[[ServingSearch, Deployment], dict[str, Any]]
NOT_SEARCHED = N_(
    "Not searched: set search.disaggregation true to also price separate prefill and decode pools (DistServe, "
    "Splitwise, NVIDIA Dynamo) of each accelerator, engine and format at any two of the searched tensor degrees."
)
WINS = N_(
    "Separate prefill and decode pools are cheaper than any co-located deployment that meets the objectives."
)
LOSES = N_(
    "A co-located deployment is cheaper than any separate prefill and decode pools that meet the objectives."
)
NONE_FEASIBLE = N_("No pair of prefill and decode pools meets the objectives.")


def disaggregated_section(
    space: ServingSearch, best: Deployment | None, pools: PoolPlan | None, body: Body
) -> tuple[bool, dict[str, Any]]:
    """(whether the pools are the cheapest answer, the section); `body` is response.estimate_request (the
    co-located estimate body, extended with the pools)."""
    if not space.disaggregation:
        return False, {"offered": False, "wins": None, "reason": _(NOT_SEARCHED), "plan": None}
    wins = pools is not None and (best is None or pools.usd_per_hour < best.usd_per_hour)
    reason = NONE_FEASIBLE if pools is None else (WINS if wins else LOSES)
    return wins, {
        "offered": True,
        "wins": wins,
        "reason": _(reason),
        "plan": pools_json(space, pools, body) if pools is not None else None,
    }


def pools_json(space: ServingSearch, pp: PoolPlan, estimate_request: Body) -> dict[str, Any]:

    g, w, speed = pp.group, pp.plan.workload, pp.evaluation.speed
    q = space.percentile
    load = (speed.load or {}).get("disaggregation") or {}
    usd_per_request = pp.usd_per_hour / SECONDS_PER_HOUR / space.requests_per_second
    prefill_share = pp.prefill_usd_per_hour / pp.usd_per_hour
    body = estimate_request(space, Deployment(g, pp.plan, pp.evaluation, 1, pp.usd_per_hour))
    body.pop("batch_size", None)
    body["workload"] = {**body.get("workload", {}), "requests_per_second": space.requests_per_second}
    body["serving"] = {"disaggregation": {name: _pool(pool) for name, pool in _named(pp)}}
    return {
        "accelerator": g.accelerator.id,
        "name": g.accelerator.name,
        "provider": g.price.provider,
        "engine": w.engine,
        "weights": {"precision": w.fmt.precision, "format": w.fmt.name},
        "kv_cache_precision": w.kv_precision,
        "prefill": {**_pool(pp.split.prefill), "utilization": load.get("prefill", {}).get("utilization")},
        "decode": {**_pool(pp.split.decode), "batch_size": pp.decode_batch},
        "total_devices": pp.split.prefill.devices + pp.split.decode.devices,
        "latency": {
            "time_to_first_token_s": speed.at("time_to_first_token_s", q),
            "time_per_output_token_s": speed.at("time_per_output_token_s", q),
            "end_to_end_s": speed.end_to_end_s,
            "kv_transfer_s": load.get("kv_transfer", {}).get("seconds"),
        },
        "cost": {
            "usd_per_hour": pp.usd_per_hour,
            "prefill_usd_per_hour": pp.prefill_usd_per_hour,
            "usd_per_request": usd_per_request,
            "usd_per_million_input_tokens": usd_per_request * prefill_share / space.prompt_tokens * 1e6,
            "usd_per_million_output_tokens": usd_per_request
            * (1.0 - prefill_share)
            / space.output_tokens
            * 1e6,
        },
        "estimate_request": body,
    }


def _named(pp: PoolPlan) -> tuple[tuple[str, Any], ...]:
    return (("prefill", pp.split.prefill), ("decode", pp.split.decode))


def _pool(pool: Any) -> dict[str, Any]:
    return {"tensor_parallel": pool.tensor_parallel, "replicas": pool.replicas}
