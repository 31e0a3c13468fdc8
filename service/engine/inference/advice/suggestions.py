"""Catalog-wide suggestions (the estimate's `suggestions`): every other accelerator that can serve the request,
at the fewest devices that fit (or more, up to the knee, to meet the targets), priced and ranked. Lean: memory
and speed only, no advice, no details."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ...hardware import Accelerator, Catalog
from ...parallelism import built_at
from ...units import SECONDS_PER_HOUR
from ..model.cost import usd_per_hour
from ..model.evaluate import meets_targets
from ..model.load import serving_speed
from ..model.memory import fewest_fitting
from ..model.plan import InferencePlan
from ..request import GPU_ONLY_FORMATS, hardware_problems

# Stop adding devices once one more step (next valid count) improves end-to-end time by less than 2%.
DIMINISHING = 0.98


def suggestions(p: InferencePlan, catalog: Catalog) -> list[dict[str, Any]]:
    """Accelerators that can serve the request, cheapest per million output tokens first among those
    meeting the targets. Lean: memory and speed only, no advice, no details."""
    w = p.workload
    named = w.fmt.name if w.fmt.name in GPU_ONLY_FORMATS else None
    provider = p.cost.get("provider")
    rows: list[dict[str, Any]] = []
    for acc in catalog.accelerators.values():
        if hardware_problems(w, acc, named):
            continue
        count = fewest_fitting(w, acc)
        if count is None or not built_at(acc, count):  # never more of a one-server part than a server holds
            continue
        speed = serving_speed(w, acc, count)
        meets = meets_targets(speed, p.targets, p.workload.schedule.percentile)
        if not meets and w.layout != "layer":  # layer split never speeds up with more devices
            best = speed.end_to_end_s
            for more in (c for c in w.counts if c > count and built_at(acc, c)):
                faster = serving_speed(w, acc, more)
                if meets_targets(faster, p.targets, p.workload.schedule.percentile):
                    count, speed, meets = more, faster, True
                    break
                if faster.end_to_end_s > DIMINISHING * best:
                    break  # past the knee: fixed overhead and all-reduces dominate, more devices stop helping
                best = faster.end_to_end_s
        usd = p.usd_per_accelerator_hour if acc.id == p.accelerator.id else _price(catalog, acc, provider)
        per_hour = usd_per_hour(count, usd, p.infrastructure_overhead) if usd is not None else None
        rate = speed.output_tokens_per_second or speed.samples_per_second
        per_million = per_hour / SECONDS_PER_HOUR / rate * 1e6 if per_hour is not None and rate else None
        row: dict[str, Any] = {
            "accelerator": acc.id,
            "count": count,
            "fits": True,
            "meets_targets": meets,
            "output_tokens_per_second": speed.output_tokens_per_second,
            "usd_per_hour": per_hour,
            "usd_per_million_output_tokens": per_million if w.mode == "token" else None,
        }
        if w.mode == "sample":
            row["samples_per_second"] = speed.samples_per_second
            row["usd_per_million_samples"] = per_million
        rows.append(row)
    rows.sort(key=lambda r: (not r["meets_targets"], _cost_key(r), -(r["output_tokens_per_second"] or 0.0)))
    return rows


def _cost_key(row: Mapping[str, Any]) -> float:
    value = row["usd_per_million_output_tokens"] or row.get("usd_per_million_samples")
    return value if value is not None else math.inf


def _price(catalog: Catalog, acc: Accelerator, provider: Any) -> float | None:
    if provider:
        mine = [
            r.usd_per_hour
            for r in catalog.prices.get(acc.id, ())
            if r.provider.lower() == str(provider).lower()
        ]
        if mine:
            return min(mine)
    default = catalog.default_price(acc.id)
    return default.usd_per_hour if default else None
