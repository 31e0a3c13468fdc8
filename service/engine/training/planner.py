"""The training planner's door: request dict → search → JSON-ready answer (POST /v1/plans/training).

Every plan it answers carries `estimate_request`, a body for POST /v1/estimates/training that reproduces it (the
same accelerator, count, layout, micro-batch, recomputation and price), and the best plan's full estimate is
computed through that door, so what the planner promises is what an estimate says.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..budget import Checkpoint, unlimited
from ..hardware import Catalog
from ..i18n import _, num, pct
from ..parallelism import builds_training_clusters
from ..units import SECONDS_PER_HOUR, human_bytes, human_duration, human_usd
from .estimate import estimate_training
from .intervals import bounds
from .model.cost import total_usd
from .search.rank import Point, search
from .search.request import parse_plan_request


def plan_training(
    request: Mapping[str, Any], catalog: Catalog, checkpoint: Checkpoint = unlimited
) -> dict[str, Any]:
    """The plans for `request` on `catalog`; `checkpoint` is called between candidates and ends the search when it
    answers False (the caller's time budget): then `search.complete` is false and the plans are the best found."""
    started = time.perf_counter()
    parsed = parse_plan_request(request, catalog, checkpoint)  # base plans and enumerated layouts
    found = search(
        parsed.prepared,
        parsed.constraints,
        parsed.objective,
        parsed.limit,
        parsed.checkpoint_bytes_per_s,
        checkpoint,
    )
    found.stats["server_seconds"] = time.perf_counter() - started  # parsing and enumeration included
    found.stats["complete"] = parsed.complete and found.stats["complete"]
    notes = _search_notes(parsed, found)
    results = [_point(p, request) for p in found.results]
    best = results[0] if results else None
    if best is not None and best["startup_exceeds_run"]:
        notes.append(
            _(
                "The best plan starts up for longer ({startup}) than it runs ({run}): fewer devices would run "
                "longer for about the same bill."
            ).format(startup=human_duration(best["startup_seconds"]), run=best["time"])
        )
    if best is not None:
        best = {**best, "estimate": estimate_training(best["estimate_request"], catalog)}
    c = parsed.constraints
    return {
        "objective": parsed.objective,
        "constraints": {
            "deadline_s": c.deadline_s,
            "deadline": human_duration(c.deadline_s) if c.deadline_s is not None else None,
            "budget_usd": c.budget_usd,
            "max_accelerators_per_provider": dict(c.quotas),
            "max_price_age_days": c.max_price_age_days,
            "min_optimizer_steps": (request.get("constraints") or {}).get("min_optimizer_steps"),
            "max_startup_share": c.max_startup_share,
        },
        "best": best,
        "results": results,
        "frontier": [_point(p, request) for p in found.frontier],
        "excluded": {**found.excluded, "accelerators": parsed.excluded_accelerators},
        "nearest_misses": [
            {
                "reason": m["reason"],
                "message": m["message"],
                "plan": _point(m["plan"], request) if m.get("plan") else None,
            }
            for m in found.nearest_misses
        ],
        "search": found.stats,
        "notes": notes,
    }


def _search_notes(parsed: Any, found: Any) -> list[str]:
    """The request's notes, parts searched within one server, and the configurations the start-up share left out."""
    notes = list(parsed.notes)
    for acc in {
        p.candidate.plan.accelerator.id: p.candidate.plan.accelerator for p in parsed.prepared
    }.values():
        if not builds_training_clusters(acc):
            notes.append(
                _(
                    "{id} is not built into training clusters (no switched scale-up fabric or cluster network in "
                    "the catalog; PCIe cards bridged in pairs are one-server parts): searched within one 8-device "
                    "server only."
                ).format(id=acc.id)
            )
    if found.excluded.get("startup_dominates"):
        notes.append(
            _(
                "{count} configurations on more than one instance were left out: their start-up would take more "
                "than {share} of their billed time (constraints.max_startup_share)."
            ).format(
                count=num(found.excluded["startup_dominates"], 0, grouping=True),
                share=pct(parsed.constraints.max_startup_share, 0),
            )
        )
    return notes


def _point(p: Point, request: Mapping[str, Any]) -> dict[str, Any]:
    plan, acc = p.plan, p.plan.accelerator
    priced = p.offer.usd_per_hour == p.offer.usd_per_hour  # NaN: searched without a price (objective fastest)
    parallelism = p.parallelism()
    return {
        "accelerator": acc.id,
        "provider": p.offer.provider if priced else None,
        "pricing_model": p.offer.pricing_model if priced else None,
        "usd_per_accelerator_hour": p.offer.usd_per_hour if priced else None,
        "count": p.devices,
        "instances": p.instances,
        "instance_type": p.offer.terms.instance_type,
        "accelerators_per_instance": p.offer.terms.accelerators_per_instance,
        "startup_seconds": p.offer.terms.startup_s,
        "interruptions": {
            "expected": p.interruptions,
            "evictions": p.evictions,
            "per_hour": p.interruptions / p.seconds * SECONDS_PER_HOUR if p.seconds > 0 else 0.0,
            "per_instance_hour": p.offer.terms.interruptions_per_hour,
            "lost_seconds": p.interruptions_s,
        },
        "billed_seconds": p.billed_seconds,
        "price_source": p.offer.source if priced else None,
        "price_stale": stale_marker(p.offer.source) if priced else None,
        "startup_exceeds_run": p.offer.terms.startup_s > p.seconds,
        "parallelism": parallelism,
        "micro_batch_size": p.micro_batch,
        "activation_recomputation": plan.recompute,
        "precision": plan.precision,
        "seconds": p.seconds,
        "time": human_duration(p.seconds),
        "total_usd": p.total_usd if priced else None,
        "cost": human_usd(p.total_usd) if priced else _("n/a (no price)"),
        "accelerator_hours": p.accelerator_hours,
        "memory_per_device_bytes": p.memory_bytes,
        "memory_per_device": human_bytes(p.memory_bytes),
        "memory_capacity_bytes": acc.memory_bytes,
        "utilization": p.utilization,
        **_intervals(p, priced),
        "estimate_request": estimate_body(p, request),
    }


def _intervals(p: Point, priced: bool) -> dict[str, Any]:
    """The plan's p10/p90 of time, hours and cost and their class (training/intervals.py), as an estimate of it has
    them: computed for the answered plans only, never in the search."""
    plan, terms = p.plan, p.offer.terms

    def usd_at(seconds: float) -> float | None:
        return (
            float(total_usd(float(p.devices), seconds, p.offer.usd_per_hour, plan, terms)) if priced else None
        )

    section, basis = bounds(plan, p.devices, p.seconds, usd_at)
    return {"intervals": section, "interval_basis": basis}


def stale_marker(source: Any) -> bool | None:
    """Whether the plan's price is stale (pricing.freshness); None when unknown, False for a given price."""
    if source == "override":
        return False
    return source.get("stale") if isinstance(source, dict) else None


def estimate_body(p: Point, request: Mapping[str, Any]) -> dict[str, Any]:
    """A POST /v1/estimates/training body that evaluates exactly this point."""
    training = {
        **(request.get("training") or {}),
        "micro_batch_size": p.micro_batch,
        "activation_recomputation": p.plan.recompute,
        "precision": p.plan.precision,
    }
    if p.plan.recompute != "selective":  # the named modules belong to "selective" only (model/recompute.py)
        training.pop("recompute_modules", None)
    optional = ("context", "expert", "virtual_pipeline")  # sent only when not 1, as a person would write them
    parallelism = {k: v for k, v in p.parallelism().items() if k not in optional or v != 1}
    cost: dict[str, Any] = {}
    if p.offer.source == "override":
        cost = {"usd_per_accelerator_hour": p.offer.usd_per_hour}
    elif p.offer.usd_per_hour == p.offer.usd_per_hour:  # priced (not NaN)
        cost = {"provider": p.offer.provider, "pricing_model": p.offer.pricing_model}
        if p.offer.terms.instance_type:
            cost["instance_type"] = p.offer.terms.instance_type
    given = {k: v for k, v in (request.get("cost") or {}).items() if v}  # the planner's cost inputs, as sent
    cost.update(given)
    return {
        "model": request.get("model"),
        "training": training,
        "hardware": {"accelerator": p.plan.accelerator.id, "count": p.devices, "parallelism": parallelism},
        "cost": cost,
    }
